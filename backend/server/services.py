"""App-lifetime services: built once in the lifespan from settings (tests override by keyword).

Owns the task group every background activity runs in: turns (they outlive the socket
that started them), sub-agent jobs, extraction runs and job-result deliveries. Jobs start
turns (a finished result is handed to the teacher) and turns start jobs: both are built
here, in one constructor, each given the other's entry point.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

import anyio
from anyio.abc import TaskGroup

from backend.agent.extraction.channels import ExtractionService, GraphReader
from backend.agent.extraction.pipeline import ExtractionReport, create_extraction_pipeline
from backend.agent.extraction.stages import Auditor, Extractor
from backend.agent.jobs.base import SubAgent
from backend.agent.jobs.recovery import ORPHAN_SWEEP_S
from backend.agent.jobs.runner import JobRunner, create_job_runner
from backend.core.memory import MemoryPolicy
from backend.core.ports import ChatModel, Clock, IdGen
from backend.ingest.materials import MaterialService
from backend.server.hub import ENCODER, ChatHub
from backend.server.models import build_roles
from backend.server.recording import recorded_stores, recording_tracer
from backend.server.runtime import RandomIds, clock_from
from backend.server.settings import Settings
from backend.server.stores import (
    LOCAL_LEARNER,
    Coordination,
    Stores,
    open_coordination_factory,
    open_local_stores,
)
from backend.tracing.tracer import Tracer
from backend.turn.chats import ChatService
from backend.turn.material import MaterialDesk
from backend.turn.runner import TurnRunner
from backend.turn.seams import TurnSeams
from backend.turn.session_graph import SessionGraphs
from backend.turn.turns import TurnConfig, Turns
from shared_contracts.frames import GraphUpdated, JobFrame, Snapshot
from shared_contracts.http import ExtractAccepted
from shared_contracts.jobs import TERMINAL_JOB_STATUSES, Job

log = logging.getLogger("harness.server")


@dataclass(frozen=True)
class Ports:
    """What the services run on (each already recorded by the tracer)."""

    stores: Stores
    clock: Clock
    ids: IdGen
    teacher: ChatModel
    extractor: Extractor
    auditor: Auditor
    agents: Mapping[str, SubAgent]
    coordination: Coordination
    """How the learner's chats are shared with other processes (none: one process)."""


class Services:
    """The app's parts, wired once: chats, turns, jobs, the graph's two channels, the hub."""

    def __init__(
        self,
        settings: Settings,
        ports: Ports,
        tracer: Tracer,
        task_group: TaskGroup,
        *,
        template: str | None = None,
    ) -> None:
        self.settings = settings
        self.stores = ports.stores
        self.clock = ports.clock
        self.ids = ports.ids
        self.tracer = tracer
        self.task_group = task_group
        self.coordination = ports.coordination
        self.hub = ChatHub(tracer, ports.coordination.fanout)
        self.materials = MaterialService(
            ports.stores.materials,
            ports.stores.search,
            ports.clock,
            ports.ids,
            max_bytes=settings.material_max_bytes,
        )
        self.graph, self.extraction = self._graph_channels(ports)
        self.jobs = self._job_runner(ports)
        turns = self._turns(ports, template)
        self.turns = TurnRunner(turns, self.hub, task_group, tracer, ports.coordination.claims)
        self.chats = ChatService(
            ports.stores.chats,
            ports.clock,
            ports.ids,
            tracer,
            turns,
            ports.stores.materials,
            traces=ports.stores.traces,
        )

    def _graph_channels(self, ports: Ports) -> tuple[GraphReader, ExtractionService]:
        """The read channel and the write channel's trigger, over one folded graph."""
        pipeline = create_extraction_pipeline(
            ports.stores.chats,
            ports.stores.graph,
            ports.extractor,
            ports.auditor,
            clock=ports.clock,
            ids=ports.ids,
            traces=self.tracer.trace_store() if self.tracer.enabled else None,
            locks=ports.coordination.locks,
            policy=MemoryPolicy(desired_retention=self.settings.desired_retention),
        )
        graph = GraphReader.following(pipeline.view, pipeline.deriver, clock=ports.clock)
        self.tracer.order_before_lock(pipeline.view)  # its graph reads are sync points
        extraction = ExtractionService(
            ports.stores.chats,
            graph,
            self.tracer.pipeline(pipeline),
            self.task_group,
            every_n=self.settings.every_n_quiz_answers,
            on_merged=self.on_merged,
            locks=ports.coordination.locks,
        )
        return graph, extraction

    def _job_runner(self, ports: Ports) -> JobRunner:
        settings, tracer = self.settings, self.tracer
        return create_job_runner(
            ports.stores.chats,
            ports.stores.jobs,
            self.task_group,
            agents=ports.agents,
            clock=ports.clock,
            ids=ports.ids,
            on_update=self.on_job_update,
            max_per_chat=settings.max_jobs_per_chat,
            max_global=settings.max_jobs_global,
            timeout_s=settings.job_timeout_s,
            on_start=tracer.job_starting if tracer.player is not None else None,
            on_submitted=tracer.job_submitted,
            locks=ports.coordination.jobs,
        )

    def _turns(self, ports: Ports, template: str | None) -> Turns:
        seams = TurnSeams(
            ports.stores.chats,
            ports.clock,
            graph_context=SessionGraphs(self.graph),
            jobs=self.jobs,
            extraction=self.extraction.maybe_trigger,
        )
        config = TurnConfig(
            max_steps=self.settings.max_steps,
            offline=self.settings.offline,
            model_label=self.settings.model_label,
            template=template,
        )
        return Turns(
            model=ports.teacher,
            clock=ports.clock,
            ids=ports.ids,
            seams=seams,
            observer=self.tracer,
            config=config,
            desk=MaterialDesk(ports.stores.materials, ports.stores.search),
        )

    def idle(self, chat_id: str) -> bool:
        """Whether nothing runs for the chat: no turn, no job, no extraction run."""
        return not (
            self.turns.is_running(chat_id)
            or self.jobs.active_ids()
            or self.extraction.in_flight(chat_id)
        )

    async def job(self, job_id: str) -> Job:
        return await self.stores.jobs.get(job_id)

    # -- background results -----------------------------------------------------------

    async def on_job_update(self, job: Job) -> None:
        await self.tracer.job_finished(job)
        await self.hub.broadcast(job.chat_id, JobFrame(job=job))
        if job.status in TERMINAL_JOB_STATUSES:
            await self.turns.deliver_jobs(job.chat_id)
        await self.tracer.flush(job.chat_id)

    async def on_merged(self, chat_id: str, report: ExtractionReport) -> None:
        snapshot = await self.graph.latest()  # no clock read in the run: a replay sends the same
        session_nodes = [node.id for node in snapshot.nodes if chat_id in node.sessions]
        frame = GraphUpdated(stats=snapshot.stats, new_nodes=session_nodes)
        await self.hub.broadcast(chat_id, frame)
        await self.tracer.flush(chat_id)

    async def on_remote(self, chat_id: str, frame: str | None) -> None:
        """A frame another process published for the chat, to this process's sockets of
        it; None: the chat changed there (a turn finished), so they get it re-read."""
        if not self.hub.count(chat_id):
            return
        if frame is not None:
            self.hub.relay(chat_id, frame)
            return
        view = await self.chats.view(chat_id)
        self.hub.relay(chat_id, ENCODER.encode(Snapshot(chat=view)).decode())

    # -- the session end -------------------------------------------------------------

    async def end_session(self, chat_id: str, unit: str = "") -> ExtractAccepted:
        """The session-end flush of an existing chat (`POST /api/chats/{id}/extract`): the
        extraction trigger now, through its single-flight. Recorded as the learner's
        `end_session` action of its own trace unit (`end:<n>`; a replay passes the recorded
        one), so a replay runs the flush, and the run it starts, where the recording did."""
        async with self.tracer.session_end(chat_id, unit):
            return await self.extraction.flush(chat_id)


