"""Home's Export menu: take everything out (an archive to import elsewhere), an Anki deck of
what you learned, or Markdown notes for Obsidian or any editor."""

from __future__ import annotations

import reflex as rx

from ui.state.export_state import EXPORTS, ExportState

ICONS = {"archive": "archive", "anki": "layers", "markdown": "notebook-text"}


def export_menu() -> rx.Component:
    return rx.menu.root(
        rx.menu.trigger(
            rx.button(
                rx.icon("download"),
                "Export",
                variant="soft",
                loading=ExportState.busy != "",
                size=rx.breakpoints(initial="2", sm="3"),
                id="export",
            )
        ),
        rx.menu.content(
            *(
                rx.menu.item(
                    rx.icon(ICONS[kind], size=16),
                    label,
                    on_select=ExportState.export(kind),
                    id=f"export-{kind}",
                )
                for kind, label in EXPORTS.items()
            ),
        ),
    )


def export_error() -> rx.Component:
    return rx.cond(
        ExportState.error != "",
        rx.callout.root(
            rx.callout.icon(rx.icon("triangle-alert")),
            rx.callout.text(
                ExportState.error,
                " ",
                rx.button("Dismiss", on_click=ExportState.dismiss, size="1", variant="soft"),
            ),
            color_scheme="red",
            size="1",
            role="alert",
            id="export-error",
        ),
    )
