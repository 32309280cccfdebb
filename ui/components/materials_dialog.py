""" "Add material": a dialog with a drop zone (or a file picker), the progress of the file
being added, a plain sentence when it cannot be, and the learner's materials, each with
"Start a lesson" and "Remove". The same dialog on home and in the classroom."""

from __future__ import annotations

import reflex as rx

from ui.model.materials_view import MAX_UPLOAD_MB, MaterialRow
from ui.state.materials_state import DIALOG_STATUS_ID, UPLOAD_ID, MaterialsState

M = MaterialsState


def add_material_button(
    size: str = "3", variant: str = "soft", word_style: dict[str, object] | None = None
) -> rx.Component:
    """`word_style` styles the word beside the icon (the classroom hides it on a phone,
    where it pushed the theme switch off the screen; a screen reader still reads it)."""
    return rx.button(
        rx.icon("file-up"),
        rx.text("Add material", as_="span", style=word_style or {}),
        on_click=M.open_dialog(True),
        size=rx.breakpoints(initial="2", sm=size),
        variant=variant,
        id="add-material",
    )


def _drop_zone() -> rx.Component:
    return rx.upload.root(
        rx.vstack(
            rx.icon("file-up", size=32, color=rx.color("accent", 9)),
            rx.text("Drop a PDF, Markdown or text file here", weight="medium", size="3"),
            rx.button("Choose a file", size="2", variant="outline", id="choose-file"),
            rx.text(f"Up to {MAX_UPLOAD_MB} MB.", size="1", color_scheme="gray"),
            align="center",
            spacing="2",
        ),
        id=UPLOAD_ID,
        max_files=1,
        disabled=M.busy,
        on_drop=M.upload(rx.upload_files_chunk(upload_id=UPLOAD_ID, on_upload_progress=M.sent)),
        border=f"2px dashed {rx.color('accent', 7)}",
        border_radius="12px",
        padding="1.5em",
        width="100%",
        cursor="pointer",
    )


def _status() -> rx.Component:
    """Progress, or what went wrong, or what was added: one polite live region."""
    return rx.box(
        rx.cond(
            M.busy,
            rx.vstack(
                rx.text(M.status, size="2", id="material-progress-text"),
                rx.progress(value=M.percent, max=100, width="100%"),
                width="100%",
                spacing="1",
            ),
        ),
        rx.cond(
            M.error != "",
            rx.callout(
                M.error, icon="triangle-alert", color_scheme="red", size="1", id="material-error"
            ),
        ),
        rx.cond(
            M.added != "",
            rx.callout(M.added, icon="check", color_scheme="grass", size="1", id="material-added"),
        ),
        role="status",
        id=DIALOG_STATUS_ID,
        width="100%",
    )


def _row(row: MaterialRow) -> rx.Component:
    confirming = M.confirm_remove == row.id
    return rx.hstack(
        rx.box(
            rx.text(row.title, weight="medium", size="3"),
            rx.text(row.detail, size="1", color_scheme="gray"),
            flex="1",
            min_width="0",
        ),
        rx.cond(
            confirming,
            rx.hstack(
                rx.text("Remove it?", size="2"),
                rx.button("Yes", on_click=M.remove(row.id), color_scheme="red", size="1"),
                rx.button("No", on_click=M.keep, variant="soft", size="1"),
                align="center",
            ),
            rx.hstack(
                rx.button(
                    rx.icon("graduation-cap"),
                    "Start a lesson",
                    on_click=M.start_lesson(row.id, row.title),
                    loading=M.starting == row.id,
                    size="2",
                    class_name="start-lesson",
                ),
                rx.icon_button(
                    rx.icon("trash-2"),
                    on_click=M.ask_remove(row.id),
                    variant="ghost",
                    color_scheme="gray",
                    size="2",
                    aria_label="Remove " + row.title,
                ),
                align="center",
            ),
        ),
        width="100%",
        align="center",
        class_name="material-row",
    )


def _list() -> rx.Component:
    return rx.vstack(
        rx.heading("Your materials", size="3", as_="h3"),
        rx.cond(
            M.materials.length() > 0,
            rx.vstack(rx.foreach(M.materials, _row), width="100%", spacing="3"),
            rx.text(
                rx.cond(M.loaded, "Nothing added yet.", "Loading…"), size="2", color_scheme="gray"
            ),
        ),
        width="100%",
        spacing="2",
        id="material-list",
    )


def materials_dialog() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("Learn from your own material"),
            rx.dialog.description(
                "Add notes, a chapter or a paper: the tutor can teach it and quote it, with "
                "the page.",
                size="2",
            ),
            rx.vstack(
                _drop_zone(),
                _status(),
                _list(),
                rx.dialog.close(rx.button("Close", variant="soft", size="2")),
                spacing="4",
                margin_top="1em",
                align="end",
            ),
            max_width="560px",
        ),
        open=M.dialog_open,
        on_open_change=M.open_dialog,
    )
