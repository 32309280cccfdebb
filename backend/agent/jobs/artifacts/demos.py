"""Offline demo pages: small, self-contained, inline script only (no network)."""

from __future__ import annotations

from html import escape

_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{TITLE}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.2rem; color: #222; }
label { display: block; margin: .6rem 0; }
output { font-weight: bold; }
.bar { height: 16px; background: #4a7bd0; border-radius: 4px; }
canvas { border: 1px solid #ccc; max-width: 100%; }
</style></head>
<body><h2>{{TITLE}}</h2><p>{{INTRO}}</p>
{{BODY}}
</body></html>
"""

GENERIC = """<label>x = <input id="x" type="range" min="0" max="10" step="0.5" value="3">
<output id="xv">3</output></label>
<p>x × 2 = <output id="dbl">6</output>, x² = <output id="sq">9</output></p>
<div class="bar" id="bar" style="width: 9%"></div>
<script>
const x = document.getElementById("x");
function update() {
  const v = Number(x.value);
  document.getElementById("xv").textContent = v;
  document.getElementById("dbl").textContent = (2 * v).toFixed(1);
  document.getElementById("sq").textContent = (v * v).toFixed(2);
  document.getElementById("bar").style.width = v * v + "%";
}
x.addEventListener("input", update);
update();
</script>"""

WAVE = """<label>amplitude <input id="amp" type="range" min="0.1" max="1" step="0.1" value="0.8">
<output id="ampv">0.8</output></label>
<label>frequency <input id="freq" type="range" min="1" max="6" step="1" value="2">
<output id="freqv">2</output> cycles</label>
<canvas id="plot" width="480" height="200"></canvas>
<script>
const amp = document.getElementById("amp"), freq = document.getElementById("freq");
const ctx = document.getElementById("plot").getContext("2d");
function draw() {
  const a = Number(amp.value), f = Number(freq.value);
  document.getElementById("ampv").textContent = a;
  document.getElementById("freqv").textContent = f;
  ctx.clearRect(0, 0, 480, 200);
  ctx.strokeStyle = "#bbb";
  ctx.beginPath(); ctx.moveTo(0, 100); ctx.lineTo(480, 100); ctx.stroke();
  ctx.strokeStyle = "#d93025"; ctx.lineWidth = 2; ctx.beginPath();
  for (let px = 0; px <= 480; px++) {
    const y = 100 - 90 * a * Math.sin(2 * Math.PI * f * px / 480);
    if (px === 0) ctx.moveTo(px, y); else ctx.lineTo(px, y);
  }
  ctx.stroke();
}
amp.addEventListener("input", draw); freq.addEventListener("input", draw);
draw();
</script>"""

GROWTH = """<label>yearly rate <input id="rate" type="range" min="0" max="20" step="1" value="5">
<output id="ratev">5</output> %</label>
<label>years <input id="years" type="range" min="1" max="40" step="1" value="10">
<output id="yearsv">10</output></label>
<p>100 grows to <output id="total">162.89</output></p>
<canvas id="plot" width="480" height="200"></canvas>
<script>
const rate = document.getElementById("rate"), years = document.getElementById("years");
const ctx = document.getElementById("plot").getContext("2d");
function update() {
  const r = Number(rate.value) / 100, n = Number(years.value);
  document.getElementById("ratev").textContent = rate.value;
  document.getElementById("yearsv").textContent = n;
  const values = Array.from({length: n + 1}, (_, k) => 100 * Math.pow(1 + r, k));
  document.getElementById("total").textContent = values[n].toFixed(2);
  const top = Math.max(...values), w = 480 / values.length;
  ctx.clearRect(0, 0, 480, 200); ctx.fillStyle = "#4a7bd0";
  values.forEach((v, k) => ctx.fillRect(k * w + 1, 200 - 190 * v / top, w - 2, 190 * v / top));
}
rate.addEventListener("input", update); years.addEventListener("input", update);
update();
</script>"""

CHANCE = """<label>flips <input id="n" type="range" min="1" max="1000" step="1" value="100">
<output id="nv">100</output></label>
<button id="go">Flip the coins</button>
<p>heads: <output id="heads">–</output> — share: <output id="share">–</output>
(the theory says 0.5)</p>
<div class="bar" id="bar" style="width: 0%"></div>
<script>
const n = document.getElementById("n");
n.addEventListener("input", () => { document.getElementById("nv").textContent = n.value; });
document.getElementById("go").addEventListener("click", () => {
  const count = Number(n.value);
  let heads = 0;
  for (let i = 0; i < count; i++) if (Math.random() < 0.5) heads++;
  document.getElementById("heads").textContent = heads;
  document.getElementById("share").textContent = (heads / count).toFixed(3);
  document.getElementById("bar").style.width = (100 * heads / count) + "%";
});
</script>"""


def page(title: str, intro: str, body: str) -> str:
    """A whole demo document around one of the bodies above."""
    return (
        _PAGE.replace("{{TITLE}}", escape(title))
        .replace("{{INTRO}}", escape(intro))
        .replace("{{BODY}}", body)
    )
