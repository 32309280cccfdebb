"""The typed error the artifact sanitisers raise when nothing safe can be returned."""

from __future__ import annotations

from backend.core.errors import ToolError


class UnsafeArtifact(ToolError):
    """A generated SVG or HTML page that is malformed, too large, or has nothing safe left."""
