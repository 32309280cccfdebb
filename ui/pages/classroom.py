"""`/chat/[chat_id]`: conversation, plan tree, question dock, job cards and status line."""

from __future__ import annotations

import reflex as rx

from ui.components.composer import composer
from ui.components.conversation_log import conversation_log
from ui.components.hidden import VISUALLY_HIDDEN
from ui.components.materials_dialog import materials_dialog
from ui.components.panel import PANEL
from ui.components.plan_panel import plan_panel
from ui.components.question_dock import question_dock, verdict_card
from ui.components.room_header import header
from ui.components.room_status import connection_notice, error_alert, status_line
from ui.state.room_state import FOLLOW_ID, PlanState, RoomState

S = RoomState


def plan_aside() -> rx.Component:
    return rx.cond(
        S.plan_open,
        rx.box(
            plan_panel(PlanState.plan_goal, PlanState.plan),
            width=rx.breakpoints(initial="100%", md="300px"),
            flex_shrink="0",
            padding="1em",
            **PANEL,
            position=rx.breakpoints(initial="static", md="sticky"),
            top="1em",
            role="complementary",
            aria_label="Plan",
        ),
    )


def classroom() -> rx.Component:
    conversation = rx.vstack(
        status_line(),
        # Headings in order: the page's h1 (the title), the conversation's h2, then the
        # sections a message has (h3; see `safe_markdown`); the plan is the other h2.
        rx.heading("Conversation", as_="h2", style=VISUALLY_HIDDEN),
        conversation_log(),
        verdict_card(),
        question_dock(),
        connection_notice(),
        error_alert(),  # next to where the learner acts, however long the conversation
        composer(),
        spacing="3",
        flex="1",
        min_width="0",
        width="100%",
    )
    # One main landmark holds the page: what is not in a landmark is missed by a screen
    # reader's landmark navigation (axe: landmark-one-main, region).
    room = rx.container(
        header(),
        rx.flex(
            conversation,
            plan_aside(),
            direction=rx.breakpoints(initial="column-reverse", md="row"),
            gap="1.5em",
            align="start",
            width="100%",
        ),
        size="4",
        padding_x="1em",
        padding_bottom="3em",
        class_name="lh-room",
        min_height="calc(100vh + 2px)",
    )
    # Follows a growing answer while the learner is at the bottom, and stays put once they
    # scroll up: the browser's scroll anchoring, with this box as the page's only anchor.
    # Browsers do not anchor at scroll offset 0, so the room is always a little taller than
    # the window and sending scrolls to this box (`RoomState.send_message`).
    # The main landmark is part of the room: no scroll anchor either (were it one, the page
    # would stay put while the answer grows below it).
    return rx.fragment(
        rx.el.main(room, class_name="lh-room"),
        rx.box(class_name="lh-follow", height="1px", id=FOLLOW_ID),
        materials_dialog(),
    )
