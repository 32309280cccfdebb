"""Model text as markdown with KaTeX math; raw HTML is shown as text, never as DOM."""

from __future__ import annotations

import reflex as rx


def safe_markdown(text: rx.Var[str] | str) -> rx.Component:
    """`use_raw=False`: `<script>` or `<img onerror>` in model output stays inert text."""
    return rx.markdown(text, use_raw=False, class_name="lh-markdown")
