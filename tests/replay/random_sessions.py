"""Seeded random sessions recorded live through the real server code (`open_services` and
the WebSocket dispatcher, real stores on a temp dir), then replayed strictly: the
adversarial check of "any recorded session replays identically" (issue 7).

A session mixes, by its seed: offline-tutor lessons (topics, right, wrong and free-text
answers, ask_user replies), or a scripted litellm-style teacher (tool calls with malformed
JSON, unknown tools, plans, quizzes, background jobs); model-backed sub-agents whose jobs
succeed, fail (provider error, malformed answer twice) or time out (`job_timeout_s` small,
a slow stream); extraction runs (`every_n_quiz_answers` small); aborts at random moments;
two sockets on one chat (frames sent at once); learner actions sent before the last one
settled (a job's result is then delivered into a later turn); bad frames; the classroom's
End session (the extraction flush, `POST .../extract`), mid-lesson or as the session's
last act (drawn from a generator of its own, so the other draws of a seed stay as they
were); and a server shut down mid-turn.
"""

from __future__ import annotations

import random
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import msgspec

from backend.agent.offline.tutor import OfflineTutor
from backend.agent.roles import build_subagents
from backend.core.errors import ModelError
from backend.core.pending import pending_question
from backend.replay.runner import run_replay
from backend.server.dispatch import receive
from backend.server.hub import Connection
from backend.server.recording import recording_tracer
from backend.server.services import Services
from backend.server.settings import Settings
from backend.server.stores import build_stores
from shared_contracts.model_io import (
    ModelDone,
    ModelEvent,
    ModelMessage,
    ModelRequest,
    ModelToolCall,
    TextChunk,
    ToolCallChunk,
)
from tests.golden.record import end_session, learner_frame, recorded_services, settle

JOB_TIMEOUT_S = 0.05
SLOW_S = 0.25
"""A slow sub-agent stream: well past the job timeout."""
TOPICS = (
    "teach me fractions",
    "photosynthesis please",
    "I want to learn python lists",
    "hello",
    "what next?",
)
NOTE = '{"title": "Note", "body": "A short note.", "sources": [], "caveat": ""}'
DEMO = '{"title": "Demo", "html": "<p>Move the slider.</p>"}'
VISUAL = (
    '{"title": "A curve", "caption": "y = x", "svg": null, "chart": {"kind": "line",'
    ' "x_label": "x", "y_label": "y", "series": [{"name": "s", "x": [1, 2], "y": [1, 2]}]}}'
)
ANSWERS = {"researcher": NOTE, "demo_builder": DEMO, "visual_maker": VISUAL}


def frame(kind: str, **fields: object) -> str:
    return msgspec.json.encode({"type": kind, **fields}).decode()


