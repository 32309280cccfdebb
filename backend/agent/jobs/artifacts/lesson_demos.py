"""Offline demos that make what the built-in lessons' briefs promise: Python list boxes that
light up for an index or a slice (Python's own rules, negative indexes and steps included),
and two fractions drawn as bars, rewritten over a common denominator and added."""

from __future__ import annotations

LIST_ITEMS = ("apple", "banana", "cherry", "date", "elderberry")

LIST_INDEXING = (
    """<style>
.row { display: flex; gap: 6px; margin: 1rem 0 .2rem; }
.cell { width: 5.6rem; text-align: center; }
.box { border: 2px solid #4a7bd0; border-radius: 6px; padding: .6rem .2rem; background: #fff;
  transition: background .2s; }
.box.on { background: #ffd54f; border-color: #b8860b; font-weight: bold; }
.ix { font-size: .85rem; color: #555; }
code, input { font-family: ui-monospace, monospace; font-size: 1rem; }
#result { min-height: 1.6em; }
.error { color: #b3261e; }
</style>
<p><code>fruits = ["apple", "banana", "cherry", "date", "elderberry"]</code></p>
<div class="row" id="boxes" aria-hidden="true"></div>
<label>Type an index or a slice: <code>fruits[</code><input id="q" value="1:3" size="9"
aria-describedby="result"><code>]</code></label>
<p>Try <code>0</code>, <code>-1</code>, <code>1:3</code>, <code>:2</code>, <code>::2</code>,
<code>::-1</code>, <code>5</code>.</p>
<p id="result" role="status"></p>
<script>
const items = """
    + "["
    + ", ".join(f'"{item}"' for item in LIST_ITEMS)
    + """];
const n = items.length;
const boxes = document.getElementById("boxes");
items.forEach((item, i) => {
  const cell = document.createElement("div");
  cell.className = "cell";
  cell.innerHTML = '<div class="box"></div><div class="ix"></div>';
  cell.querySelector(".box").textContent = '"' + item + '"';
  cell.querySelector(".ix").textContent = i + "  /  " + (i - n);
  boxes.appendChild(cell);
});
function num(text) { return text === undefined || text.trim() === "" ? null : Number(text); }
// Python's slice rules (PySlice_AdjustIndices): clamp to the list, None means the end.
function sliceIndices(start, stop, step) {
  if (step === 0) throw "ValueError: slice step cannot be zero";
  const lower = step > 0 ? 0 : -1, upper = step > 0 ? n : n - 1;
  function fix(v, dflt) {
    if (v === null) return dflt;
    if (v < 0) { v += n; return v < lower ? lower : v; }
    return v > upper ? upper : v;
  }
  start = fix(start, step > 0 ? lower : upper);
  stop = fix(stop, step > 0 ? upper : lower);
  const out = [];
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
  return out;
}
function select(text) {
  const m = /^\\s*(-?\\d+)?\\s*(?::\\s*(-?\\d+)?\\s*(?::\\s*(-?\\d+)?\\s*)?)?$/.exec(text);
  if (!m || text.trim() === "") throw "SyntaxError: type a whole number like 2 or a slice like 1:3";
  if (!text.includes(":")) {
    let i = Number(m[1]);
    if (i < -n || i >= n) throw "IndexError: list index out of range";
    return {indices: [i < 0 ? i + n : i], single: true};
  }
  const step = num(m[3]) === null ? 1 : num(m[3]);
  return {indices: sliceIndices(num(m[1]), num(m[2]), step), single: false};
}
function show() {
  const text = document.getElementById("q").value;
  const result = document.getElementById("result");
  const cells = boxes.querySelectorAll(".box");
  cells.forEach(c => c.classList.remove("on"));
  try {
    const picked = select(text);
    picked.indices.forEach(i => cells[i].classList.add("on"));
    const values = picked.indices.map(i => "'" + items[i] + "'");
    result.className = "";
    result.textContent = "fruits[" + text.trim() + "] → " +
      (picked.single ? values[0] : "[" + values.join(", ") + "]");
  } catch (err) {
    result.className = "error";
    result.textContent = "fruits[" + text.trim() + "] → " + err;
  }
}
document.getElementById("q").addEventListener("input", show);
show();
</script>"""
)

