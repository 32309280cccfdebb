"""Sub-agent jobs (research, demo, visual) and their artifacts."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from shared_contracts.base import Id, Record, ToolCallId

JobKind = Literal["research", "demo", "visual"]
JobStatus = Literal["pending", "running", "done", "failed", "cancelled"]
TERMINAL_JOB_STATUSES = frozenset({"done", "failed", "cancelled"})


class Source(Record, kw_only=True, frozen=True):
    """What a note cites: a passage of the learner's own material (its `quote` checked
    verbatim against the stored page text, with `material_id` and `page`), or a web page
    (`url`, from a search hit, never from the model)."""

    title: str
    url: str = ""
    quote: str = ""
    material_id: Id | None = None
    page: int | None = None


class ResearchNote(Record, tag_field="kind", tag="research_note", kw_only=True, frozen=True):
    title: str
    body: str
    sources: list[Source] = msgspec.field(default_factory=list)
    caveat: str = ""


class DemoPage(Record, tag_field="kind", tag="demo_page", kw_only=True, frozen=True):
    """A self-contained HTML page, shown only in a sandboxed iframe."""

    title: str
    html: str


class ChartSeries(Record, kw_only=True, frozen=True):
    name: str
    x: list[float]
    y: list[float]


class ChartSpec(Record, kw_only=True, frozen=True):
    kind: Literal["line", "bar", "scatter"]
    x_label: str = ""
    y_label: str = ""
    series: list[ChartSeries] = msgspec.field(default_factory=list)


class Visual(Record, tag_field="kind", tag="visual", kw_only=True, frozen=True):
    """A sanitised SVG diagram or a chart spec the UI renders."""

    title: str
    svg: str = ""
    chart: ChartSpec | None = None
    caption: str = ""


JobResult = ResearchNote | DemoPage | Visual


class Job(Record, kw_only=True, frozen=True):
    id: Id
    chat_id: Id
    tool_call_id: ToolCallId
    kind: JobKind
    status: JobStatus = "pending"
    brief: str = ""
    node_id: Id | None = None
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    result: JobResult | None = None
    error: str = ""
    delivered: bool = False
    audit: list[str] | msgspec.UnsetType = msgspec.UNSET
    """What the job's checks dropped and why (e.g. a citation not found in the material):
    for the operator and the trace; never shown to the learner or the teacher. Unset (and
    not written) when nothing was dropped."""
