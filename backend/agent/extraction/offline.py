"""Deterministic extractor and auditor for offline mode (no model key): the graph grows from
the plan tree and the graded quizzes, with quotes taken verbatim from the transcript."""

from __future__ import annotations

from collections.abc import Mapping

from backend.agent.extraction.stages import AuditInput, ExtractionInput
from backend.agent.offline.lessons import Lesson, lesson_for_goal, load_lessons
from backend.core.evidence_gate import render_answer
from backend.core.graph_probes import quiz_probes
from shared_contracts.extraction import (
    AuditorOutput,
    AuditVerdict,
    ExtractorOutput,
    ProposedEdge,
    ProposedProposition,
)


class OfflineExtractor:
    """Rules: one proposition per plan node probed by a graded quiz in the window (statement
    = title + summary, evidence = the quiz's answer); `requires` edges from parent to child;
    one misconception per wrong answer (the wrong belief itself, evidence = that answer);
    for a probed node of an offline lesson, what it `rests_on` as a prerequisite (evidence =
    the teaching sentence that relies on it) with a `requires` edge to it."""

    def __init__(self, lessons: list[Lesson] | None = None) -> None:
        self._lessons = lessons

    def _lesson(self, goal: str) -> Lesson | None:
        if self._lessons is None:
            self._lessons = load_lessons()
        return lesson_for_goal(goal, self._lessons)

    async def extract(self, job: ExtractionInput) -> ExtractorOutput:
        plan = job.record.plan
        nodes = {n.id: n for n in (plan.nodes if plan else [])}
        quizzes = quiz_probes(job.record, job.start, job.upto)
        quotes = {q.tool_call_id: render_answer(q.question, q.answer) for q in quizzes}
        evidence: dict[str, list[str]] = {}
        for quiz in quizzes:
            if quiz.node_tag in nodes:
                evidence.setdefault(quiz.node_tag, []).append(quotes[quiz.tool_call_id])
        propositions = []
        for node_id, quoted in evidence.items():
            node = nodes[node_id]
            statement = f"{node.title}: {node.summary}" if node.summary.strip() else node.title
            propositions.append(
                ProposedProposition(
                    local_id=f"plan-{node_id}",
                    statement=statement,
                    kind="proposition",
                    plan_node=node_id,
                    evidence=quoted[:3],
                )
            )
        for quiz in quizzes:
            if quiz.correct:
                continue
            propositions.append(
                ProposedProposition(
                    local_id=f"wrong-{quiz.tool_call_id}",
                    # The wrong belief itself, as UX.md labels one ("thinks 1/3 > 1/2").
                    statement=f"thinks “{quiz.answer}” is the answer to: {quiz.question}",
                    kind="misconception",
                    plan_node=None,
                    evidence=[quotes[quiz.tool_call_id]],
                )
            )
        # A child node builds on its parent: "child requires parent" (from needs to first).
        # Endpoints: this window's plan propositions, or nodes the chat mapped earlier.
        endpoint = {k.plan_node: k.id for k in job.known if k.plan_node}
        endpoint.update({node_id: f"plan-{node_id}" for node_id in evidence})
        edges = [
            ProposedEdge(from_=endpoint[n.id], to=endpoint[n.parent], type="requires")
            for n in nodes.values()
            if n.parent in endpoint
            and n.id in endpoint
            and (n.id in evidence or n.parent in evidence)
        ]
        lesson = self._lesson(plan.goal) if plan and evidence else None
        self._prerequisites(lesson, evidence, propositions, edges)
        return ExtractorOutput(propositions=propositions, edges=edges, attributions=[])

    @staticmethod
    def _prerequisites(
        lesson: Lesson | None,
        evidence: Mapping[str, object],
        propositions: list[ProposedProposition],
        edges: list[ProposedEdge],
    ) -> None:
        """What each shown plan node of the lesson rests on: a prerequisite proposition
        (quoted from the lesson's teaching) and a `requires` edge to it, appended."""
        taught = {n.id: n for n in (lesson.nodes if lesson else [])}
        for node_id in evidence:
            rests_on = taught[node_id].rests_on if node_id in taught else []
            for i, pre in enumerate(rests_on):
                local_id = f"rests-{node_id}-{i}"
                propositions.append(
                    ProposedProposition(
                        local_id=local_id,
                        statement=pre.statement,
                        kind="proposition",
                        plan_node=None,
                        evidence=[pre.quote],
                        prerequisite=True,
                    )
                )
                edges.append(ProposedEdge(from_=f"plan-{node_id}", to=local_id, type="requires"))


class OfflineAuditor:
    """Rules: every item the gate let through is supported (the gate already located it)."""

    async def audit(self, job: AuditInput) -> AuditorOutput:
        f = job.findings
        ok = "offline: evidence located by the gate"
        return AuditorOutput(
            verdicts=[
                *(
                    AuditVerdict(
                        item_kind="proposition", item=p.local_id, supported=True, reason=ok
                    )
                    for p in f.propositions
                ),
                *(
                    AuditVerdict(item_kind="edge", item=e.key(), supported=True, reason=ok)
                    for e in f.edges
                ),
                *(
                    AuditVerdict(
                        item_kind="attribution", item=a.tool_call_id, supported=True, reason=ok
                    )
                    for a in f.attributions
                ),
            ]
        )
