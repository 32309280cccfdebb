"""The question dock: the open question with its kind's control (option cards, a number
field, a text field with suggestions), the confidence control and Submit; and the last
verdict's card above it."""

from __future__ import annotations

import json

import reflex as rx
from reflex.components.radix.themes.components.radio_cards import RadioCardsRoot
from reflex.event import key_event

from ui.components.chat_items import verdict_line
from ui.components.safe_markdown import safe_markdown
from ui.model.render import OptionView
from ui.state.room_state import (
    ANSWER_CHOICES_ID,
    ANSWER_INPUT_ID,
    COMPOSER_ID,
    DockState,
    RoomState,
    VerdictState,
)

S = RoomState
D = DockState


class OptionCards(RadioCardsRoot):
    """Radix radio cards that report keys too (Reflex gives the root no key trigger)."""

    on_key_down: rx.EventHandler[key_event]


def _option(option: OptionView) -> rx.Component:
    picked = D.choice == option.id
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
        option.label,
        type="button",
        variant="soft",
        radius="full",
        size="2",
        on_click=S.use_suggestion(option.label),
    )


def focus_after_paint(element_id: str) -> rx.event.EventSpec:
    """Focus to `element_id` once the browser has drawn what mounted the caller. A
    `focus()` forces a style and layout pass: run inside the redraw that closed the dock it
    held the verdict back (≈ 60 ms of a 170 ms redraw on a loaded machine, bench B12); a
    frame later the layout is already done."""
    target = json.dumps(element_id)
    return rx.call_script(
        f"requestAnimationFrame(() => setTimeout(() => document.getElementById({target})?.focus()))"
    )


def _text_field(placeholder: str, **props: object) -> rx.Component:
    """The dock's answer field (named by the question's prompt); Enter submits the form."""
    return rx.input(
        value=D.answer_text,
        on_change=S.set_answer_text,
        placeholder=placeholder,
        auto_focus=True,
        id=ANSWER_INPUT_ID,
        aria_labelledby="question-prompt",
        name="answer",
        size="3",
        width="100%",
        **props,
    )


def _option_cards() -> rx.Component:
    return OptionCards.create(
        rx.foreach(D.dock.options, _option),
        value=D.choice,
        on_value_change=S.pick_choice,
        columns=rx.breakpoints(initial="1", sm="2"),
        width="100%",
        id=ANSWER_CHOICES_ID,
        aria_labelledby="question-prompt",
        # The dock takes focus when a question opens, as the text kinds' fields do
        # with autofocus: the group hands it to its picked or first card.
        on_mount=focus_after_paint(ANSWER_CHOICES_ID),
        on_key_down=S.choices_key,
    )


def _number_field() -> rx.Component:
    return rx.hstack(
        _text_field("a number, e.g. 0.5 or 1/2", input_mode="decimal"),
        rx.cond(D.dock.unit != "", rx.text(D.dock.unit)),
        width="100%",
        align="center",
    )


def _suggested_field() -> rx.Component:
    """A free-form question: its suggested answers as chips above the text field."""
    return rx.vstack(
        rx.hstack(
            rx.foreach(D.dock.options, _chip),
            wrap="wrap",
            spacing="2",
            role="group",
            aria_label="Suggested answers",
        ),
        _text_field("Your answer"),
        width="100%",
    )


def answer_control() -> rx.Component:
    return rx.match(
        D.dock.kind,
        ("multiple_choice", _option_cards()),
        ("numeric", _number_field()),
        ("ask_user", _suggested_field()),
        _text_field("Your answer"),
    )


def confidence_control() -> rx.Component:
    return rx.hstack(
        rx.text("How sure are you?", size="2", id="confidence-label"),
        rx.segmented_control.root(
            rx.segmented_control.item("Not said", value="unsaid"),
            rx.segmented_control.item("Guessing", value="25"),
            rx.segmented_control.item("Fairly", value="60"),
            rx.segmented_control.item("Sure", value="90"),
            value=rx.cond(D.confidence == "", "unsaid", D.confidence),
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
            VerdictState.verdict.visible,
            rx.card(
                verdict_line(
                    VerdictState.verdict.correct,
                    VerdictState.verdict.expected,
                    VerdictState.verdict.feedback,
                ),
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
        D.dock.visible,
        rx.card(
            rx.form(
                rx.vstack(
                    rx.text(
                        rx.cond(D.dock.kind == "ask_user", "The tutor asks", "Question"),
                        size="1",
                        weight="bold",
                        color_scheme="gray",
                        id="dock-title",
                    ),
                    rx.box(
                        safe_markdown(D.dock.prompt),
                        id="question-prompt",
                        font_size="1.15em",
                        # Inline fractions set in text style are tiny at body size.
                        style={"& .katex": {"font_size": "1.4em"}},
                    ),
                    answer_control(),
                    rx.cond(D.dock.kind != "ask_user", confidence_control()),
                    rx.cond(
                        D.dock_hint != "",
                        rx.text(
                            D.dock_hint, color_scheme="red", size="2", id="dock-hint", role="alert"
                        ),
                    ),
                    rx.hstack(
                        rx.button(
                            rx.cond(D.dock.checking, "Checking…", "Submit"),
                            type="submit",
                            disabled=D.dock.checking,
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
            data_kind=D.dock.kind,
        ),
        # No question (the page opened, or the dock closed with its focused control):
        # focus to the composer rather than lost on <body>.
        rx.box(display="none", on_mount=focus_after_paint(COMPOSER_ID)),
    )
