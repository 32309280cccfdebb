"""One conversation block: text, an asked question with its verdict, or a job card."""

from __future__ import annotations

import reflex as rx

from ui.components.hidden import VISUALLY_HIDDEN
from ui.components.safe_markdown import safe_markdown
from ui.model.conversation import ChatItem, SourceLink
from ui.model.render import in_card
from ui.state.room_state import VerdictState


@rx.memo
def text_block(role: rx.Var[str], text: rx.Var[str]) -> rx.Component:
    """A message's text, as a React memo of plain string props: when the conversation list
    arrives again (a turn joins the log), an unchanged message is not parsed and typeset
    again (that took ~1.5 s for 300 messages, between Enter and the learner's message)."""
    is_user = role == "user"
    return rx.box(
        rx.text(rx.cond(is_user, "You", "Tutor"), size="1", weight="bold", color_scheme="gray"),
        safe_markdown(text),
        class_name=rx.cond(is_user, "lh-msg lh-user", "lh-msg lh-tutor"),
        background=rx.cond(is_user, rx.color("accent", 3), rx.color("gray", 2)),
        padding="0.75em 1em",
        border_radius="12px",
        max_width="100%",
        align_self=rx.cond(is_user, "flex-end", "flex-start"),
    )


def verdict_line(correct: rx.Var[bool], expected: rx.Var[str], feedback: rx.Var[str]):
    return rx.vstack(
        rx.cond(
            correct,
            rx.hstack(rx.icon("circle-check", color=rx.color("grass", 10)), rx.text("Right")),
            rx.hstack(rx.icon("circle-x", color=rx.color("red", 10)), rx.text("Not quite")),
        ),
        rx.cond(
            expected != "",
            rx.hstack(rx.text("Expected:", size="2"), safe_markdown(expected), align="baseline"),
        ),
        rx.cond(
            feedback != "",
            # The teacher's feedback is model text: its math renders like the question's.
            rx.box(safe_markdown(feedback), font_size="0.875em", class_name="lh-feedback"),
        ),
        spacing="1",
        class_name="lh-verdict",
    )


@rx.memo
def question_block(
    kind: rx.Var[str],
    prompt: rx.Var[str],
    given: rx.Var[str],
    graded: rx.Var[bool],
    correct: rx.Var[bool],
    expected: rx.Var[str],
    feedback: rx.Var[str],
    latest: rx.Var[bool],
) -> rx.Component:
    """An asked question and its verdict; a memo of plain props, as `text_block` is. The
    latest verdict is the card's under the conversation (`verdict_card`): here it is out of
    sight until it is history, yet still in the log's reading order. Hidden by a class, not
    left out: the log is a live region, and a verdict added to it when the learner answers
    the next question would be read out again then."""
    return rx.card(
        rx.vstack(
            rx.text(
                rx.cond(kind == "quiz", "Question", "The tutor asked"),
                size="1",
                weight="bold",
                color_scheme="gray",
            ),
            safe_markdown(prompt),
            rx.cond(
                given != "",
                rx.hstack(
                    rx.text("Your answer:", size="2"),
                    rx.box(safe_markdown(given), font_weight="bold", font_size="0.875em"),
                    align="baseline",
                    class_name="lh-given",
                ),
                rx.cond(
                    kind == "quiz",
                    rx.text("Waiting for your answer…", size="2", color_scheme="gray"),
                ),
            ),
            rx.cond(
                graded,
                rx.box(
                    verdict_line(correct, expected, feedback),
                    class_name=rx.cond(latest, "lh-inline-verdict lh-in-card", "lh-inline-verdict"),
                    style={"&.lh-in-card": VISUALLY_HIDDEN},
                ),
            ),
            spacing="2",
            width="100%",
        ),
        width="100%",
        class_name="lh-question-item",
    )


def _source(source: SourceLink) -> rx.Component:
    """A passage of the learner's material (the quote as plain text, never markup, and
    where it is), or a web page that opens in a new tab (the mark says so, and its name)."""
    return rx.cond(source.quote != "", _passage(source), _web_source(source))


