"""Record the golden sessions through the real app with the offline tutor.

Re-record them after a deliberate behaviour change (then review `git diff`):

    .venv/bin/python -m tests.golden.record tests/golden

The old-format golden (`OLD_FORMAT`) is kept as written by an older recorder unless named
with `--old NAME` (only when a behaviour change makes it diverge).

Each golden is a small data dir (`chats/`, `traces/`, `jobs/`, `graph/`) holding one chat.
Clock and ids are deterministic and streamed-chunk timings are zero; what can still differ
between two recordings is the real race between a background job and the turn beside it
(which clock value each drew, where a job finished) — every recording replays strictly.
"""

from __future__ import annotations

import shutil
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import msgspec

from backend.agent.offline.tutor import OfflineTutor
from backend.core.pending import pending_question
from backend.server.dispatch import receive
from backend.server.hub import Connection
from backend.server.recording import recording_tracer
from backend.server.services import Services, open_services
from backend.server.settings import Settings
from backend.server.stores import build_stores
from backend.tracing.tracer import Tracer
from shared_contracts.chat import ToolPart
from shared_contracts.questions import MultipleChoice, Numeric
from shared_contracts.tools import QuizArgs
from shared_contracts.trace import AnyTraceEvent, ModelCallEvent, OutboundFrameEvent, PromptEvent
from shared_contracts.trace_blobs import expand_blobs
from tests.fakes import FixedClock, SequentialIds

Step = tuple[str, str]
"""("say", text) | ("answer", "right" | "wrong" | free text) | ("end", "") (the classroom's
End session: `POST /api/chats/{id}/extract`, the extraction flush)."""

RIGHT: Step = ("answer", "right")
GOLDENS: dict[str, tuple[int, list[Step]]] = {
    # name: (every_n_quiz_answers, learner steps)
    "lesson_python_lists": (
        3,
        [
            ("say", "hello"),
            ("say", "I want to learn python lists"),
            RIGHT,
            ("answer", "I like examples"),
            RIGHT,
            RIGHT,
        ],
    ),
    "wrong_answer_reteach": (
        3,
        [
            ("say", "teach me photosynthesis"),
            ("answer", "wrong"),
            RIGHT,
            ("answer", "slowly please"),
            RIGHT,
        ],
    ),
    "job_and_extraction": (
        2,
        [("say", "fractions please"), RIGHT, ("answer", "more pictures"), RIGHT, RIGHT],
    ),
    # every_n above its answers: only the End session flush folds the lesson into the graph
    "lesson_end_session": (
        5,
        [("say", "teach me fractions"), RIGHT, ("answer", "pizzas"), RIGHT, RIGHT, ("end", "")],
    ),
}


def learner_frame(record, choice: str) -> str:
    """The answer frame for the pending question: the key, a wrong answer, or free text."""
    pending = pending_question(record)
    assert pending is not None, "the script answers, but no question is pending"
    answer: object = choice
    if pending.tool_name == "quiz" and choice in ("right", "wrong"):
        part = next(
            p
            for m in record.messages
            for p in m.parts
            if isinstance(p, ToolPart) and p.tool_call_id == pending.tool_call_id
        )
        spec = msgspec.convert(part.input, QuizArgs).question
        right = choice == "right"
        if isinstance(spec, MultipleChoice):
            others = [o.id for o in spec.options if o.id != spec.correct]
            answer = spec.correct if right else others[0]
        elif isinstance(spec, Numeric):
            answer = spec.answer if right else spec.answer + 1000
        else:
            answer = spec.accepted[0] if right else "no idea at all"
    frame = {"type": "answer", "tool_call_id": pending.tool_call_id, "answer": answer}
    return msgspec.json.encode(frame).decode()


async def end_session(services: Services, chat_id: str) -> None:
    """What `POST /api/chats/{id}/extract` does, in a task of its own as a request is."""
    async with anyio.create_task_group() as request:
        request.start_soon(services.end_session, chat_id)


