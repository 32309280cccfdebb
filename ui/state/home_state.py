"""Home: the knowledge graph, its filters and side panel, and the list of sessions."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import reflex as rx

from shared_contracts.graph import GraphSession, GraphSnapshot
from ui import api
from ui.model import graph_layout, graph_view, time_travel
from ui.model.graph_view import NodeDetail, SessionLink, StateCount
from ui.model.home_view import ChatRow, capped_note, chat_rows, has_session, new_note, search_nodes
from ui.model.time_travel import Moment
from ui.practise import as_aim, practise_href, practise_title

GRAPH_ID, SIDE_PANEL_ID, NOTICES_ID = "graph", "side-panel", "graph-notices"
MOMENT_ID = "graph-moment"
"""Where keyboard focus is sent: the graph canvas, the aside beside it, the notices, the
time-travel select."""
POLL_SECONDS = 1.0
POLL_ROUNDS = 45
RECENT_CHATS = 12
"""Sessions listed before "Show all": after months, hundreds would make a phone's page
many screens long."""


class HomeState(rx.State):
    """Derived, render-ready graph vars; the raw snapshot stays server-side."""

    loading: bool = True
    error: str = ""
    load_failed: bool = False
    """The graph could not be fetched: the page must not claim it is empty."""
    nodes: rx.Field[list[dict[str, Any]]] = rx.field(default_factory=list)
    edges: rx.Field[list[dict[str, Any]]] = rx.field(default_factory=list)
    node_total: int = 0
    shown_total: int = 0
    """Nodes matching the filters and search."""
    drawn_total: int = 0
    """Of those, the ones drawn: at most graph_layout.DRAW_LIMIT, the newest sessions' blocks."""
    capped_note: str = ""
    """Why not every match is drawn and how to reach the rest ("" when all are)."""
    counts: rx.Field[list[StateCount]] = rx.field(default_factory=list)
    session_options: rx.Field[list[SessionLink]] = rx.field(default_factory=list)
    filter_state: str = "all"
    filter_session: str = "all"
    search: str = ""
    flow_key: str = "empty"
    fit_options: rx.Field[dict[str, Any]] = rx.field(default_factory=dict)
    """React Flow's first fit: all that is drawn, or its newest session when that is small."""
    selected: NodeDetail = NodeDetail()
    has_selected: bool = False
    chats: rx.Field[list[ChatRow]] = rx.field(default_factory=list)
    recent_chats: rx.Field[list[ChatRow]] = rx.field(default_factory=list)
    """The newest RECENT_CHATS of `chats`: what the list shows until "Show all"."""
    show_all_chats: bool = False
    updating: bool = False
    highlight: str = ""
    new_count: int = 0
    new_note: str = ""
    """ "3 things from your last session are highlighted." (empty when none are)."""
    late: bool = False
    """The session just ended did not reach the graph while home waited for it."""
    creating: bool = False
    moment: str = time_travel.NOW
    """The moment the graph shows (a `time_travel` key): now, after a past session, or in
    7 or 30 days."""
    moment_options: rx.Field[list[Moment]] = rx.field(default_factory=list)
    moment_banner: str = ""
    """Which moment is shown, in words ("" for now)."""
    can_travel: bool = False
    """The server tells the graph's moment (`as_of`), so it can show another one."""

    _graph: GraphSnapshot = GraphSnapshot()
    _titles: dict[str, str] = rx.field(default_factory=dict)
    """chat id → title, so sessions read as the learner named them, not as ids."""
    _version: int = 0
    _session_ids: list[str] = rx.field(default_factory=list)
    """Every session in the graph, oldest first (the order blocks are drawn in)."""
    _now_sessions: list[GraphSession] = rx.field(default_factory=list)
    """The sessions of the graph as of now: the past moments one can go back to."""
    _now_at: datetime | None = None
    """The server's now, from the graph as of now: the future moments count from it."""
    _fading_now: int = 0

    def _refresh_graph(self) -> None:
        """What only a new graph changes: totals, legend, session filter, highlight, and
        (for the graph as of now) the moments time travel offers."""
        graph = self._graph
        if self.moment == time_travel.NOW:
            self._now_sessions, self._now_at = list(graph.sessions), graph.as_of
            self._fading_now = time_travel.fading_count(graph)
            self.can_travel = graph.as_of is not None
            self.moment_options = time_travel.moments(graph.sessions, self._titles)
        self._session_ids = graph_view.sessions(graph)
        self.node_total = len(graph.nodes)
        self.counts = graph_view.counts(graph)
        # newest first, as the sessions list reads: after months the latest are wanted most
        self.session_options = graph_view.session_links(self._session_ids[::-1], self._titles)
        self.new_count = sum(1 for n in graph.nodes if self.highlight in n.sessions)
        self.new_note = new_note(self.new_count)

    def _refresh_view(self) -> None:
        """What a filter or search changes: the nodes and edges drawn (a keystroke must
        not resend the legend and the session list)."""
        graph = self._graph
        state = "" if self.filter_state == "all" else self.filter_state
        session = "" if self.filter_session == "all" else self.filter_session
        shown = search_nodes(graph_view.filtered(graph, state, session), self.search)
        drawn, blocks = graph_layout.newest_blocks(shown, self._session_ids)
        self.nodes = graph_layout.flow_nodes(
            drawn, graph.edges, self.highlight, self._session_ids, self._titles
        )
        self.edges = graph_layout.flow_edges(drawn, graph.edges)
        self.fit_options = graph_layout.fit_view_options(drawn, self.nodes, self._session_ids)
        self.shown_total = len(shown)
        self.drawn_total = len(drawn)
        self.capped_note = capped_note(len(shown), len(drawn), blocks, len(shown) < self.node_total)
        self._version += 1
        self.flow_key = f"{self._version}-{self.filter_state}-{self.filter_session}"

    def _store(self, graph: GraphSnapshot) -> None:
        self._graph = graph
        self._refresh_graph()
        self._refresh_view()
        if self.has_selected:
            found = graph_view.detail(graph, self.selected.id, self._titles)
            self.has_selected = found is not None
            self.selected = found or NodeDetail()

    @rx.event(background=True)
    async def load(self) -> None:
        """on_load: fetches the graph and sessions; after a session ends, waits for its fold."""
        async with self:
            self._begin_load(self.router.url.query_parameters.get("after", ""))
            after = self.highlight
        try:
            graph, chats = await asyncio.gather(api.get_graph(), api.list_chats())
        except api.ApiError as exc:
            async with self:
                self.loading, self.updating, self.error = False, False, str(exc)
                self.load_failed = True
            return
        async with self:
            self.load_failed = False
            self.chats = chat_rows(chats)
            self.recent_chats = self.chats[:RECENT_CHATS]
            self._titles = {row.id: row.title for row in self.chats}
            self._store(graph)
            self.loading = False
        await self._await_fold(after, graph)

    def _begin_load(self, after: str) -> None:
        """A fresh look at home; `after` names the session that just ended. The node panel
        open before that session is not what the learner comes back to see."""
        self.highlight = after
        self.moment, self.moment_banner = time_travel.NOW, ""
        self.loading, self.error, self.updating = True, "", bool(after)
        self.late = False
        if after:
            self.has_selected = False

    async def _await_fold(self, after: str, graph: GraphSnapshot) -> None:
        """Polls the graph until the session `after` is folded in, or POLL_ROUNDS pass."""
        rounds = 0
        while after and not has_session(graph, after) and rounds < POLL_ROUNDS:
            rounds += 1
            await asyncio.sleep(POLL_SECONDS)
            try:
                graph = await api.get_graph()
            except api.ApiError:
                continue
            async with self:
                if self.highlight != after:
                    return
                if self.moment == time_travel.NOW:  # not over a moment the learner picked
                    self._store(graph)
        async with self:
            self.updating = False
            # A failed or slow run: say so, and offer the retry only a new trigger brings.
            self.late = bool(after) and not has_session(graph, after)

    @rx.event(background=True)
    async def retry_update(self) -> None:
        """Runs the ended session's extraction again, then waits for it as `load` does."""
        async with self:
            after, self.late, self.error = self.highlight, False, ""
        if not after:
            return
        try:
            await api.extract(after)
            graph = await api.get_graph()
        except api.ApiError as exc:
            async with self:
                self.error, self.late = str(exc), True
            return
        async with self:
            self.updating = True
            self.moment, self.moment_banner = time_travel.NOW, ""
            self._store(graph)
        await self._await_fold(after, graph)

    @rx.event
    def select_node(self, node_id: str) -> rx.event.EventSpec | None:
        """A click, or Enter on a focused node; "" (nothing selected any more) keeps the panel.
        Focus goes to the panel: after the drawn nodes it is up to 200 tab stops away."""
        if not node_id:
            return None
        found = graph_view.detail(self._graph, node_id, self._titles)
        self.has_selected = found is not None
        self.selected = found or NodeDetail()
        return rx.set_focus(SIDE_PANEL_ID) if found else None

    @rx.event
    async def show_moment(self, key: str) -> None:
        """The time-travel select: the graph as of the moment `key` names (now for a key
        naming none)."""
        now = self._now_at or datetime.now(UTC)
        as_of = time_travel.as_of(key, self._now_sessions, now)
        key = key if as_of is not None else time_travel.NOW
        try:
            graph = await api.get_graph(as_of)
        except api.ApiError as exc:
            self.error = f"Could not show your graph at that moment: {exc}"
            return
        self.moment, self.error = key, ""
        self._store(graph)
        self.moment_banner = time_travel.banner(
            key, graph, self._now_sessions, self._titles, self._fading_now
        )

    @rx.event
    async def back_to_now(self) -> rx.event.EventSpec:
        """ "Back to now": the graph as of now; focus to the select the button replaced."""
        await self.show_moment(time_travel.NOW)
        return rx.set_focus(MOMENT_ID)

    @rx.event
    def toggle_all_chats(self) -> None:
        self.show_all_chats = not self.show_all_chats

    @rx.event
    def close_detail(self) -> rx.event.EventSpec:
        """Focus back to the graph the node was picked in, not to the top of the page."""
        self.has_selected = False
        return rx.set_focus(GRAPH_ID)

    @rx.event
    def panel_key(self, key: str) -> rx.event.EventSpec | None:
        """Escape in the node's details closes them, as the Close button does."""
        if key == "Escape" and self.has_selected:
            return self.close_detail()
        return None

    @rx.event
    def set_filter_state(self, value: str) -> None:
        self.filter_state = value
        self._refresh_view()

    @rx.event
    def set_filter_session(self, value: str) -> None:
        self.filter_session = value
        self._refresh_view()

    @rx.event
    def set_search(self, value: str) -> None:
        self.search = value[:200]
        self._refresh_view()

    @rx.event
    def clear_filters(self) -> None:
        self.search, self.filter_state, self.filter_session = "", "all", "all"
        self._refresh_view()

    @rx.event
    async def practise(self):
        """ "Practise this" ("Learn this" for a node not yet seen, "Review this" for one
        fading): a chat aimed at the selected node, opened with its first message."""
        if self.creating or not self.has_selected:
            return None
        statement, aim = self.selected.statement, as_aim(self.selected.aim)
        self.creating = True
        try:
            chat = await api.create_chat(practise_title(statement, aim))
        except api.ApiError as exc:
            self.error = f"Could not start a session: {exc}"
            return None
        finally:
            self.creating = False
        return rx.redirect(practise_href(chat.id, statement, aim))

    @rx.event
    async def new_session(self):
        """Creates a chat and opens its classroom."""
        if self.creating:
            return None
        self.creating = True
        try:
            chat = await api.create_chat()
        except api.ApiError as exc:
            self.error = f"Could not start a session: {exc}"
            return None
        finally:
            self.creating = False
        return rx.redirect(f"/chat/{chat.id}")
