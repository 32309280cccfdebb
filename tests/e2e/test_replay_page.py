"""A short offline lesson (started by `?ask=`) and its replay; "Practise this" end to end."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import msgspec
import pytest
from playwright.async_api import Page, expect

from shared_contracts.chat import ChatRecord
from shared_contracts.model_io import ModelMessage, ModelRequest, ToolSpec
from shared_contracts.trace import (
    AnyTraceEvent,
    ClockEvent,
    MarkEvent,
    ModelCallEvent,
    PromptEvent,
)
from tests.e2e.conftest import Servers
from tests.ui.state_doubles import substate
from ui.model.graph_view import NodeDetail
from ui.state.home_state import HomeState

pytestmark = pytest.mark.browser


async def test_replay_shows_the_timeline_and_a_model_calls_system_prompt(
    own_data: Servers, page: Page, artifacts
):
    # A data dir of its own: on the shared one, earlier tests' lessons leave weak
    # prerequisites, and the offline tutor then asks their "check first" questions, so the
    # questions this test answers in order came in another order (failed 2 runs of 2).
    servers = own_data
    async with httpx.AsyncClient(base_url=servers.api_url) as client:
        chat = await client.post("/api/chats", json={"title": "Practise: fractions"})
    chat_id = chat.json()["id"]

    # The classroom sends `?ask=` once as the learner's first message.
    await page.goto(f"{servers.ui_url}/chat/{chat_id}?ask=Teach%20me%20fractions")
    dock = page.locator("#question-dock")
    await expect(dock).to_have_attribute("data-kind", "short_answer")
    await expect(page.locator("#conversation")).to_contain_text("Teach me fractions")
    await page.locator("#answer-input").fill("denominator")
    await page.locator("#answer-input").press("Enter")
    await expect(page.locator("#verdict")).to_contain_text("Right")
    await expect(dock).to_have_attribute("data-kind", "ask_user")
    await page.get_by_role("button", name="A bit unsure").click()
    await page.locator("#submit-answer").click()
    await expect(dock).to_have_attribute("data-kind", "numeric")
    await page.locator("#answer-input").fill("24/2")
    await page.locator("#answer-input").press("Enter")
    await expect(dock).to_have_attribute("data-kind", "multiple_choice")
    await page.locator("#answer-choices [role=radio][value=b]").click()
    await page.locator("#submit-answer").click()
    await expect(dock).to_have_count(0)
    # The multiple-choice answer in the transcript is the option's text (math rendered).
    await expect(page.locator(".lh-given").last.locator(".katex")).to_have_count(1)
    await page.reload()  # reloading does not send the opening message again
    await expect(page.locator("#conversation")).to_contain_text("Teach me fractions")
    assert await page.locator(".lh-user").count() == 1

    await page.locator("#replay-link").click()
    await page.wait_for_url(f"**/replay/{chat_id}")
    models = page.locator(".lh-replay-row[data-kind=model]")
    await expect(models.first).to_be_visible()
    assert await models.count() >= 2
    await expect(page.locator("#replay-timeline")).to_contain_text("turn:1/teacher#0")

    # Filter chips hide and show a kind.
    await page.locator(".lh-chip[data-kind=model]").click()
    await expect(models).to_have_count(0)
    await page.locator(".lh-chip[data-kind=model]").click()
    await expect(models.first).to_be_visible()

    await models.first.click()
    await expect(page.locator("#replay-detail-title")).to_have_text("turn:1/teacher#0")
    prompt = page.locator("#replay-prompt")
    await expect(prompt).to_contain_text("You are a patient, rigorous tutor")
    assert await prompt.locator("script, img").count() == 0  # text, never HTML
    await expect(page.locator("#replay-detail")).to_contain_text("Response text")
    await expect(page.locator("#replay-state")).to_contain_text("State as of this event")
    await page.screenshot(path=artifacts / "replay.png")

    await page.goto(f"{servers.ui_url}/replay/no-such-chat")
    await expect(page.locator("#replay-problem")).to_contain_text("There is no session")
    await expect(page.get_by_text("events", exact=False)).to_have_count(0)  # not the last one's
    await expect(page.get_by_role("link", name="My graph", exact=True)).to_have_attribute(
        "href", "/"
    )


async def test_practise_this_opens_a_titled_chat_that_asks_for_practice(
    servers, page: Page, monkeypatch
):
    monkeypatch.setenv("LH_API_URL", servers.api_url)  # HomeState's HTTP calls go here
    state = substate(HomeState)
    statement = (
        "The denominator counts the equal parts a whole is cut into, never the parts we have"
    )
    state.selected, state.has_selected = NodeDetail(id="n1", statement=statement), True
    redirect = await state.practise()
    href = dict((str(k), v._var_value) for k, v in redirect.args)["path"]
    assert href.startswith("/chat/") and "?ask=Help%20me%20practise%3A%20The" in href

    async with httpx.AsyncClient(base_url=servers.api_url) as client:
        chats = (await client.get("/api/chats")).json()
    chat_id = href.split("/")[2].split("?")[0]
    title = next(c["title"] for c in chats if c["id"] == chat_id)
    assert title.startswith("Practise: The denominator counts") and title.endswith("…")

    await page.goto(servers.ui_url + href)
    conversation = page.locator("#conversation")
    await expect(conversation).to_contain_text(f"Help me practise: {statement}")
    await expect(page.locator("#connection-status")).to_have_text("Connected")
    await expect(conversation.locator(".lh-tutor").first).to_be_visible()  # the tutor answered


LONG_CHAT_ID = "replay-long-prompt"
GRAPH_CONTEXT = "### Nodes\n" + "\n".join(
    f"- `node-{i}` [verified] statement {i} about fractions" for i in range(40)
)
LONG_PROMPT = (
    "You are a tutor.\n" + "Rule: be kind and rigorous.\n" * 400 + GRAPH_CONTEXT + "\nEnd."
)


def write_long_prompt_session(data_dir: Path) -> None:
    """A recorded session whose 13 KB system prompt ends with the graph context."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    record = ChatRecord(
        id=LONG_CHAT_ID, title="Long prompt", created_at=at, updated_at=at, model="x"
    )
    request = ModelRequest(
        role="teacher",
        messages=[ModelMessage(role="system", content=LONG_PROMPT), ModelMessage(role="user")],
        tools=[ToolSpec(name="quiz", description="ask", parameters={"type": "object"})],
    )
    events: list[AnyTraceEvent] = [
        MarkEvent(seq=0, scope="chat", mark="chat_created", title="Long prompt", at=at),
        PromptEvent(
            seq=1,
            scope="turn:1",
            turn=1,
            template_id="teacher.md",
            template_hash="abc",
            graph_context=GRAPH_CONTEXT,
            system_prompt=LONG_PROMPT,
        ),
        ModelCallEvent(
            seq=2,
            scope="turn:1",
            key="turn:1/teacher#0",
            model="x",
            request=request,
            request_hash="h",
            response=ModelMessage(role="assistant", content="ok"),
        ),
        *(ClockEvent(seq=3 + i, scope="turn:1", value=at) for i in range(60)),
    ]
    (data_dir / "chats").mkdir(parents=True, exist_ok=True)
    (data_dir / "chats" / f"{LONG_CHAT_ID}.json").write_bytes(msgspec.json.encode(record))
    (data_dir / "traces").mkdir(parents=True, exist_ok=True)
    (data_dir / "traces" / f"{LONG_CHAT_ID}.jsonl").write_bytes(
        b"".join(msgspec.json.encode(e) + b"\n" for e in events)
    )