@asynccontextmanager
async def open_services(
    settings: Settings,
    *,
    model: ChatModel | None = None,
    clock: Clock | None = None,
    ids: IdGen | None = None,
    stores: Stores | None = None,
    extraction_stages: tuple[Extractor, Auditor] | None = None,
    subagents: Mapping[str, SubAgent] | None = None,
    tracer: Tracer | None = None,
    template: str | None = None,
    coordination: Coordination | None = None,
    orphan_sweep_s: float = ORPHAN_SWEEP_S,
) -> AsyncIterator[Services]:
    """The app's services for the block. Unless `stores` are given, the local learner's
    stores are opened here (files, or PostgreSQL with `LH_DATABASE_URL`) and closed
    after every unit has ended (beside other workers, a dead one's jobs are swept)."""
    async with AsyncExitStack() as stack:
        stores, coordination = await _opened(stack, settings, stores, coordination)
        tracer = tracer or recording_tracer(stores, settings)
        if clock is None and settings.clock_file is not None:
            log.warning("[clock] simulated time from %s (bench only)", settings.clock_file)
        roles = build_roles(
            settings,
            wrap=tracer.model,
            teacher=model,
            stages=extraction_stages,
            agents=subagents,
            materials=stores.materials,  # the offline tutor teaches any of them
            search=stores.search,  # the researcher cites them
        )
        ports = Ports(
            stores=recorded_stores(tracer, stores),  # chat and graph access: sync points
            clock=tracer.clock(clock or clock_from(settings.clock_file)),
            ids=tracer.ids(ids or RandomIds()),
            teacher=roles.teacher,
            extractor=roles.extractor,
            auditor=roles.auditor,
            agents=roles.agents,
            coordination=coordination,
        )
        async with _units_then_flush(tracer) as task_group:
            task_group.start_soon(tracer.sweep_forever)  # idle chats' trace entries go
            services = Services(settings, ports, tracer, task_group, template=template)
            if coordination.fanout.remote:
                task_group.start_soon(coordination.fanout.serve, services.on_remote)
                sweep, announce = services.jobs.sweep_forever, services.hub.announce_ended
                task_group.start_soon(sweep, coordination.claims, announce, orphan_sweep_s)
            # a crash's jobs end here (beside other workers: those no live worker holds)
            others = None if await coordination.locks.join() else coordination.claims
            services.hub.announce_ended(await services.jobs.recover(others=others))
            try:
                yield services
            finally:
                with anyio.CancelScope(shield=True):
                    # Every unit is cancelled at once (turns, jobs, extraction runs), as when the
                    # server's own scope is cancelled: a replay shuts down the same way.
                    task_group.cancel_scope.cancel()
                    await services.jobs.shutdown()  # the trace is written once all have ended


async def _opened(
    stack: AsyncExitStack,
    settings: Settings,
    stores: Stores | None,
    coordination: Coordination | None,
) -> tuple[Stores, Coordination]:
    """The given stores and coordination, or the local learner's, opened on `stack`."""
    if stores is None:
        stores = await stack.enter_async_context(
            open_local_stores(settings.data_dir, settings.database_url)
        )
    if coordination is None:
        factory = await stack.enter_async_context(open_coordination_factory(settings.database_url))
        coordination = factory.for_learner(LOCAL_LEARNER)
    return stores, coordination


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
