"""`/chat/[chat_id]`: conversation, plan tree, question dock, job cards and status line."""

from __future__ import annotations

import reflex as rx
from reflex.components.radix.themes.components.radio_cards import RadioCardsRoot
from reflex.event import key_event

from ui.components.chat_items import chat_item, verdict_line
from ui.components.panel import PANEL
from ui.components.plan_panel import plan_panel
from ui.components.safe_markdown import safe_markdown
from ui.render import OptionView
from ui.state.room_state import (
    ANSWER_CHOICES_ID,
    ANSWER_INPUT_ID,
    COMPOSER_ID,
    FOLLOW_ID,
    ChatLogState,
    RoomState,
)

S = RoomState
Log = ChatLogState


def status_line() -> rx.Component:
    return rx.hstack(
        rx.badge(
            rx.cond(
                S.connection == "connected", rx.icon("wifi", size=14), rx.icon("wifi-off", size=14)
            ),
            S.connection_label,
            color_scheme=rx.match(
                S.connection, ("connected", "grass"), ("reconnecting", "amber"), "gray"
            ),
            id="connection-status",
        ),
        rx.cond(
            S.tutor_label != "",
            rx.badge(
                rx.icon("graduation-cap", size=14),
                S.tutor_label,
                variant="outline",
                id="tutor-label",
            ),
        ),
        rx.cond(
            S.turn_running, rx.hstack(rx.spinner(size="1"), rx.text("tutor is writing…", size="1"))
        ),
        rx.cond(
            S.extracting,
            rx.hstack(
                rx.spinner(size="1"), rx.text("updating your graph…", size="1"), id="extracting"
            ),
        ),
        rx.cond(
            S.graph_notice != "",
            rx.link(S.graph_notice, href="/", id="graph-notice", size="2"),
        ),
        rx.spacer(),
        rx.cond(
            S.room_id != "",
            rx.link(
                rx.hstack(
                    rx.icon("history", size=12), rx.text("Replay"), spacing="1", align="center"
                ),
                href="/replay/" + S.room_id,
                size="1",
                color_scheme="gray",
                title="Developer replay of this session",
                id="replay-link",
            ),
        ),
        spacing="3",
        align="center",
        wrap="wrap",
        width="100%",
    )


def connection_notice() -> rx.Component:
    """While the socket is down, said where the learner is looking (the status line is at
    the top of a conversation that may be long)."""
    return rx.cond(
        S.connection == "reconnecting",
        rx.callout(
            "Reconnecting to the server… Nothing is lost: the page catches up once it is back.",
            icon="wifi-off",
            color_scheme="amber",
            size="1",
            role="status",
            id="connection-notice",
        ),
    )


def error_alert() -> rx.Component:
    return rx.cond(
        S.error != "",
        rx.callout.root(
            rx.callout.icon(rx.icon("triangle-alert")),
            # The callout is a two-column grid (icon, text): the dismiss button shares the
            # text's cell, at its end, instead of wrapping onto a row of its own.
            rx.hstack(
                rx.callout.text(S.error, flex="1"),
                rx.icon_button(
                    rx.icon("x", size=14),
                    on_click=S.dismiss_error,
                    variant="ghost",
                    size="1",
                    aria_label="Dismiss",
                ),
                align="start",
                width="100%",
            ),
            color_scheme="red",
            size="1",
            role="alert",
            id="room-error",
        ),
    )


class OptionCards(RadioCardsRoot):
    """Radix radio cards that report keys too (Reflex gives the root no key trigger)."""

    on_key_down: rx.EventHandler[key_event]


def _option(option: OptionView) -> rx.Component:
    picked = S.choice == option.id
    return rx.radio_cards.item(
        rx.hstack(
            # The pick is shown by a mark, not only by the card's accent border.
            rx.cond(picked, rx.icon("circle-check", size=20), rx.icon("circle", size=20)),
            safe_markdown(option.text),
            align="center",
            spacing="3",
            width="100%",
        ),
        value=option.id,
        # KaTeX gives a card no accessible name; the option's plain text is it.
        aria_label=option.label,
        justify_content="start",
        # Options are read at a glance: larger than body text, so inline fractions are too.
        style={"& .lh-markdown p": {"font_size": "var(--font-size-5)"}},
        class_name="lh-option",
    )


def _chip(option: OptionView) -> rx.Component:
    return rx.button(
        option.text,
        type="button",
        variant="soft",
        radius="full",
        size="2",
        on_click=S.use_suggestion(option.text),
    )


