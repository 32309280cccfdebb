"""Which model each role gets, built once, here: litellm for a configured model string,
else the role's offline version.

Each role (teacher, extractor/auditor, sub-agents) has its own setting; an unset one
falls back to `LH_MODEL`, and with no model at all every role runs its offline version.
`wrap` (the recorder's) is applied to every model built here, and to a given teacher.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from backend.agent.extraction.auditor import create_auditor
from backend.agent.extraction.extractor import create_extractor
from backend.agent.extraction.offline import OfflineAuditor, OfflineExtractor
from backend.agent.extraction.stages import Auditor, Extractor
from backend.agent.jobs.base import SubAgent
from backend.agent.jobs.demo_builder import create_demo_builder
from backend.agent.jobs.offline import offline_subagents
from backend.agent.jobs.researcher import create_researcher
from backend.agent.jobs.visual_maker import create_visual_maker
from backend.agent.litellm_model import LitellmChatModel
from backend.agent.offline.tutor import OfflineTutor
from backend.core.ports import ChatModel, MaterialStore, SearchPort
from backend.server.settings import Settings
from backend.tracing.player import SHUTDOWN_KEY, SHUTDOWN_RECORDED

ModelFactory = Callable[[str], ChatModel]
"""A model for a litellm model string."""
OFFLINE = "offline"


def _as_is(model: ChatModel) -> ChatModel:
    return model


@dataclass(frozen=True)
class Roles:
    """The models (and agents) a server's roles run with."""

    teacher: ChatModel
    extractor: Extractor
    auditor: Auditor
    agents: Mapping[str, SubAgent]


def build_roles(
    settings: Settings,
    *,
    wrap: Callable[[ChatModel], ChatModel] = _as_is,
    make_model: ModelFactory = LitellmChatModel,
    teacher: ChatModel | None = None,
    stages: tuple[Extractor, Auditor] | None = None,
    agents: Mapping[str, SubAgent] | None = None,
    materials: MaterialStore | None = None,
    search: SearchPort | None = None,
) -> Roles:
    """Every role from `settings`; a given teacher, stages or agents are used instead
    (given stages and agents as they are: only their results are recorded). The learner's
    `materials` reach the offline tutor (it teaches any document) and `search` the
    researcher (its notes cite them)."""

    def model(name: str) -> ChatModel:
        return wrap(make_model(name))

    extractor, auditor = stages or build_extraction_stages(settings, model)
    return Roles(
        teacher=wrap(teacher or teacher_model(settings.model, make_model, materials)),
        extractor=extractor,
        auditor=auditor,
        agents=dict(agents) if agents is not None else build_subagents(settings, model, search),
    )


def teacher_model(
    spec: str | None,
    make_model: ModelFactory = LitellmChatModel,
    materials: MaterialStore | None = None,
) -> ChatModel:
    """The teacher for a model string (`offline`, or none: the offline tutor, which reads
    the learner's `materials` to teach a document)."""
    if not spec or spec == OFFLINE:
        return OfflineTutor(materials=materials)
    return make_model(spec)


def build_extraction_stages(settings: Settings, model: ModelFactory) -> tuple[Extractor, Auditor]:
    """(extractor, auditor) for the extraction pipeline."""
    extractor: Extractor = (
        create_extractor(model(settings.extractor_model))
        if settings.extractor_model
        else OfflineExtractor()
    )
    auditor: Auditor = (
        create_auditor(model(settings.auditor_model))
        if settings.auditor_model
        else OfflineAuditor()
    )
    return extractor, auditor


def build_subagents(
    settings: Settings, model: ModelFactory, search: SearchPort | None = None
) -> dict[str, SubAgent]:
    """The sub-agents; the researcher (offline or not) searches the learner's materials."""
    if not settings.subagent_model:
        return {kind: agent for kind, agent in offline_subagents(search).items()}
    sub = model(settings.subagent_model)
    return {
        "research": create_researcher(sub, search),
        "demo": create_demo_builder(sub),
        "visual": create_visual_maker(sub),
    }


def role_config(settings: Settings) -> dict[str, str]:
    """What a replay needs to rebuild the session's roles and thresholds (recorded with
    every turn; `replay.settings` reads it back)."""
    return {
        "teacher": settings.model or OFFLINE,
        "extractor": settings.extractor_model or OFFLINE,
        "auditor": settings.auditor_model or OFFLINE,
        "subagent": settings.subagent_model or OFFLINE,
        "every_n_quiz_answers": str(settings.every_n_quiz_answers),
        "max_steps": str(settings.max_steps),
        "job_timeout_s": repr(float(settings.job_timeout_s)),
        "max_jobs_per_chat": str(settings.max_jobs_per_chat),
        "max_jobs_global": str(settings.max_jobs_global),
        # This recorder writes a shutdown's cancellation paths in full (every unit's last
        # events): a replay of it shuts down where the recording did.
        SHUTDOWN_KEY: SHUTDOWN_RECORDED,
    }