async def test_a_long_prompt_jumps_to_its_graph_context_and_the_timeline_stays(servers, page: Page):
    write_long_prompt_session(servers.data_dir)
    await page.goto(f"{servers.ui_url}/replay/{LONG_CHAT_ID}")
    await page.locator(".lh-replay-row[data-kind=model]").click()
    context = page.locator("#graph-context")
    await expect(context).not_to_be_in_viewport()  # far down the prompt's scroll box
    await page.locator("#jump-to-graph-context").click()
    await expect(context).to_be_in_viewport()

    # A folded block's title sits on its marker's line, not under it.
    summary = page.locator(".lh-replay-summary").first
    await expect(summary).to_contain_text("Tools offered (1)")
    box = await summary.bounding_box()
    assert box is not None and box.get("height", 99) < 30

    # A fact's value breaks between words (a hash may break anywhere), never mid-word.
    value = page.locator("#replay-detail .rt-DataListValue p").first
    await expect(value).to_have_css("overflow-wrap", "anywhere")
    await expect(value).not_to_have_css("word-break", "break-all")

    # The detail is longer than the window: scrolled to its end, the timeline is in view.
    await page.get_by_role("button", name="Show all").click()
    await expect(page.locator(".lh-replay-row")).to_have_count(63)
    await page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    await expect(page.locator("#replay-state")).to_be_in_viewport()
    assert await page.evaluate("window.scrollY") > 300
    box = await page.locator("#replay-timeline-box").bounding_box()
    assert box is not None and box["y"] >= 0  # its top edge is not scrolled away
