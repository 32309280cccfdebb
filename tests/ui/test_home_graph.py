"""Home graph layout and panel: readable at any size, sessions by title, filters recover."""

from __future__ import annotations

from datetime import timedelta

from shared_contracts.chat import ChatSummary
from shared_contracts.graph import Evidence, GraphEdge, GraphNode, GraphSnapshot, Probe
from tests.ui.samples import AT
from tests.ui.state_doubles import FakeProxy, substate
from ui import api
from ui.model.graph_layout import (
    BLOCK_LIMIT,
    COLUMN_MAX_HEIGHT,
    DRAW_LIMIT,
    LINE_HEIGHT,
    NODE_CHROME,
    NODE_WIDTH,
    READABLE_ZOOM,
    VIEW,
    fit_view_options,
    flow_edges,
    flow_nodes,
    label_lines,
    newest_blocks,
)
from ui.model.graph_view import detail
from ui.model.home_view import new_note
from ui.state import home_state
from ui.state.home_state import RECENT_CHATS, HomeState

LONG = "thinks the answer is 1/2 when asked what fill in the blank number replaces the mark"


def _node(node_id: str, chat: str = "c1", statement: str = "", **extra) -> GraphNode:
    return GraphNode(
        id=node_id,
        statement=statement or f"{node_id} is a short statement",
        kind="proposition",
        state="shaky",
        sessions=[chat],
        **extra,
    )


def _boxes(items):
    """(left, top, right, bottom) of every graph node, from its estimated label height."""
    out = {}
    for item in items:
        if item["id"].startswith("session-title-"):
            continue
        x, y = item["position"]["x"], item["position"]["y"]
        height = NODE_CHROME + LINE_HEIGHT * label_lines(item["data"]["label"])
        out[item["id"]] = (x, y, x + NODE_WIDTH, y + height)
    return out


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_long_labels_never_overlap_and_a_tall_layer_wraps_into_columns():
    nodes = [_node(f"n{i}", statement=f"{LONG} {i}") for i in range(12)]
    boxes = _boxes(flow_nodes(nodes, []))
    assert label_lines(f"! {LONG}\n— shaky") >= 4  # long enough to have overlapped before
    pairs = [(a, b) for a in boxes for b in boxes if a < b]
    assert not [p for p in pairs if _overlap(boxes[p[0]], boxes[p[1]])]
    assert max(box[3] for box in boxes.values()) <= COLUMN_MAX_HEIGHT
    assert len({box[0] for box in boxes.values()}) > 1


def test_sessions_are_titled_blocks_and_the_whole_fits_the_canvas_shape():
    nodes = [_node(f"{chat}-{i}", chat) for chat in ("c1", "c2", "c3") for i in range(6)]
    items = flow_nodes(nodes, [], "", ["c1", "c2", "c3"], {"c1": "Fractions", "c2": "Lists"})
    titles = {i["id"]: i for i in items if i["id"].startswith("session-title-")}
    assert [t["data"]["label"] for t in titles.values()] == ["Fractions", "Lists"]
    assert all(not t["selectable"] and not t["focusable"] for t in titles.values())
    boxes = _boxes(items)
    wide = max(b[2] for b in boxes.values()) - min(b[0] for b in boxes.values())
    tall = max(b[3] for b in boxes.values()) - min(b[1] for b in boxes.values())
    assert wide / tall < 2 * VIEW[0] / VIEW[1]  # not one long strip
    # the newest session's block is on top or right of the oldest one
    first, last = boxes["c1-0"], boxes["c3-0"]
    assert last[1] < first[1] or last[0] > first[0]


def test_node_aria_labels_read_math_as_text_and_edges_take_no_tab_stop():
    nodes = [_node("a", statement=r"Add $\frac{1}{4}$"), _node("b")]
    assert flow_nodes(nodes, [])[0]["ariaLabel"] == "Add 1/4 (shaky)"
    edges = flow_edges(nodes, [GraphEdge(from_="b", to="a", type="requires")])
    assert edges[0]["focusable"] is False


def test_the_panel_names_sessions_by_title_and_shows_a_quote_once():
    quote = Evidence(
        quote="half is 1/2", message_id="m1", turn=1, speaker="learner", start=0, end=1
    )
    probe = Probe(at=AT, chat_id="c1", question="q", answer="a", expected="a", correct=True)
    snap = GraphSnapshot(nodes=[_node("a", evidence=[quote, quote], probes=[probe])])
    found = detail(snap, "a", {"c1": "Teach me fractions"})
    assert found is not None and [q.text for q in found.quotes] == ["half is 1/2"]
    assert [(s.id, s.title) for s in found.sessions] == [("c1", "Teach me fractions")]
    assert found.probes[0].session_title == "Teach me fractions"
    unknown = detail(snap, "a")
    assert unknown is not None and unknown.sessions[0].title == "c1"  # no title: the id