FRACTION_ADDER = """<style>
.bar { display: flex; width: 100%; max-width: 440px; height: 26px; margin: .3rem 0 .8rem;
  border: 1px solid #333; background: #fff; border-radius: 0; }
.bar span { flex: 1; border-right: 1px solid #333; }
.bar span:last-child { border-right: 0; }
.bar span.on { background: #4a7bd0; }
.bar span.on2 { background: #e8710a; }
.pick { display: flex; gap: 1.5rem; flex-wrap: wrap; }
fieldset { border: 1px solid #ccc; border-radius: 6px; }
label { margin: .2rem 0; }
#sum { font-size: 1.1rem; }
</style>
<div class="pick">
<fieldset><legend>First fraction</legend>
<label>top (numerator) <input id="a" type="range" min="0" max="12" value="1">
<output id="av"></output></label>
<label>bottom (denominator) <input id="b" type="range" min="1" max="12" value="3">
<output id="bv"></output></label>
</fieldset>
<fieldset><legend>Second fraction</legend>
<label>top (numerator) <input id="c" type="range" min="0" max="12" value="1">
<output id="cv"></output></label>
<label>bottom (denominator) <input id="d" type="range" min="1" max="12" value="6">
<output id="dv"></output></label>
</fieldset>
</div>
<h3>As bars</h3>
<p id="first-label"></p><div class="bar" id="first"></div>
<p id="second-label"></p><div class="bar" id="second"></div>
<h3>Over a common denominator</h3>
<p id="common-label"></p><div class="bar" id="common"></div>
<p id="sum" role="status"></p>
<script>
const el = id => document.getElementById(id);
function gcd(x, y) { while (y) { [x, y] = [y, x % y]; } return x; }
function lcm(x, y) { return x / gcd(x, y) * y; }
function draw(bar, parts, pieces) {
  // pieces: [[count, class], ...]; a bar per whole (a sum can pass 1)
  const total = pieces.reduce((s, p) => s + p[0], 0);
  const wholes = Math.max(1, Math.ceil(total / parts));
  bar.innerHTML = "";
  bar.style.maxWidth = (440 * wholes) + "px";
  let left = pieces.map(p => p.slice());
  for (let k = 0; k < parts * wholes; k++) {
    const span = document.createElement("span");
    const p = left.find(x => x[0] > 0);
    if (p) { span.className = p[1]; p[0] -= 1; }
    const endOfWhole = k % parts === parts - 1 && k < parts * wholes - 1;
    if (endOfWhole) span.style.borderRight = "3px solid #000";
    bar.appendChild(span);
  }
}
function simplest(top, bottom) {
  const g = gcd(top, bottom) || 1;
  return (top / g) + "/" + (bottom / g);
}
function update() {
  let a = Number(el("a").value), b = Number(el("b").value);
  let c = Number(el("c").value), d = Number(el("d").value);
  if (a > b) { a = b; el("a").value = a; }
  if (c > d) { c = d; el("c").value = c; }
  ["a", "b", "c", "d"].forEach(k => el(k + "v").textContent = el(k).value);
  const L = lcm(b, d), a2 = a * L / b, c2 = c * L / d;
  el("first-label").textContent = a + "/" + b;
  el("second-label").textContent = c + "/" + d;
  draw(el("first"), b, [[a, "on"]]);
  draw(el("second"), d, [[c, "on2"]]);
  el("common-label").textContent = a + "/" + b + " = " + a2 + "/" + L + " and " +
    c + "/" + d + " = " + c2 + "/" + L + ": pieces of the same size, " + L + " to a whole";
  draw(el("common"), L, [[a2, "on"], [c2, "on2"]]);
  const top = a2 + c2;
  el("sum").textContent = a + "/" + b + " + " + c + "/" + d + " = " + a2 + "/" + L + " + " +
    c2 + "/" + L + " = " + top + "/" + L + (simplest(top, L) !== top + "/" + L ?
    " = " + simplest(top, L) : "");
}
["a", "b", "c", "d"].forEach(k => el(k).addEventListener("input", update));
update();
</script>"""
