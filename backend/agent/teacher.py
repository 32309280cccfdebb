"""The teacher: the prompt, the tool specs and one streamed model call per step.

Rules the teacher follows (enforced by the turn loop, not by trust):
- it may call only the tools in `tool_specs()`; arguments are decoded strictly and a
  malformed call is returned to it as a tool error, never executed;
- a `quiz` or `ask_user_question` ends its turn; the learner's answer is graded by the
  server and comes back as the tool output;
- it never sees more than the transcript, the plan and the graph-context block.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from importlib import resources

from backend.agent.tool_specs import tool_specs
from backend.core.errors import ModelError
from backend.core.ports import ChatModel
from backend.core.transcript import to_model_messages
from shared_contracts.chat import ChatRecord
from shared_contracts.model_io import ModelDone, ModelEvent, ModelRequest

TEMPLATE_ID = "teacher.md"


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    template_id: str
    template_hash: str
    graph_context: str
    text: str


@functools.cache
def load_template() -> str:
    """The packaged teacher prompt, read once per process (a turn re-read the file)."""
    return resources.files("backend.agent").joinpath("prompts", TEMPLATE_ID).read_text("utf-8")


@functools.lru_cache(maxsize=64)
def render_system_prompt(graph_context: str, template: str | None = None) -> RenderedPrompt:
    """The system prompt for a context block; the same inputs give the very same prompt, so
    a session's turns (and sessions on the same graph) share one rendered copy."""
    body = template if template is not None else load_template()
    digest = hashlib.sha256(body.encode()).hexdigest()[:16]
    text = body.rstrip() + "\n"
    if graph_context.strip():
        text += "\n## What this learner already knows (their knowledge graph)\n\n"
        text += graph_context.strip() + "\n"
    return RenderedPrompt(TEMPLATE_ID, digest, graph_context, text)


class Teacher:
    """One model, one rendered prompt; `stream(record)` is one step of the turn loop."""

    def __init__(self, model: ChatModel, prompt: RenderedPrompt) -> None:
        self.model = model
        self.prompt = prompt

    def request(self, record: ChatRecord) -> ModelRequest:
        return ModelRequest(
            role="teacher",
            messages=to_model_messages(record, self.prompt.text),
            tools=list(tool_specs()),
        )

    async def stream(self, record: ChatRecord) -> AsyncIterator[ModelEvent]:
        """The model's events; raises ModelError if the stream ends without `ModelDone`."""
        done = False
        async for event in self.model.stream(self.request(record)):
            if isinstance(event, ModelDone):
                done = True
            yield event
        if not done:
            raise ModelError("the model stream ended without a final message")


def create_teacher(model: ChatModel, graph_context: str, template: str | None = None) -> Teacher:
    return Teacher(model, render_system_prompt(graph_context, template))
