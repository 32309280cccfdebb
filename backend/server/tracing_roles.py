"""The roles a recorded (or replayed) session runs with, their model calls traced."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from backend.core.ports import ChatModel

SHUTDOWN_KEY = "shutdown_paths"
SHUTDOWN_RECORDED = "recorded"

if TYPE_CHECKING:
    from backend.server.tracing import Tracer


def role_config(settings: Any) -> dict[str, str]:
    """What replay needs to rebuild the session's roles and thresholds."""
    return {
        "teacher": settings.model or "offline",
        "extractor": settings.extractor_model or "offline",
        "auditor": settings.auditor_model or "offline",
        "subagent": settings.subagent_model or "offline",
        "every_n_quiz_answers": str(settings.every_n_quiz_answers),
        "max_steps": str(settings.max_steps),
        "job_timeout_s": repr(float(settings.job_timeout_s)),
        "max_jobs_per_chat": str(settings.max_jobs_per_chat),
        "max_jobs_global": str(settings.max_jobs_global),
        # This recorder writes a shutdown's cancellation paths in full (every unit's last
        # events): a replay of it shuts down where the recording did (`replay_shutdown`).
        SHUTDOWN_KEY: SHUTDOWN_RECORDED,
    }


def traced_roles(
    settings: Any,
    tracer: Tracer,
    stages: tuple[Any, Any] | None,
    agents: Mapping[str, Any] | None,
    make_model: Callable[[str], ChatModel] | None = None,
) -> tuple[Any, Any, dict[str, Any]]:
    """(extractor, auditor, sub-agents) whose model calls are recorded: given ones are kept
    (only their results are gated), missing ones are built as `backend.server.models` does,
    on `make_model(model_string)` wrapped by the tracer."""
    from backend.agent.extraction.auditor import create_auditor
    from backend.agent.extraction.extractor import create_extractor
    from backend.agent.extraction.offline import OfflineAuditor, OfflineExtractor
    from backend.agent.jobs.demo_builder import create_demo_builder
    from backend.agent.jobs.offline import offline_subagents
    from backend.agent.jobs.researcher import create_researcher
    from backend.agent.jobs.visual_maker import create_visual_maker

    def model(name: str) -> ChatModel:
        if make_model is not None:
            return tracer.model(make_model(name))
        from backend.agent.litellm_model import LitellmChatModel

        return tracer.model(LitellmChatModel(name))

    if stages is None:
        stages = (
            create_extractor(model(settings.extractor_model))
            if settings.extractor_model
            else OfflineExtractor(),
            create_auditor(model(settings.auditor_model))
            if settings.auditor_model
            else OfflineAuditor(),
        )
    if agents is None:
        if settings.subagent_model:
            sub = model(settings.subagent_model)
            agents = {
                "research": create_researcher(sub),
                "demo": create_demo_builder(sub),
                "visual": create_visual_maker(sub),
            }
        else:
            agents = dict(offline_subagents())
    return stages[0], stages[1], dict(agents)
