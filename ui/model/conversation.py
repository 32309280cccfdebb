"""The classroom's conversation as render blocks: text, asked questions with their
verdicts, and job cards (research notes, demos, diagrams).

Only what the page shows leaves this module: tool inputs are never copied wholesale
(a quiz part's input can hold its key), only the prompt and suggestions are.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
from typing import Any

from shared_contracts.chat import TextPart, ToolPart
from shared_contracts.jobs import DemoPage, Job, ResearchNote, Source, Visual
from shared_contracts.tools import GradedOutput, JobOutput, ReplyOutput
from ui.model.chart_svg import chart_svg
from ui.model.mathdelims import normalise_math
from ui.model.room import Room

CSP_META = (
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
    "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">"
)
"""Prefixed to every demo page: the sandboxed frame may run scripts but reach nothing."""
DEMO_FOCUS_STYLE = (
    "<style>:focus-visible{outline:3px solid #3e63dd !important;outline-offset:2px}</style>"
)
"""Also prefixed: a keyboard user sees which of the demo's controls has focus (no CSS of
the page around a frame can show focus inside it, and a generated page may draw none)."""

PLAN_TOOLS = frozenset({"plan_init", "plan_add", "plan_update", "plan_mark_done"})
JOB_LABELS = {"research": "Research note", "demo": "Interactive demo", "visual": "Diagram"}


@functools.lru_cache(maxsize=4096)
def math_ready(text: str) -> str:
    """`normalise_math`, remembered: every streamed frame projects the whole conversation
    again, and normalising its unchanged text was nearly all of a frame's Python time."""
    return normalise_math(text)


@dataclasses.dataclass
class SourceLink:
    """A web page (`url`), or a passage of the learner's own material (`quote`, `where`)."""

    title: str = ""
    url: str = ""
    quote: str = ""
    where: str = ""
    """ "“Plants”, page 3": which material and page a quote is from."""


def source_link(source: Source) -> SourceLink:
    if source.quote:
        page = f", page {source.page}" if source.page is not None else ""
        return SourceLink(title=source.title, quote=source.quote, where=f"“{source.title}”{page}")
    return SourceLink(title=source.title, url=source.url)


@dataclasses.dataclass
class ChatItem:
    """One block of the conversation: text, an asked question, or a job card."""

    key: str = ""
    kind: str = "text"  # text | quiz | ask | job
    role: str = "assistant"
    text: str = ""
    prompt: str = ""
    given: str = ""
    graded: bool = False
    correct: bool = False
    expected: str = ""
    feedback: str = ""
    job_kind: str = ""
    job_label: str = ""
    status: str = ""
    running: bool = False
    title: str = ""
    body: str = ""
    caveat: str = ""
    sources: list[SourceLink] = dataclasses.field(default_factory=list)
    demo_doc: str = ""
    image_uri: str = ""
    caption: str = ""
    failed: bool = False
    error: str = ""


def answer_text(answer: Any) -> str:
    """An answer value (text, number or list) as the learner would read it."""
    if isinstance(answer, list):
        return ", ".join(str(a) for a in answer)
    if isinstance(answer, float) and answer.is_integer():
        return str(int(answer))
    return str(answer)


def svg_data_uri(svg: str) -> str:
    """An SVG as an <img> source: scripts inside an image never run."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def failed_request(tool_name: str) -> str:
    """What a job card says when the tutor's request never became a job (and the server
    gave no sentence of its own)."""
    what = {"research": "research", "demo": "demo", "visual": "diagram"}.get(tool_name, tool_name)
    return f"The tutor's {what} request could not be carried out and was skipped."


def _job_status(part: ToolPart, job: Job | None, output: JobOutput | None) -> tuple[str, str]:
    """(status, error): a part the server refused (bad arguments) failed, whatever its kind."""
    if part.state == "output-error":
        return "failed", part.error or failed_request(part.tool_name)
    status = job.status if job is not None else (output.status if output else "pending")
    error = (job.error if job is not None else "") or (output.error if output else "")
    if status == "failed" and not error:
        error = failed_request(part.tool_name)
    return status, error


def _job_item(part: ToolPart, job: Job | None, key: str) -> ChatItem:
    output = part.output if isinstance(part.output, JobOutput) else None
    status, error = _job_status(part, job, output)
    result = job.result if job is not None and job.result is not None else None
    if result is None and output is not None:
        result = output.result
    item = ChatItem(
        key=key,
        kind="job",
        job_kind=part.tool_name,
        job_label=JOB_LABELS.get(part.tool_name, part.tool_name),
        status=status,
        running=status in ("pending", "running"),
        failed=status == "failed",
        error=error,
    )
    if isinstance(result, ResearchNote):
        item.title, item.caveat = result.title, result.caveat
        item.body = math_ready(result.body)
        item.sources = [source_link(s) for s in result.sources]
    elif isinstance(result, DemoPage):
        item.title, item.demo_doc = result.title, CSP_META + DEMO_FOCUS_STYLE + result.html
    elif isinstance(result, Visual):
        item.title, item.caption = result.title, result.caption
        if result.svg:
            item.image_uri = svg_data_uri(result.svg)
        elif result.chart is not None:
            item.image_uri = svg_data_uri(chart_svg(result.chart))
    if not item.title:
        brief = part.input.get("brief") or part.input.get("question") or ""
        item.title = str(brief)[:200]
    return item


def _question_prompt(part: ToolPart) -> str:
    if part.tool_name == "ask_user_question":
        return math_ready(str(part.input.get("prompt", "")))
    question = part.input.get("question")
    prompt = question.get("prompt", "") if isinstance(question, dict) else ""
    return math_ready(str(prompt))


def _option_texts(part: ToolPart, answer: Any) -> Any:
    """A multiple-choice answer as its options' text (ids with no known text stay ids)."""
    question = part.input.get("question")
    options = question.get("options") if isinstance(question, dict) else None
    if not isinstance(options, list):
        return answer
    texts = {
        str(o["id"]): str(o["text"])
        for o in options
        if isinstance(o, dict) and "id" in o and o.get("text")
    }
    if isinstance(answer, list):
        return [texts.get(str(a), a) for a in answer]
    return texts.get(answer, answer) if isinstance(answer, str) else answer


