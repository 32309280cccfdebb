"""Item 3: the real litellm adapter against a loopback fake provider that injects timeouts,
429 + Retry-After, 500/503, resets mid-stream, malformed tool-call JSON, unknown tools and
`../` in tool arguments at a 10% rate over 200+ turns through the real turn package."""

from __future__ import annotations

import logging
import random
import re
from collections import Counter

import msgspec

from backend.agent.litellm_model import LitellmChatModel
from backend.agent.tool_specs import decode_tool_args
from backend.server.stores import build_stores
from shared_contracts.chat import TextPart, ToolPart
from shared_contracts.frames import ErrorFrame
from shared_contracts.tools import SERVER_TOOLS
from tests.flows.harness import FlowHarness
from tests.reliability.figures import table
from tests.reliability.provider_script import (
    PARTIAL,
    RETRY_AFTER,
    TOOL_FAULTS,
    NoDelayFakeOpenAI,
    ProviderScript,
)

TURNS = 200
TURNS_PER_CHAT = 10
MAX_ATTEMPTS = 3
SAFE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class SleepRecorder:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


class CountingModel:
    """The real adapter, counting the provider requests each model call took."""

    def __init__(self, inner: LitellmChatModel, script: ProviderScript) -> None:
        self.inner, self.script = inner, script
        self.name = inner.name
        self.attempts: list[int] = []

    async def stream(self, request):
        before = self.script.requests
        try:
            async for event in self.inner.stream(request):
                yield event
        finally:
            self.attempts.append(self.script.requests - before)


async def take_turn(h: FlowHarness, chat: str) -> str:
    view = await h.chat_service.view(chat)
    if view.pending_question is not None:
        return await h.answer(chat, view.pending_question.tool_call_id, "denominator")
    return await h.say(chat, "go on, please")


async def test_provider_faults_over_200_turns(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    script = ProviderScript(random.Random(20261130))
    sleep = SleepRecorder()
    stores = build_stores(tmp_path / "data")
    outcomes: Counter[str] = Counter()
    problems: list[str] = []
    with NoDelayFakeOpenAI(default=script) as fake:
        adapter = LitellmChatModel(
            "openai/fake", api_base=fake.base_url, api_key="x", timeout=0.25,
            max_attempts=MAX_ATTEMPTS, sleep=sleep,
        )  # fmt: skip
        model = CountingModel(adapter, script)
        h = FlowHarness(model, chats=stores.chats)
        chats: list[str] = []
        faulted = recovered = 0
        for turn in range(TURNS):
            if turn % TURNS_PER_CHAT == 0:
                chats.append(await h.new_chat())
            chat = chats[-1]
            frames_before, faults_before = len(h.frames), len(script.faults)
            reason = await take_turn(h, chat)
            kinds = {k for _, k in script.faults[faults_before:]}
            if not kinds:
                if reason not in ("stop", "awaiting_answer"):
                    problems.append(f"turn {turn}: unfaulted turn ended {reason}")
                continue
            faulted += 1
            errors = [f for f in h.frames[frames_before:] if isinstance(f, ErrorFrame)]
            if any(e.code == "internal" for e in errors):
                problems.append(f"turn {turn}: internal error frame for {kinds}")
            if errors and all(e.code == "model_error" for e in errors) and reason == "error":
                outcomes["typed model_error"] += 1
            elif not errors and reason in ("stop", "awaiting_answer"):
                outcomes["recovered in-turn (retry / tool error to model)"] += 1
            else:
                problems.append(f"turn {turn}: {kinds} ended {reason} with {errors}")
            script.enabled = False  # faults stop: the next turn must succeed
            if (nxt := await take_turn(h, chat)) in ("stop", "awaiting_answer"):
                recovered += 1
            else:
                problems.append(f"turn {turn}: the turn after {kinds} ended {nxt}")
            script.enabled = True

    records = [await stores.chats.get(c) for c in chats]
    parts = [p for r in records for m in r.messages for p in m.parts if isinstance(p, ToolPart)]
    executed = [p for p in parts if p.state == "output-available" and p.tool_name in SERVER_TOOLS]
    invalid_executed = 0
    for p in executed:
        try:
            decode_tool_args(p.tool_name, msgspec.json.encode(p.input).decode())
        except Exception:
            invalid_executed += 1
    bad_plan_ids = [
        n.id for r in records if r.plan for n in r.plan.nodes if not SAFE_ID.match(n.id)
    ]
    injected = [p for p in parts if p.tool_call_id.startswith(("bad", "unk", "trav"))]
    refused = [p for p in injected if p.state == "output-error"]
    texts = [
        p.text for r in records for m in r.messages for p in m.parts if isinstance(p, TextPart)
    ]
    kinds_seen = Counter(k for _, k in script.faults)
    resets = kinds_seen["reset"]
    partial_kept = sum(t.startswith(PARTIAL) for t in texts)
    tracebacks = [r for r in caplog.records if r.exc_info]
    table(
        "provider faults through the turn package",
        [
            ("turns (plus one fault-free probe after each faulted turn)", TURNS),
            ("provider requests", script.requests),
            ("faults injected", len(script.faults)),
            *[(f"  {k}", n) for k, n in sorted(kinds_seen.items())],
            ("faulted turns", faulted),
            *[(f"  {k}", n) for k, n in sorted(outcomes.items())],
            ("next turn succeeded", f"{recovered}/{faulted}"),
            ("max provider attempts per model call", max(model.attempts)),
            ("backoff sleeps (s)", dict(Counter(sleep.calls))),
            ("resets with partial text kept", f"{partial_kept}/{resets}"),
            ("injected bad tool calls refused", f"{len(refused)}/{len(injected)}"),
            ("tools executed with invalid arguments", invalid_executed),
            ("plan nodes with unsafe ids", len(bad_plan_ids)),
            ("valid plan calls executed", len(executed)),
            ("log records with a traceback", len(tracebacks)),
        ],
    )
    assert len(script.faults) >= 0.05 * script.requests  # the 10% rate really happened
    assert set(kinds_seen) == {"timeout", "429", "500", "503", "reset"} | TOOL_FAULTS
    assert not problems, "\n".join(problems[:10])
    assert recovered == faulted
    assert max(model.attempts) <= MAX_ATTEMPTS
    assert float(RETRY_AFTER) in sleep.calls  # Retry-After honoured
    assert partial_kept >= resets > 0
    assert len(refused) == len(injected) > 0
    assert invalid_executed == 0 and not bad_plan_ids and executed
    assert not tracebacks, tracebacks[0].getMessage()
