"""The teacher: the prompt, the tool specs and one streamed model call per step.

`Teacher.stream(record)` is its one entry point: one step of a turn. The turn's loop
(`backend.turn`) enforces its rules — by code, not by trust:
- a turn is at most `max_steps` steps; each step reads the chat as persisted, streams one
  model call to the learner, runs its tool calls in order, then persists the step;
- it may call only the tools in `tool_specs()`; arguments are decoded strictly, and a
  malformed call, a plan change that breaks the tree, or a second question in one turn is
  returned to it as a tool error (the learner sees a sentence), never executed;
- plan tools change the chat's plan tree at once; `research`, `demo` and `visual` start
  background jobs whose results it gets in a later turn, as ordinary tool outputs;
- a `quiz` or `ask_user_question` ends its turn; the learner's answer is graded by the
  server (the key never leaves it) and comes back as the tool output;
- a step with no tool call ends the turn; an empty or cut reply is told to the learner;
- it never sees more than the transcript, the plan, the graph-context block and, when the
  learner has documents, the material block (both rendered once, at the session's first
  turn); only then is it offered `search_material` and passages on plan nodes, whose text
  is quoted as data and whose quotes the server checks word for word.
"""

from __future__ import annotations

import functools
import hashlib
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from importlib import resources

from backend.agent.tool_specs import tool_specs
from backend.core.ports import ChatModel
from backend.core.transcript import to_model_messages
from shared_contracts.chat import ChatRecord
from shared_contracts.model_io import ModelEvent, ModelRequest

TEMPLATE_ID = "teacher.md"


@dataclass(frozen=True, slots=True, weakref_slot=True)
class RenderedPrompt:
    template_id: str
    template_hash: str
    graph_context: str
    text: str


_TEMPLATE = resources.files("backend.agent").joinpath("prompts", TEMPLATE_ID).read_text("utf-8")
"""Read when this module is imported (at start-up): no turn reads a file on the event loop."""


def load_template() -> str:
    """The packaged teacher prompt."""
    return _TEMPLATE


_RENDERED: weakref.WeakValueDictionary[tuple[str, str | None, str], RenderedPrompt] = (
    weakref.WeakValueDictionary()
)


def render_system_prompt(
    graph_context: str, template: str | None = None, material_context: str = ""
) -> RenderedPrompt:
    """The system prompt for a context block (and the learner's material block, if any).
    Turns running at the same time on the same inputs share one rendered copy; none is
    kept once no turn holds it (a session between turns holds only its block)."""
    key = (graph_context, template, material_context)
    found = _RENDERED.get(key)
    if found is not None:
        return found
    body = template if template is not None else load_template()
    text = body.rstrip() + "\n"
    if graph_context.strip():
        text += "\n## What this learner already knows (their knowledge graph)\n\n"
        text += graph_context.strip() + "\n"
    if material_context.strip():
        text += "\n## The learner's own material\n\n" + material_context.strip() + "\n"
    prompt = RenderedPrompt(TEMPLATE_ID, _template_hash(body), graph_context, text)
    _RENDERED[key] = prompt
    return prompt


@functools.lru_cache(maxsize=8)
def _template_hash(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()[:16]


class Teacher:
    """One model, one rendered prompt; `stream(record)` is one step of the turn loop (its
    rules: the module docstring)."""

    def __init__(self, model: ChatModel, prompt: RenderedPrompt, material: bool = False) -> None:
        self.model = model
        self.prompt = prompt
        self._tools = list(tool_specs(material))

    def _request(self, record: ChatRecord) -> ModelRequest:
        return ModelRequest(
            role="teacher",
            messages=to_model_messages(record, self.prompt.text),
            tools=self._tools,
        )

    def stream(self, record: ChatRecord) -> AsyncIterator[ModelEvent]:
        """The model's events for one step, straight from the model (no layer of our own
        per chunk): the caller refuses a stream that ends without `ModelDone`."""
        return self.model.stream(self._request(record))


def create_teacher(
    model: ChatModel, graph_context: str, template: str | None = None, material_context: str = ""
) -> Teacher:
    """A teacher; with a material block, the material tools too."""
    prompt = render_system_prompt(graph_context, template, material_context)
    return Teacher(model, prompt, material=bool(material_context))
