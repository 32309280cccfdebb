"""A Hypothesis state machine over the real JSONL graph ledgers (through the storage
composition root): chats grow, extraction runs, appends tear at random points, the store
reopens, batches with duplicate refs are appended. Invariants: no duplicate ids, checkpoint
never ahead of the ledger, every line decodes."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import anyio
import hypothesis.strategies as st
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from msgspec.structs import replace

from backend.agent.extraction.offline import OfflineAuditor, OfflineExtractor
from backend.agent.extraction.pipeline import create_extraction_pipeline
from backend.core.graph import GraphState, derive_snapshot, fold
from backend.core.graph_probes import quiz_probes
from backend.core.ports import LedgerBatch, LedgerCursor
from backend.server.stores import build_stores
from tests.fakes import FixedClock, MemoryChatStore, SequentialIds
from tests.unit.test_graph_probes import lesson_record, msg, quiz

LEDGERS = ("propositions", "edges", "events", "mappings", "audit", "sessions")  # write order
CHATS = ("c1", "c2")


def extra_quiz(index: int, correct: bool) -> object:
    """A later lesson message: one more graded quiz, tagged or not."""
    return msg(
        index,
        "assistant",
        index,
        f"Try number {index}.",
        quiz(
            f"call_x{index}",
            f"What is {index}/9 + 1/9?",
            f"{index + 1}/9" if correct else f"{index + 1}/18",
            correct=correct,
            expected=f"{index + 1}/9",
            node="n-same" if index % 2 else None,
        ),
    )


class LedgerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="lh-ledger-"))
        self.chats = MemoryChatStore()
        self.full = {c: lesson_record(c) for c in CHATS}
        for chat_id in CHATS:
            record = self.full[chat_id]
            anyio.run(self.chats.create, replace(record, messages=record.messages[:3]))
        self.clock, self.ids = FixedClock(), SequentialIds()
        self.sizes_before: dict[str, int] | None = None
        self.duplicates = 0
        self.open()

    def open(self) -> None:
        self.stores = build_stores(self.dir)
        self.pipeline = create_extraction_pipeline(
            self.chats,
            self.stores.graph,
            OfflineExtractor(),
            OfflineAuditor(),
            clock=self.clock,
            ids=self.ids,
        )

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, ledger: str) -> Path:
        return self.dir / "graph" / f"{ledger}.jsonl"

    def sizes(self) -> dict[str, int]:
        return {n: self.path(n).stat().st_size if self.path(n).exists() else 0 for n in LEDGERS}

    def read_all(self) -> LedgerBatch:
        # A fresh store: decodes every line from byte 0 (raises on a line that does not).
        return anyio.run(build_stores(self.dir).graph.read_since, LedgerCursor())[0]

    @rule(chat=st.sampled_from(CHATS), correct=st.booleans())
    def grow(self, chat: str, correct: bool) -> None:
        record = anyio.run(self.chats.get, chat)
        n = len(record.messages)
        full = self.full[chat].messages
        nxt = full[n] if n < len(full) else extra_quiz(n, correct)
        anyio.run(self.chats.update, chat, lambda r: replace(r, messages=[*r.messages, nxt]))

    @rule(chat=st.sampled_from(CHATS))
    def extract(self, chat: str) -> None:
        self.sizes_before = self.sizes()
        anyio.run(self.pipeline.run, chat)

    @precondition(lambda self: self.sizes_before is not None)
    @rule(ledger=st.sampled_from(LEDGERS), fraction=st.floats(0, 1, exclude_max=True))
    def crash_during_last_append(self, ledger: str, fraction: float) -> None:
        """Cut the last append at a byte inside `ledger`: later ledgers never got theirs."""
        assert self.sizes_before is not None
        now, before = self.sizes(), self.sizes_before
        cut = LEDGERS.index(ledger)
        for name in LEDGERS[cut:]:
            keep = before[name]
            if name == ledger:
                keep += int((now[name] - before[name]) * fraction)
            if self.path(name).exists():
                os.truncate(self.path(name), keep)
        self.sizes_before = None
        self.open()

    @rule()
    def reopen(self) -> None:
        self.open()

    @rule(data=st.data())
    def append_duplicate_refs(self, data: st.DataObject) -> None:
        events = self.read_all().events
        if not events:
            return
        picked = data.draw(st.lists(st.sampled_from(events), min_size=1, max_size=3))
        self.duplicates += len(picked)
        batch = LedgerBatch(events=[replace(e, id=self.ids.new("dup")) for e in picked])
        self.sizes_before = None
        anyio.run(self.stores.graph.append, batch)

    @invariant()
    def every_line_decodes_and_ids_are_unique(self) -> None:
        lines = self.read_all()
        for name in LEDGERS:
            raw = self.path(name).read_bytes() if self.path(name).exists() else b""
            assert raw.count(b"\n") == len(getattr(lines, name)), name
        for name in ("propositions", "edges", "events"):
            ids = Counter(line.id for line in getattr(lines, name))
            assert not [i for i, n in ids.items() if n > 1], name
        refs = Counter(e.ref for e in lines.events if not e.id.startswith("dup-"))
        assert not [r for r, n in refs.items() if n > 1]
        mappings = Counter((m.chat_id, m.node_id) for m in lines.mappings)
        assert not [k for k, n in mappings.items() if n > 1]
        derived = derive_snapshot(fold(GraphState(), lines))
        assert derived.stats.events == len(refs)  # duplicates by ref fold away

    @invariant()
    def checkpoint_is_never_ahead_of_the_ledger(self) -> None:
        lines = self.read_all()
        refs = {e.ref for e in lines.events}
        state = fold(GraphState(), lines)
        for chat_id in CHATS:
            folded = state.folded_at(chat_id)
            record = anyio.run(self.chats.get, chat_id)
            assert folded <= len(record.messages)
            for probe in quiz_probes(record, 0, folded):
                assert f"{chat_id}:{probe.tool_call_id}" in refs


LedgerMachine.TestCase.settings = settings(max_examples=30, stateful_step_count=20, deadline=None)
TestLedgerMachine = LedgerMachine.TestCase
