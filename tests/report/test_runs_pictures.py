"""The pictures of `cfglint logs`: a title that says the verdict in words with every row's
state, the no-baseline limit not called a benchmark band, a long difference drawn as its
range under a visible band, and the HTML page (run under node with a minimal DOM): the
verdict table first, legends, rounded ticks, `departs` not green."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from cfglint.evidence.runs.judge import judge
from cfglint.load.losslog import RunLog
from cfglint.report import runs_plot
from cfglint.report.runs import headline


def _log(fw: str, loss: np.ndarray, **series: np.ndarray) -> RunLog:
    n = loss.size
    s = {"loss": loss, "lr": np.full(n, 1e-4), "grad_norm": np.full(n, 1.0), **series}
    return RunLog(f"{fw}.log", fw, steps=np.arange(1, n + 1), series=s)


def _pair(n: int, gap: float = 0.0, baseline: bool = False):
    rng = np.random.default_rng(0)
    steps = np.arange(1, n + 1)
    base = 2 + 8 * np.exp(-steps / (n / 5)) + rng.normal(0, 0.02, n)
    a = base + gap * steps / n + rng.normal(0, 0.002, n)
    bases = [_log("megatron", base + rng.normal(0, 0.01, n))] if baseline else []
    return judge(_log("mindformers", a), _log("megatron", base), bases)


def test_title_says_the_verdict_in_words_with_every_row() -> None:
    j = _pair(3000, gap=0.3)
    head, states = headline(j.report)
    assert head.startswith("The runs do not match")
    assert "DIVERGES" in head or "DRIFTS" in head
    # every row's state, by its name, and no internal id
    for word in ("first loss", "mean loss", "global norm", "band", "drift", "late gap"):
        assert word in states
    assert "standard." not in head + states and "late_gap" not in head + states
    ok_head, _ = headline(_pair(3000).report)
    assert ok_head.startswith("The runs match") and "band unknown" in ok_head


def test_no_baseline_limit_is_not_called_a_benchmark_band() -> None:
    diff = runs_plot.panels(_pair(500))[1]
    assert diff["band"]["name"] == "float-noise limit (band unknown)"
    assert "benchmark band" not in diff["title"]
    assert any(s["name"] == "lr=0 forward limit" for s in diff["series"])
    with_base = runs_plot.panels(_pair(500, baseline=True))[1]
    assert with_base["band"]["name"] == "benchmark band"


def test_a_million_steps_draw_the_difference_as_its_range_under_the_band() -> None:
    j = _pair(1_000_000, baseline=True)
    diff = runs_plot.panels(j)[1]
    env, band = diff["envelope"], diff["band"]
    assert env is not None and env["x"].size <= runs_plot.BUCKETS
    # no zigzag line between bucket minima and maxima (a solid block over the band): the
    # range is a filled area, and the baselines' differences are the band itself
    assert [s["name"] for s in diff["series"]] == ["running mean"]
    assert band["x"].size <= runs_plot.BUCKETS and (band["hi"] > 0).all()


_DOM = r"""
const calls=[];
function ctx(){return new Proxy({},{get:(t,k)=>{if(k==="measureText")return s=>({width:s.length*6});
 if(k==="fillText")return s=>calls.push(String(s));if(k in t)return t[k];return ()=>{};},
 set:(t,k,v)=>{t[k]=v;return true;}});}
function el(tag){return{tag,children:[],style:{},dataset:{},className:"",textContent:"",rows:[],
 appendChild(c){this.children.push(c);},addEventListener(){},clientWidth:900,clientHeight:260,
 getContext(){return this._c||(this._c=ctx());},
 insertRow(){const r={cells:[],insertCell(){const c={textContent:"",className:""};
 this.cells.push(c);return c;}};this.rows.push(r);return r;}};}
const byId={};global.document={createElement:el,getElementById:id=>byId[id]||(byId[id]=el(id))};
global.window={innerWidth:1000,devicePixelRatio:1,addEventListener(){}};
require(process.argv[2]);
console.log(JSON.stringify({head:byId.head.textContent,cls:byId.head.className,
 rows:byId.rows.rows.map(r=>[r.cells[0].textContent,r.cells[0].className]),text:calls}));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's script")
def test_html_page_table_first_legends_rounded_ticks(tmp_path: Path) -> None:
    j = _pair(3000, gap=0.3)
    page = tmp_path / "p.html"
    runs_plot.write_html(j, str(page))
    html = page.read_text(encoding="utf-8")
    assert html.index('id="rows"') < html.index('id="plots"')  # the verdicts above the fold
    script = html[html.index("<script>") + 8 : html.index("</script>")]
    (tmp_path / "page.js").write_text(script, encoding="utf-8")
    (tmp_path / "dom.js").write_text(_DOM, encoding="utf-8")
    out = subprocess.run(
        ["node", str(tmp_path / "dom.js"), str(tmp_path / "page.js")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    doc = json.loads(out.stdout)
    assert doc["head"].startswith("The runs do not match") and doc["cls"] == "bad"
    classes = dict(doc["rows"])
    assert classes.get("diverges", classes.get("departs")) == "bad"
    assert classes["unknown"] == "watch"
    # legends name every series of the difference panel
    for name in ("running mean", "float-noise limit (band unknown)", "lr=0 forward limit"):
        assert name in doc["text"]
    # the axis ticks are round numbers (no 0.123457-style labels)
    ticks = [t for t in doc["text"] if t.replace(".", "").replace("-", "").isdigit()]
    assert ticks and all(len(t.split(".")[-1]) <= 2 for t in ticks if "." in t)