def _home() -> HomeState:
    return substate(HomeState)


def test_session_filter_lists_titles_and_clear_filters_shows_everything_again():
    state = _home()
    state._titles = {"c1": "Teach me fractions"}
    state._store(GraphSnapshot(nodes=[_node("a"), _node("b", "c2")]))
    assert [(s.id, s.title) for s in state.session_options] == [  # newest first
        ("c2", "c2"),
        ("c1", "Teach me fractions"),
    ]
    state.set_search("nothing like this")
    state.set_filter_session("c2")
    assert state.shown_total == 0
    state.clear_filters()
    assert (state.search, state.filter_session, state.shown_total) == ("", "all", 2)


def test_an_emptied_selection_keeps_the_open_panel():
    state = _home()
    state._store(GraphSnapshot(nodes=[_node("a")]))
    state.select_node("a")
    state.select_node("")  # React Flow reports "nothing selected" when the graph remounts
    assert state.has_selected and state.selected.id == "a"


async def test_an_unreachable_api_is_a_failed_load_not_an_empty_graph(monkeypatch):
    monkeypatch.setenv("LH_API_URL", "http://127.0.0.1:9")  # nothing listens there
    state = _home()
    await HomeState.load.fn(FakeProxy(state))
    assert state.load_failed and "cannot reach the API" in state.error
    assert not state.loading and state.node_total == 0


def _months(sessions: int, per_session: int) -> list[GraphNode]:
    """A learner's graph after months: `sessions` sessions of `per_session` nodes each."""
    return [
        _node(f"s{c:03d}-{i}", f"s{c:03d}", f"idea {i} of session {c:03d}")
        for c in range(sessions)
        for i in range(per_session)
    ]


def test_only_the_newest_whole_session_blocks_are_drawn_within_the_limits():
    order = [f"s{c:03d}" for c in range(300)]
    nodes = _months(300, 10)
    drawn, blocks = newest_blocks(nodes, order)
    assert len(drawn) == DRAW_LIMIT and blocks == DRAW_LIMIT // 10
    assert {n.sessions[0] for n in drawn} == set(order[-blocks:])  # whole, newest blocks
    # one or two matches in each of many sessions: capped by blocks, still whole
    sparse, blocks = newest_blocks(nodes[::10], order)
    assert blocks == BLOCK_LIMIT and len(sparse) == BLOCK_LIMIT
    assert newest_blocks(nodes[:30], order) == (nodes[:30], 3)  # small graphs: everything
    huge = [_node(f"n{i}", "one") for i in range(DRAW_LIMIT + 5)]
    assert newest_blocks(huge, ["one"]) == (huge[:DRAW_LIMIT], 1)  # one huge block is cut


def test_a_months_long_graph_draws_its_newest_sessions_and_says_how_to_see_the_rest():
    state = _home()
    state._store(GraphSnapshot(nodes=_months(300, 10)))
    assert (state.node_total, state.shown_total, state.drawn_total) == (3000, 3000, DRAW_LIMIT)
    assert len([n for n in state.nodes if not n["id"].startswith("session-title-")]) == DRAW_LIMIT
    assert state.capped_note == (
        "Drawn: your 20 newest sessions. Search or pick a session to see the others."
    )
    assert state.session_options[0].id == "s299"  # the session filter starts at the newest
    state.set_search("session 004")  # an old session, found by search: drawn whole
    assert (state.shown_total, state.drawn_total, state.capped_note) == (10, 10, "")
    state.set_search("idea 1 ")
    assert state.drawn_total == BLOCK_LIMIT and state.capped_note.startswith("300 match;")
    state.clear_filters()
    state.set_filter_session("s000")
    assert state.drawn_total == 10 and state.capped_note == ""


def test_a_search_keystroke_sends_the_drawn_graph_but_not_the_legend_or_session_list():
    state = _home()
    state._store(GraphSnapshot(nodes=_months(30, 10)))
    state.dirty_vars.clear()
    state.set_search("idea 3")
    assert {"nodes", "edges", "drawn_total"} <= state.dirty_vars
    assert not {"counts", "session_options", "node_total"} & state.dirty_vars


