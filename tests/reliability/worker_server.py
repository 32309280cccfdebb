"""One API worker for the multi-worker tests: `harness serve` (settings from the
environment, `LH_DATABASE_URL` among them) with a teacher slow enough to be caught
mid-turn, and an extractor that logs each call. `python -m tests.reliability.worker_server`.

    LH_TEST_CHUNK_S      seconds the teacher waits before each streamed text chunk (0.02)
    LH_TEST_TEACHER      `offline` (the offline tutor, slowed) or `research` (asks the
                         researcher once per learner message, then teaches on)
    LH_TEST_EXTRACT_S    seconds each extraction call takes (0)
    LH_TEST_EXTRACT_LOG  a file each extraction call appends a line to ("<pid> <chat>")
    LH_TEST_JOB_S        seconds each research job takes before its offline note (unset:
                         the offline researcher as it is)
    LH_TEST_SWEEP_S      seconds between the sweeps for jobs a dead worker left (30)
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator

import anyio
import uvicorn

from backend.agent.extraction.offline import OfflineAuditor, OfflineExtractor
from backend.agent.jobs import JobArgs, SubAgent, SubAgentContext, offline_subagents
from backend.agent.offline.tutor import OfflineTutor
from backend.cli.serving import bind, ready_stores, uvicorn_config
from backend.core.ports import ChatModel
from backend.server.app import create_app
from backend.server.settings import load_settings
from shared_contracts.jobs import JobResult
from shared_contracts.model_io import ModelEvent, ModelRequest, TextChunk
from tests.fakes import text_reply, tool_reply


class Slowed:
    """A model whose streamed text arrives one chunk per `chunk_s`."""

    def __init__(self, model: ChatModel, chunk_s: float) -> None:
        self._model = model
        self._chunk_s = chunk_s
        self.name = model.name

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        async for event in self._model.stream(request):
            if isinstance(event, TextChunk):
                await anyio.sleep(self._chunk_s)
            yield event


class AsksResearch:
    """On a learner's message: one `research` call; on anything else: a short text."""

    name = "asks-research"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        last = request.messages[-1]
        if last.role == "user":
            n = len(request.messages)
            events = tool_reply([(f"call-{n}", "research", {"question": "why is the sky blue"})])
        else:
            events = text_reply("Here is what the research found.")
        for event in events:
            yield event


class LoggedExtractor:
    """The offline extractor, taking `delay_s` and logging each call to a file."""

    def __init__(self, delay_s: float, log_path: str | None) -> None:
        self._inner = OfflineExtractor()
        self._delay_s = delay_s
        self._log_path = log_path

    async def extract(self, job):  # type: ignore[no-untyped-def]
        if self._log_path:
            _append(self._log_path, f"{os.getpid()} {job.record.id}\n")
        await anyio.sleep(self._delay_s)
        return await self._inner.extract(job)


class SlowResearch:
    """The offline researcher, after `delay_s` (a job that runs long: its worker can be
    killed while it runs)."""

    def __init__(self, delay_s: float) -> None:
        self._inner = offline_subagents()["research"]
        self._delay_s = delay_s

    async def run(self, args: JobArgs, context: SubAgentContext) -> JobResult:
        await anyio.sleep(self._delay_s)
        return await self._inner.run(args, context)


def _overrides() -> dict[str, object]:
    """The job settings the environment asks for (`LH_TEST_JOB_S`, `LH_TEST_SWEEP_S`)."""
    given: dict[str, object] = {}
    if "LH_TEST_JOB_S" in os.environ:
        agents: dict[str, SubAgent] = dict(offline_subagents())
        agents["research"] = SlowResearch(float(os.environ["LH_TEST_JOB_S"]))
        given["subagents"] = agents
    if "LH_TEST_SWEEP_S" in os.environ:
        given["orphan_sweep_s"] = float(os.environ["LH_TEST_SWEEP_S"])
    return given


def _append(path: str, line: str) -> None:
    with open(path, "a") as log:  # a line a call; O_APPEND keeps two processes' lines whole
        log.write(line)


def main() -> int:
    logging.basicConfig(level="INFO", stream=sys.stderr)
    settings = load_settings()
    ready_stores(settings)
    chunk_s = float(os.environ.get("LH_TEST_CHUNK_S", "0.02"))
    research = os.environ.get("LH_TEST_TEACHER") == "research"
    base: ChatModel = AsksResearch() if research else OfflineTutor()
    extractor = LoggedExtractor(
        float(os.environ.get("LH_TEST_EXTRACT_S", "0")), os.environ.get("LH_TEST_EXTRACT_LOG")
    )
    sock = bind(settings.api_host, settings.api_port)
    host, port = sock.getsockname()[:2]
    print(f"harness API on http://{host}:{port} (worker {os.getpid()})", flush=True)
    app = create_app(
        settings,
        model=Slowed(base, chunk_s),
        extraction_stages=(extractor, OfflineAuditor()),
        **_overrides(),
    )
    uvicorn.Server(uvicorn_config(app)).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
