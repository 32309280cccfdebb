"""Graph layout and panels: prerequisites left of dependants, filters, counts, detail."""

from __future__ import annotations

from shared_contracts.graph import Evidence, GraphEdge, GraphNode, GraphSnapshot, Probe
from tests.ui.samples import AT
from ui.model.graph_layout import COLUMN_WIDTH, flow_edges, flow_nodes, layers
from ui.model.graph_view import counts, detail, filtered, sessions


def _node(node_id: str, state: str = "introduced", chats=("c1",), **extra) -> GraphNode:
    return GraphNode(
        id=node_id,
        statement=f"{node_id} statement",
        kind="proposition",
        state=state,
        sessions=list(chats),
        **extra,
    )


NODES = [
    _node("a", "verified"),
    _node("b", "shaky"),
    _node("c", "misconception", chats=("c2",)),
    _node("d"),
]
EDGES = [
    GraphEdge(from_="b", to="a", type="requires"),  # b requires a
    GraphEdge(from_="c", to="b", type="requires"),
    GraphEdge(from_="d", to="a", type="supports"),
]
SNAP = GraphSnapshot(nodes=NODES, edges=EDGES)


def test_layers_put_prerequisites_first_and_ignore_supports():
    assert layers(NODES, EDGES) == {"a": 0, "b": 1, "c": 2, "d": 0}


def test_a_node_without_prerequisites_sits_just_left_of_what_needs_it():
    chain = [_node(n) for n in ("base", "mid", "top", "side", "alone")]
    needs = [
        GraphEdge(from_="mid", to="base", type="requires"),
        GraphEdge(from_="top", to="mid", type="requires"),
        GraphEdge(from_="top", to="side", type="requires"),  # side is only needed by top
    ]
    assert layers(chain, needs) == {"base": 0, "mid": 1, "top": 2, "side": 1, "alone": 0}


def test_in_a_wrapped_layer_what_the_next_layer_needs_sits_nearest_to_it():
    loose = [_node(f"m{i}", "misconception") for i in range(8)]  # no edges: first columns
    needed, user = _node("a-needed"), _node("user")  # first by name, last by need
    edges = [GraphEdge(from_="user", to="a-needed", type="requires")]
    pos = {n["id"]: n["position"] for n in flow_nodes([needed, *loose, user], edges)}
    assert pos["m0"]["x"] < pos["a-needed"]["x"] == max(pos[f"m{i}"]["x"] for i in range(8))
    assert pos["user"]["x"] - pos["a-needed"]["x"] == COLUMN_WIDTH


def test_layers_survive_a_cycle():
    cyc = [
        GraphEdge(from_="a", to="b", type="requires"),
        GraphEdge(from_="b", to="a", type="requires"),
    ]
    assert set(layers(NODES[:2], cyc)) == {"a", "b"}


def test_flow_nodes_are_left_to_right_and_labelled_with_state_words():
    pos = {n["id"]: n["position"] for n in flow_nodes(NODES, EDGES)}
    assert pos["a"]["x"] < pos["b"]["x"]  # one session: layers left to right
    # c (a later session) requires b: b sits left of it or, in an older row, below it
    assert pos["b"]["x"] < pos["c"]["x"] or pos["b"]["y"] > pos["c"]["y"]
    labels = {n["id"]: n["data"]["label"] for n in flow_nodes(NODES, EDGES)}
    assert "verified" in labels["a"] and "✓" in labels["a"]
    assert "misconception" in labels["c"]


def test_flow_edges_requires_solid_arrow_supports_dashed():
    edges = {e["label"]: e for e in flow_edges(NODES, EDGES)}
    assert edges["needed for"]["markerEnd"]["type"] == "arrowclosed"
    assert "strokeDasharray" not in edges["needed for"]["style"]
    assert edges["supports"]["style"]["strokeDasharray"] == "6 4"
    assert all(e["source"] in "abcd" for e in flow_edges(NODES, EDGES))
    req = next(e for e in flow_edges(NODES, EDGES) if e["label"] == "needed for")
    # b requires a: the arrow runs a → b and reads "a needed for b"
    assert (req["source"], req["target"]) == ("a", "b")


def test_filters_counts_and_sessions():
    assert [n.id for n in filtered(SNAP, "shaky", "")] == ["b"]
    assert [n.id for n in filtered(SNAP, "", "c2")] == ["c"]
    assert {c.state: c.count for c in counts(SNAP)} == {
        "verified": 1,
        "fading": 0,
        "introduced": 1,
        "shaky": 1,
        "misconception": 1,
        "resolved": 0,
        "unseen": 0,
    }
    assert sessions(SNAP) == ["c1", "c2"]


def test_detail_has_quotes_and_probe_history():
    ev = Evidence(quote="half is 1/2", message_id="m1", turn=1, speaker="learner", start=0, end=11)
    probe = Probe(at=AT, chat_id="c1", question="1/2 of 4?", answer="2", expected="2", correct=True)
    snap = GraphSnapshot(nodes=[_node("a", "verified", evidence=[ev], probes=[probe])])
    d = detail(snap, "a")
    assert d is not None and [(q.text, q.who) for q in d.quotes] == [("half is 1/2", "You said")]
    assert (d.probes[0].question, d.probes[0].verdict, d.probes[0].session) == (
        "1/2 of 4?",
        "✓ right",
        "c1",
    )
    assert d.probes[0].when == "2026-01-01 00:00"
    assert detail(snap, "zzz") is None


def test_an_unprobed_detail_says_why_by_kind():
    wrong = GraphNode(
        id="w", statement="thinks 3/4 > 4/5", kind="misconception", state="misconception"
    )
    snap = GraphSnapshot(nodes=[_node("a"), wrong])
    assert detail(snap, "a").no_probes == "Not checked by a question yet."
    assert detail(snap, "w").no_probes.startswith("Seen in the answer quoted above")


def test_node_labels_show_inline_math_as_plain_text():
    from ui.model.mathdelims import plain_math

    assert plain_math(r"Add $\frac{1}{4} + \frac{1}{2}$") == "Add 1/4 + 1/2"
    assert plain_math(r"$\frac{1+2}{3}$ and $\frac{-1}{x - y}$") == "(1+2)/3 and -1/(x - y)"
    assert plain_math(r"$3 \times 4 = 12$ and $a \le b$") == "3 × 4 = 12 and a ≤ b"
    assert plain_math(r"\leftarrow stays") == r"\leftarrow stays"
    assert plain_math("no math here") == "no math here"


def test_plain_words_is_what_a_learner_would_type() -> None:
    from ui.model.mathdelims import plain_words

    assert plain_words(r"**$\frac{1}{2}$** of `x`") == "1/2 of x"
    assert plain_words("***both*** and _one_ and [a link](http://example.com/x.png)") == (
        "both and one and a link"
    )
    assert plain_words("2 * 3 * 4 and snake_case_name") == "2 * 3 * 4 and snake_case_name"
