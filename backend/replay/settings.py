"""The settings a replay runs with: the recorded session's roles and limits, every other
value `Settings`' own default."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import msgspec

from backend.agent.roles import OFFLINE
from backend.server.settings import Settings

ROLES = {
    "teacher": "model",
    "extractor": "extractor_model",
    "auditor": "auditor_model",
    "subagent": "subagent_model",
}
"""Recorded role → its setting (`backend.server.models.role_config` records them)."""
LIMITS = (
    "every_n_quiz_answers",
    "max_steps",
    "job_timeout_s",
    "max_jobs_per_chat",
    "max_jobs_global",
)
"""Recorded thresholds (older traces lack some: those take today's defaults)."""


def replay_settings(work_dir: Path, config: Mapping[str, str]) -> Settings:
    """Settings on `work_dir` with the roles and limits `config` recorded."""
    defaults = Settings(data_dir=work_dir)
    roles = {
        field: None if config.get(role, OFFLINE) == OFFLINE else config[role]
        for role, field in ROLES.items()
    }
    limits = {
        name: type(getattr(defaults, name))(config[name]) for name in LIMITS if name in config
    }
    return msgspec.structs.replace(defaults, **roles, **limits)
