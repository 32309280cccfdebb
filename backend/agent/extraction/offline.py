"""Deterministic extractor and auditor for offline mode (no model key): the graph grows from
the plan tree and the graded quizzes, with quotes taken verbatim from the transcript."""

from __future__ import annotations

from collections.abc import Mapping

from backend.agent.extraction.stages import AuditInput, ExtractionInput
from backend.agent.offline.lessons import (
    Lesson,
    lesson_for_goal,
    load_lessons,
    node_for_prompt,
    shows_belief,
)
from backend.core.evidence_gate import render_answer
from backend.core.graph_probes import GradedQuiz, quiz_probes
from shared_contracts.extraction import (
    AuditorOutput,
    AuditVerdict,
    ExtractorOutput,
    ProposedEdge,
    ProposedProposition,
)
from shared_contracts.plan import PlanNode, PrerequisiteCheck

MAX_QUOTES = 3


class OfflineExtractor:
    """Rules:
    - one proposition per lesson plan node probed by a graded quiz in the window (statement
      = title + summary, evidence = the quiz's answers); not for a "check first" node or in
      a review chat, whose plan nodes are graph nodes already (their probes are tagged);
    - `requires` edges from parent to child;
    - **a wrong answer is not a misconception.** A misconception is a wrong belief: here, a
      lesson question's named misconception (`LessonNode.misconception`) shown by giving its
      answer; stated as the belief ("thinks …"), one node per belief however often it is
      shown, each showing answer in `shown_by` (the merger makes each a probe of it). Any
      other wrong answer is a slip or a guess: shaky evidence on its node, nothing more.
      (The library is what names beliefs; a repeated wrong answer it does not name has no
      belief this extractor could state — the LLM extractor judges those.)
    - for a probed node of an offline lesson, what it `rests_on` as a prerequisite
      (evidence = the teaching sentence that relies on it) with a `requires` edge to it."""

    def __init__(self, lessons: list[Lesson] | None = None) -> None:
        self._lessons = lessons

    @property
    def lessons(self) -> list[Lesson]:
        if self._lessons is None:
            self._lessons = load_lessons()
        return self._lessons

    async def extract(self, job: ExtractionInput) -> ExtractorOutput:
        plan = job.record.plan
        taught = {} if job.record.mode == "review" else _lesson_nodes(plan.nodes if plan else [])
        quizzes = quiz_probes(job.record, job.start, job.upto)
        evidence: dict[str, list[str]] = {}
        for quiz in quizzes:
            if quiz.node_tag in taught:
                evidence.setdefault(quiz.node_tag, []).append(_quote(quiz))
        propositions = [
            ProposedProposition(
                local_id=f"plan-{node_id}",
                statement=_statement(taught[node_id]),
                kind="proposition",
                plan_node=node_id,
                evidence=quoted[:MAX_QUOTES],
            )
            for node_id, quoted in evidence.items()
        ]
        propositions += self._misconceptions(quizzes)
        # A child node builds on its parent: "child requires parent" (from needs to first).
        # Endpoints: this window's plan propositions, or nodes the chat mapped earlier.
        endpoint = {k.plan_node: k.id for k in job.known if k.plan_node}
        endpoint.update({node_id: f"plan-{node_id}" for node_id in evidence})
        edges = [
            ProposedEdge(from_=endpoint[n.id], to=endpoint[n.parent], type="requires")
            for n in taught.values()
            if n.parent in endpoint
            and n.id in endpoint
            and (n.id in evidence or n.parent in evidence)
        ]
        lesson = lesson_for_goal(plan.goal, self.lessons) if plan and evidence else None
        self._prerequisites(lesson, evidence, propositions, edges)
        return ExtractorOutput(propositions=propositions, edges=edges, attributions=[])

    def _misconceptions(self, quizzes: list[GradedQuiz]) -> list[ProposedProposition]:
        """One misconception per named belief some wrong answer in the window shows."""
        shown: dict[str, tuple[str, list[GradedQuiz]]] = {}  # belief name → statement, quizzes
        for quiz in quizzes:
            found = None if quiz.correct else node_for_prompt(quiz.question, self.lessons)
            belief = found[1].misconception if found else None
            if found is None or belief is None:
                continue
            if shows_belief(found[1].quiz, belief, quiz.answer):
                shown.setdefault(belief.name, (belief.statement, []))[1].append(quiz)
        return [
            ProposedProposition(
                local_id=f"belief-{name}",
                statement=statement,
                kind="misconception",
                plan_node=None,
                evidence=[_quote(q) for q in showing[:MAX_QUOTES]],
                shown_by=[q.tool_call_id for q in showing],
            )
            for name, (statement, showing) in shown.items()
        ]

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


def _lesson_nodes(nodes: list[PlanNode]) -> dict[str, PlanNode]:
    """The plan nodes this chat teaches ("check first" nodes are graph nodes already)."""
    return {n.id: n for n in nodes if not isinstance(n.check, PrerequisiteCheck)}


def _statement(node: PlanNode) -> str:
    return f"{node.title}: {node.summary}" if node.summary.strip() else node.title


def _quote(quiz: GradedQuiz) -> str:
    return render_answer(quiz.question, quiz.answer)


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
