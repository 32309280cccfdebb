"""What a command refuses to run with: one line saying what to do, exit 2."""

from __future__ import annotations


class CliError(Exception):
    """Input the command cannot run with; the message says what to do instead."""


class PortInUse(SystemExit):
    pass
