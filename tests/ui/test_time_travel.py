"""Time travel on home (issue 19 item 9): the graph as it was after a past session, or what
will be fading in 7 or 30 days, with a banner naming the moment and one click back to now."""

from __future__ import annotations

from datetime import datetime

import msgspec

from shared_contracts.graph import GraphSession, GraphSnapshot
from tests.ui.learner_samples import AS_OF, DAY, FADING, FIRST, NOW, TITLES, VERIFIED
from tests.ui.state_doubles import substate
from tests.ui.test_a11y_classroom import focus_target, ref
from ui import api
from ui.components.time_travel import moment_banner, moment_select
from ui.model.time_travel import NOW as NOW_KEY
from ui.model.time_travel import PAST_LIMIT, as_of, banner, moments
from ui.pages.home import home
from ui.state import home_state
from ui.state.home_state import MOMENT_ID, HomeState

PAST = GraphSnapshot(nodes=[FADING], sessions=[FIRST], as_of=FIRST.at)
IN_30 = msgspec.structs.replace(
    NOW, nodes=[FADING, msgspec.structs.replace(VERIFIED, state="fading")], as_of=AS_OF + 30 * DAY
)


def test_the_moments_are_now_the_future_then_past_sessions_newest_first():
    chosen = moments(NOW.sessions, TITLES)
    assert [(m.key, m.label) for m in chosen] == [
        ("now", "Now"),
        ("in-7", "In 7 days, if you don't review"),
        ("in-30", "In 30 days, if you don't review"),
        ("after-c2", "After session 2: Review: 2 things due (27 Feb 2026)"),
        ("after-c1", "After session 1: Teach me fractions (30 Jan 2026)"),
    ]


def test_after_months_only_the_latest_sessions_are_offered():
    many = [GraphSession(chat_id=f"s{i:03d}", folded_at=1, at=AS_OF + i * DAY) for i in range(200)]
    chosen = moments(many, {})
    assert len(chosen) == 3 + PAST_LIMIT
    assert chosen[3].label.startswith("After session 200: s199")


def test_a_moment_is_a_sessions_last_fold_or_days_from_the_servers_now():
    assert as_of("after-c1", NOW.sessions, AS_OF) == FIRST.at
    assert as_of("in-7", NOW.sessions, AS_OF) == AS_OF + 7 * DAY
    assert as_of("now", NOW.sessions, AS_OF) is None
    assert as_of("after-gone", NOW.sessions, AS_OF) is None  # unknown: now


def test_the_banner_names_the_moment_in_words():
    assert banner("now", NOW, NOW.sessions, TITLES, 1) == ""
    assert banner("after-c1", PAST, NOW.sessions, TITLES, 1) == (
        "Your graph as it was after session 1, “Teach me fractions” (30 Jan 2026): 1 thing."
    )
    assert banner("in-30", IN_30, NOW.sessions, TITLES, 1) == (
        "Your graph in 30 days (31 Mar 2026), if you don't review: 2 things will be fading (1 now)."
    )


class GraphsAt:
    """`api.get_graph` answering by moment, recording what it was asked."""

    def __init__(self) -> None:
        self.asked: list[datetime | None] = []

    async def __call__(self, as_of: datetime | None = None) -> GraphSnapshot:
        self.asked.append(as_of)
        if as_of is None:
            return NOW
        return PAST if as_of <= FIRST.at else IN_30


def _home(monkeypatch) -> tuple[HomeState, GraphsAt]:
    graphs = GraphsAt()
    monkeypatch.setattr(api, "get_graph", graphs)
    state = substate(HomeState)
    state._titles = dict(TITLES)
    state._store(NOW)
    return state, graphs


async def test_a_past_session_shows_the_graph_as_it_was_and_back_to_now_returns(monkeypatch):
    state, graphs = _home(monkeypatch)
    assert [m.key for m in state.moment_options][:3] == ["now", "in-7", "in-30"]
    await state.show_moment("after-c1")
    assert graphs.asked == [FIRST.at]
    assert state.moment == "after-c1" and state.node_total == 1
    assert state.moment_banner.startswith("Your graph as it was after session 1")
    # the choices stay those of now: the past graph knows fewer sessions
    assert [m.key for m in state.moment_options][-2:] == ["after-c2", "after-c1"]
    focus = await state.back_to_now()
    assert graphs.asked[-1] is None and state.moment == NOW_KEY
    assert (state.moment_banner, state.node_total) == ("", 3)
    assert focus_target(focus) == ref(MOMENT_ID)  # the select the button replaced


async def test_the_future_counts_from_the_servers_now_and_says_what_will_fade(monkeypatch):
    state, graphs = _home(monkeypatch)
    await state.show_moment("in-30")
    assert graphs.asked == [AS_OF + 30 * DAY]  # the graph's as_of, not this machine's clock
    assert {c.state: c.count for c in state.counts}["fading"] == 2
    assert "2 things will be fading (1 now)" in state.moment_banner


async def test_a_moment_that_cannot_be_read_keeps_the_graph_shown_and_says_why(monkeypatch):
    state, _ = _home(monkeypatch)

    async def fails(as_of: datetime | None = None) -> GraphSnapshot:
        raise api.ApiError("the API answered 422: as_of is not a moment", 422)

    monkeypatch.setattr(api, "get_graph", fails)
    await state.show_moment("in-7")
    assert state.moment == NOW_KEY and state.node_total == 3
    assert state.error.startswith("Could not show your graph at that moment: the API answered 422")


async def test_a_fold_arriving_while_the_past_is_shown_does_not_replace_it(monkeypatch):
    state, _ = _home(monkeypatch)
    await state.show_moment("after-c1")
    state.highlight = "c9"
    monkeypatch.setattr(home_state, "POLL_ROUNDS", 1)
    monkeypatch.setattr(home_state, "POLL_SECONDS", 0)
    await state._await_fold("c9", PAST)
    assert state.moment == "after-c1" and state.node_total == 1


def test_coming_home_again_shows_now():
    state = substate(HomeState)
    state.moment, state.moment_banner = "in-7", "Your graph in 7 days"
    state._begin_load("")
    assert (state.moment, state.moment_banner) == (NOW_KEY, "")


def test_the_control_is_labelled_and_the_banner_is_a_live_region_with_the_way_back():
    select = str(moment_select())
    assert "Your graph:" in select and "Show your graph at another moment" in select
    assert f'id:"{MOMENT_ID}"' in select
    shown = str(moment_banner())
    assert 'role:"status"' in shown and 'id:"back-to-now"' in shown and "Back to now" in shown
    page = str(home())
    assert page.index(f'id:"{MOMENT_ID}"') < page.index('id:"graph"')


def test_a_graph_of_no_moment_offers_no_time_travel():
    state = substate(HomeState)
    state._store(msgspec.structs.replace(NOW, as_of=None))  # a server that tells no moment
    assert not state.can_travel
    state._store(NOW)
    assert state.can_travel
    assert "can_travel" in str(moment_select())
