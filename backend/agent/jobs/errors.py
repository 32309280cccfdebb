"""The typed errors of the sub-agents: an artifact with nothing safe left, and an offline
job that only a model could do."""

from __future__ import annotations

from backend.core.errors import HarnessError, ToolError


class UnsafeArtifact(ToolError):
    """A generated SVG or HTML page that is malformed, too large, or has nothing safe left."""


class NeedsModel(HarnessError):
    """Offline mode has no artifact that makes what the brief asks for: the job says so
    (and fails) instead of showing something unrelated."""

    code = "needs_model"
