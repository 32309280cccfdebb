"""The evidence gate: deterministic checks between the extractor and the auditor.

Every quote is located in the transcript (exact, then normalised, then fuzzy with a coverage
threshold) and gets its message, turn, speaker and character span. An item with a quote that
cannot be located, or is too short to mean anything, is dropped whole (a drop over an
invention). Evidence that the learner learned or believes something must include a learner
message or a graded answer; a prerequisite (what the session rested on, not shown by the
learner) may be backed by the teacher's words alone, and is never a misconception.
Attributions must cite a graded quiz in the transcript, and a misconception's `shown_by` a
wrong graded answer (an entry that does not is dropped alone, as an attribution); edges need
known endpoints and no self-loops. Every drop is an `AuditLine` with a reason. A
proposition taken from a plan node that was taught from the learner's document keeps that
node's passages (checked against the document when the plan tool ran) as evidence of
speaker `material`.

Character spans are offsets into a message's *rendered text*: its segments (text parts, and
each answered question rendered as "Q: <prompt>\\nA: <answer>") joined by a blank line.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime

from rapidfuzz import fuzz

from backend.core.graph_probes import answer_text, question_text, quiz_probes
from shared_contracts.chat import ChatRecord, TextPart, ToolPart
from shared_contracts.extraction import (
    ExtractorOutput,
    Findings,
    FoundAttribution,
    FoundEdge,
    FoundProposition,
    ItemKind,
    ProposedAttribution,
    ProposedEdge,
    ProposedProposition,
)
from shared_contracts.graph import AuditLine, Evidence, Speaker
from shared_contracts.tools import GradedOutput, PlanOutput, ReplyOutput

MIN_QUOTE_TOKENS = 4
FUZZY_MIN_SCORE = 90.0
FUZZY_MIN_QUOTE_COVERAGE = 0.95
FUZZY_MIN_TOKEN_COVERAGE = 0.75
LEARNER_SPEAKERS: frozenset[Speaker] = frozenset({"learner", "answer"})
SEPARATOR = "\n\n"
_TOKEN = re.compile(r"\w+")
_TRANSLATE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
    }
)


@dataclass(frozen=True, slots=True)
class Segment:
    """One speaker's stretch of a message; `offset` is its start in the rendered text."""

    message_id: str
    turn: int
    speaker: Speaker
    text: str
    offset: int


def transcript_segments(record: ChatRecord, upto: int | None = None) -> list[Segment]:
    """The searchable transcript of messages `[0, upto)`."""
    out: list[Segment] = []
    end = len(record.messages) if upto is None else upto
    for message in record.messages[:end]:
        offset = 0
        for part in message.parts:
            text, speaker = _render(part, message.role)
            if not text:
                continue
            out.append(Segment(message.id, message.turn, speaker, text, offset))
            offset += len(text) + len(SEPARATOR)
    return out


def _render(part: object, role: str) -> tuple[str, Speaker]:
    # Server-authored parts (notices) are nobody's words: not searchable.
    if isinstance(part, TextPart):
        return part.text, "learner" if role == "user" else "teacher"
    if isinstance(part, ToolPart) and isinstance(part.output, GradedOutput | ReplyOutput):
        return render_answer(question_text(part), answer_text(part)), "answer"
    return "", "teacher"


def render_answer(question: str, answer: str) -> str:
    """How an answered question reads in the searchable transcript."""
    return f"Q: {question}\nA: {answer}"


def normalise(text: str) -> tuple[str, list[int]]:
    """NFKC, casefold, straight quotes and dashes, collapsed whitespace; plus, for each
    output character, the index of the input character it came from."""
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        folded = unicodedata.normalize("NFKC", char).translate(_TRANSLATE).casefold()
        for out in folded:
            if out.isspace():
                if not chars or chars[-1] == " ":
                    continue
                out = " "
            chars.append(out)
            origin.append(index)
    while chars and chars[-1] == " ":
        chars.pop()
        origin.pop()
    return "".join(chars), origin


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold())


def _evidence(seg: Segment, start: int, end: int) -> Evidence:
    return Evidence(
        quote=seg.text[start:end],
        message_id=seg.message_id,
        turn=seg.turn,
        speaker=seg.speaker,
        start=seg.offset + start,
        end=seg.offset + end,
    )


