"""The evidence gate: quotes located (exact, normalised, fuzzy), drops with reason codes."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from backend.core.evidence_gate import locate_quote, run_gate, transcript_segments
from shared_contracts.extraction import (
    ExtractorOutput,
    ProposedAttribution,
    ProposedEdge,
    ProposedProposition,
)
from tests.unit.test_graph_probes import LEARNER_INSIGHT, TEACHER_RULE, lesson_record

AT = datetime(2026, 2, 1, tzinfo=UTC)


def prop(local_id: str, *quotes: str, kind: str = "proposition") -> ProposedProposition:
    return ProposedProposition(
        local_id=local_id,
        statement=f"statement of {local_id}",
        kind=kind,  # type: ignore[arg-type]
        plan_node=None,
        evidence=list(quotes),
    )


def gate(output: ExtractorOutput, known: set[str] | None = None):
    record = lesson_record()
    return run_gate(
        output, record, known_nodes=known or set(), upto=len(record.messages), run_id="run-1", at=AT
    )


def test_exact_quote_gets_message_turn_speaker_and_span() -> None:
    record = lesson_record()
    segments = transcript_segments(record)
    found = locate_quote("the denominator stays the same", segments)
    assert found is not None
    assert (found.message_id, found.turn, found.speaker) == ("m3", 3, "learner")
    assert LEARNER_INSIGHT[found.start : found.end] == found.quote
    assert found.quote.lower() == "the denominator stays the same"


def test_normalised_quote_survives_case_whitespace_and_curly_quotes() -> None:
    segments = transcript_segments(lesson_record())
    found = locate_quote("OH  I SEE, I added   the bottoms too", segments)
    assert found is not None
    assert found.quote == "Oh I see, I added the bottoms too"
    assert (found.start, found.end) == (0, len("Oh I see, I added the bottoms too"))


def test_fuzzy_quote_with_small_drift_is_located() -> None:
    segments = transcript_segments(lesson_record())
    found = locate_quote("I added the bottom too. The denominator stays the same", segments)
    assert found is not None
    assert found.message_id == "m3"
    assert "denominator stays the same" in found.quote


def test_learner_occurrence_is_preferred_over_teacher_text() -> None:
    segments = transcript_segments(lesson_record())
    # "add the numerators and keep the denominator" is only teacher text; an answer segment
    # contains the quiz wording; the learner's own words win when both have the quote.
    teacher = locate_quote("add the numerators and keep the denominator", segments)
    assert teacher is not None and teacher.speaker == "teacher"
    answer = locate_quote("Q: What is 1/5 + 2/5?\nA: 3/10", segments)
    assert answer is not None and answer.speaker == "answer"


def test_gate_drops_with_reason_codes() -> None:
    output = ExtractorOutput(
        propositions=[
            prop("good", "The denominator stays the same when they match"),
            prop("paraphrased", "when denominators are equal the bottom number is unchanged"),
            prop("invented", "I have always loved adding fractions with my friends"),
            prop("teacher_only", TEACHER_RULE),
            prop("short", "I see"),
            prop("no_quotes"),
        ],
        edges=[
            ProposedEdge(from_="good", to="ghost", type="requires"),
            ProposedEdge(from_="good", to="good", type="supports"),
            ProposedEdge(from_="good", to="node-0001", type="requires"),
        ],
        attributions=[
            ProposedAttribution(tool_call_id="call_nope", target="good"),
            ProposedAttribution(tool_call_id="call_q4", target="good"),
            ProposedAttribution(tool_call_id="call_q4", target="paraphrased"),
        ],
    )
    result = gate(output, known={"node-0001"})
    reasons = {(a.item_kind, a.item): a.reason for a in result.audit}
    assert reasons == {
        ("proposition", "paraphrased"): "quote_not_found",
        ("proposition", "invented"): "quote_not_found",
        ("proposition", "teacher_only"): "wrong_speaker",
        ("proposition", "short"): "quote_too_short",
        ("proposition", "no_quotes"): "no_evidence",
        ("edge", "good->ghost:requires"): "unknown_endpoint",
        ("edge", "good->good:supports"): "self_loop",
        ("attribution", "call_nope"): "unknown_tool_call",
    } | {("attribution", "call_q4"): "unknown_endpoint"}
    assert {(a.stage, a.run_id, a.chat_id) for a in result.audit} == {("gate", "run-1", "c1")}
    kept = result.findings
    assert [p.local_id for p in kept.propositions] == ["good"]
    assert kept.propositions[0].evidence[0].speaker == "learner"
    assert [e.key() for e in kept.edges] == ["good->node-0001:requires"]
    assert [(a.tool_call_id, a.target) for a in kept.attributions] == [("call_q4", "good")]


def test_graded_answer_counts_as_learner_evidence_and_teacher_quote_may_accompany_it() -> None:
    output = ExtractorOutput(
        propositions=[
            prop("wrong", "Q: What is 1/5 + 2/5?\nA: 3/10", TEACHER_RULE, kind="misconception")
        ],
        edges=[],
        attributions=[],
    )
    result = gate(output)
    assert result.audit == []
    speakers = [e.speaker for e in result.findings.propositions[0].evidence]
    assert speakers == ["answer", "teacher"]


def test_quotes_after_the_window_are_not_found() -> None:
    record = lesson_record()
    output = ExtractorOutput(
        propositions=[prop("late", "The denominator stays the same when they match")],
        edges=[],
        attributions=[ProposedAttribution(tool_call_id="call_q4", target="late")],
    )
    result = run_gate(output, record, known_nodes=set(), upto=3, run_id="run-1", at=AT)
    assert [a.reason for a in result.audit] == ["quote_not_found", "unknown_tool_call"]


def test_a_prerequisite_may_rest_on_the_teachers_words_but_is_never_a_misconception() -> None:
    rests = msgspec.structs.replace(prop("rests", TEACHER_RULE), prerequisite=True)
    wrong = msgspec.structs.replace(
        prop("wrong", "Q: What is 1/5 + 2/5?\nA: 3/10", kind="misconception"), prerequisite=True
    )
    output = ExtractorOutput(propositions=[rests, wrong], edges=[], attributions=[])
    result = gate(output)
    assert [(a.item, a.reason) for a in result.audit] == [("wrong", "misconception_prerequisite")]
    (kept,) = result.findings.propositions
    assert (kept.local_id, kept.prerequisite) == ("rests", True)
    assert [e.speaker for e in kept.evidence] == ["teacher"]


def test_a_plan_node_taught_from_a_document_gives_its_passage_as_evidence() -> None:
    from shared_contracts.chat import ToolPart
    from shared_contracts.materials import Passage
    from shared_contracts.tools import PlanOutput

    record = lesson_record()
    plan = record.plan
    assert plan is not None
    passage = Passage(
        material_id="mat-1", page=4, quote="Keep the denominator.", title="Primer", start=9, end=30
    )
    nodes = [
        msgspec.structs.replace(n, passages=[passage]) if n.id == "n-same" else n
        for n in plan.nodes
    ]
    cited = msgspec.structs.replace(plan, nodes=nodes)
    first = record.messages[1]
    parts = [
        msgspec.structs.replace(p, output=PlanOutput(tree=cited))
        if isinstance(p, ToolPart) and p.tool_name == "plan_init"
        else p
        for p in first.parts
    ]
    messages = [msgspec.structs.replace(first, parts=parts), *record.messages[2:]]
    record = msgspec.structs.replace(record, plan=cited, messages=[record.messages[0], *messages])
    taught = ProposedProposition(
        local_id="p1",
        statement="same denominators: add the tops",
        kind="proposition",
        plan_node="n-same",
        evidence=["The denominator stays the same when they match."],
    )
    result = run_gate(
        ExtractorOutput(propositions=[taught], edges=[], attributions=[]),
        record,
        known_nodes=set(),
        upto=len(record.messages),
        run_id="run-1",
        at=AT,
    )
    (found,) = result.findings.propositions
    learner, material = found.evidence
    assert learner.speaker == "learner"
    assert (material.speaker, material.quote, material.material_id, material.page) == (
        "material",
        "Keep the denominator.",
        "mat-1",
        4,
    )
    assert (material.message_id, material.start, material.end) == (first.id, 9, 30)


def test_shown_by_keeps_wrong_answers_only_and_logs_each_entry_it_drops() -> None:
    """A misconception is shown by wrong graded answers: a right answer, an unknown call, or
    a `shown_by` on a proposition is dropped alone (an attribution audit line), the item
    itself kept."""
    wrong = msgspec.structs.replace(
        prop("w", LEARNER_INSIGHT, kind="misconception"),
        shown_by=["call_q2", "call_q1", "call_nope", "call_q2"],
    )
    right = msgspec.structs.replace(prop("r", LEARNER_INSIGHT), shown_by=["call_q2"])
    result = gate(ExtractorOutput(propositions=[wrong, right], edges=[], attributions=[]))
    by_id = {p.local_id: p for p in result.findings.propositions}
    assert by_id["w"].shown_by == ["call_q2"]
    assert by_id["r"].shown_by == []
    assert sorted((a.item, a.reason) for a in result.audit) == [
        ("call_nope->w", "unknown_tool_call"),
        ("call_q1->w", "shown_by_right_answer"),
        ("call_q2->r", "shown_by_not_misconception"),
    ]
