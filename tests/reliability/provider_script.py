"""A seeded fake provider for the fault suite: a plausible teacher that misbehaves at a rate.

Used as `FakeOpenAI(default=script)`. Each request is answered from its transcript (a tool
result → a short continuation; a learner message → text, a plan step or a quiz), except
that with probability `rate` (while `enabled`) it gets one fault of `FAULTS` instead.
"""

from __future__ import annotations

import json
import random
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.agents.fake_openai import (
    Fail,
    FakeOpenAI,
    Hang,
    Reply,
    Reset,
    stream_text,
    stream_tool_calls,
    text_chunks,
)

FAULTS = (
    "timeout",
    "429",
    "500",
    "503",
    "reset",
    "bad_json",
    "unknown_tool",
    "traversal",
)
TOOL_FAULTS = frozenset({"bad_json", "unknown_tool", "traversal"})
PARTIAL_CHUNKS = ("Partial ", "answer ", "before ", "the drop")
PARTIAL = "".join(PARTIAL_CHUNKS)
RETRY_AFTER = 7
TRAVERSALS = (
    ("plan_add", {"node": {"id": "../../etc/passwd", "title": "Escape"}}),
    ("plan_mark_done", {"id": "../chats/x"}),
    ("plan_update", {"id": "..", "title": "Up"}),
    ("quiz", {"node_id": "../x", "question": {"kind": "numeric", "prompt": "1+1?", "answer": 2}}),
    ("research", {"question": "why", "node_id": "/etc/passwd"}),
)


@dataclass
class ProviderScript:
    rng: random.Random
    rate: float = 0.10
    enabled: bool = True
    faults: list[tuple[int, str]] = field(default_factory=list)  # (request index, kind)
    valid_plan_calls: int = 0
    requests: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests += 1
            index = self.requests
            if self.enabled and self.rng.random() < self.rate:
                kind = self.rng.choice(FAULTS)
                self.faults.append((index, kind))
                return self._fault(kind, index)
            return self._normal(body["messages"], index)

    def _fault(self, kind: str, index: int) -> Reply:
        if kind == "timeout":
            return Hang(1.0)
        if kind == "429":
            return Fail(429, "slow down", headers={"Retry-After": str(RETRY_AFTER)})
        if kind in ("500", "503"):
            return Fail(int(kind), "provider trouble")
        if kind == "reset":
            return Reset(text_chunks(*PARTIAL_CHUNKS))
        if kind == "bad_json":
            return stream_tool_calls([(f"bad{index}", "plan_add", '{"node": {"id": "x", "ti')])
        if kind == "unknown_tool":
            return stream_tool_calls([(f"unk{index}", "delete_everything", '{"path": "/"}')])
        name, args = self.rng.choice(TRAVERSALS)
        return stream_tool_calls([(f"trav{index}", name, json.dumps(args))])

    def _normal(self, messages: list[dict[str, Any]], index: int) -> Reply:
        if messages[-1]["role"] == "tool":
            return stream_text("Good, let us carry on with the next idea.")
        has_plan = any(
            c["function"]["name"] == "plan_init"
            for m in messages
            if m["role"] == "assistant"
            for c in m.get("tool_calls") or []
        )
        roll = self.rng.random()
        if roll < 0.55:
            return stream_text("A fraction names equal parts of one whole, like 3 of 4 slices.")
        if roll < 0.8:
            self.valid_plan_calls += 1
            if not has_plan:
                args = {"goal": "Fractions", "nodes": [{"id": "root", "title": "Fractions"}]}
                return stream_tool_calls([(f"ok{index}", "plan_init", json.dumps(args))])
            args = {"node": {"id": f"n{index}", "title": f"Idea {index}", "parent": "root"}}
            return stream_tool_calls([(f"ok{index}", "plan_add", json.dumps(args))])
        quiz = {"question": {"kind": "short_answer", "prompt": "Bottom number?",
                             "accepted": ["denominator"]}}  # fmt: skip
        return stream_tool_calls([(f"q{index}", "quiz", json.dumps(quiz))], text="Quick check:")


class NoDelayFakeOpenAI(FakeOpenAI):
    """`FakeOpenAI` with TCP_NODELAY on its connections: its many small SSE writes otherwise
    wait for delayed ACKs (~50 ms per request here instead of ~15 ms)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        base = self._server.RequestHandlerClass
        self._server.RequestHandlerClass = type(
            "NoDelay", (base,), {"disable_nagle_algorithm": True}
        )