def answer_control() -> rx.Component:
    return rx.match(
        S.q_kind,
        (
            "multiple_choice",
            OptionCards.create(
                rx.foreach(S.q_options, _option),
                value=S.choice,
                on_value_change=S.pick_choice,
                columns=rx.breakpoints(initial="1", sm="2"),
                width="100%",
                id=ANSWER_CHOICES_ID,
                aria_labelledby="question-prompt",
                # The dock takes focus when a question opens, as the text kinds' fields do
                # with autofocus: the group hands it to its picked or first card.
                on_mount=rx.set_focus(ANSWER_CHOICES_ID),
                on_key_down=S.choices_key,
            ),
        ),
        (
            "numeric",
            rx.hstack(
                rx.input(
                    value=S.answer_text,
                    on_change=S.set_answer_text,
                    placeholder="a number, e.g. 0.5 or 1/2",
                    input_mode="decimal",
                    auto_focus=True,
                    id=ANSWER_INPUT_ID,
                    aria_labelledby="question-prompt",
                    name="answer",
                    size="3",
                    width="100%",
                ),
                rx.cond(S.q_unit != "", rx.text(S.q_unit)),
                width="100%",
                align="center",
            ),
        ),
        (
            "ask_user",
            rx.vstack(
                rx.hstack(
                    rx.foreach(S.q_options, _chip),
                    wrap="wrap",
                    spacing="2",
                    role="group",
                    aria_label="Suggested answers",
                ),
                rx.input(
                    value=S.answer_text,
                    on_change=S.set_answer_text,
                    placeholder="Your answer",
                    auto_focus=True,
                    id=ANSWER_INPUT_ID,
                    aria_labelledby="question-prompt",
                    name="answer",
                    size="3",
                    width="100%",
                ),
                width="100%",
            ),
        ),
        rx.input(
            value=S.answer_text,
            on_change=S.set_answer_text,
            placeholder="Your answer",
            auto_focus=True,
            id=ANSWER_INPUT_ID,
            aria_labelledby="question-prompt",
            name="answer",
            size="3",
            width="100%",
        ),
    )


def confidence_control() -> rx.Component:
    return rx.hstack(
        rx.text("How sure are you?", size="2", id="confidence-label"),
        rx.segmented_control.root(
            rx.segmented_control.item("Not said", value="unsaid"),
            rx.segmented_control.item("Guessing", value="25"),
            rx.segmented_control.item("Fairly", value="60"),
            rx.segmented_control.item("Sure", value="90"),
            value=rx.cond(S.confidence == "", "unsaid", S.confidence),
            on_change=S.set_confidence,
            size="1",
            aria_labelledby="confidence-label",
        ),
        align="center",
        wrap="wrap",
    )


def verdict_card() -> rx.Component:
    """In a status region that is always there: a live region announces what changes inside
    it, not a region that arrives already filled (the first verdict was not read out)."""
    return rx.box(
        rx.cond(
            S.v_visible,
            rx.card(
                verdict_line(S.v_correct, S.v_expected, S.v_feedback),
                width="100%",
                id="verdict",
            ),
        ),
        role="status",
        id="verdict-live",
        width="100%",
    )


def question_dock() -> rx.Component:
    return rx.cond(
        S.q_visible,
        rx.card(
            rx.form(
                rx.vstack(
                    rx.text(
                        rx.cond(S.q_kind == "ask_user", "The tutor asks", "Question"),
                        size="1",
                        weight="bold",
                        color_scheme="gray",
                        id="dock-title",
                    ),
                    rx.box(
                        safe_markdown(S.q_prompt),
                        id="question-prompt",
                        font_size="1.15em",
                        # Inline fractions set in text style are tiny at body size.
                        style={"& .katex": {"font_size": "1.4em"}},
                    ),
                    answer_control(),
                    rx.cond(S.q_kind != "ask_user", confidence_control()),
                    rx.cond(
                        S.dock_hint != "",
                        rx.text(
                            S.dock_hint, color_scheme="red", size="2", id="dock-hint", role="alert"
                        ),
                    ),
                    rx.hstack(
                        rx.button(
                            rx.cond(S.q_checking, "Checking…", "Submit"),
                            type="submit",
                            disabled=S.q_checking,
                            size="3",
                            id="submit-answer",
                        ),
                        rx.text("Enter submits", size="1", color_scheme="gray"),
                        align="center",
                    ),
                    spacing="3",
                    width="100%",
                ),
                on_submit=S.submit_answer,
                reset_on_submit=False,
                # A named form is a landmark: "Question, form" / "The tutor asks, form".
                aria_labelledby="dock-title",
            ),
            width="100%",
            id="question-dock",
            class_name="lh-dock",
            data_kind=S.q_kind,
        ),
        # No question (the page opened, or the dock closed with its focused control):
        # focus to the composer rather than lost on <body>.
        rx.box(display="none", on_mount=rx.set_focus(COMPOSER_ID)),
    )


COMPOSER_HINT_SIZE = rx.breakpoints(
    {"0px": "var(--font-size-1)", "22.5em": "var(--font-size-2)", "24em": "inherit"}
)