def _by_speaker_preference(segments: list[Segment]) -> list[Segment]:
    # A learner echoing the teacher: prefer the learner's occurrence.
    return [s for s in segments if s.speaker in LEARNER_SPEAKERS] + [
        s for s in segments if s.speaker not in LEARNER_SPEAKERS
    ]


def locate_quote(quote: str, segments: list[Segment]) -> Evidence | None:
    """Find `quote` exactly, then normalised, then fuzzily; None when it is not there."""
    ordered = _by_speaker_preference(segments)
    stripped = quote.strip()
    for seg in ordered:
        at = seg.text.find(stripped)
        if at >= 0:
            return _evidence(seg, at, at + len(stripped))
    wanted, _ = normalise(stripped)
    if not wanted:
        return None
    normalised = [(seg, *normalise(seg.text)) for seg in ordered]
    for seg, text, origin in normalised:
        at = text.find(wanted)
        if at >= 0:
            return _evidence(seg, origin[at], origin[at + len(wanted) - 1] + 1)
    best: tuple[float, Segment, int, int] | None = None
    wanted_tokens = tokens(wanted)
    for seg, text, origin in normalised:
        if not text:
            continue
        hit = fuzz.partial_ratio_alignment(wanted, text, score_cutoff=FUZZY_MIN_SCORE)
        if hit is None:
            continue
        if (hit.src_end - hit.src_start) < FUZZY_MIN_QUOTE_COVERAGE * len(wanted):
            continue
        span = set(tokens(text[hit.dest_start : hit.dest_end]))
        covered = sum(1 for t in wanted_tokens if t in span) / max(len(wanted_tokens), 1)
        if covered < FUZZY_MIN_TOKEN_COVERAGE:
            continue
        if best is None or hit.score > best[0]:
            best = (hit.score, seg, origin[hit.dest_start], origin[hit.dest_end - 1] + 1)
    if best is None:
        return None
    _, seg, start, end = best
    return _evidence(seg, start, end)


def passage_evidence(record: ChatRecord, upto: int | None = None) -> dict[str, list[Evidence]]:
    """Each plan node's document passages as evidence, located at the message (of `[0,
    upto)`) whose plan tool first gave the node its passages."""
    out: dict[str, list[Evidence]] = {}
    end = len(record.messages) if upto is None else upto
    for message in record.messages[:end]:
        for part in message.parts:
            if not (isinstance(part, ToolPart) and isinstance(part.output, PlanOutput)):
                continue
            for node in part.output.tree.nodes:
                if node.passages and node.id not in out:
                    out[node.id] = [
                        Evidence(
                            quote=p.quote,
                            message_id=message.id,
                            turn=message.turn,
                            speaker="material",
                            start=p.start,
                            end=p.end,
                            material_id=p.material_id,
                            page=p.page,
                        )
                        for p in node.passages
                    ]
    return out


@dataclass(slots=True)
class GateResult:
    """Survivors of the gate and one audit line per dropped item."""

    findings: Findings
    audit: list[AuditLine] = field(default_factory=list)


class _Drop(Exception):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


def _locate_all(quotes: list[str], segments: list[Segment]) -> list[Evidence]:
    located = []
    for quote in quotes:
        if len(tokens(quote)) < MIN_QUOTE_TOKENS:
            raise _Drop("quote_too_short", quote[:200])
        found = locate_quote(quote, segments)
        if found is None:
            raise _Drop("quote_not_found", quote[:200])
        located.append(found)
    return located


def _shown_by_problem(
    kind: str, tool_call_id: str, quizzes: Collection[str], wrong: Collection[str]
) -> _Drop | None:
    """Why a `shown_by` entry cannot stand: only a misconception is shown by answers, and
    only by a wrong graded answer in the transcript."""
    if kind != "misconception":
        return _Drop("shown_by_not_misconception", "only a wrong belief is shown by an answer")
    if tool_call_id not in quizzes:
        return _Drop("unknown_tool_call")
    if tool_call_id not in wrong:
        return _Drop("shown_by_right_answer", "a right answer does not show a wrong belief")
    return None


