"""The LLM extractor: proposes propositions, misconceptions, edges and probe attributions."""

from __future__ import annotations

from backend.agent.extraction.stages import (
    ExtractionInput,
    encode,
    quiz_document,
    transcript_document,
)
from backend.agent.extraction.structured import build_request, call_structured
from backend.core.ports import ChatModel
from shared_contracts.extraction import ExtractorOutput

SYSTEM = """You extract what a learner learned in a tutoring session, for their knowledge graph.

Read the transcript (entries marked "new" are the part to extract from; the rest is context)
and answer with ONE JSON object of the given schema:

- propositions: each a single, self-contained statement the LEARNER now knows (kind
  "proposition"), or a wrong belief the learner showed (kind "misconception").
  `local_id`: a short id unique in your answer. `plan_node`: the id of the plan node this
  proposition is what that node teaches, else null. Something only the teacher said is NOT
  learned: include it only if a learner message or a graded answer shows it.
- prerequisites: a proposition with `prerequisite` true is something the session's material
  clearly rests on (the teacher names it as needed first, or a step uses it) that the learner
  has NOT shown. Its evidence may be the teacher's words. Never a misconception; only a few
  per session; add a "requires" edge from what needs it to it. A known node marked
  prerequisite that the learner now shows: propose it again, same statement, not a
  prerequisite.
- evidence: quotes copied VERBATIM from the transcript text (at least 4 words each, no
  paraphrase, no ellipsis); every proposition that is not a prerequisite needs at least one
  quote from a "learner" or "answer" entry.
- edges: "requires" (learning `from` needs `to` first) or "supports" (one backs the other);
  endpoints are your local ids or ids of known nodes. No self-loops.
- attributions: for each new quiz WITHOUT a plan_node, the proposition (local id or known node
  id) it tested, only if clear.
- A WRONG ANSWER IS NOT A MISCONCEPTION. One wrong answer is a slip or a guess: the quiz
  already records it against its proposition; add nothing for it. A misconception is a wrong
  BELIEF, shown either by choosing an option that states that belief (a distractor naming
  it) or by the same wrong idea twice (two answers, or an answer and the learner's own
  words). State it as the belief, starting with "thinks": "thinks a bigger denominator makes
  a bigger fraction", never "the learner is confused" nor "answered 3 to ...". List in
  `shown_by` the tool_call_ids of the wrong answers that show it. The same belief as a known
  misconception node: the same statement, so it is recognised, never a new wording.
Be conservative: leave out anything you cannot back with a verbatim quote."""


class LlmExtractor:
    """Rules: judgment only (what was learned, what depends on what, which proposition an
    untagged probe tested); events and verdicts are rebuilt by the merger, not taken from it."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model

    async def extract(self, job: ExtractionInput) -> ExtractorOutput:
        """One structured call; ModelError when the answer is missing or malformed."""
        plan = job.record.plan
        document = {
            "plan": [
                {"id": n.id, "title": n.title, "summary": n.summary, "parent": n.parent}
                for n in (plan.nodes if plan else [])
            ],
            "known_nodes": [
                {
                    "id": k.id,
                    "statement": k.statement,
                    "kind": k.kind,
                    **({"prerequisite": True} if k.prerequisite else {}),
                }
                for k in job.known
            ],
            "transcript": transcript_document(job.record, job.start, job.upto),
            "quizzes": quiz_document(job.record, job.start, job.upto),
        }
        request = build_request("extractor", SYSTEM, encode(document), ExtractorOutput)
        return await call_structured(self.model, request, ExtractorOutput)


def create_extractor(model: ChatModel) -> LlmExtractor:
    """The extractor stage on `model` (role "extractor")."""
    return LlmExtractor(model)
