"""A "not yet seen" prerequisite on home: drawn in outline, last in the legend and filter,
left of what needs it, and a panel that says why it is there and offers "Learn this"."""

from __future__ import annotations

from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

from shared_contracts.graph import Evidence, GraphEdge, GraphNode, GraphSnapshot
from tests.ui.state_doubles import substate
from ui import api
from ui.components.graph_canvas import filters, graph_canvas
from ui.components.legend import legend
from ui.components.node_panel import node_panel
from ui.model.graph_layout import flow_nodes
from ui.model.graph_view import STATE_STYLE, STATES, counts, detail
from ui.practise import practise_ask, practise_href, practise_title
from ui.state.home_state import HomeState

TAUGHT = GraphNode(
    id="add",
    statement="To add fractions, rewrite them over a common denominator",
    kind="proposition",
    state="introduced",
    sessions=["c1"],
)
TEACHER_SAID = Evidence(
    quote="multiply 3 by 4", message_id="m2", turn=2, speaker="teacher", start=0, end=15
)
UNSEEN = GraphNode(
    id="times",
    statement="Multiplying whole numbers",
    kind="proposition",
    state="unseen",
    sessions=["c1"],
    evidence=[TEACHER_SAID],
)
RESTS_ON = GraphEdge(from_="add", to="times", type="requires")  # adding rests on multiplying
SNAP = GraphSnapshot(nodes=[TAUGHT, UNSEEN], edges=[RESTS_ON])


def _flow(node_id: str, new_session: str = "") -> dict:
    return next(n for n in flow_nodes(SNAP.nodes, SNAP.edges, new_session) if n["id"] == node_id)


def test_an_unseen_node_is_an_outline_with_its_own_icon_and_word():
    label, icon, fill, border, text = STATE_STYLE["unseen"]
    assert (label, fill) == ("not yet seen", "transparent")
    assert icon not in {STATE_STYLE[s][1] for s in STATES if s != "unseen"}
    # theme colours, so the text reads on the light and the dark canvas alike
    assert (border, text) == ("var(--gray-9)", "var(--gray-12)")
    style = _flow("times")["style"]
    assert style["background"] == "transparent"
    assert style["border"] == "2px dashed var(--gray-9)"
    assert style["color"] == "var(--gray-12)"
    assert _flow("times")["data"]["label"] == "? Multiplying whole numbers\n— not yet seen"
    assert _flow("times")["ariaLabel"] == "Multiplying whole numbers (not yet seen)"
    assert _flow("add")["style"]["border"] == "2px solid #64748b"  # others keep their look


def test_a_new_outlined_node_gets_a_valid_highlight_ring():
    ring = _flow("times", new_session="c1")["style"]["boxShadow"]
    assert ring == "0 0 0 4px color-mix(in srgb, var(--gray-9) 33%, transparent)"


def test_the_minimap_strokes_nodes_so_an_unfilled_one_shows_there_too():
    assert 'nodeStrokeColor:"var(--gray-9)"' in str(graph_canvas())


def test_an_unseen_prerequisite_sits_left_of_what_needs_it():
    assert _flow("times")["position"]["x"] < _flow("add")["position"]["x"]


def test_unseen_is_counted_last_in_the_legend_and_offered_last_in_the_filter():
    tally = counts(SNAP)
    assert [c.state for c in tally] == list(STATES) and STATES[-1] == "unseen"
    last = tally[-1]
    assert (last.label, last.icon, last.count, last.outline) == ("not yet seen", "?", 1, True)
    assert not any(c.outline for c in tally[:-1])
    legend_js = str(legend(HomeState.counts))
    assert '"2px dashed "' in legend_js and '"transparent"' in legend_js
    filter_js = str(filters())
    assert filter_js.index('"misconception"') < filter_js.index('"not yet seen"')


def test_the_panel_says_why_an_unseen_node_is_there_and_who_said_its_quotes():
    found = detail(SNAP, "times")
    assert found is not None
    assert found.note.startswith("Not yet seen: a session you took rests on this")
    assert [(q.text, q.who) for q in found.quotes] == [("multiply 3 by 4", "The teacher said")]
    assert found.probes == [] and found.no_probes.startswith("No questions yet")
    assert (found.aim, found.action) == ("learn", "Learn this")
    taught = detail(SNAP, "add")
    assert taught is not None and (taught.note, taught.aim) == ("", "practise")
    assert taught.action == "Practise this"
    panel_js = str(node_panel())
    assert 'id:"node-note"' in panel_js and "LucideBookOpen" in panel_js


def test_learn_this_titles_the_chat_and_asks_to_learn():
    assert practise_title("Multiplying whole numbers", "learn") == (
        "Learn: Multiplying whole numbers"
    )
    assert practise_ask("Halves", "learn") == "Help me learn: Halves"
    ask = parse_qs(urlsplit(practise_href("chat-1", "Halves & thirds", "learn")).query)
    assert ask["ask"] == ["Help me learn: Halves & thirds"]
    assert practise_title("Halves") == "Practise: Halves"  # other states still practise


async def test_learn_this_on_an_unseen_node_opens_a_learn_chat(monkeypatch):
    titles: list[str] = []

    async def create_chat(title: str = ""):
        titles.append(title)
        return SimpleNamespace(id="chat-9")

    monkeypatch.setattr(api, "create_chat", create_chat)
    state = substate(HomeState)
    state._store(SNAP)
    state.select_node("times")
    redirect = await state.practise()
    href = dict((str(k), v._var_value) for k, v in redirect.args)["path"]
    assert titles == ["Learn: Multiplying whole numbers"]
    assert href == "/chat/chat-9?ask=Help%20me%20learn%3A%20Multiplying%20whole%20numbers"
