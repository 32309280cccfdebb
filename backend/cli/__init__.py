"""`harness`: serve | run | graph | doctor | verify | replay.

Bad input (a setting, an argument, the data dir) is one line `harness COMMAND: …` on
stderr and exit 2, never a traceback. Exit 1 means the command ran and found a problem
(a divergence, an unsound record, an unreachable model).

Modules: `main` (the parser), `serving` (serve, run; `ui` starts the Reflex UI), `data`
(graph, verify; the data-dir checks), `doctor`, `replaying` (replay's arguments).
"""

from backend.cli.main import main

__all__ = ["main"]