def _passage(source: SourceLink) -> rx.Component:
    return rx.el.li(
        rx.el.blockquote(rx.text(source.quote, size="2"), class_name="lh-passage"),
        rx.text("— ", source.where, size="1", color_scheme="gray"),
    )


def _web_source(source: SourceLink) -> rx.Component:
    return rx.el.li(
        rx.link(
            source.title,
            rx.icon(
                "external-link",
                size=12,
                aria_hidden="true",
                display="inline",
                vertical_align="baseline",
                margin_left="0.3em",
            ),
            rx.el.span(" (opens in a new tab)", style=VISUALLY_HIDDEN),
            href=source.url,
            is_external=True,
            rel="noopener noreferrer",
            title="Opens in a new tab",
            class_name="lh-source",
        )
    )


def _demo(item: ChatItem) -> rx.Component:
    """A generated page we do not style: it sits on a tray with a caption, so in dark mode it
    reads as a page inside the card rather than a white hole. Its colours are its own (the
    browser gives a light page its light canvas), so it stays readable in both themes."""
    return rx.el.figure(
        rx.el.figcaption(
            rx.hstack(
                rx.icon("mouse-pointer-click", size=14, aria_hidden="true"),
                rx.text("An interactive page the tutor made: try its controls.", size="1"),
                align="center",
                spacing="2",
            ),
            color=rx.color("gray", 11),
            padding="0 0.25em 0.5em",
        ),
        rx.el.iframe(
            src_doc=item.demo_doc,
            sandbox="allow-scripts",
            referrer_policy="no-referrer",
            title=item.title,
            width="100%",
            height="360px",
            style={
                "display": "block",
                "border": "1px solid var(--gray-7)",
                "border_radius": "6px",
                # Behind a page whose scheme matches the theme's (its canvas is then clear).
                "background": "var(--color-background)",
            },
        ),
        margin="0",
        padding="0.6em",
        background=rx.color("gray", 3),
        border=f"1px solid {rx.color('gray', 5)}",
        border_radius="10px",
        width="100%",
        class_name="lh-demo",
    )


def _job(item: ChatItem) -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.hstack(
                rx.badge(item.job_label, variant="soft"),
                rx.text(item.title, weight="bold", size="3"),
                rx.cond(item.running, rx.spinner(size="2")),
                rx.cond(item.running, rx.text(item.status + "…", size="1", color_scheme="gray")),
                rx.cond(
                    item.failed,
                    rx.badge(
                        rx.icon("circle-x", size=12, aria_hidden="true"),
                        "failed",
                        color_scheme="red",
                    ),
                ),
                align="center",
                spacing="2",
                wrap="wrap",
            ),
            rx.cond(
                item.error != "",
                rx.callout(item.error, icon="triangle-alert", color_scheme="red", size="1"),
            ),
            rx.cond(item.body != "", safe_markdown(item.body)),
            rx.cond(item.caveat != "", rx.text(item.caveat, size="1", color_scheme="gray")),
            rx.cond(item.sources.length() > 0, rx.el.ul(rx.foreach(item.sources, _source))),
            rx.cond(
                item.demo_doc != "",
                _demo(item),
            ),
            rx.cond(
                item.image_uri != "",
                rx.image(src=item.image_uri, alt=item.title, max_width="100%"),
            ),
            rx.cond(item.caption != "", rx.text(item.caption, size="2", color_scheme="gray")),
            spacing="2",
            width="100%",
        ),
        width="100%",
        class_name="lh-job",
    )


def _question(item: ChatItem) -> rx.Component:
    return question_block(
        kind=item.kind,
        prompt=item.prompt,
        given=item.given,
        graded=item.graded,
        correct=item.correct,
        expected=item.expected,
        feedback=item.feedback,
        latest=in_card(item.key, VerdictState.verdict),
    )


def chat_item(item: ChatItem) -> rx.Component:
    return rx.match(
        item.kind,
        ("quiz", _question(item)),
        ("ask", _question(item)),
        ("job", _job(item)),
        text_block(role=item.role, text=item.text),
    )