def run_gate(
    output: ExtractorOutput,
    record: ChatRecord,
    *,
    known_nodes: Collection[str],
    upto: int,
    run_id: str,
    at: datetime,
) -> GateResult:
    """Check every extractor item against the transcript `[0, upto)` (pure)."""
    gate = _Gate(record, upto, run_id=run_id, at=at)
    for prop in output.propositions:
        gate.proposition(prop)
    endpoints = gate.local_ids | set(known_nodes)
    for edge in output.edges:
        gate.edge(edge, endpoints)
    for attribution in output.attributions:
        gate.attribution(attribution, endpoints)
    return gate.result


class _Gate:
    """One run of the gate: what passed (`result.findings`), and an audit line per drop."""

    def __init__(self, record: ChatRecord, upto: int, *, run_id: str, at: datetime) -> None:
        self.record = record
        self.run_id = run_id
        self.at = at
        self.segments = transcript_segments(record, upto)
        self.passages = passage_evidence(record, upto)
        probes = quiz_probes(record, 0, upto)
        self.quizzes = {q.tool_call_id for q in probes}
        self.wrong = {q.tool_call_id for q in probes if not q.correct}
        self.result = GateResult(findings=Findings())
        self.local_ids: set[str] = set()

    def _drop(self, kind: ItemKind, item: str, why: _Drop) -> None:
        self.result.audit.append(
            AuditLine(
                run_id=self.run_id,
                chat_id=self.record.id,
                stage="gate",
                item_kind=kind,
                item=item,
                reason=why.reason,
                detail=why.detail,
                at=self.at,
            )
        )

    def proposition(self, prop: ProposedProposition) -> None:
        try:
            if prop.local_id in self.local_ids:
                raise _Drop("duplicate_id")
            if not prop.evidence:
                raise _Drop("no_evidence")
            if prop.prerequisite and prop.kind == "misconception":
                raise _Drop("misconception_prerequisite", "a wrong belief is shown, not rested on")
            evidence = _locate_all(prop.evidence, self.segments)
            if not prop.prerequisite and not any(e.speaker in LEARNER_SPEAKERS for e in evidence):
                raise _Drop("wrong_speaker", "no quote from the learner or a graded answer")
        except _Drop as why:
            self._drop("proposition", prop.local_id, why)
            return
        self.local_ids.add(prop.local_id)
        evidence += self.passages.get(prop.plan_node or "", [])
        shown_by = self._shown_by(prop)
        self.result.findings.propositions.append(
            FoundProposition(
                local_id=prop.local_id,
                statement=prop.statement.strip(),
                kind=prop.kind,
                plan_node=prop.plan_node,
                aliases=list(prop.aliases),
                evidence=evidence,
                prerequisite=prop.prerequisite,
                shown_by=shown_by,
            )
        )

    def _shown_by(self, prop: ProposedProposition) -> list[str]:
        """The answers that stand as showing misconception `prop` (each other one dropped
        alone, as an attribution)."""
        shown_by: list[str] = []
        for tool_call_id in dict.fromkeys(prop.shown_by):
            problem = _shown_by_problem(prop.kind, tool_call_id, self.quizzes, self.wrong)
            if problem is None:
                shown_by.append(tool_call_id)
            else:
                self._drop("attribution", f"{tool_call_id}->{prop.local_id}", problem)
        return shown_by

    def edge(self, edge: ProposedEdge, endpoints: Collection[str]) -> None:
        try:
            if edge.from_ not in endpoints or edge.to not in endpoints:
                raise _Drop("unknown_endpoint")
            if edge.from_ == edge.to:
                raise _Drop("self_loop")
            evidence = _locate_all(edge.evidence, self.segments)
        except _Drop as why:
            self._drop("edge", edge.key(), why)
            return
        self.result.findings.edges.append(
            FoundEdge(from_=edge.from_, to=edge.to, type=edge.type, evidence=evidence)
        )

    def attribution(self, attribution: ProposedAttribution, endpoints: Collection[str]) -> None:
        try:
            if attribution.tool_call_id not in self.quizzes:
                raise _Drop("unknown_tool_call")
            if attribution.target not in endpoints:
                raise _Drop("unknown_endpoint")
            evidence = _locate_all(attribution.evidence, self.segments)
        except _Drop as why:
            self._drop("attribution", attribution.tool_call_id, why)
            return
        self.result.findings.attributions.append(
            FoundAttribution(
                tool_call_id=attribution.tool_call_id, target=attribution.target, evidence=evidence
            )
        )
