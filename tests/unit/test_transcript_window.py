"""The model sees a recent window of the transcript: a suffix of the whole conversion that
begins at a learner message, fits the budget (the last turn always shown), and says how
many messages it leaves out."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from backend.core.transcript import ELIDED_NOTE, to_model_messages
from shared_contracts.chat import ChatRecord, Message, TextPart, ToolPart
from shared_contracts.tools import ReplyOutput

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SYSTEM = "you teach"


def turn(i: int, text_len: int, with_tool: bool) -> list[Message]:
    user = Message(
        id=f"u{i}", role="user", turn=i, created_at=T0, parts=[TextPart(text="q" * text_len)]
    )
    parts: list = [TextPart(text=f"answer {i} " + "a" * text_len)]
    if with_tool:
        parts.append(
            ToolPart(
                tool_call_id=f"call-{i}",
                tool_name="ask_user_question",
                state="output-available",
                input={"prompt": "how was it?"},
                output=ReplyOutput(answer="fine"),
            )
        )
        parts.append(TextPart(text="thanks"))
    assistant = Message(id=f"a{i}", role="assistant", turn=i, created_at=T0, parts=parts)
    return [user, assistant]


def chat(turns: list[tuple[int, bool]]) -> ChatRecord:
    messages = [m for i, (size, tool) in enumerate(turns) for m in turn(i, size, tool)]
    return ChatRecord(id="chat-1", title="t", created_at=T0, updated_at=T0, messages=messages)


def chars(messages) -> int:
    return sum(len(m.content) + sum(len(c.arguments) + len(c.name) for c in m.tool_calls)
               for m in messages)  # fmt: skip


def test_a_short_chat_is_shown_whole_without_a_note():
    record = chat([(50, True), (50, False)])
    out = to_model_messages(record, SYSTEM)
    assert out[0].role == "system" and out[0].content == SYSTEM
    assert not any("not shown" in m.content for m in out)
    assert [m.content for m in out if m.role == "user"] == ["q" * 50, "q" * 50]


def test_a_long_chat_shows_a_recent_window_that_begins_at_a_learner_message():
    record = chat([(500, i % 3 == 0) for i in range(200)])
    full = to_model_messages(record, SYSTEM, history_chars=10**9)
    out = to_model_messages(record, SYSTEM, history_chars=20_000)
    note, shown = out[1], out[2:]
    elided = int(note.content.split()[2])
    assert note.content == ELIDED_NOTE.format(count=elided)
    assert shown == full[-len(shown) :]  # a suffix of the whole conversation
    assert shown[0].role == "user"
    assert 20_000 - 2_000 < chars(shown) <= 20_000 + 2_000  # within one turn of the budget
    assert elided == len(record.messages) - 2 * (sum(m.role == "user" for m in shown))
    assert chars(to_model_messages(record, SYSTEM, history_chars=20_000)) == chars(out)


def test_the_last_turn_is_shown_whole_even_beyond_the_budget():
    record = chat([(100, False), (100, False), (30_000, True)])
    out = to_model_messages(record, SYSTEM, history_chars=1_000)
    assert out[1].content == ELIDED_NOTE.format(count=4)
    assert out[2].content == "q" * 30_000
    assert out[-1].content == "thanks"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3_000), st.booleans()), min_size=1, max_size=40),
    st.integers(0, 40_000),
)
def test_every_window_is_a_clean_suffix(turns, budget):
    record = chat(turns)
    full = to_model_messages(record, SYSTEM, history_chars=10**9)
    out = to_model_messages(record, SYSTEM, history_chars=budget)
    shown = out[2:] if len(out) > 1 and out[1].content.startswith("[notice]") else out[1:]
    assert shown == full[len(full) - len(shown) :]
    assert shown and shown[0].role == "user"
    called = set()
    for m in shown:  # every tool result follows its call
        called.update(c.id for c in m.tool_calls)
        if m.role == "tool":
            assert m.tool_call_id in called
    if len(shown) < len(full) - 1:  # cut: without its first turn the window fits
        users = [i for i, m in enumerate(shown) if m.role == "user"]
        if len(users) > 1:
            assert chars(shown[users[1] :]) <= budget
