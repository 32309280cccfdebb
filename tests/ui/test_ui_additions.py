"""Home search, "practise this" (title, first message, URL, send-once) and MC answer text."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import msgspec

from shared_contracts.chat import ChatSummary, ChatView, Message, NoticePart, TextPart, ToolPart
from shared_contracts.frames import Snapshot
from shared_contracts.graph import GraphNode, GraphSnapshot
from shared_contracts.questions import Verdict
from shared_contracts.tools import GradedOutput
from tests.ui.samples import AT, chat_view
from tests.ui.state_doubles import substate
from ui.model.conversation import chat_items
from ui.model.home_view import chat_rows, search_nodes
from ui.model.room import Room, apply_frames, user_sent, with_connection
from ui.practise import (
    ASK_CHARS,
    clean_ask,
    practise_ask,
    practise_href,
    practise_title,
    ready_to_ask,
    shorten,
)
from ui.state.home_state import HomeState


def _node(node_id: str, statement: str, state: str = "introduced", chat: str = "c1") -> GraphNode:
    return GraphNode(
        id=node_id, statement=statement, kind="proposition", state=state, sessions=[chat]
    )


NODES = [
    _node("a", "A fraction has a Denominator", "verified"),
    _node("b", "Equivalent fractions   share a value", "shaky"),
    _node("c", "Lists are ordered", "verified", chat="c2"),
]


def test_search_is_a_case_insensitive_substring_of_the_statement():
    assert [n.id for n in search_nodes(NODES, "DENOM")] == ["a"]
    assert [n.id for n in search_nodes(NODES, "fraction")] == ["a", "b"]
    assert [n.id for n in search_nodes(NODES, "fractions share")] == ["b"]  # spaces collapse
    assert [n.id for n in search_nodes(NODES, "  ")] == ["a", "b", "c"]
    assert search_nodes(NODES, "photosynthesis") == []


def test_search_combines_with_the_state_and_session_filters():
    state = substate(HomeState)
    state._store(GraphSnapshot(nodes=NODES))
    state.set_search("fraction")
    assert {n["id"] for n in state.nodes} == {"a", "b"} and state.shown_total == 2
    state.set_filter_state("verified")
    assert {n["id"] for n in state.nodes} == {"a"}
    state.set_search("")
    assert {n["id"] for n in state.nodes} == {"a", "c"}
    state.set_filter_session("c2")
    assert {n["id"] for n in state.nodes} == {"c"} and state.node_total == 3


def test_practise_title_is_shortened_at_a_word():
    assert practise_title("Halves") == "Practise: Halves"
    long = "The denominator counts the equal parts of a whole " * 5
    title = practise_title(long)
    assert title.startswith("Practise: The denominator") and title.endswith("…")
    assert len(title) <= len("Practise: ") + 60 and len(title) <= 200
    assert shorten("a\nb   c", 10) == "a b c"


def test_practise_href_carries_the_first_message_url_encoded():
    statement = "1/3 < 1/2 & why? #fractions"
    href = practise_href("chat-0007", statement)
    parts = urlsplit(href)
    assert parts.path == "/chat/chat-0007" and not parts.fragment
    assert parse_qs(parts.query)["ask"] == [f"Help me practise: {statement}"]
    assert practise_ask(statement) == "Help me practise: 1/3 < 1/2 & why? #fractions"
    assert len(practise_ask("word " * 1000)) <= ASK_CHARS
    assert clean_ask("  x  ") == "x" and len(clean_ask("y" * 5000)) == ASK_CHARS


def _empty_chat() -> ChatView:
    return chat_view(messages=[], pending_question=None, plan=None)


def test_ask_waits_for_a_connected_loaded_idle_empty_chat_and_fires_once():
    room = Room(chat_id="chat-1")
    assert not ready_to_ask(with_connection(room, "connected"))  # no snapshot yet
    loaded = apply_frames(room, [Snapshot(chat=_empty_chat())])
    assert not ready_to_ask(with_connection(loaded, "reconnecting"))
    ready = with_connection(loaded, "connected")
    assert ready_to_ask(ready)
    assert not ready_to_ask(user_sent(ready, "Help me practise: x", "local-1"))
    # a reload: the chat already holds messages, so nothing is sent again
    again = apply_frames(with_connection(Room(), "connected"), [Snapshot(chat=chat_view())])
    assert not ready_to_ask(again)


def _mc_part(answer) -> ToolPart:
    question = {
        "kind": "multiple_choice",
        "prompt": "Which is bigger?",
        "options": [{"id": "a", "text": "1/2"}, {"id": "b", "text": "1/3"}],
        "correct": "a",
    }
    output = GradedOutput(answer=answer, verdict=Verdict(correct=True, expected="1/2"))
    return ToolPart(
        tool_call_id="call_mc",
        tool_name="quiz",
        state="output-available",
        input={"question": question},
        output=output,
    )


def _given(part: ToolPart) -> str:
    message = Message(id="m1", role="assistant", turn=1, created_at=AT, parts=[part])
    chat = chat_view(messages=[message], pending_question=None)
    items = chat_items(apply_frames(Room(), [Snapshot(chat=chat)]))
    return next(i for i in items if i.kind == "quiz").given


def test_a_multiple_choice_answer_shows_the_option_text():
    assert _given(_mc_part("a")) == "1/2"
    assert _given(_mc_part(["a", "b"])) == "1/2, 1/3"
    assert _given(_mc_part("z")) == "z"  # an unknown id stays visible as it is
    short = msgspec.structs.replace(
        _mc_part("denominator"), input={"question": {"kind": "short_answer", "prompt": "?"}}
    )
    assert _given(short) == "denominator"
    assert _given(_mc_part("a")) != "a"


def test_a_snapshot_with_a_job_notice_renders():
    notice = NoticePart(kind="job_delivered", text="research done", job_id="job-1")
    message = Message(
        id="m9", role="user", turn=2, created_at=AT, parts=[notice, TextPart(text="next")]
    )
    chat = chat_view(messages=[message], pending_question=None)
    items = chat_items(apply_frames(Room(), [Snapshot(chat=chat)]))
    assert [i.text for i in items] == ["next"]


def test_session_rows_are_newest_first_and_count_turns_in_words():
    def summary(chat_id: str, minutes: int, turns: int) -> ChatSummary:
        at = AT + timedelta(minutes=minutes)
        return ChatSummary(
            id=chat_id, title="", created_at=AT, updated_at=at, model="m", turns=turns, messages=2
        )

    rows = chat_rows([summary("chat-a", 1, 1), summary("chat-b", 2, 0), summary("chat-c", 0, 12)])
    assert [r.id for r in rows] == ["chat-b", "chat-a", "chat-c"]
    assert [r.turns for r in rows] == ["0 turns", "1 turn", "12 turns"]
    assert rows[0].title == "Untitled session" and rows[0].href == "/chat/chat-b"
