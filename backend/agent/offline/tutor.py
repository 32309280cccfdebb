"""`OfflineTutor`: the `ChatModel` that teaches from the lesson library with no network."""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec

from backend.agent.material_context import attached_material_id
from backend.agent.offline.from_text import DocumentLessons, document_lessons
from backend.agent.offline.lessons import Lesson, load_lessons
from backend.agent.offline.review import review_lesson
from backend.agent.offline.review_script import decide_review
from backend.agent.offline.script import Reply, decide
from backend.core.ports import MaterialStore
from backend.core.review_session import read_review_block
from shared_contracts.model_io import (
    ModelDone,
    ModelEvent,
    ModelMessage,
    ModelRequest,
    ModelToolCall,
    TextChunk,
    ToolCallChunk,
)
from shared_contracts.tools import JOB_TOOLS

_ENCODER = msgspec.json.Encoder()
_WORDS = re.compile(r"\s*\S+\s*|\s+")
DOCUMENTS_KEPT = 8
"""Documents whose lessons stay built (the most recently taught)."""
ARG_FRAGMENT = 48
"""Tool arguments stream in fragments of this many characters, as a provider's would."""


class OfflineTutor:
    """A deterministic, stateless `ChatModel` speaking the real teacher tool protocol.

    Rules: every reply is derived from `request.messages` alone (a resumed or replayed
    session continues correctly); same messages → identical events; text streams in
    word-sized chunks; every tool call's arguments decode strictly against its Struct;
    background jobs are never waited for and are acknowledged once their result arrives;
    job tools absent from a non-empty `request.tools` are not called; a session whose
    instructions attach one of the learner's documents is taught from that document.
    """

    name = "offline"

    def __init__(
        self, lessons_dir: Path | None = None, materials: MaterialStore | None = None
    ) -> None:
        self.lessons: list[Lesson] = load_lessons(lessons_dir)
        self._materials = materials
        self._documents: OrderedDict[str, DocumentLessons] = OrderedDict()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream the next reply: text chunks, tool-call fragments, then one `ModelDone`."""
        offered = {t.name for t in request.tools}
        # No tool list at all means "everything" (e.g. a bare test request).
        jobs = JOB_TOOLS & offered if request.tools else JOB_TOOLS
        review = self._review(request)
        if review is not None:
            reply = decide_review(request.messages, *review)
        else:
            document = await self._document(request)
            reply = decide(request.messages, self.lessons, frozenset(jobs), document)
        for event in render(reply, call_id_prefix(request.messages)):
            yield event

    def _review(self, request: ModelRequest) -> tuple[Lesson, list[str]] | None:
        """A review session's probes and what the library cannot probe (its instructions
        carry the due items); None for any other session."""
        system = request.messages[0] if request.messages else None
        if system is None or system.role != "system":
            return None
        items = read_review_block(system.content)
        return None if items is None else review_lesson(items, self.lessons)

    async def _document(self, request: ModelRequest) -> DocumentLessons | None:
        """The lessons of the document the session teaches from (its instructions name it),
        built once per document; None for any other session."""
        system = request.messages[0] if request.messages else None
        if self._materials is None or system is None or system.role != "system":
            return None
        material_id = attached_material_id(system.content)
        if material_id is None:
            return None
        found = self._documents.get(material_id)
        if found is None:
            material = await self._materials.get(material_id)
            found = document_lessons(material, await self._materials.text(material_id))
            self._documents[material_id] = found
            while len(self._documents) > DOCUMENTS_KEPT:
                self._documents.popitem(last=False)
        return found


def call_id_prefix(messages: list[ModelMessage]) -> str:
    """Tool-call ids are named after the request they answer (a hash of its messages):
    unique within a chat however much of it the request shows, and the same on replay."""
    digest = hashlib.sha256(_ENCODER.encode(messages)).hexdigest()[:10]
    return f"offline_{digest}_"


def render(reply: Reply, id_prefix: str) -> list[ModelEvent]:
    """The events of one reply, ending with its `ModelDone`."""
    events: list[ModelEvent] = [TextChunk(text=w) for w in _WORDS.findall(reply.text)]
    calls: list[ModelToolCall] = []
    for index, (name, args) in enumerate(reply.calls):
        call_id = f"{id_prefix}{index + 1}"
        raw = msgspec.json.encode(args).decode()
        events.append(ToolCallChunk(index=index, id=call_id, name=name))
        events.extend(
            ToolCallChunk(index=index, arguments=raw[i : i + ARG_FRAGMENT])
            for i in range(0, len(raw), ARG_FRAGMENT)
        )
        calls.append(ModelToolCall(id=call_id, name=name, arguments=raw))
    message = ModelMessage(role="assistant", content=reply.text, tool_calls=calls)
    events.append(ModelDone(message=message, finish_reason=reply.finish_reason))
    return events
