"""The UI launcher's command line and environment (no process is started here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from backend.cli.ui import ui_command


def test_prod_single_port_on_loopback_with_node_first_on_path():
    argv, env = ui_command("http://127.0.0.1:8100", 3123, base_env={"PATH": "/usr/bin"})
    assert argv[1:4] == ["run", "--env", "prod"]
    assert argv[argv.index("--frontend-port") + 1] == argv[argv.index("--backend-port") + 1]
    assert argv[argv.index("--backend-host") + 1] == "127.0.0.1"
    assert env["PATH"].split(":")[0] == str(Path(sys.executable).parent)
    assert env["REFLEX_USE_NPM"] == "1" and env["REFLEX_TELEMETRY_ENABLED"] == "false"
    assert env["REFLEX_FRONTEND_PORT"] == env["REFLEX_BACKEND_PORT"] == "3123"
    assert env["REFLEX_API_URL"] == "http://127.0.0.1:3123"
    assert env["LH_API_URL"] == "http://127.0.0.1:8100"
    assert "LH_API_TOKEN" not in env


def test_token_is_passed_only_through_the_environment():
    argv, env = ui_command("http://127.0.0.1:8100", 3000, api_token="t0k", base_env={})
    assert env["LH_API_TOKEN"] == "t0k" and "t0k" not in " ".join(argv)


def test_refuses_to_bind_all_interfaces():
    with pytest.raises(ValueError):
        ui_command("http://127.0.0.1:8100", 3000, host="0.0.0.0")