class SubAgentModel:
    """A sub-agents' model whose every call's fate comes from a seeded draw: an answer, a
    malformed answer, a provider error, or a stream slower than the job timeout."""

    name = "scripted-sub"

    def __init__(
        self, rng: random.Random, fates: list[str], script: list[str] | None = None
    ) -> None:
        self.rng = rng
        self.fates = fates
        self.script = script
        """Fates to play in order instead of drawing them."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if self.script is not None:
            fate = self.script.pop(0) if self.script else "ok"
        else:
            fate = self.rng.choice(("ok", "ok", "malformed", "error", "slow"))
        self.fates.append(fate)
        if fate == "error":
            raise ModelError("sub-agent provider unavailable")
        text = ANSWERS.get(request.role, NOTE) if fate != "malformed" else "not json {"
        yield TextChunk(text=text[:9])
        if fate == "slow":
            await anyio.sleep(SLOW_S)
        yield TextChunk(text=text[9:])
        yield ModelDone(message=ModelMessage(role="assistant", content=text))


PLAN = (
    '{"goal": "Sets", "nodes": [{"id": "n1", "title": "Members"}, {"id": "n2", "title": "Union"}]}'
)
QUIZ = (
    '{"question": {"kind": "multiple_choice", "prompt": "Pick a", "options":'
    ' [{"id": "a", "text": "A"}, {"id": "b", "text": "B"}], "correct": "a"}, "node_id": "n1"}'
)
ASK = '{"prompt": "How do you like to learn?", "suggestions": ["examples", "theory"]}'
RESEARCH = '{"question": "Why are sets unordered?"}'
CALLS: dict[str, tuple[str, str]] = {
    "plan": ("plan_init", PLAN),
    "malformed": ("plan_add", '{"node": {"id": "n3", "title": '),
    "unknown": ("teleport", '{"where": "moon"}'),
    "bad_args": ("plan_update", '{"id": "n1", "colour": "red"}'),
    "quiz": ("quiz", QUIZ),
    "ask": ("ask_user_question", ASK),
    "research": ("research", RESEARCH),
    "demo": ("demo", '{"brief": "a slider for set sizes"}'),
    "done": ("plan_mark_done", '{"id": "n1", "note": "ok"}'),
}


class LitellmStyleTeacher:
    """A teacher that streams as litellm does (text, then tool-call fragments keyed by
    index: id and name first, arguments in pieces) and picks each reply from a seeded draw:
    text, valid tools, malformed JSON, unknown tools, several calls at once, an error."""

    name = "scripted-litellm"

    def __init__(self, rng: random.Random, pause_s: float = 0.001) -> None:
        self.rng = rng
        self.pause_s = pause_s
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.calls += 1
        after_tool = request.messages[-1].role == "tool"
        draw = self.rng.random()
        if draw < 0.05:
            raise ModelError("provider said 503")
        text = f"Step {self.calls}: let us look at sets. "
        for piece in (text[:8], text[8:20], text[20:]):
            yield TextChunk(text=piece)
            await anyio.sleep(self.pause_s)
        if after_tool and draw < 0.45:
            yield ModelDone(message=ModelMessage(role="assistant", content=text))
            return
        names = self.rng.sample(sorted(CALLS), self.rng.choice((1, 1, 1, 2)))
        calls = []
        for index, name in enumerate(names):
            tool, args = CALLS[name]
            call_id = f"call-{self.calls}-{index}"
            yield ToolCallChunk(index=index, id=call_id, name=tool)
            cut = len(args) // 2
            yield ToolCallChunk(index=index, arguments=args[:cut])
            await anyio.sleep(self.pause_s)
            yield ToolCallChunk(index=index, arguments=args[cut:])
            calls.append(ModelToolCall(id=call_id, name=tool, arguments=args))
        message = ModelMessage(role="assistant", content=text, tool_calls=calls)
        yield ModelDone(message=message, finish_reason="tool_calls")


@dataclass
class Recorded:
    """A recorded session: its chat and what its seed made it do."""

    seed: int
    chat_id: str
    features: set[str] = field(default_factory=set)
    job_fates: list[str] = field(default_factory=list)


async def record_random_session(data_dir: Path, seed: int) -> Recorded:
    """Record the session of `seed` in `data_dir` (see the module docstring)."""
    rng = random.Random(seed)
    scripted = rng.random() < 0.3
    model_jobs = scripted or rng.random() < 0.6
    settings = Settings(
        data_dir=data_dir,
        model="scripted/teacher" if scripted else None,
        subagent_model="scripted/sub" if model_jobs else None,
        every_n_quiz_answers=rng.choice((1, 2, 3)),
        job_timeout_s=JOB_TIMEOUT_S,
        max_steps=6,
    )
    stores = build_stores(data_dir)
    tracer = recording_tracer(stores, settings)
    fates: list[str] = []
    agents = None
    if model_jobs:
        sub = SubAgentModel(random.Random(seed * 7919 + 1), fates)
        agents = build_subagents(settings, lambda _: tracer.model(sub))
    teacher = LitellmStyleTeacher(random.Random(seed * 31 + 7)) if scripted else OfflineTutor()
    out = Recorded(seed=seed, chat_id="", job_fates=fates)
    out.features.add("scripted" if scripted else "offline")
    stop_mid_turn = rng.random() < 0.15
    ends = random.Random(seed * 131 + 3)  # End session draws: the seed's others unchanged
    async with anyio.create_task_group() as beside:
        with anyio.CancelScope() as server:
            async with recorded_services(
                settings, teacher, stores, tracer, subagents=agents
            ) as services:
                record = await services.chats.create_record()
                out.chat_id = record.id
                a, b = Connection(record.id), Connection(record.id)
                for _ in range(rng.randint(4, 10)):
                    await _act(services, stores, rng, a, b, out)
                    if ends.random() < 0.1:  # mid-lesson, a turn or run maybe under way
                        out.features.add("end_session")
                        await end_session(services, record.id)
                    if rng.random() < 0.7:
                        await settle(services, record.id)
                    else:
                        out.features.add("overlap")
                        await anyio.sleep(rng.uniform(0, 0.02))
                if stop_mid_turn:
                    await settle(services, record.id)
                    out.features.add("shutdown")
                    await receive(services, a, frame("user_message", text=rng.choice(TOPICS)))
                    await anyio.sleep(rng.uniform(0, 0.01))
                    server.cancel()
                    await anyio.sleep_forever()
                if ends.random() < 0.3:  # the learner ends the session
                    out.features.add("end_session")
                    await end_session(services, record.id)
                await settle(services, record.id)
                await tracer.flush(record.id)
        beside.cancel_scope.cancel()
    return out


async def _act(
    services: Services,
    stores,
    rng: random.Random,
    a: Connection,
    b: Connection,
    out: Recorded,
) -> None:
    chat_id = a.chat_id
    record = await stores.chats.get(chat_id)
    pending = pending_question(record)
    socket = a if rng.random() < 0.75 else b
    if socket is b:
        out.features.add("second_socket")
    draw = rng.random()
    if pending is not None and draw < 0.1:
        # Both sockets at once: the same answer twice, or an answer and an abort.
        out.features.add("two_sockets_at_once")
        other = rng.choice((learner_frame(record, "right"), frame("abort")))
        async with anyio.create_task_group() as tg:
            tg.start_soon(receive, services, a, learner_frame(record, "right"))
            tg.start_soon(receive, services, b, other)
    elif pending is not None and draw < 0.55:
        choice = rng.choice(("right", "right", "wrong", "I like examples"))
        out.features.add("answer")
        await receive(services, socket, learner_frame(record, choice))
    elif draw < 0.7:
        out.features.add("abort")
        await receive(services, socket, frame("user_message", text=rng.choice(TOPICS)))
        await anyio.sleep(rng.uniform(0, 0.03))
        await receive(services, b if socket is a else a, frame("abort"))
    elif draw < 0.78:
        out.features.add("two_sockets_at_once")
        async with anyio.create_task_group() as tg:
            tg.start_soon(receive, services, a, frame("user_message", text=rng.choice(TOPICS)))
            tg.start_soon(receive, services, b, frame("user_message", text="me too"))
    elif draw < 0.82:
        out.features.add("bad_frame")
        await receive(services, socket, rng.choice(("{nope", frame("answer", answer=3))))
    else:
        await receive(services, socket, frame("user_message", text=rng.choice(TOPICS)))


async def check_session(root: Path, seed: int) -> tuple[Recorded, str]:
    """Record the session of `seed` under `root`, replay it strictly; (what was recorded,
    its first divergence rendered, or "")."""
    recorded = await record_random_session(root / "data", seed)
    result = await run_replay(
        build_stores(root / "data"), recorded.chat_id, root / "replay", stall_s=2.0
    )
    if result.ends_inside_turn:
        recorded.features.add("ended_inside_turn")
    return recorded, "" if result.ok else result.divergence.render()  # type: ignore[union-attr]


def divergence_class(rendered: str) -> str:
    """A divergence's class: its first line, with numbers, ids and hashes masked."""
    first = rendered.splitlines()[0] if rendered else ""
    first = first.split(": ", 1)[-1]
    return re.sub(r"[0-9a-f]{8,}|\d+", "N", first)
