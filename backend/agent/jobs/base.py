"""What every sub-agent is: `run(args, context) -> JobResult`, and the context it gets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from backend.core.errors import BadToolArguments
from shared_contracts.jobs import JobResult
from shared_contracts.tools import DemoArgs, ResearchArgs, VisualArgs

JobArgs = ResearchArgs | DemoArgs | VisualArgs
T = TypeVar("T", ResearchArgs, DemoArgs, VisualArgs)


@dataclass(frozen=True, slots=True)
class SubAgentContext:
    """Where a job comes from. The runner fills in `chat_id` and `job_id` on submit."""

    chat_id: str = ""
    job_id: str = ""
    goal: str = ""
    plan_titles: tuple[str, ...] = ()
    audit: list[str] = field(default_factory=list)
    """What the job's checks dropped and why; the runner gives each job a fresh list and
    stores it in the job record (`Job.audit`)."""

    @property
    def key(self) -> str:
        """The trace key of this job's model calls (`job:<id>`)."""
        return f"job:{self.job_id}"

    def lesson_block(self) -> str:
        """The lesson as a few lines of text for a prompt ("" when there is no plan)."""
        lines = [f"Lesson goal: {self.goal}"] if self.goal else []
        if self.plan_titles:
            lines.append("Lesson steps: " + "; ".join(self.plan_titles))
        return "\n".join(lines)


class SubAgent(Protocol):
    """One background job kind: turns tool arguments into an artifact, or raises."""

    async def run(self, args: JobArgs, context: SubAgentContext) -> JobResult: ...


def brief_of(args: JobArgs) -> str:
    """The job's request text: a research question or a demo/visual brief."""
    return args.question if isinstance(args, ResearchArgs) else args.brief


def expect(args: JobArgs, kind: type[T]) -> T:
    """`args` if it is a `kind`, else `BadToolArguments` (a job got the wrong tool's args)."""
    if not isinstance(args, kind):
        raise BadToolArguments(f"expected {kind.__name__}, got {type(args).__name__}")
    return args
