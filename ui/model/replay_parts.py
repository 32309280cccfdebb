"""What the replay page's right-hand panel shows of one event: facts, long texts, the
prompt split around its graph context, and the plan and graph as of that event."""

from __future__ import annotations

import dataclasses

from ui.model.plan_view import PlanRow
from ui.model.replay_text import clip, split_prompt


@dataclasses.dataclass
class Fact:
    label: str = ""
    value: str = ""


@dataclasses.dataclass
class Block:
    """One long text, shown in a scrollable `<pre>`; `collapsed` ones start folded."""

    title: str = ""
    text: str = ""
    collapsed: bool = False
    error: bool = False


@dataclasses.dataclass
class EventDetail:
    seq: int = -1
    kind: str = ""
    title: str = ""
    scope: str = ""
    facts: list[Fact] = dataclasses.field(default_factory=list)
    has_prompt: bool = False
    prompt_title: str = ""
    prompt_before: str = ""
    prompt_context: str = ""
    prompt_after: str = ""
    blocks: list[Block] = dataclasses.field(default_factory=list)
    plan_goal: str = ""
    plan: list[PlanRow] = dataclasses.field(default_factory=list)
    plan_note: str = ""
    graph: list[Fact] = dataclasses.field(default_factory=list)


def set_prompt(out: EventDetail, title: str, text: str, context: str) -> None:
    """Shows a system prompt with its graph-context block set apart."""
    before, block, after = split_prompt(text, context)
    out.has_prompt, out.prompt_title = True, title
    out.prompt_before, out.prompt_context, out.prompt_after = (
        clip(before),
        clip(block),
        clip(after),
    )