def _wide_only(label: str) -> rx.Component:
    """A button's word, shown from 480 px up: on a phone the button is its icon
    (named by `aria_label`), which leaves the composer room for its whole placeholder."""
    return rx.el.span(label, display=rx.breakpoints(initial="none", xs="inline"))


def composer() -> rx.Component:
    return rx.form(
        rx.hstack(
            rx.input(
                value=S.draft,
                on_change=S.set_draft,
                placeholder="Ask or tell the tutor something…",
                id=COMPOSER_ID,
                aria_label="Message to the tutor",
                name="draft",
                size="3",
                width="100%",
                max_length=16000,
                disabled=S.q_visible,
                # The whole hint fits down to a 320 px phone (smaller below 384 px);
                # narrower still, it ends in "…" rather than mid-word.
                style={
                    "& input": {"text_overflow": "ellipsis"},
                    "& input::placeholder": {"font_size": COMPOSER_HINT_SIZE},
                },
            ),
            rx.cond(
                S.turn_running,
                # While the tutor writes, the learner can stop it (the text so far is kept).
                rx.button(
                    rx.icon("square", size=14),
                    _wide_only("Stop"),
                    type="button",
                    on_click=S.stop_turn,
                    size="3",
                    variant="soft",
                    color_scheme="gray",
                    aria_label="Stop",
                    id="stop",
                ),
                rx.button(
                    rx.icon("send", size=16),
                    _wide_only("Send"),
                    type="submit",
                    size="3",
                    aria_label="Send",
                    id="send",
                    disabled=S.q_visible,
                ),
            ),
            width="100%",
        ),
        on_submit=S.send_message,
        reset_on_submit=False,
        width="100%",
    )


def header() -> rx.Component:
    return rx.hstack(
        rx.link(
            rx.hstack(rx.icon("arrow-left", size=16), rx.text("My graph"), white_space="nowrap"),
            href="/",
            on_click=S.leave,
        ),
        # A long title is cut with an ellipsis: a flex item shrinks only from min-width 0.
        # Not trimmed: with `overflow: hidden` a trimmed line box cut off g, j, p, q and y.
        rx.heading(
            rx.cond(S.title != "", S.title, "Session"),
            size="4",
            flex="1",
            min_width="0",
            white_space="nowrap",
            overflow="hidden",
            text_overflow="ellipsis",
            id="room-title",
        ),
        rx.icon_button(
            rx.icon("list-tree"),
            on_click=S.toggle_plan,
            variant="soft",
            aria_label="Plan",
            aria_expanded=S.plan_open,
            aria_controls="plan-tree",
            title="Show or hide the plan",
            id="plan-toggle",
        ),
        rx.button(
            "End session",
            on_click=S.end_session,
            loading=S.extracting,
            color_scheme="gray",
            variant="outline",
            id="end-session",
        ),
        rx.color_mode.button(aria_label="Switch light or dark theme"),
        width="100%",
        align="center",
        spacing="3",
        padding_y="0.5em",
    )


@rx.page(route="/chat/[chat_id]", title="Classroom · Learning Harness", on_load=RoomState.open_room)
def classroom() -> rx.Component:
    conversation = rx.vstack(
        status_line(),
        rx.vstack(
            rx.cond(
                (Log.items.length() + S.turn_items.length()) == 0,
                rx.text(
                    "Say hello, or tell the tutor what you want to learn.", color_scheme="gray"
                ),
            ),
            # Earlier turns and the latest one read different states: a streamed token
            # redraws the latest turn only.
            rx.foreach(Log.items, chat_item),
            rx.foreach(S.turn_items, chat_item),
            # A chat opens at its latest message: this mounts with the first items.
            rx.cond(
                (Log.items.length() + S.turn_items.length()) > 0,
                rx.box(display="none", on_mount=rx.scroll_to(FOLLOW_ID)),
            ),
            spacing="3",
            width="100%",
            id="conversation",
            # A log is read out as it grows; busy while the tutor writes, so a screen
            # reader reads the finished answer once instead of every streamed token.
            role="log",
            aria_live="polite",
            aria_label="Conversation",
            aria_busy=S.turn_running,
        ),
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
    room = rx.container(
        header(),
        rx.flex(
            conversation,
            rx.cond(
                S.plan_open,
                rx.box(
                    plan_panel(S.plan_goal, S.plan),
                    width=rx.breakpoints(initial="100%", md="300px"),
                    flex_shrink="0",
                    padding="1em",
                    **PANEL,
                    position=rx.breakpoints(initial="static", md="sticky"),
                    top="1em",
                    role="complementary",
                    aria_label="Plan",
                ),
            ),
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
    return rx.fragment(room, rx.box(class_name="lh-follow", height="1px", id=FOLLOW_ID))