async def test_after_months_the_sessions_list_starts_with_the_latest_and_can_show_all(
    monkeypatch,
):
    chats = [
        ChatSummary(
            id=f"s{c:03d}",
            title=f"Session {c}",
            created_at=AT + timedelta(days=c),
            updated_at=AT + timedelta(days=c),
            model="offline",
            turns=4,
            messages=8,
        )
        for c in range(300)
    ]

    async def graph() -> GraphSnapshot:
        return GraphSnapshot(nodes=_months(300, 1))

    async def listed() -> list[ChatSummary]:
        return chats

    monkeypatch.setattr(api, "get_graph", graph)
    monkeypatch.setattr(api, "list_chats", listed)
    state = _home()
    await HomeState.load.fn(FakeProxy(state))
    assert len(state.chats) == 300
    assert [row.title for row in state.recent_chats] == [
        f"Session {c}" for c in range(299, 299 - RECENT_CHATS, -1)
    ]
    state.toggle_all_chats()
    assert state.show_all_chats


def test_a_drawing_too_big_to_read_whole_opens_on_its_newest_session():
    state = _home()
    state._store(GraphSnapshot(nodes=_months(300, 10)))
    focus = {item["id"] for item in state.fit_options["nodes"]}
    assert focus == {f"s299-{i}" for i in range(10)} | {"session-title-s299"}
    assert state.fit_options["maxZoom"] == 1
    state.set_filter_session("s000")  # one block: fit it whole, as a small graph is
    assert state.fit_options == {"padding": 0.1, "minZoom": READABLE_ZOOM}
    nodes = [_node(f"{c}-{i}", c) for c in ("c1", "c2") for i in range(3)]
    whole = fit_view_options(nodes, flow_nodes(nodes, []), ["c1", "c2"])
    assert whole == {"padding": 0.1, "minZoom": READABLE_ZOOM}


def test_the_first_view_keeps_labels_readable_on_a_canvas_smaller_than_the_desktop_one():
    # A phone's canvas (about 356x504) fits even one block of a lesson only at about 0.4
    # (5 px labels): the floor keeps 14 px labels at 11 px or more, wherever it opens.
    assert 14 * READABLE_ZOOM >= 11
    # Six sessions of four fit the desktop canvas whole only at about 0.74 (10 px labels):
    # it opens on the newest block too.
    nodes = _months(6, 4)
    order = [f"s{c:03d}" for c in range(6)]
    options = fit_view_options(nodes, flow_nodes(nodes, []), order)
    assert options["minZoom"] == READABLE_ZOOM
    assert {item["id"] for item in options["nodes"]} == {f"s005-{i}" for i in range(4)} | {
        "session-title-s005"
    }


def test_the_new_things_note_counts_in_words():
    assert [new_note(n) for n in (0, 1, 3)] == [
        "",
        "1 thing from your last session is highlighted.",
        "3 things from your last session are highlighted.",
    ]


async def test_a_session_that_does_not_reach_the_graph_is_said_and_can_be_retried(monkeypatch):
    folded = GraphSnapshot(nodes=[_node("n1", "c9")])
    graphs = [GraphSnapshot(), GraphSnapshot(), folded]
    extracted: list[str] = []

    async def graph() -> GraphSnapshot:
        return graphs.pop(0) if len(graphs) > 1 else graphs[0]

    async def extract(chat_id: str) -> None:
        extracted.append(chat_id)

    monkeypatch.setattr(api, "get_graph", graph)
    monkeypatch.setattr(api, "extract", extract)
    monkeypatch.setattr(home_state, "POLL_ROUNDS", 1)
    monkeypatch.setattr(home_state, "POLL_SECONDS", 0)
    state = _home()
    state.highlight = "c9"  # home opened with ?after=c9 (End session)
    await state._await_fold("c9", await api.get_graph())
    assert state.late and not state.updating  # the run failed or is slow: said, not hidden
    await HomeState.retry_update.fn(FakeProxy(state))
    assert extracted == ["c9"]
    assert not state.late and not state.updating
    assert state.new_note == "1 thing from your last session is highlighted."


def test_coming_home_after_a_session_closes_the_panel_left_open_before_it():
    state = _home()
    state._store(GraphSnapshot(nodes=[_node("a")]))
    state.select_node("a")
    state._begin_load("")  # a plain reload keeps what the learner was reading
    assert state.has_selected
    state._begin_load("c9")  # back from End session: the session's nodes are the news
    assert not state.has_selected and state.highlight == "c9" and state.updating
