"""The LLM auditor, and how its verdicts are applied (drops cascade to dependent items)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime

from msgspec.structs import replace

from backend.agent.extraction.stages import AuditInput, encode, transcript_document
from backend.agent.extraction.structured import build_request, call_structured
from backend.core.ports import ChatModel
from shared_contracts.extraction import AuditorOutput, Findings, ItemKind
from shared_contracts.graph import AuditLine, Evidence

SYSTEM = """You audit items extracted from a tutoring transcript before they enter the learner's
knowledge graph. Each item cites evidence already located in the transcript (speaker and
message id given). For EVERY item answer with a verdict in ONE JSON object of the schema:
supported = true only if the cited evidence shows it (a proposition: the learner knows it; a
prerequisite proposition: the session's material really rests on it, whether or not the
learner showed it; a misconception: the learner held that wrong belief, shown by choosing
an option that states it or by the same wrong idea twice — a single wrong answer, a slip or
a guess is NOT a misconception; an edge: the
dependency is real; an attribution: the quiz tested that proposition). Give a short reason.
When unsure: false."""


def _quotes(evidence: list[Evidence]) -> list[dict[str, object]]:
    return [{"quote": e.quote, "speaker": e.speaker, "message_id": e.message_id} for e in evidence]


def audit_document(job: AuditInput) -> dict[str, object]:
    """What the auditor reads: the items with their located evidence, and the transcript."""
    f = job.findings
    return {
        "items": [
            *(
                {
                    "item_kind": "proposition",
                    "item": p.local_id,
                    "statement": p.statement,
                    "kind": p.kind,
                    **({"prerequisite": True} if p.prerequisite else {}),
                    **({"shown_by": p.shown_by} if p.shown_by else {}),
                    "evidence": _quotes(p.evidence),
                }
                for p in f.propositions
            ),
            *(
                {"item_kind": "edge", "item": e.key(), "evidence": _quotes(e.evidence)}
                for e in f.edges
            ),
            *(
                {
                    "item_kind": "attribution",
                    "item": a.tool_call_id,
                    "target": a.target,
                    "evidence": _quotes(a.evidence),
                }
                for a in f.attributions
            ),
        ],
        "transcript": transcript_document(job.record, job.start, job.upto),
    }


class LlmAuditor:
    """Rules: judges support only; it cannot add or change items, only keep or drop them."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model

    async def audit(self, job: AuditInput) -> AuditorOutput:
        """One structured call; ModelError when the answer is missing or malformed."""
        request = build_request("auditor", SYSTEM, encode(audit_document(job)), AuditorOutput)
        return await call_structured(self.model, request, AuditorOutput)


def create_auditor(model: ChatModel) -> LlmAuditor:
    """The auditor stage on `model` (role "auditor")."""
    return LlmAuditor(model)


@dataclass(slots=True)
class Audited:
    findings: Findings
    audit: list[AuditLine] = field(default_factory=list)


def apply_verdicts(
    findings: Findings,
    verdicts: AuditorOutput,
    *,
    known_nodes: Collection[str],
    chat_id: str,
    run_id: str,
    at: datetime,
) -> Audited:
    """Keep the items judged supported; drop the rest (no verdict → `not_judged`), and
    edges / attributions whose endpoint was dropped (`endpoint_dropped`)."""
    judged = {(v.item_kind, v.item): v for v in verdicts.verdicts}
    out = Audited(findings=Findings())

    def drop(kind: ItemKind, item: str, reason: str, detail: str = "") -> None:
        line = AuditLine(
            run_id=run_id,
            chat_id=chat_id,
            stage="auditor",
            item_kind=kind,
            item=item,
            reason=reason,
            detail=detail[:500],
            at=at,
        )
        out.audit.append(line)

    def keep(kind: ItemKind, item: str) -> bool:
        verdict = judged.get((kind, item))
        if verdict is not None and verdict.supported:
            return True
        drop(kind, item, *(("unsupported", verdict.reason) if verdict else ("not_judged",)))
        return False

    props = [p for p in findings.propositions if keep("proposition", p.local_id)]
    alive = {p.local_id for p in props} | set(known_nodes)
    edges = []
    for edge in findings.edges:
        if edge.from_ not in alive or edge.to not in alive:
            drop("edge", edge.key(), "endpoint_dropped")
        elif keep("edge", edge.key()):
            edges.append(edge)
    attributions = []
    for attribution in findings.attributions:
        if attribution.target not in alive:
            drop("attribution", attribution.tool_call_id, "endpoint_dropped")
        elif keep("attribution", attribution.tool_call_id):
            attributions.append(attribution)
    out.findings = replace(findings, propositions=props, edges=edges, attributions=attributions)
    return out