async def settle(services: Services, chat_id: str) -> None:
    """Until no turn, job or extraction run is active (three quiet looks in a row)."""
    quiet = 0
    while quiet < 3:
        quiet = quiet + 1 if services.idle(chat_id) else 0
        await anyio.sleep(0.01)


def recorded_services(
    settings: Settings, model, stores, tracer: Tracer, *, subagents=None, clock=None
) -> AbstractAsyncContextManager[Services]:
    """The real services as a recorded session runs them: `stores` recorded by `tracer`,
    a fixed clock and sequential ids (so a replay gets the very same values)."""
    return open_services(
        settings,
        model=model,
        clock=clock or FixedClock(),
        ids=SequentialIds(),
        stores=stores,
        subagents=subagents,
        tracer=tracer,
    )


async def record_session(
    data_dir: Path, steps: list[Step], *, every_n: int = 3, model=None, title: str = ""
) -> str:
    """Drive a chat through the WebSocket dispatcher and return its id (recorded in
    `data_dir/traces/<id>.jsonl`)."""
    settings = Settings(data_dir=data_dir, every_n_quiz_answers=every_n)
    stores = build_stores(data_dir)
    tracer = recording_tracer(stores, settings, timer=lambda: 0.0)
    async with recorded_services(settings, model or OfflineTutor(), stores, tracer) as services:
        record = await services.chats.create_record(title or None)
        connection = Connection(record.id)
        for kind, text in steps:
            await settle(services, record.id)
            if kind == "end":
                await end_session(services, record.id)
                continue
            if kind == "say":
                frame = msgspec.json.encode({"type": "user_message", "text": text}).decode()
            else:
                frame = learner_frame(await stores.chats.get(record.id), text)
            await receive(services, connection, frame)
        await settle(services, record.id)
        await tracer.flush(record.id)
    return record.id


async def _record(target: Path, steps: list[Step], every_n: int) -> str:
    return await record_session(target, steps, every_n=every_n)


OLD_FORMAT = {"wrong_answer_reteach"}
"""Goldens kept in the trace format from before blobs (every request in full, one event per
frame and a `TimedChunk` per streamed chunk; no `refs`, `blobs`, `reused`, `delta_of`,
`deltas`, `chunk_texts` or `chunk_ms` keys): CI keeps replaying a trace written by an older
recorder. `main` leaves such a golden as it is unless named (`--old NAME`)."""
BLOB_KEYS = ("refs", "blobs", "reused", "chunk_texts", "chunk_ms")
RUN_KEYS = ("delta_of", "deltas")


def write_pre_blob_format(trace: Path) -> None:
    """Rewrite a trace as the recorder wrote it before blobs: expanded, without the keys
    added since (they were appended to their events, so the rest is byte-identical)."""
    events = msgspec.json.Decoder(AnyTraceEvent).decode_lines(trace.read_bytes())
    lines = []
    for event in expand_blobs(events):
        data = msgspec.to_builtins(event)
        if isinstance(event, ModelCallEvent | PromptEvent):
            for key in BLOB_KEYS:
                data.pop(key, None)
        elif isinstance(event, OutboundFrameEvent):
            for key in RUN_KEYS:
                data.pop(key, None)
        lines.append(msgspec.json.encode(data) + b"\n")
    trace.write_bytes(b"".join(lines))


def main(root: str, old: frozenset[str] = frozenset()) -> int:
    for name, (every_n, steps) in GOLDENS.items():
        if name in OLD_FORMAT and name not in old:
            print(f"kept {name} (an old-format trace; re-record it with --old {name})")
            continue
        target = Path(root) / name
        shutil.rmtree(target, ignore_errors=True)
        chat_id = anyio.run(_record, target, steps, every_n)
        if name in OLD_FORMAT:
            write_pre_blob_format(target / "traces" / f"{chat_id}.jsonl")
        print(f"recorded {name}: chat {chat_id}")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    names = frozenset(args[i + 1] for i, a in enumerate(args[:-1]) if a == "--old")
    roots = [a for i, a in enumerate(args) if a != "--old" and (i == 0 or args[i - 1] != "--old")]
    sys.exit(main(roots[0] if roots else "tests/golden", names))
