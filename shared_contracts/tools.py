"""Teacher tool arguments (decoded strictly from model output) and tool outputs.

Every tool's JSON Schema for the model is generated from its argument Struct.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from shared_contracts.base import Confidence, Id, Inbound, Record
from shared_contracts.jobs import JobResult, JobStatus
from shared_contracts.materials import MaterialHit, PassageSpec
from shared_contracts.plan import PlanTree
from shared_contracts.questions import AnswerValue, QuestionSpec, Verdict

Title = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
Text = Annotated[str, msgspec.Meta(max_length=4000)]


class PlanNodeSpec(Inbound, kw_only=True, frozen=True):
    id: Id
    title: Title
    summary: Text = ""
    parent: Id | None = None
    passages: Annotated[list[PassageSpec], msgspec.Meta(max_length=3)] | msgspec.UnsetType = (
        msgspec.UNSET
    )
    """In a lesson from a document: the passages this node teaches (page and exact words),
    checked against the document before they are kept. Unset (not written) otherwise."""


class PlanInitArgs(Inbound, kw_only=True, frozen=True):
    """Start the session's plan: a goal and its first nodes (parents before children)."""

    goal: Title
    nodes: Annotated[list[PlanNodeSpec], msgspec.Meta(min_length=1, max_length=50)]


class PlanAddArgs(Inbound, kw_only=True, frozen=True):
    """Add one node under an existing parent (or at the root)."""

    node: PlanNodeSpec


class PlanUpdateArgs(Inbound, kw_only=True, frozen=True):
    """Retitle, re-summarise or focus a node; say you re-teach it, or that you are moving on
    before the learner showed it (`revisit`)."""

    id: Id
    title: Title | None = None
    summary: Text | None = None
    status: Literal["pending", "active", "revisit"] | None = None
    """`revisit`: the learner has not shown this node and you are moving on (it is marked
    "to revisit" and the next open node becomes current)."""
    reteach: bool = False
    """True when you explain this node again (after a wrong answer, or before probing it
    in a review): the learner's answers on it in this turn then count as helped, not as
    unaided recall."""


class PlanMarkDoneArgs(Inbound, kw_only=True, frozen=True):
    """Mark a node done once the learner has shown they understand it."""

    id: Id
    note: Text = ""


class QuizArgs(Inbound, kw_only=True, frozen=True):
    """Ask a graded question; the key stays on the server."""

    question: QuestionSpec
    node_id: Id | None = None


class AskUserArgs(Inbound, kw_only=True, frozen=True):
    """Ask the learner a free-form question (not graded)."""

    prompt: Annotated[str, msgspec.Meta(min_length=1, max_length=4000)]
    suggestions: Annotated[list[str], msgspec.Meta(max_length=8)] = msgspec.field(
        default_factory=list
    )


class ResearchArgs(Inbound, kw_only=True, frozen=True):
    """Ask the researcher for a short, cited note (runs in the background)."""

    question: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]
    node_id: Id | None = None


class DemoArgs(Inbound, kw_only=True, frozen=True):
    """Ask the demo-builder for a small interactive page (runs in the background)."""

    brief: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]
    node_id: Id | None = None


class SearchMaterialArgs(Inbound, kw_only=True, frozen=True):
    """Search the learner's own documents (full text, best passages first)."""

    query: Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
    material_id: Id | None = None
    """One material only (default: all of the learner's)."""
    limit: Annotated[int, msgspec.Meta(ge=1, le=10)] = 5


class VisualArgs(Inbound, kw_only=True, frozen=True):
    """Ask the visual-maker for a diagram (runs in the background)."""

    brief: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]
    node_id: Id | None = None


ToolName = Literal[
    "plan_init",
    "plan_add",
    "plan_update",
    "plan_mark_done",
    "quiz",
    "ask_user_question",
    "research",
    "demo",
    "visual",
    "search_material",
]

TOOL_ARGS: dict[str, type[Inbound]] = {
    "plan_init": PlanInitArgs,
    "plan_add": PlanAddArgs,
    "plan_update": PlanUpdateArgs,
    "plan_mark_done": PlanMarkDoneArgs,
    "quiz": QuizArgs,
    "ask_user_question": AskUserArgs,
    "research": ResearchArgs,
    "demo": DemoArgs,
    "visual": VisualArgs,
    "search_material": SearchMaterialArgs,
}
SERVER_TOOLS = frozenset({"plan_init", "plan_add", "plan_update", "plan_mark_done"})
LEARNER_TOOLS = frozenset({"quiz", "ask_user_question"})
JOB_TOOLS = frozenset({"research", "demo", "visual"})
MATERIAL_TOOLS = frozenset({"search_material"})
"""Offered only when the learner has material to search; run by the server at once."""


# omit_defaults: a plan output with no notes reads as it did before notes existed.
class PlanOutput(
    Record, tag_field="kind", tag="plan", kw_only=True, gc=False, frozen=True, omit_defaults=True
):
    tree: PlanTree
    notes: list[str] = msgspec.field(default_factory=list)
    """What the teacher should know about the change (e.g. a prerequisite to check first)."""


class GradedOutput(Record, tag_field="kind", tag="graded", kw_only=True, gc=False, frozen=True):
    answer: AnswerValue
    confidence: Confidence | None = None
    verdict: Verdict


class ReplyOutput(Record, tag_field="kind", tag="reply", kw_only=True, gc=False, frozen=True):
    answer: str
    confidence: Confidence | None = None


class JobOutput(Record, tag_field="kind", tag="job", kw_only=True, gc=False, frozen=True):
    job_id: Id
    status: JobStatus
    result: JobResult | None = None
    error: str = ""


class SearchOutput(Record, tag_field="kind", tag="search", kw_only=True, gc=False, frozen=True):
    """The passages found; their text is the learner's document, quoted as data."""

    hits: list[MaterialHit] = msgspec.field(default_factory=list)


ToolOutput = PlanOutput | GradedOutput | ReplyOutput | JobOutput | SearchOutput
