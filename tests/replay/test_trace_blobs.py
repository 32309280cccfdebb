"""Large repeated trace text is stored once per chat trace: traces grow linearly with the
session, and every reader (replay, diff, the trace route) still sees the full requests."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import anyio
import msgspec
import pytest

from backend.agent.offline.tutor import OfflineTutor
from backend.core.errors import CorruptRecord
from backend.core.pending import pending_question
from backend.replay.diff import diff_sessions
from backend.replay.runner import run_replay
from backend.server.dispatch import receive
from backend.server.hub import Connection
from backend.server.recording import recording_tracer
from backend.server.settings import Settings
from backend.server.stores import build_stores
from backend.tracing.hashing import request_hash
from backend.tracing.interner import Interner
from backend.tracing.ports import ExpandedTraces
from shared_contracts.model_io import ModelMessage, ModelRequest, ModelToolCall, ToolSpec
from shared_contracts.trace import MarkEvent, ModelCallEvent, PromptEvent
from shared_contracts.trace_blobs import MissingBlob, expand_blobs, text_hash
from shared_contracts.trace_compat import typed_event
from tests.golden.record import learner_frame, recorded_services, settle
from tests.server.conftest import make_client

GOLDEN = Path(__file__).parents[1] / "golden"
ENCODE = msgspec.json.Encoder()
SAY = ["hello", "I want to learn python lists", "I like examples", "go on"]


async def _session(data: Path, turns: int) -> str:
    """An offline-tutor session of `turns` learner frames (answers when a question is open)."""
    settings = Settings(data_dir=data, every_n_quiz_answers=3)
    stores = build_stores(data)
    tracer = recording_tracer(stores, settings, timer=lambda: 0.0)
    async with recorded_services(settings, OfflineTutor(), stores, tracer) as services:
        record = await services.chats.create_record(None)
        connection = Connection(record.id)
        for n in range(turns):
            await settle(services, record.id)
            current = await stores.chats.get(record.id)
            if pending_question(current) is not None:
                frame = learner_frame(current, "right")
            else:
                text = SAY[min(n, len(SAY) - 1)]
                frame = ENCODE.encode({"type": "user_message", "text": text}).decode()
            await receive(services, connection, frame)
        await settle(services, record.id)
        await tracer.flush(record.id)
    return record.id


def _sizes(data: Path, chat: str) -> tuple[int, int]:
    """(bytes on disk, bytes the same trace takes with every request stored in full)."""
    stored = anyio.run(build_stores(data).traces.read, chat)
    full = sum(len(ENCODE.encode(e)) + 1 for e in expand_blobs(stored))
    return (data / "traces" / f"{chat}.jsonl").stat().st_size, full


@pytest.fixture(scope="module")
def sessions() -> dict[int, tuple[Path, str, int, int]]:
    """Offline sessions of 3, 6 and 12 turns: turns → (data dir, chat, bytes, full bytes)."""
    root = Path(tempfile.mkdtemp(prefix="trace-blobs-"))
    out = {}
    for turns in (3, 6, 12):
        data = root / f"t{turns}"
        chat = anyio.run(_session, data, turns)
        out[turns] = (data, chat, *_sizes(data, chat))
    yield out
    shutil.rmtree(root, ignore_errors=True)


def test_a_six_turn_session_trace_shrinks(sessions):
    _, _, stored, full = sessions[6]
    # measured: 208 KB stored against 356 KB with every request in full
    assert stored < 0.7 * full, (stored, full)


def test_the_trace_grows_linearly_with_turns(sessions):
    size = {turns: sessions[turns][2] for turns in sessions}
    early = (size[6] - size[3]) / 3
    late = (size[12] - size[6]) / 6
    # measured ≈1.3 (stored in full it is ≈1.7 and keeps growing: every call holds the
    # whole transcript)
    assert late <= 1.5 * early, (size, early, late)


def test_an_interned_session_replays_identically_and_diffs_as_equal(sessions, tmp_path):
    data, chat, _, _ = sessions[6]
    raw = (data / "traces" / f"{chat}.jsonl").read_text()
    assert '"reused":{' in raw and '"blobs":{"' in raw
    source = build_stores(data)
    result = anyio.run(lambda: run_replay(source, chat, tmp_path))
    assert result.ok, result.divergence.render()  # type: ignore[union-attr]
    stored = anyio.run(source.traces.read, chat)
    assert diff_sessions(stored, result.events) == []


def test_expanded_calls_are_the_full_requests_their_hash_was_taken_of(sessions):
    data, chat, _, _ = sessions[6]
    stored = anyio.run(build_stores(data).traces.read, chat)
    calls = [e for e in expand_blobs(stored) if isinstance(e, ModelCallEvent)]
    assert len(calls) >= 6
    for call in calls:
        assert call.request_hash == request_hash(call.request)
        assert not call.refs and not call.blobs and call.reused is None
        assert call.request.tools and call.request.messages[0].role == "system"
    prompts = [e for e in expand_blobs(stored) if isinstance(e, PromptEvent)]
    assert prompts and all(p.system_prompt.startswith("You are") for p in prompts)


def test_an_old_format_golden_is_kept_and_expands_to_itself():
    """Nothing of it is interned: expanded, each event is itself, its values written as
    JSON text read into their typed fields (as every older trace's are)."""
    trace = next((GOLDEN / "wrong_answer_reteach" / "traces").glob("*.jsonl"))
    raw = trace.read_text()
    assert '"refs"' not in raw and '"blobs"' not in raw  # recorded before blobs existed
    events = anyio.run(build_stores(GOLDEN / "wrong_answer_reteach").traces.read, trace.stem)
    assert expand_blobs(events) == [typed_event(e) for e in events]


def test_the_trace_route_returns_full_text(tmp_path):
    client = make_client(tmp_path, OfflineTutor())
    with client:
        chat = client.post("/api/chats").json()["id"]
        with client.websocket_connect(f"/api/chats/{chat}/ws") as ws:
            ws.receive_text(timeout=5)
            ws.send_text('{"type": "user_message", "text": "hello"}')
            while '"turn_finished"' not in ws.receive_text(timeout=10):
                pass
        response = client.get(f"/api/chats/{chat}/trace")
        assert response.status_code == 200
    raw = (tmp_path / "data" / "traces" / f"{chat}.jsonl").read_text()
    assert '"blobs":{"' in raw  # stored interned
    body = response.json()
    calls = [e for e in body if e["type"] == "model_call"]
    prompts = [e for e in body if e["type"] == "prompt"]
    assert calls and prompts
    for event in calls + prompts:
        assert not event.get("refs") and not event.get("blobs") and not event.get("reused")
    system = calls[0]["request"]["messages"][0]["content"]
    assert system == prompts[0]["system_prompt"] and len(system) > 500
    assert calls[0]["request"]["tools"]
    request = msgspec.convert(calls[0]["request"], ModelRequest)
    assert request_hash(request) == calls[0]["request_hash"]


# -- the interner, event by event ----------------------------------------------------

BIG = "x" * 400
TOOLS = [ToolSpec(name="quiz", description="d" * 300, parameters={"type": "object"})]


def _call(key: str, system: str, *rest: ModelMessage, seq: int = 0) -> ModelCallEvent:
    messages = [ModelMessage(role="system", content=system), *rest]
    request = ModelRequest(role="teacher", messages=messages, tools=TOOLS)
    return ModelCallEvent(
        seq=seq, key=key, model="m", request=request, request_hash=request_hash(request)
    )


def _conversation() -> list:
    user = ModelMessage(role="user", content="hi")
    said = ModelMessage(
        role="assistant",
        content=BIG + "a",
        tool_calls=[ModelToolCall(id="c1", name="quiz", arguments="{" + "q" * 300 + "}")],
    )
    tool = ModelMessage(role="tool", content=BIG + "t", tool_call_id="c1")
    prompt = PromptEvent(
        seq=0, turn=1, template_id="t", template_hash="h", graph_context="", system_prompt=BIG
    )
    return [
        prompt,
        _call("turn:1/teacher#0", BIG, user, seq=1),
        _call("turn:1/teacher#1", BIG, user, said, tool, seq=2),
        _call("turn:2/teacher#0", BIG + "changed", user, said, tool, user, seq=3),
        MarkEvent(seq=4, mark="step"),
    ]


def test_interning_stores_each_text_once_and_expands_back_exactly():
    events = _conversation()
    interner = Interner()
    stored = [interner.intern(e) for e in events]
    encoded = b"".join(ENCODE.encode(e) for e in stored)
    assert encoded.count(BIG.encode()) == 4  # prompt, assistant, tool, changed prompt
    assert encoded.count(b"d" * 300) == 1 and encoded.count(b"q" * 300) == 1
    last = stored[3]
    assert isinstance(last, ModelCallEvent) and last.reused is not None
    assert (last.reused.call, last.reused.start, last.reused.count) == ("turn:1/teacher#1", 1, 3)
    assert expand_blobs(stored) == events
    decoded = msgspec.json.Decoder(list[type(stored[1])]).decode(ENCODE.encode(stored[1:4]))
    assert expand_blobs([stored[0], *decoded]) == events[:4]


def test_after_a_failed_write_the_texts_are_stored_again():
    events = _conversation()
    interner = Interner()
    lost = [interner.intern(e) for e in events[:2]]
    interner.forget(lost)
    again = [interner.intern(e) for e in events[1:3]]
    assert expand_blobs(again) == events[1:3]


def test_a_reference_to_an_unstored_text_is_a_typed_error():
    interner = Interner()
    stored = [interner.intern(e) for e in _conversation()[:3]]
    with pytest.raises(MissingBlob):
        expand_blobs(stored[2:])  # its blobs and the reused call were in the first two

    class Raw:
        async def read(self, chat_id):
            return stored[2:]

    with pytest.raises(CorruptRecord):
        anyio.run(ExpandedTraces(Raw()).read, "chat-1")


def test_a_trace_appended_to_after_a_restart_reuses_its_stored_texts():
    events = _conversation()
    interner = Interner()
    first = [interner.intern(e) for e in events[:2]]
    resumed = Interner.of(first)
    rest = [resumed.intern(e) for e in events[2:]]
    assert expand_blobs(first + rest) == events
    call = rest[0]
    assert isinstance(call, ModelCallEvent) and call.reused is None  # no state of old calls
    assert call.refs["messages.0.content"] == text_hash(BIG)  # stored already: not again
    assert text_hash(BIG) not in call.blobs and call.blobs


def test_a_message_is_reused_only_when_every_field_is_the_same():
    from shared_contracts.model_io import ModelMessage as M
    from shared_contracts.model_io import ModelToolCall as C

    # The reuse fingerprints a message by these fields: a new field must join it.
    assert M.__struct_fields__ == ("role", "content", "tool_calls", "tool_call_id")
    assert C.__struct_fields__ == ("id", "name", "arguments")
    call = C(id="c1", name="quiz", arguments="{}")
    base = M(role="assistant", content="x", tool_calls=[call])
    variants = [
        M(role="user", content="x", tool_calls=[call]),
        M(role="assistant", content="y", tool_calls=[call]),
        M(role="assistant", content="x", tool_calls=[]),
        M(role="assistant", content="x", tool_calls=[call], tool_call_id="c1"),
        M(role="assistant", content="x", tool_calls=[C(id="c2", name="quiz", arguments="{}")]),
        M(role="assistant", content="x", tool_calls=[C(id="c1", name="ask", arguments="{}")]),
        M(role="assistant", content="x", tool_calls=[C(id="c1", name="quiz", arguments="[]")]),
    ]
    for variant in variants:
        interner = Interner()
        interner.intern(_call("turn:1/teacher#0", BIG, base))
        again = interner.intern(_call("turn:1/teacher#1", BIG, variant))
        assert isinstance(again, ModelCallEvent)
        assert again.reused is not None and again.reused.count == 1  # the system prompt only
        assert expand_blobs([*_stored_first(base), again])[-1].request.messages[1] == variant
    same = Interner()
    same.intern(_call("turn:1/teacher#0", BIG, base))
    copy = M(role="assistant", content="x", tool_calls=[C(id="c1", name="quiz", arguments="{}")])
    again = same.intern(_call("turn:1/teacher#1", BIG, copy))
    assert isinstance(again, ModelCallEvent) and again.reused is not None
    assert again.reused.count == 2  # a new object with the same fields is reused


def _stored_first(message: ModelMessage) -> list:
    return [Interner().intern(_call("turn:1/teacher#0", BIG, message))]


def test_the_interner_keeps_no_message_text_of_its_calls_alive():
    import gc
    import tracemalloc

    def call(key: str, n: int) -> ModelCallEvent:
        said = [ModelMessage(role="user", content=f"{i:04d}" + "w" * 2000) for i in range(n)]
        return _call(key, "system", *said)

    interner = Interner()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        stored = interner.intern(call("turn:1/teacher#0", 50))  # ~100 KB of new text
        again = interner.intern(call("turn:2/teacher#0", 51))
        assert isinstance(again, ModelCallEvent) and again.reused is not None
        assert again.reused.count == 51  # the reuse still finds the repeated messages
        del stored, again
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 8_000  # blob keys and fingerprints, not the ~100 KB of message text


def test_storing_a_non_ascii_text_leaves_the_callers_string_as_it_was():
    import tracemalloc

    context = "".join(["\u201cquoted\u201d ", "w" * 5000])  # a session's long-lived block
    prompt = PromptEvent(
        seq=0, turn=1, template_id="t", template_hash="h", graph_context=context, system_prompt=""
    )
    stored = Interner().intern(prompt)
    assert stored.blobs[stored.refs["graph_context"]] == context
    ENCODE.encode(stored)  # the trace writes the event
    del stored
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        ENCODE.encode(context)
        grew = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grew > 4_000  # only now does the caller's string get its UTF-8 copy


def test_each_tool_list_is_stored_as_itself_when_calls_alternate_between_lists():
    plan = [ToolSpec(name="plan", description="p" * 300, parameters={"type": "object"})]

    def call(key: str, tools: list[ToolSpec], seq: int) -> ModelCallEvent:
        request = ModelRequest(
            role="teacher", messages=[ModelMessage(role="user", content="hi")], tools=tools
        )
        return ModelCallEvent(
            seq=seq, key=key, model="m", request=request, request_hash=request_hash(request)
        )

    events = [
        call("turn:1/teacher#0", TOOLS, 0),
        call("turn:1/teacher#1", plan, 1),
        call("turn:1/teacher#2", list(TOOLS), 2),  # a new list of the same specs
        call("turn:1/teacher#3", [ToolSpec(name="quiz", description="e" * 300, parameters={})], 3),
    ]
    interner = Interner()
    stored = [interner.intern(e) for e in events]
    assert all(not s.request.tools for s in stored)  # each stored by reference
    assert expand_blobs(stored) == events
