"""The stage ports of the pipeline and what each is given (offline and LLM versions alike)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import msgspec

from backend.core.evidence_gate import transcript_segments
from backend.core.graph_probes import quiz_probes
from shared_contracts.chat import ChatRecord
from shared_contracts.extraction import AuditorOutput, ExtractorOutput, Findings


@dataclass(frozen=True, slots=True)
class KnownNode:
    """A graph node the extractor may point edges and attributions at."""

    id: str
    statement: str
    kind: str
    plan_node: str | None = None
    """The plan node of this chat the node was mapped from, if any."""
    prerequisite: bool = False
    """The chat only rested on it so far (the learner has not shown it)."""


@dataclass(frozen=True, slots=True)
class ExtractionInput:
    """The record, the window of new messages `[start, upto)`, and nodes already known."""

    record: ChatRecord
    start: int
    upto: int
    known: list[KnownNode] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class AuditInput:
    """The gate's survivors and the transcript they cite."""

    record: ChatRecord
    start: int
    upto: int
    findings: Findings


class Extractor(Protocol):
    """Proposes what the learner learned in the window, with verbatim evidence quotes."""

    async def extract(self, job: ExtractionInput) -> ExtractorOutput: ...


class Auditor(Protocol):
    """Judges whether each gated item is supported by its located evidence."""

    async def audit(self, job: AuditInput) -> AuditorOutput: ...


def transcript_document(record: ChatRecord, start: int, upto: int) -> list[dict[str, object]]:
    """The transcript as the LLM stages read it: one entry per speaker segment."""
    index = {m.id: i for i, m in enumerate(record.messages)}
    return [
        {
            "message_id": s.message_id,
            "turn": s.turn,
            "speaker": s.speaker,
            "new": index[s.message_id] >= start,
            "text": s.text,
        }
        for s in transcript_segments(record, upto)
    ]


def quiz_document(record: ChatRecord, start: int, upto: int) -> list[dict[str, object]]:
    """The graded quizzes as the LLM stages read them (tag = the plan node, if any; a
    multiple choice's option texts, so a chosen distractor can be read for its belief)."""
    return [
        {
            "tool_call_id": q.tool_call_id,
            "plan_node": q.node_tag,
            "question": q.question,
            **({"options": list(q.options)} if q.options else {}),
            "answer": q.answer,
            "expected": q.expected,
            "correct": q.correct,
            "new": q.index >= start,
        }
        for q in quiz_probes(record, 0, upto)
    ]


def encode(document: object) -> str:
    return msgspec.json.encode(document).decode()
