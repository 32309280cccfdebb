"""Our pages use Reflex's supported API: building them prints no deprecation notice (each
one is a feature Reflex will remove; the browser tests check `reflex run` says none too)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import reflex as rx

ROOT = Path(__file__).resolve().parents[2]
BUILD_PAGES = """
import ui.app
from ui.pages import classroom, home, replay
classroom.classroom(); home.home(); replay.replay()
"""


def test_building_every_page_prints_no_reflex_deprecation():
    # A fresh interpreter: Reflex prints each notice once per process.
    run = subprocess.run(
        [sys.executable, "-c", BUILD_PAGES], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert "deprecated" not in run.stdout + run.stderr


def test_the_theme_comes_from_the_radix_plugin_in_rxconfig_not_from_the_app():
    from ui.app import app

    assert app.theme is None  # `App(theme=...)` is deprecated
    (plugin,) = [
        p for p in rx.config.get_config().plugins if isinstance(p, rx.plugins.RadixThemesPlugin)
    ]
    assert plugin.theme is not None
    theme = str(plugin.theme)
    assert 'accentColor:"indigo"' in theme and 'radius:"medium"' in theme


def test_every_page_is_added_once_and_a_second_compile_adds_none_again():
    """`reflex run --env prod` compiles the app twice in one process; pages registered
    with `@rx.page` were added again each time ("Page ... is being redefined")."""
    run = subprocess.run(
        [sys.executable, "-c", TWO_COMPILES], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["chat/[chat_id]", "index", "replay/[chat_id]", "signin", "signup"]
    assert "redefined" not in run.stderr + run.stdout


TWO_COMPILES = """
from ui.app import app
app._apply_decorated_pages()  # what each compile of the app does first
app._apply_decorated_pages()
print(*sorted(app._unevaluated_pages))
"""
