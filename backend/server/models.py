"""Which model each role gets, built once, here (`backend.agent.roles` says which agent
serves a model string: litellm for a configured one, else the role's offline version).

Each role (teacher, extractor/auditor, sub-agents) has its own setting; an unset one
falls back to `LH_MODEL`, and with no model at all every role runs its offline version.
`wrap` (the recorder's) is applied to every model built here, and to a given teacher.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from backend.agent.extraction.stages import Auditor, Extractor
from backend.agent.jobs.base import SubAgent
from backend.agent.litellm_model import LitellmChatModel
from backend.agent.roles import (
    OFFLINE,
    ModelFactory,
    build_extraction_stages,
    build_subagents,
    teacher_model,
)
from backend.core.ports import ChatModel, MaterialStore, SearchPort
from backend.server.settings import Settings
from backend.tracing.player import SHUTDOWN_KEY, SHUTDOWN_RECORDED


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