def _tool_item(
    part: ToolPart, room: Room, key: str, jobs_by_call: dict[str, Job]
) -> ChatItem | None:
    if part.tool_name in PLAN_TOOLS:
        return None
    if part.job_id is not None or part.tool_name in JOB_LABELS:
        # A part is announced before its job exists, so it may not carry the job id yet.
        job = room.jobs.get(part.job_id) if part.job_id else None
        return _job_item(part, job or jobs_by_call.get(part.tool_call_id), key)
    if part.tool_name not in ("quiz", "ask_user_question") or part.state == "output-error":
        return None  # a question the server refused (a bad key, a second one) was never asked
    if room.pending is not None and room.pending.tool_call_id == part.tool_call_id:
        return None  # the dock shows the open question
    kind = "quiz" if part.tool_name == "quiz" else "ask"
    item = ChatItem(key=key, kind=kind, prompt=_question_prompt(part))
    output = part.output
    if isinstance(output, GradedOutput):
        item.given, item.graded = answer_text(_option_texts(part, output.answer)), True
        item.correct = output.verdict.correct
        item.expected = math_ready(output.verdict.expected)
        item.feedback = math_ready(output.verdict.feedback)
    elif isinstance(output, ReplyOutput):
        item.given = output.answer
    verdict = room.last_verdict
    if verdict is not None and verdict.tool_call_id == part.tool_call_id and not item.graded:
        item.graded, item.correct = True, verdict.correct
        item.expected = math_ready(verdict.expected)
        item.feedback = math_ready(verdict.feedback)
    return item


def question_key(room: Room, tool_call_id: str) -> str:
    """The key `chat_items` gives the block of the question `tool_call_id` ("" if the room
    does not hold it): the latest message first, where a just-graded question is."""
    for message in reversed(room.messages):
        for index, part in enumerate(message.parts):
            if isinstance(part, ToolPart) and part.tool_call_id == tool_call_id:
                return f"{message.id}:{index}"
    return ""


def turn_start(room: Room) -> int:
    """Index of the message that opens the latest turn (the learner's last message): the
    messages from there on are what a streamed answer changes."""
    for index in range(len(room.messages) - 1, -1, -1):
        if room.messages[index].role == "user":
            return index
    return 0


def chat_items(room: Room, start: int = 0, stop: int | None = None) -> list[ChatItem]:
    """The conversation (its messages `start:stop`) as render blocks, in order; plan tool
    calls go to the plan panel."""
    items: list[ChatItem] = []
    jobs_by_call = {job.tool_call_id: job for job in room.jobs.values()}
    settled = turn_start(room)
    for position, message in enumerate(room.messages[start:stop], start):
        for index, part in enumerate(message.parts):
            key = f"{message.id}:{index}"
            if isinstance(part, TextPart):
                if part.text:
                    # Not the latest turn's text through the cache: it grows every frame.
                    ready = math_ready if position < settled else normalise_math
                    text = ready(part.text)
                    items.append(ChatItem(key=key, role=message.role, text=text))
                continue
            if not isinstance(part, ToolPart):
                continue  # a server notice (a job result delivered) is for the teacher
            item = _tool_item(part, room, key, jobs_by_call)
            if item is not None:
                items.append(item)
    return items
