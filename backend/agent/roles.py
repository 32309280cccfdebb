"""Which agent serves each role, for its model string: litellm's model for a configured
string, else the role's offline version (`OFFLINE`, or none). The server builds each
role's model once, with these (`backend.server.models`); a replay builds its teacher here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

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

ModelFactory = Callable[[str], ChatModel]
"""A model for a litellm model string."""
OFFLINE = "offline"


class RoleModels(Protocol):
    """Each role's model string (None: its offline version); the server's settings."""

    @property
    def extractor_model(self) -> str | None: ...

    @property
    def auditor_model(self) -> str | None: ...

    @property
    def subagent_model(self) -> str | None: ...


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


def build_extraction_stages(settings: RoleModels, model: ModelFactory) -> tuple[Extractor, Auditor]:
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
    settings: RoleModels, model: ModelFactory, search: SearchPort | None = None
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
