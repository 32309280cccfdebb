"""A turn writes the chat record as few times as its durability needs: one write opens it
(turn count, the learner's message, job notices), one per model step, none more at finish."""

from __future__ import annotations

from shared_contracts.chat import TextPart
from shared_contracts.frames import TurnFinished
from tests.fakes import ScriptedModel, text_reply
from tests.flows.harness import FlowHarness


async def test_a_plain_turn_writes_twice_open_and_its_one_step():
    h = FlowHarness(model=ScriptedModel([text_reply("Hi there.")]))
    chat = await h.new_chat()
    before = h.chats.writes
    assert await h.say(chat, "hello") == "stop"
    assert h.chats.writes - before == 2
    record = await h.chats.get(chat)
    assert record.turns == 1 and record.title == "hello"
    user, assistant = record.messages
    assert user.role == "user" and user.turn == 1 and user.parts == [TextPart(text="hello")]
    assert assistant.role == "assistant" and assistant.parts == [TextPart(text="Hi there.")]
    assert h.of_type(TurnFinished)[-1].reason == "stop"


async def test_the_second_turn_keeps_the_title_and_counts_on():
    h = FlowHarness(model=ScriptedModel([text_reply("One."), text_reply("Two.")]))
    chat = await h.new_chat()
    await h.say(chat, "first words")
    await h.say(chat, "second words")
    record = await h.chats.get(chat)
    assert record.turns == 2 and record.title == "first words"
    assert [(m.role, m.turn) for m in record.messages] == [
        ("user", 1),
        ("assistant", 1),
        ("user", 2),
        ("assistant", 2),
    ]
