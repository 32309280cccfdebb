"""THE schema: every value that crosses a process or disk boundary is a Struct here.

Imports only the standard library and msgspec.
"""

from shared_contracts.base import ID_PATTERN, Id, ToolCallId
from shared_contracts.chat import (
    ChatRecord,
    ChatSummary,
    ChatView,
    Message,
    Part,
    PendingQuestion,
    TextPart,
    ToolPart,
)
from shared_contracts.frames import ClientFrame, ServerFrame
from shared_contracts.graph import GraphSnapshot
from shared_contracts.jobs import Job
from shared_contracts.plan import PlanNode, PlanTree

__all__ = [
    "ID_PATTERN",
    "ChatRecord",
    "ChatSummary",
    "ChatView",
    "ClientFrame",
    "GraphSnapshot",
    "Id",
    "Job",
    "Message",
    "Part",
    "PendingQuestion",
    "PlanNode",
    "PlanTree",
    "ServerFrame",
    "TextPart",
    "ToolCallId",
    "ToolPart",
]
