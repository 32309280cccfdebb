"""App-lifetime services: built once in the lifespan from settings (tests override by keyword).

Owns the task group every background activity runs in: turns (they outlive the socket
that started them), sub-agent jobs, extraction runs and job-result deliveries.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import msgspec
from anyio.abc import TaskGroup

from backend.agent.extraction.pipeline import ExtractionReport, create_extraction_pipeline
from backend.agent.jobs.base import SubAgentContext
from backend.agent.jobs.runner import JobRunner, create_job_runner
from backend.agent.tool_specs import decode_tool_args
from backend.core.errors import Busy
from backend.core.pending import pending_question
from backend.core.ports import ChatModel, Clock, IdGen
from backend.core.record_ops import undelivered_job_parts
from backend.server.chat_handler import ChatHandler, FrameSink, HandlerConfig
from backend.server.graph_service import ExtractionService, GraphReader
from backend.server.hub import ChatHub
from backend.server.models import build_teacher_model
from backend.server.runtime import RandomIds, clock_from
from backend.server.settings import Settings
from backend.server.stores import Stores, build_stores
from backend.server.tracing import NO_TRACE, Tracer, TracingPipeline, traced_roles
from backend.server.turn_service import TurnSeams
from shared_contracts.chat import ToolPart
from shared_contracts.frames import Answer, ErrorFrame, GraphUpdated, JobFrame, UserMessage
from shared_contracts.http import ExtractAccepted
from shared_contracts.jobs import TERMINAL_JOB_STATUSES, Job

log = logging.getLogger("harness.server")


@dataclass
class Services:
    settings: Settings
    stores: Stores
    hub: ChatHub
    handler: ChatHandler
    task_group: TaskGroup
    clock: Clock
    ids: IdGen
    graph: GraphReader
    extraction: ExtractionService
    jobs: JobRunner | None = None
    tracer: Tracer = NO_TRACE

    # -- turns ------------------------------------------------------------------------

    def start_user_message(self, chat_id: str, frame: UserMessage) -> None:
        """Start a turn in the app's task group (it outlives the socket). Raises Busy."""
        scope = self.handler.claim(chat_id)
        self.task_group.start_soon(self._turn, chat_id, scope, "user", frame)

    async def start_answer(self, chat_id: str, frame: Answer) -> None:
        """Grade now (errors go to the caller), then continue the lesson in the background."""
        answered = await self.handler.prepare_answer(chat_id, frame)
        scope = self.handler.claim(chat_id)
        self.task_group.start_soon(self._turn, chat_id, scope, "answer", answered)

    async def _turn(self, chat_id: str, scope: anyio.CancelScope, kind: str, payload: Any) -> None:
        """No turn may take the app down: an escaping error is logged and reported."""
        sink = self.hub.sink(chat_id)
        try:
            if kind == "user":
                reason = await self.handler.user_message(chat_id, payload, sink, scope)
            elif kind == "answer":
                reason = await self.handler.answer(chat_id, payload, sink, scope)
            else:
                reason = await self.handler.deliver_jobs(chat_id, sink, scope)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception:
            log.exception("[chat %s] turn crashed", chat_id)
            self.handler.release(chat_id, scope)
            await _send_quietly(sink, ErrorFrame(code="internal", message="the turn failed"))
            return
        await self.tracer.flush(chat_id)
        if reason in ("stop", "error", "aborted"):
            await self.deliver_jobs(chat_id)

    # -- background results -----------------------------------------------------------

    async def deliver_jobs(self, chat_id: str) -> bool:
        """Hand finished job results to the teacher when the chat is idle; True if started.

        While a turn runs or a question waits, results stay in their tool parts and are
        delivered after that turn (`_turn` calls this again when a turn ends).
        """
        # Read first, then decide and claim with no await in between: the decision is
        # taken at the read's trace sync point, so a replay makes it as the recording did.
        try:
            record = await self.stores.chats.get(chat_id)
        except Exception as exc:
            log.warning("[chat %s] deliver_jobs could not read the chat: %s", chat_id, exc)
            return False
        if self.handler.is_running(chat_id):
            return False
        parts = undelivered_job_parts(record)
        if not parts or pending_question(record) is not None:
            return False
        try:
            scope = self.handler.claim(chat_id)
        except Busy:
            return False
        self.task_group.start_soon(self._turn, chat_id, scope, "deliver", None)
        return True

    async def on_job_update(self, job: Job) -> None:
        await self.tracer.job(job.chat_id, job.id, "finished", msgspec.json.encode(job).decode())
        await self.hub.broadcast(job.chat_id, JobFrame(job=job))
        if job.status in TERMINAL_JOB_STATUSES:
            await self.deliver_jobs(job.chat_id)
        await self.tracer.flush(job.chat_id)

    # -- the session end -------------------------------------------------------------

    async def end_session(self, chat_id: str, unit: str = "") -> ExtractAccepted:
        """The session-end flush of an existing chat (`POST /api/chats/{id}/extract`): the
        extraction trigger now, through its single-flight. Recorded as the learner's
        `end_session` action of its own trace unit (`end:<n>`; a replay passes the recorded
        one), so a replay runs the flush, and the run it starts, where the recording did."""
        async with self.tracer.session_end(chat_id, unit):
            return await self.extraction.flush(chat_id)

    async def on_merged(self, chat_id: str, report: ExtractionReport) -> None:
        snapshot = await self.graph.snapshot()
        session_nodes = [node.id for node in snapshot.nodes if chat_id in node.sessions]
        frame = GraphUpdated(stats=snapshot.stats, new_nodes=session_nodes)
        await self.hub.broadcast(chat_id, frame)
        await self.tracer.flush(chat_id)


