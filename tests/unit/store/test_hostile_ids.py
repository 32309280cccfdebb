"""Hostile ids are refused with InvalidId before the stores make any file call."""

from __future__ import annotations

import msgspec
import pytest

from backend.core.errors import InvalidId
from backend.store.json_chat_store import JsonChatStore
from backend.store.json_job_store import JsonJobStore
from backend.store.jsonl_trace_store import JsonlTraceStore
from shared_contracts.trace import ClockEvent
from tests.unit.store.doubles import SpyFileOps
from tests.unit.store.factories import T0, chat, job

HOSTILE = [
    "../x",
    "..",
    ".",
    "/etc/passwd",
    "a/b",
    "a\\b",
    "a\x00b",
    "%2e%2e",
    "%2e%2e%2fx",
    "．．",
    "‥",
    "x" * 10_240,
    "",
    "abc\n",
    "ABC",
    "a b",
    "-lead",
    "x" * 65,
]


@pytest.fixture
def spy() -> SpyFileOps:
    return SpyFileOps()


def operations(tmp_path, spy):
    chats = JsonChatStore(tmp_path, spy)
    jobs = JsonJobStore(tmp_path, spy)
    traces = JsonlTraceStore(tmp_path, spy)
    event = ClockEvent(seq=1, value=T0)
    return {
        "chats.get": lambda bad: chats.get(bad),
        "chats.update": lambda bad: chats.update(bad, lambda r: r),
        "chats.create": lambda bad: chats.create(msgspec.structs.replace(chat(), id=bad)),
        "jobs.get": lambda bad: jobs.get(bad),
        "jobs.save": lambda bad: jobs.save(msgspec.structs.replace(job(), id=bad)),
        "traces.append": lambda bad: traces.append(bad, [event]),
        "traces.read": lambda bad: traces.read(bad),
    }


@pytest.mark.parametrize("bad", HOSTILE, ids=lambda b: repr(b)[:20])
async def test_hostile_id_rejected_before_any_file_call(tmp_path, spy, bad):
    ops = operations(tmp_path, spy)
    spy.calls.clear()
    for name, op in ops.items():
        with pytest.raises(InvalidId):
            await op(bad)
        assert spy.calls == [], f"{name} touched a file for {bad!r}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chats", "jobs", "traces"]
    assert all(not any(d.iterdir()) for d in tmp_path.iterdir())


async def test_invalid_id_message_never_echoes_a_huge_id(tmp_path, spy):
    chats = JsonChatStore(tmp_path, spy)
    with pytest.raises(InvalidId) as info:
        await chats.get("x" * 10_240)
    assert len(str(info.value)) < 200
