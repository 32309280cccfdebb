"""Home shows the learner model (issue 19): fading and resolved nodes with their own icon
and word, memory in words in the node panel, a resolved misconception's question, and
"Review this" for what is fading."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

from shared_contracts.graph import GraphSnapshot, Memory
from tests.ui.learner_samples import AS_OF, FADING, NOW, RESOLVED, TITLES
from tests.ui.state_doubles import substate
from ui import api
from ui.components.node_panel import node_panel
from ui.model.graph_layout import flow_nodes
from ui.model.graph_view import STATE_STYLE, STATES, counts, detail
from ui.model.memory_view import memory_lines, relative
from ui.practise import practise_ask, practise_title
from ui.state.home_state import HomeState


def _flow(node_id: str) -> dict:
    return next(n for n in flow_nodes(NOW.nodes, NOW.edges) if n["id"] == node_id)


def test_fading_and_resolved_have_an_icon_and_a_word_of_their_own():
    icons = [STATE_STYLE[s][1] for s in STATES]
    words = [STATE_STYLE[s][0] for s in STATES]
    assert len(set(icons)) == len(icons) and len(set(words)) == len(words)
    fills = [STATE_STYLE[s][2] for s in STATES]
    assert len(set(fills)) == len(fills)  # and a colour of its own, never the only signal
    assert _flow("half")["data"]["label"] == "◔ 1/2 is bigger than 1/3\n— fading"
    assert _flow("half")["ariaLabel"] == "1/2 is bigger than 1/3 (fading)"
    assert _flow("thirds")["data"]["label"].endswith("— resolved")
    # a misconception stays dashed once resolved; a fading proposition is solid
    assert _flow("thirds")["style"]["border"] == "2px dashed #0c8599"
    assert _flow("half")["style"]["border"] == "2px solid #7048e8"


def test_the_legend_counts_every_state_fading_after_verified_resolved_after_misconception():
    tally = {c.state: c.count for c in counts(NOW)}
    assert tally["fading"] == tally["resolved"] == tally["verified"] == 1
    order = [c.state for c in counts(NOW)]
    assert order.index("verified") < order.index("fading") < order.index("introduced")
    assert order.index("misconception") < order.index("resolved") < order.index("unseen")


def test_the_panel_tells_memory_in_words_counted_from_the_moment_shown():
    found = detail(NOW, "half", TITLES)
    assert found is not None
    assert [(m.label, m.value) for m in found.memory] == [
        ("Chance you'd get it right", "about 71%"),
        ("Due for review", "overdue since 2 Feb 2026 (3 weeks ago)"),
        ("Last checked", "30 Jan 2026 (4 weeks ago), 1 question in all"),
    ]
    assert (found.aim, found.action) == ("review", "Review this")
    fresh = detail(NOW, "denominator", TITLES)
    assert fresh is not None and fresh.action == "Practise this"
    assert fresh.memory[1].value == "in 12 days (13 Mar 2026)"
    assert fresh.memory[2].value == "27 Feb 2026 (2 days ago), 3 questions in all"


def test_a_node_no_question_checked_says_nothing_of_memory():
    never = detail(GraphSnapshot(nodes=[RESOLVED], as_of=AS_OF), "thirds")
    assert never is not None and never.memory == []
    assert memory_lines(None, AS_OF) == []


def test_relative_days_read_as_a_person_says_them():
    said = [relative(AS_OF + timedelta(days=d), AS_OF) for d in (0, -1, 1, -5, 9, 20, -70, 800)]
    assert said == [
        "today",
        "yesterday",
        "tomorrow",
        "5 days ago",
        "in 9 days",
        "in 2 weeks",
        "2 months ago",
        "in 2 years",
    ]


def test_a_resolved_misconception_says_when_and_by_which_question():
    found = detail(NOW, "thirds", TITLES)
    assert found is not None and found.has_resolution
    r = found.resolved
    assert (r.when, r.session, r.session_title) == ("27 Feb 2026", "c2", "Review: 2 things due")
    assert (r.question, r.answer) == ("Which is bigger: 1/3 or 1/2?", "1/2")  # plain words
    assert (found.state_label, found.kind) == ("resolved", "misconception")
    unresolved = detail(NOW, "half", TITLES)
    assert unresolved is not None and not unresolved.has_resolution


def test_the_panel_draws_memory_resolution_and_the_review_action():
    panel = str(node_panel())
    for element_id in ("node-memory", "node-resolved", "practise-this"):
        assert f'id:"{element_id}"' in panel
    assert "LucideRotateCcw" in panel  # the review action's icon
    assert '"violet"' in panel and '"teal"' in panel  # fading and resolved badges


async def test_review_this_on_a_fading_node_opens_a_review_chat_aimed_at_it(monkeypatch):
    titles: list[str] = []

    async def create_chat(title: str = ""):
        titles.append(title)
        return SimpleNamespace(id="chat-7")

    monkeypatch.setattr(api, "create_chat", create_chat)
    state = substate(HomeState)
    state._store(NOW)
    state.select_node("half")
    redirect = await state.practise()
    href = dict((str(k), v._var_value) for k, v in redirect.args)["path"]
    assert titles == [practise_title(FADING.statement, "review")]
    assert titles[0].startswith("Review: ")
    assert href.startswith("/chat/chat-7?ask=Help%20me%20review%3A%20")
    assert practise_ask("Halves", "review") == "Help me review: Halves"


def test_an_open_mix_up_gives_no_chance_of_getting_it_right_and_a_resolved_one_says_avoid():
    just_shown = Memory(
        stability=0.4, difficulty=7.0, retrievability=0.99, due=AS_OF, last_review=AS_OF, reviews=1
    )
    open_one = memory_lines(just_shown, AS_OF, "misconception")
    assert [m.label for m in open_one] == ["Due for review", "Last checked"]
    resolved = memory_lines(just_shown, AS_OF, "resolved")
    assert resolved[0].label == "Chance you'd still avoid the mix-up"
    assert memory_lines(just_shown, AS_OF)[0].label == "Chance you'd get it right"