class RunnerSpawner:
    """`turn_service.JobSpawner` over the job runner: decodes the part's arguments again."""

    def __init__(self, services: Services) -> None:
        self.services = services

    async def spawn(self, chat_id: str, part: ToolPart) -> str:
        runner = self.services.jobs
        if runner is None:
            raise Busy("the job runner is not running")
        args = decode_tool_args(part.tool_name, msgspec.json.encode(part.input).decode())
        record = await self.services.stores.chats.get(chat_id)
        plan = record.plan
        context = SubAgentContext(
            goal=plan.goal if plan else "",
            plan_titles=tuple(n.title for n in plan.nodes) if plan else (),
        )
        job = await runner.submit(
            chat_id,
            part.tool_call_id,
            part.tool_name,  # type: ignore[arg-type]
            args,  # type: ignore[arg-type]
            context=context,
        )
        await self.services.tracer.job(chat_id, job.id, "submitted", part.tool_call_id)
        return job.id


async def _send_quietly(sink: FrameSink, frame: ErrorFrame) -> None:
    try:
        await sink(frame)
    except Exception:
        log.debug("could not report a crashed turn")


@asynccontextmanager
async def open_services(
    settings: Settings,
    *,
    model: ChatModel | None = None,
    clock: Clock | None = None,
    ids: IdGen | None = None,
    stores: Stores | None = None,
    extraction_stages: tuple[Any, Any] | None = None,
    subagents: dict[str, Any] | None = None,
    tracer: Tracer | None = None,
    template: str | None = None,
) -> AsyncIterator[Services]:
    stores = stores or build_stores(settings.data_dir)
    tracer = tracer or Tracer.recording(stores, settings)
    stores = tracer.stores(stores)  # chat and graph access become recorded sync points
    if clock is None and settings.clock_file is not None:
        log.warning("[clock] simulated time from %s (bench only)", settings.clock_file)
    clock = tracer.clock(clock or clock_from(settings.clock_file))
    ids = tracer.ids(ids or RandomIds())
    model = tracer.model(model or build_teacher_model(settings))
    extractor, auditor, agents = traced_roles(settings, tracer, extraction_stages, subagents)
    hub = ChatHub(tracer)
    async with _units_then_flush(tracer) as task_group:
        task_group.start_soon(tracer.sweep_forever)  # idle chats' trace entries go
        seams = TurnSeams(chats=stores.chats, clock=clock)
        handler = ChatHandler(
            chats=stores.chats,
            model=model,
            clock=clock,
            ids=ids,
            seams=seams,
            config=HandlerConfig(
                max_steps=settings.max_steps,
                offline=settings.offline,
                model_label=settings.model_label,
                template=template,
            ),
            tracer=tracer,
        )
        pipeline = create_extraction_pipeline(
            stores.chats,
            stores.graph,
            extractor,
            auditor,
            clock=clock,
            ids=ids,
            traces=tracer.trace_store() if tracer.enabled else None,
        )
        graph = GraphReader.following(pipeline.view, pipeline.deriver)  # one folded graph
        tracer.order_before_lock(pipeline.view)  # its graph reads are sync points
        services = Services(
            settings=settings,
            stores=stores,
            hub=hub,
            handler=handler,
            task_group=task_group,
            clock=clock,
            ids=ids,
            graph=graph,
            extraction=None,  # type: ignore[arg-type]  # set below: it needs services
            tracer=tracer,
        )
        services.extraction = ExtractionService(
            stores.chats,
            graph,
            TracingPipeline(pipeline, tracer),  # type: ignore[arg-type]
            task_group,
            every_n=settings.every_n_quiz_answers,
            on_merged=services.on_merged,
        )
        services.jobs = create_job_runner(
            stores.chats,
            stores.jobs,
            task_group,
            agents=agents,
            clock=clock,
            ids=ids,
            on_update=services.on_job_update,
            max_per_chat=settings.max_jobs_per_chat,
            max_global=settings.max_jobs_global,
            timeout_s=settings.job_timeout_s,
            on_start=tracer.job_starting if tracer.player is not None else None,
        )
        seams.graph_context = _context_markdown(graph)
        seams.extraction = services.extraction.maybe_trigger
        seams.jobs = RunnerSpawner(services)
        recovered = await services.jobs.recover()
        if recovered:
            log.info("[job] marked %d job(s) interrupted by a restart as failed", len(recovered))
        try:
            yield services
        finally:
            with anyio.CancelScope(shield=True):
                # Every unit is cancelled at once (turns, jobs, extraction runs), as when the
                # server's own scope is cancelled: a replay shuts down the same way.
                task_group.cancel_scope.cancel()
                await services.jobs.shutdown()  # the trace is written once all have ended


@asynccontextmanager
async def _units_then_flush(tracer: Tracer) -> AsyncIterator[TaskGroup]:
    """The app's task group; once every unit in it has ended (at a shutdown: each one's
    cancellation path, a turn's last write and checkpoint included), the trace is written
    in full, so a replay can shut down where the recording did and compare everything."""
    try:
        async with anyio.create_task_group() as task_group:
            yield task_group
    finally:
        with anyio.CancelScope(shield=True):
            await tracer.flush_all()


def _context_markdown(graph: GraphReader):
    async def markdown() -> str:
        return (await graph.context()).markdown

    return markdown
