"""Chat records decode to compact objects and encode back to the very bytes they came from.

The record Structs that hold no weak references are `gc=False`: that must change nothing on
disk or on the wire (a decoded record re-encodes byte for byte), and it must hold for a
record full of dicts, where a tracked Struct would have been tracked.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import msgspec
import pytest

from bench.synthetic import chat_record
from shared_contracts.chat import ChatRecord, Message, NoticePart, TextPart, ToolPart
from shared_contracts.questions import Verdict
from shared_contracts.tools import GradedOutput, JobOutput, PlanOutput, ReplyOutput

GOLDENS = sorted(Path(__file__).parents[2].glob("golden/*/chats/*.json"))
UNTRACKED = [
    Message,
    TextPart,
    ToolPart,
    NoticePart,
    PlanOutput,
    GradedOutput,
    ReplyOutput,
    JobOutput,
]


def _decode(data: bytes) -> ChatRecord:
    return msgspec.json.decode(data, type=ChatRecord)


def test_bench_record_reencodes_byte_identical() -> None:
    data = msgspec.json.encode(chat_record("chat-mem-0000"))
    assert msgspec.json.encode(_decode(data)) == data


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: p.parts[-3])
def test_golden_chat_file_reencodes_byte_identical(path: Path) -> None:
    data = path.read_bytes()
    record = _decode(data)
    assert record.messages, "a golden chat with no messages proves nothing"
    assert msgspec.json.encode(record) == data.rstrip(b"\n")


def test_goldens_were_found() -> None:
    assert len(GOLDENS) >= 3


def test_parts_outputs_and_verdicts_are_not_tracked_even_holding_dicts() -> None:
    record = _decode(msgspec.json.encode(chat_record("chat-mem-0001", target_bytes=5_000)))
    parts = [p for m in record.messages for p in m.parts]
    tools = [p for p in parts if isinstance(p, ToolPart)]
    assert tools and all(isinstance(p.input, dict) and p.input for p in tools)
    assert not any(gc.is_tracked(p) for p in parts)
    outputs = [p.output for p in tools if p.output is not None]
    assert outputs and not any(gc.is_tracked(o) for o in outputs)
    assert not any(gc.is_tracked(o.verdict) for o in outputs if isinstance(o, GradedOutput))
    for cls in [*UNTRACKED, Verdict]:
        assert cls.__struct_config__.gc is False, cls.__name__


def test_untracked_part_is_smaller_than_a_tracked_one() -> None:
    class TrackedText(msgspec.Struct, tag_field="type", tag="text", kw_only=True, frozen=True):
        text: str

    assert sys.getsizeof(TextPart(text="x")) + 16 == sys.getsizeof(TrackedText(text="x"))


def test_records_stay_weakly_referenceable() -> None:
    """The chat cache and the chat encoder take weak references to records."""
    import weakref

    record = _decode(msgspec.json.encode(chat_record("chat-mem-0002", target_bytes=2_000)))
    assert weakref.ref(record)() is record
    assert not gc.is_tracked(record.messages[0])


def test_dict_inputs_held_by_untracked_parts_are_still_collected() -> None:
    """An untracked part holding a dict in a cycle of its own must not keep it alive."""
    import weakref

    class Box:
        pass

    box = Box()
    box.self = box  # a cycle only the collector can free
    part = ToolPart(tool_call_id="call_1", tool_name="quiz", state="input-available",
                    input={"box": box})  # fmt: skip
    ref = weakref.ref(box)
    del box, part
    gc.collect()
    assert ref() is None


def test_bench_measures_what_a_decoded_record_holds() -> None:
    """B6 reports a held record's decoded size beside its RSS delta: it must be that size."""
    from bench.memory_bench import decoded_bytes

    small = msgspec.json.encode(chat_record("chat-mem-0003", target_bytes=5_000))
    large = msgspec.json.encode(chat_record("chat-mem-0003", target_bytes=200_000))
    for data in (small, large):
        assert len(data) < decoded_bytes(data) < 3 * len(data)
    grew = decoded_bytes(large) / decoded_bytes(small)
    assert 0.7 < grew / (len(large) / len(small)) < 1.3
