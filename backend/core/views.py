"""What a client may see of a chat: quiz keys never leave the server.

Every quiz tool part sent to a client (snapshot, tool_call, tool_result) passes through
`public_part`, which replaces the model's arguments with the question's public view.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from backend.core.errors import MALFORMED_CALL, NotFound
from backend.core.pending import pending_question
from backend.core.questions import public_view
from shared_contracts.chat import (
    ChatMode,
    ChatRecord,
    ChatView,
    Message,
    Part,
    TextPart,
    ToolPart,
)
from shared_contracts.tools import JOB_TOOLS, LEARNER_TOOLS, QuizArgs

REQUESTS = {
    "plan_init": "plan",
    "plan_add": "plan change",
    "plan_update": "plan change",
    "plan_mark_done": "plan change",
    "quiz": "question",
    "ask_user_question": "question",
    "research": "research request",
    "demo": "demo request",
    "visual": "diagram request",
    "search_material": "search of your documents",
}
"""What the learner calls each tool's call."""


def learner_error(part: ToolPart) -> str:
    """A failed part's error as the learner reads it: a malformed call (its error begins
    with `MALFORMED_CALL`: the decoder's detail, for the teacher) is said in a sentence."""
    if not part.error.startswith(MALFORMED_CALL):
        return part.error
    what = REQUESTS.get(part.tool_name)
    if what is None:
        return "The tutor asked for a tool that does not exist, so that step was skipped."
    return f"The tutor's {what} was malformed and was skipped."


def public_part(part: ToolPart) -> ToolPart:
    """The part as a client may see it: no answer key (only quiz parts carry one), and a
    malformed call's failure in a sentence (`learner_error`)."""
    if part.state == "output-error" and part.error.startswith(MALFORMED_CALL):
        part = msgspec.structs.replace(part, error=learner_error(part))
    if part.tool_name != "quiz":
        return part
    try:
        args = msgspec.convert(part.input, QuizArgs)
    except msgspec.ValidationError:
        return msgspec.structs.replace(part, input={})
    view = public_view(args.question, args.node_id)
    return msgspec.structs.replace(part, input={"question": msgspec.to_builtins(view)})


def public_message(message: Message) -> Message:
    if not any(isinstance(p, ToolPart) and _private(p) for p in message.parts):
        return message
    parts = [public_part(p) if isinstance(p, ToolPart) else p for p in message.parts]
    return msgspec.structs.replace(message, parts=parts)


def shown(part: Part) -> bool:
    """Whether the learner sees `part` in the conversation: text, an asked question, or a
    job card (a plan change shows only in the plan; a rejected call not at all)."""
    if isinstance(part, TextPart):
        return bool(part.text.strip())
    return (
        isinstance(part, ToolPart)
        and part.state != "output-error"
        and part.tool_name in LEARNER_TOOLS | JOB_TOOLS
    )


def _private(part: ToolPart) -> bool:
    """Whether `public_part` changes `part` (a quiz's key, a malformed call's detail)."""
    return part.tool_name == "quiz" or part.error.startswith(MALFORMED_CALL)


class Page(msgspec.Struct, frozen=True, kw_only=True):
    """Which of a chat's messages a view shows: the `limit` (None: all) just before message
    `before` (None: the latest)."""

    before: str | None = None
    limit: int | None = None


WHOLE = Page()
MAX_PAGE = 500
"""The most messages a page may ask for."""


def page_bounds(messages: Sequence[Message], page: Page) -> tuple[int, int]:
    """(start, end) of `page` in `messages`; `NotFound` when `before` is not one of them."""
    end = len(messages)
    if page.before is not None:
        end = next((i for i, m in enumerate(messages) if m.id == page.before), -1)
        if end < 0:
            raise NotFound(f"no message {page.before} in this chat")
    start = 0 if page.limit is None else max(0, end - page.limit)
    return start, end


def chat_view(
    record: ChatRecord, *, offline: bool, turn_running: bool = False, page: Page = WHOLE
) -> ChatView:
    """The chat as a client may see it: `page` of its messages (all by default), and how
    many come before them. The plan and the open question are the chat's, whatever the
    page."""
    start, end = page_bounds(record.messages, page)
    return ChatView(
        id=record.id,
        title=record.title,
        created_at=record.created_at,
        updated_at=record.updated_at,
        model=record.model,
        offline=offline,
        messages=[public_message(m) for m in record.messages[start:end]],
        plan=record.plan,
        pending_question=pending_question(record),
        turn_running=turn_running,
        turns=record.turns,
        material_id=record.material_id,
        earlier=start,
        mode=chat_mode(record),
    )


def chat_mode(record: ChatRecord) -> ChatMode:
    """A chat's mode; a record that does not say is a lesson."""
    return "lesson" if isinstance(record.mode, msgspec.UnsetType) else record.mode
