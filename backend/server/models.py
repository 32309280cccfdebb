"""Which ChatModel each role gets: litellm for a configured model, else the offline tutor."""

from __future__ import annotations

from backend.agent.litellm_model import LitellmChatModel
from backend.core.ports import ChatModel
from backend.server.settings import Settings


def build_teacher_model(settings: Settings) -> ChatModel:
    if settings.model:
        return LitellmChatModel(settings.model)
    from backend.agent.offline.tutor import OfflineTutor

    return OfflineTutor()
