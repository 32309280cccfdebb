"""What a client may see of a chat: quiz keys never leave the server.

Every quiz tool part sent to a client (snapshot, tool_call, tool_result) passes through
`public_part`, which replaces the model's arguments with the question's public view.
"""

from __future__ import annotations

import msgspec

from backend.core.pending import pending_question
from backend.core.questions import public_view
from shared_contracts.chat import ChatRecord, ChatView, Message, ToolPart
from shared_contracts.tools import QuizArgs


def public_part(part: ToolPart) -> ToolPart:
    """The part with any answer key removed (only quiz parts carry one)."""
    if part.tool_name != "quiz":
        return part
    try:
        args = msgspec.convert(part.input, QuizArgs)
    except msgspec.ValidationError:
        return msgspec.structs.replace(part, input={})
    view = public_view(args.question, args.node_id)
    return msgspec.structs.replace(part, input={"question": msgspec.to_builtins(view)})


def public_message(message: Message) -> Message:
    if not any(isinstance(p, ToolPart) and p.tool_name == "quiz" for p in message.parts):
        return message
    parts = [public_part(p) if isinstance(p, ToolPart) else p for p in message.parts]
    return msgspec.structs.replace(message, parts=parts)


def chat_view(record: ChatRecord, *, offline: bool, turn_running: bool = False) -> ChatView:
    return ChatView(
        id=record.id,
        title=record.title,
        created_at=record.created_at,
        updated_at=record.updated_at,
        model=record.model,
        offline=offline,
        messages=[public_message(m) for m in record.messages],
        plan=record.plan,
        pending_question=pending_question(record),
        turn_running=turn_running,
        turns=record.turns,
        material_id=record.material_id,
    )
