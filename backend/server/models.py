"""Which model each role gets: litellm for a configured model string, else offline.

Each role (teacher, extractor/auditor, sub-agents) has its own setting; an unset one
falls back to `LH_MODEL`, and with no model at all every role runs its offline version.
"""

from __future__ import annotations

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
from backend.core.ports import ChatModel
from backend.server.settings import Settings
from shared_contracts.jobs import JobKind


def build_teacher_model(settings: Settings) -> ChatModel:
    if settings.model:
        return LitellmChatModel(settings.model)
    from backend.agent.offline.tutor import OfflineTutor

    return OfflineTutor()


def build_extraction_stages(settings: Settings) -> tuple[Extractor, Auditor]:
    """(extractor, auditor) for the extraction pipeline."""
    extractor: Extractor = (
        create_extractor(LitellmChatModel(settings.extractor_model))
        if settings.extractor_model
        else OfflineExtractor()
    )
    auditor: Auditor = (
        create_auditor(LitellmChatModel(settings.auditor_model))
        if settings.auditor_model
        else OfflineAuditor()
    )
    return extractor, auditor


def build_subagents(settings: Settings) -> dict[JobKind, SubAgent]:
    if not settings.subagent_model:
        return offline_subagents()
    model = LitellmChatModel(settings.subagent_model)
    return {
        "research": create_researcher(model),
        "demo": create_demo_builder(model),
        "visual": create_visual_maker(model),
    }


def check_model(settings: Settings) -> tuple[bool, str]:
    """A one-token call to the teacher model (for `harness doctor`)."""
    import anyio

    from shared_contracts.model_io import ModelMessage, ModelRequest

    model = LitellmChatModel(settings.model or "", max_attempts=1, timeout=15)
    request = ModelRequest(
        role="teacher", messages=[ModelMessage(role="user", content="Say OK.")], max_tokens=5
    )

    async def ping() -> str:
        async for _ in model.stream(request):
            pass
        return "answered"

    try:
        return True, anyio.run(ping)
    except Exception as exc:
        return False, str(exc)[:200]
