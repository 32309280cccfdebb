"""Home for the keyboard and a screen reader, without a browser: where focus goes when a
node's details open and close, one h1 and headings in order, landmarks, a live region
for the notices, and a drawing the keyboard cannot damage."""

from __future__ import annotations

import re

from shared_contracts.graph import GraphEdge, GraphNode
from tests.ui.state_doubles import substate
from tests.ui.test_a11y_classroom import focus_target, ref
from tests.ui.test_unseen_nodes import SNAP
from ui.components.graph_canvas import filters, graph_canvas, skip_graph
from ui.components.home_header import empty_state, load_failed_state, notices
from ui.components.legend import legend
from ui.components.node_panel import node_panel
from ui.components.sessions_panel import sessions_panel
from ui.model.graph_layout import flow_edges, flow_nodes
from ui.pages.home import home
from ui.state.home_state import GRAPH_ID, NOTICES_ID, SIDE_PANEL_ID, HomeState


def _opened() -> HomeState:
    state = substate(HomeState)
    state._store(SNAP)
    assert focus_target(state.select_node("times")) == ref(SIDE_PANEL_ID)
    return state


def test_opening_a_node_sends_focus_to_its_details_and_closing_sends_it_back_to_the_graph():
    # The details sit after every drawn node (up to 200 tab stops): focus goes to them.
    state = _opened()
    assert state.has_selected
    assert focus_target(state.close_detail()) == ref(GRAPH_ID)  # not to the top of the page
    assert not state.has_selected
    assert state.select_node("") is None  # an emptied selection moves nothing


def test_escape_in_the_details_closes_them_and_other_keys_do_nothing():
    state = _opened()
    assert state.panel_key("Tab") is None and state.has_selected
    assert focus_target(state.panel_key("Escape")) == ref(GRAPH_ID)
    assert not state.has_selected
    assert state.panel_key("Escape") is None  # nothing open: nothing to move


def test_focus_targets_can_take_focus_and_the_side_panel_is_a_named_landmark():
    page = str(home())
    for element_id in (GRAPH_ID, SIDE_PANEL_ID, NOTICES_ID):
        props = re.search(rf'id:"{element_id}",.*?ref:ref_[a-z_]+,[^}}]*tabIndex:-1', page)
        assert props, element_id
    assert 'jsx("main"' in page and 'jsx("aside"' in page
    assert "The node's details" in page and '"Your review and sessions"' in page
    assert 'aria-label":"Your knowledge graph"' in page and 'role:"region"' in page


def test_one_h1_then_h2_for_the_side_panel_and_h3_inside_the_details():
    assert 'as:"h2"' in str(sessions_panel())
    panel = str(node_panel())
    assert 'role:"heading"' in panel and '"aria-level":2' in panel  # the statement
    assert panel.count('as:"h3"') == 3  # Evidence, Probe history, Sessions
    assert 'as:"h2"' in str(empty_state()) and 'as:"h2"' in str(load_failed_state())


def test_the_legend_is_a_named_group_and_the_shown_count_is_read_out_when_it_changes():
    assert 'role:"group"' in str(legend(HomeState.counts))
    row = str(filters())
    count = row[: row.index('id:"graph-count"') + 80]
    assert count[count.rindex("jsx(") :].count('role:"status"') == 1


def test_the_notices_are_one_live_region_and_try_again_hands_focus_to_it():
    region = str(notices())
    assert region.startswith("jsx(RadixThemesBox") and 'role:"status"' in region
    for notice in ("graph-updating", "graph-new", "graph-late", "graph-retry"):
        assert f'id:"{notice}"' in region  # inside the region, which is always there
    retry = region[region.index('id:"graph-retry"') :][:600]
    assert "retry_update" in retry and f'"ref_{NOTICES_ID.replace("-", "_")}"' in retry


def test_the_graph_is_a_view_the_keyboard_cannot_damage_and_enter_always_opens_a_node():
    canvas = str(graph_canvas())
    assert "deleteKeyCode:null" in canvas  # Backspace wiped a selected node off the drawing
    key_down = canvas[canvas.index("onKeyDown:") :][:400]
    assert "select_node" in key_down and "'Enter'" in key_down and "react-flow__node" in key_down


def test_a_skip_button_leads_past_the_drawn_nodes_to_the_side_panel():
    skip = str(skip_graph())
    assert "Skip the graph" in skip and f'"ref_{SIDE_PANEL_ID.replace("-", "_")}"' in skip
    assert 'id:"skip-graph"' in str(filters())  # last before the drawn nodes


def test_edges_and_new_nodes_are_named_for_a_screen_reader():
    nodes = [
        GraphNode(
            id="a",
            statement=r"Add $\frac{1}{4}$",
            kind="proposition",
            state="shaky",
            sessions=["c2"],
        ),
        GraphNode(
            id="b", statement="Halves", kind="proposition", state="verified", sessions=["c1"]
        ),
    ]
    edges = [
        GraphEdge(from_="a", to="b", type="requires"),  # adding quarters rests on halves
        GraphEdge(from_="b", to="a", type="supports"),
    ]
    names = [e["ariaLabel"] for e in flow_edges(nodes, edges)]
    assert names == ["Halves — needed for — Add 1/4", "Halves — supports — Add 1/4"]
    labels = {n["id"]: n["ariaLabel"] for n in flow_nodes(nodes, edges, highlight="c2")}
    assert labels == {"a": "Add 1/4 (shaky, new)", "b": "Halves (verified)"}  # as drawn: "· new"


def test_the_graph_tells_the_keyboard_what_enter_does_not_that_delete_removes_nodes():
    canvas = str(graph_canvas())
    assert canvas.count("Press Enter or Space to open its details.") == 2  # keyboard on or off


def test_what_the_panel_and_the_sessions_list_give_to_read_is_16_px():
    panel, sessions = str(node_panel()), str(sessions_panel())
    for text in ('id:"node-note"', '"No quotes recorded."'):
        start = panel.rindex("jsx(", 0, panel.index(text))
        assert 'size:"3"' in panel[start : panel.index("}", start)], text  # its props
    assert 'jsx(RadixThemesBlockquote,{size:"3"}' in panel
    assert 'weight:"medium"' in sessions and 'size:"3",weight:"medium"' in sessions
