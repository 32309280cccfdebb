"""The browser benchmark rows (B12–B14) run end to end with tiny sizes: their own API, UI
and Chromium, their marks taken in the page. Figures are not judged (quick figures mean
nothing); that the machinery measures is."""

from __future__ import annotations

import json
import math

import pytest

from bench.__main__ import main
from bench.registry import BROWSER

pytestmark = pytest.mark.browser


def test_browser_rows_measure_in_chromium(tmp_path, chromium_path):
    out = tmp_path / "results.json"
    assert main([*sorted(BROWSER), "--quick", "--out", str(out)]) in (0, 1)
    results = json.loads(out.read_text())["results"]
    assert {r["id"].split("-")[0] for r in results} == BROWSER
    for r in results:
        assert r["runnable"], (r["id"], r["note"])
        values = r["floor"] + r["subject"]
        assert values and all(math.isfinite(v) and v > 0 for v in values), r["id"]
        assert r["checks"], r["id"]
