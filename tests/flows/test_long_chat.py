"""A chat far longer than the teacher's window: the model sees a bounded request, every
tool call keeps a unique id, and every answer is accepted."""

from __future__ import annotations

from backend.agent.offline.tutor import OfflineTutor
from backend.core.pending import pending_question
from backend.core.transcript import HISTORY_CHARS
from shared_contracts.chat import ToolPart
from shared_contracts.frames import ErrorFrame
from shared_contracts.model_io import ModelRequest
from tests.flows.harness import FlowHarness


class MeasuringTutor(OfflineTutor):
    """The offline tutor, noting the size of every request it is sent."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    async def stream(self, request: ModelRequest):
        self.sizes.append(sum(len(m.content) for m in request.messages[1:]))
        async for event in super().stream(request):
            yield event


async def test_a_long_chat_keeps_unique_call_ids_and_a_bounded_request():
    tutor = MeasuringTutor()
    flow = FlowHarness(model=tutor)
    chat_id = await flow.new_chat()
    openers = ["teach me fractions", "teach me photosynthesis", "teach me python lists"]
    for i in range(500):
        record = await flow.chats.get(chat_id)
        pending = pending_question(record)
        if pending is not None and i % 4:
            question = pending.question
            if question.kind == "multiple_choice":
                answer: object = question.options[0].id
            elif question.kind == "numeric":
                answer = 1.0
            else:
                answer = "chlorophyll"
            await flow.answer(chat_id, pending.tool_call_id, answer)
        else:  # now and then the learner ignores the question and asks for more
            await flow.say(chat_id, openers[i % 3])
    record = await flow.chats.get(chat_id)
    ids = [p.tool_call_id for m in record.messages for p in m.parts if isinstance(p, ToolPart)]
    assert len(ids) > 400
    assert len(ids) == len(set(ids)), "a tool-call id was issued twice"
    assert not flow.of_type(ErrorFrame), flow.of_type(ErrorFrame)[:3]
    total = sum(len(p.text) for m in record.messages for p in m.parts if hasattr(p, "text"))
    assert total > 2 * HISTORY_CHARS  # the chat outgrew the window...
    assert max(tutor.sizes) < HISTORY_CHARS + 10_000  # ...and the request did not
