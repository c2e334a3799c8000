"""``cfglint logs``: the command, its JSON contract, exit codes, pictures (the HTML page in
a real headless browser), and the probe-written runs with a known cause."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cfglint.cli.app import main
from conftest import FIXTURES, ROOT

RUNS = FIXTURES / "runs"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _write_pair(tmp: Path, n: int, gap: float = 0.0, seed: int = 0) -> tuple[str, str]:
    """A MindFormers and a Megatron log in the frameworks' formats: one falling curve on
    shared data, ``gap`` added to MindFormers' loss growing linearly over the run."""
    rng = np.random.default_rng(seed)
    steps = np.arange(1, n + 1)
    base = 2 + 8 * np.exp(-steps / (n / 5)) + rng.normal(0, 0.02, n)
    mf_loss = base + gap * steps / n + rng.normal(0, 0.002, n)
    mf = [
        f"2026-01-01 00:00:00,000 - mindformers[mindformers/core/callback/callback.py:485] - "
        f"INFO - {{ Epoch:[  1/  1], step:[{s:5d}/{n:5d}], loss: {x:5.3f}, per_step_time: 845ms,"
        f" lr: 1e-05, overflow cond: False, loss_scale: 1.0, global_norm: [1.5]\n"
        for s, x in zip(steps, mf_loss, strict=True)
    ]
    mg = [
        f" [2026-01-01 00:00:00.000000] iteration {s:8d}/{n:8d} | consumed samples: {s * 8:12d}"
        f" | elapsed time per iteration (ms): 812.5 | learning rate: 1.000000E-05 | global batch"
        f" size:     8 | lm loss: {x:.6E} | loss scale: 1.0 | grad norm: 1.510 | number of "
        f"skipped iterations:   0 | number of nan iterations:   0 |\n"
        for s, x in zip(steps, base, strict=True)
    ]
    a, b = tmp / f"mf{seed}.log", tmp / f"mg{seed}.log"
    a.write_text("".join(mf))
    b.write_text("".join(mg))
    return str(a), str(b)


def test_json_contract_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mf, mg = _write_pair(tmp_path, 600)
    code, out, _ = _run(capsys, "logs", mf, mg, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    logs = doc["logs"]
    assert {"steps", "band", "rows", "divergence_step"} <= set(logs)
    assert logs["steps"]["common"] == 600 and logs["divergence_step"] is None
    rows = {r["row"]: r for r in logs["rows"]}
    assert {
        "standard.first_loss",
        "standard.mean_loss",
        "standard.global_norm",
        "lr0.forward",
        "benchmark.band",
        "drift",
        "divergence",
        "late_gap",
        "lr.logged",
    } <= set(rows)
    assert all({"row", "verdict", "numbers"} <= set(r) for r in logs["rows"])
    assert rows["drift"]["verdict"] == "noise"
    mf2, _ = _write_pair(tmp_path / "..", 600, gap=0.15, seed=0)
    code, out, _ = _run(capsys, "logs", mf2, mg, "--format", "json")
    logs = json.loads(out)["logs"]
    assert code == 1 and logs["divergence_step"] is not None


def test_bad_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("nothing here\n")
    _, mg = _write_pair(tmp_path, 50)
    code, out, err = _run(capsys, "logs", str(empty), mg)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "empty.log" in err and "no per-step loss" in err
    code, _, err = _run(capsys, "logs", mg, mg, "--plot", str(tmp_path / "x.svg"))
    assert code == 2 and ".png or an .html" in err
    code, _, err = _run(capsys, "logs", mg, mg)  # both Megatron: the first slot says so
    assert code == 2 and "is a Megatron training log, given as MF_LOG" in err


def test_png_and_small_html_for_a_long_run(tmp_path: Path, capsys) -> None:
    mf, mg = _write_pair(tmp_path, 100_000)
    png, html = tmp_path / "p.png", tmp_path / "p.html"
    assert _run(capsys, "logs", mf, mg, "--plot", str(png))[0] == 0
    assert _run(capsys, "logs", mf, mg, "--plot", str(html))[0] == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = html.read_text()
    assert len(page) < 1_500_000  # thinned for display: 100k steps, a few hundred KB
    # self-contained: no script, style or image is fetched from anywhere
    assert "src=" not in page and "href=" not in page and "@import" not in page


def test_plain_lint_and_logs_text_import_no_tensorboard(tmp_path: Path) -> None:
    mf, mg = _write_pair(tmp_path, 30)
    code = (
        "import sys\nfrom cfglint.cli.app import main\n"
        f"main(['logs', {mf!r}, {mg!r}])\n"
        "print([m for m in ('tensorboard', 'torch', 'mindspore') if m in sys.modules])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stderr[-500:]


# -- probe-written runs with a known cause (fixtures/runs, see its README) ---------------------
def _logs_json(capsys, *argv: str) -> dict:
    code, out, _ = _run(capsys, "logs", *argv, "--format", "json")
    doc = json.loads(out)
    doc["code"] = code
    return doc


def _probe_pair(capsys, run: str, config: str, script: str = "base.sh") -> dict:
    """`cfglint logs` on one probe-written pair of fixtures/runs, with the linted pair."""
    d = RUNS / run
    return _logs_json(
        capsys,
        str(d / "mindformers.log"),
        str(d / "megatron.log"),
        "--config",
        str(RUNS / config),
        "--megatron",
        str(RUNS / script),
    )


def _rows(doc: dict) -> dict[str, dict]:
    return {r["row"]: r for r in doc["logs"]["rows"]}


def test_probe_runs_of_the_same_config_are_noise(capsys) -> None:
    # through the installed entry point's code path, with the pair linted as well
    doc = _probe_pair(capsys, "same", "base.yaml")
    rows = _rows(doc)
    # six printed decimals show the frameworks' float32 rounding (about 1e-6, one-signed):
    # within float arithmetic, so noise
    assert rows["drift"]["verdict"] == "noise"
    assert doc["logs"]["divergence_step"] is None
    assert rows["divergence"]["verdict"] == "none"
    assert rows["late_gap"]["verdict"] == "pass"
    assert doc["code"] == 0


def _named(doc: dict, row: str) -> set[str]:
    return {f["rule"] for r in doc["logs"]["rows"] if r["row"] == row for f in r["findings"]}


def test_probe_runs_with_a_weight_decay_difference_part_early_and_name_it(capsys) -> None:
    doc = _probe_pair(capsys, "wd", "wd.yaml")
    rows = _rows(doc)
    # weight decay 0.1 on Megatron only pulls its weights from the first update: the curves
    # part (beyond float noise) within the first steps and the cause is named
    step = doc["logs"]["divergence_step"]
    assert rows["divergence"]["verdict"] == "parts" and 2 <= step <= 30
    assert "OPT008" in _named(doc, "divergence")
    # a small one-signed gap remains (the decayed side sits slightly higher)
    assert rows["drift"]["verdict"] == "offset"
    assert float(rows["drift"]["numbers"]["late_offset"]) < 0
    # but it is 1.6e-4 of a loss near 4: inside every limit the guide sets, and with no
    # baseline the band is unknown: no failure is claimed
    assert rows["benchmark.band"]["verdict"] == "unknown"
    assert "lr = 0 forward limit" in rows["divergence"]["detail"]
    assert doc["code"] == 0
    assert rows["lr.logged"]["verdict"] == "pass"  # nothing else differs


def test_probe_runs_with_bf16_weights_drift_late_and_name_it(capsys) -> None:
    doc = _probe_pair(capsys, "prec", "prec.yaml", "low.sh")
    rows = _rows(doc)
    assert doc["code"] == 1
    # the same start: bfloat16 weights keep the first losses (updates of 1e-4 still land)
    assert rows["standard.first_loss"]["verdict"] == "pass"
    # updates below half a bfloat16 step are lost from the first one: the curves leave the
    # float-noise limit at once (no baseline), and pass the lr = 0 forward limit later, once
    # the lost updates add up
    step = doc["logs"]["divergence_step"]
    assert step is not None and step <= 10
    assert rows["divergence"]["verdict"] == "diverges"
    assert rows["divergence"]["numbers"]["beyond_lr0_limit_at"] > 30
    assert rows["drift"]["verdict"] == "drift"
    assert rows["late_gap"]["verdict"] == "fail"
    for row in ("drift", "divergence", "late_gap"):
        assert {"WGT002", "PRC005"} <= _named(doc, row), row
    assert rows["lr.logged"]["verdict"] == "pass"


@pytest.mark.slow
def test_fixture_runs_regenerate_the_same(tmp_path: Path) -> None:
    """scripts/make_run_fixtures.py writes what fixtures/runs holds (the probe is seeded and
    deterministic): the committed logs are the probe's, not edited."""
    pytest.importorskip("torch")
    pytest.importorskip("mindspore")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts/make_run_fixtures.py"), "lr", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    for name in ("mindformers", "megatron", "mindformers_lr0", "megatron_lr0"):
        new = (tmp_path / "lr" / f"{name}.log").read_text(encoding="utf-8")
        assert new == (RUNS / "lr" / f"{name}.log").read_text(encoding="utf-8"), name


def test_probe_runs_with_an_lr_difference_part_at_step_2_and_name_it(capsys) -> None:
    doc = _probe_pair(capsys, "lr", "lr.yaml")
    rows = _rows(doc)
    assert doc["code"] == 1
    assert (
        rows["lr.logged"]["verdict"] == "differ" and rows["lr.logged"]["numbers"]["first_step"] == 1
    )
    # the higher lr drops faster, then both reach the tokens' entropy: the curves part at
    # step 2 and meet again
    assert rows["divergence"]["verdict"] == "departs"
    assert doc["logs"]["divergence_step"] == 2
    named = {f["row"] for r in doc["logs"]["rows"] for f in r.get("findings", [])}
    assert "optimizer.lr" in named
    assert rows["lr.configured.mindformers"]["verdict"] == "pass"  # each log follows its config


def test_probe_lr0_runs_pass_forward_and_backward(capsys) -> None:
    d = RUNS / "same"
    rows = _rows(_logs_json(capsys, str(d / "mindformers_lr0.log"), str(d / "megatron_lr0.log")))
    assert rows["lr0.forward"]["verdict"] == "pass"
    assert rows["lr0.backward"]["verdict"] == "pass"


# selenium's manager downloads a driver when none is on PATH: without network that is a
# failure, not a skip, so the test needs the installed chromedriver and passes it explicitly
CHROMEDRIVER = shutil.which("chromedriver")


# a real browser (about 10 s): CI installs chromium for it (.ci/run, --slow)
@pytest.mark.slow
@pytest.mark.skipif(
    CHROMEDRIVER is None
    or (shutil.which("chromium") is None and shutil.which("chromium-browser") is None),
    reason="needs chromium and chromedriver (apt-get install chromium chromium-driver)",
)
def test_html_page_zooms_and_hovers_in_a_real_browser(tmp_path: Path, capsys) -> None:
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    mf, mg = _write_pair(tmp_path, 20_000, gap=0.2)
    page = tmp_path / "p.html"
    _run(capsys, "logs", mf, mg, "--plot", str(page))
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=CHROMEDRIVER))
    try:
        driver.set_window_size(1200, 1000)
        driver.get(page.as_uri())
        canvases = driver.find_elements(By.TAG_NAME, "canvas")
        assert len(canvases) == 4
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
        # nothing but the page itself was loaded
        fetched = driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
        assert fetched == []
        full = driver.execute_script("return window.cfglintView()")
        assert full[0] == 1 and full[1] == 20_000
        loss = canvases[0]
        ActionChains(driver).move_to_element_with_offset(loss, 0, 0).perform()
        tip = driver.find_element(By.ID, "tip")
        assert tip.is_displayed() and "MindFormers" in tip.text and "step" in tip.text
        # drag across the middle fifth of the panel: the view narrows to those steps
        w = loss.size["width"]
        ActionChains(driver).move_to_element_with_offset(
            loss, -w // 10, 0
        ).click_and_hold().move_by_offset(w // 5, 0).release().perform()
        zoomed = driver.execute_script("return window.cfglintView()")
        assert full[0] < zoomed[0] < zoomed[1] < full[1]
        assert zoomed[1] - zoomed[0] < (full[1] - full[0]) / 3
        ActionChains(driver).double_click(loss).perform()
        assert driver.execute_script("return window.cfglintView()") == full
        rows = driver.find_elements(By.CSS_SELECTOR, "#rows tr")
        assert any("drift" in r.text for r in rows)
    finally:
        driver.quit()


def test_readme_plot_command_is_the_documented_one() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "cfglint logs fixtures/runs/lr/mindformers.log fixtures/runs/lr/megatron.log" in readme
    assert (ROOT / "docs" / "logs_lr.png").exists()
    assert os.path.getsize(ROOT / "docs" / "logs_lr.png") < 400_000


def test_curves_parting_early_name_the_seed_finding_of_the_lint(tmp_path: Path, capsys) -> None:
    """With --config/--megatron, a divergence in the first steps names the lint's seed
    finding (DET001), which the lint raises and the divergence row used to leave out."""
    text = (RUNS / "lr.yaml").read_text(encoding="utf-8").replace("seed: 1234", "seed: 42")
    (tmp_path / "lr.yaml").write_text(text, encoding="utf-8")
    d = RUNS / "lr"
    doc = _logs_json(
        capsys,
        str(d / "mindformers.log"),
        str(d / "megatron.log"),
        "--config",
        str(tmp_path / "lr.yaml"),
        "--megatron",
        str(RUNS / "base.sh"),
    )
    assert doc["logs"]["divergence_step"] == 2
    assert {"DET001", "OPT010"} <= _named(doc, "divergence")
    assert "DET001" not in _named(doc, "lr.logged")


def test_a_baseline_identical_to_the_reference_is_flagged(tmp_path: Path, capsys) -> None:
    """The probe's reference run written again (a deterministic rerun, or the same log
    copied): no run-to-run error is measured, so it gives no band and says so."""
    d = RUNS / "same"
    again = tmp_path / "megatron_again.log"
    shutil.copyfile(d / "megatron.log", again)
    doc = _logs_json(
        capsys, str(d / "mindformers.log"), str(d / "megatron.log"), "--baseline", str(again)
    )
    band = _rows(doc)["benchmark.band"]
    assert band["verdict"] == "unknown"
    assert "identical to the reference run" in band["detail"]
    assert band["numbers"]["identical_baselines"] == [str(again)]
    assert doc["code"] == 0


def _every_10(src: Path, dst: Path, framework: str) -> None:
    """The probe-written run as it prints at a logging interval of 10: Megatron's line every
    10 iterations with the mean loss of the 10 (--log-interval 10, training.py:2240-2246@
    9539a12e), MindFormers' line every 10 steps with that step's loss (per_print_times 10)."""
    import re

    lines = [ln for ln in src.read_text(encoding="utf-8").splitlines(True) if "loss" in ln]
    out = []
    if framework == "megatron":
        pat = re.compile(r"lm loss: ([0-9.E+-]+)")
        losses = [float(pat.search(ln).group(1)) for ln in lines]
        for k in range(9, len(lines), 10):
            mean = sum(losses[k - 9 : k + 1]) / 10
            out.append(pat.sub(f"lm loss: {mean:.6E}", lines[k]))
    else:
        out = lines[9::10]
    dst.write_text("".join(out), encoding="utf-8")


def test_probe_runs_at_log_interval_10_compare_like_with_like(tmp_path: Path, capsys) -> None:
    d = RUNS / "same"
    mg10 = tmp_path / "megatron_10.log"
    _every_10(d / "megatron.log", mg10, "megatron")
    # MindFormers every step against Megatron's 10-step means: the windows are averaged
    doc = _logs_json(capsys, str(d / "mindformers.log"), str(mg10))
    rows = _rows(doc)
    assert rows["standard.mean_loss"]["numbers"]["abs"] < 1e-5  # as printed: about 0.02
    assert rows["standard.first_loss"]["verdict"] == "unknown"
    assert rows["drift"]["verdict"] == "noise" and doc["logs"]["divergence_step"] is None
    assert doc["code"] == 0
    # both every 10 steps: step 10's loss against the mean of steps 1-10 is not the first
    # loss, and one step in ten against the mean of the ten is not the mean-loss standard:
    # neither fails, and the band is widened by one step's scatter (the probe's per-step
    # loss strays by about 0.1; a pass at 0.0945 one-signed was judged a drift)
    mf10 = tmp_path / "mindformers_10.log"
    _every_10(d / "mindformers.log", mf10, "mindformers")
    doc = _logs_json(capsys, str(mf10), str(mg10))
    rows = _rows(doc)
    assert rows["standard.first_loss"]["verdict"] == "unknown"
    # MindFormers' window 1-10 would need its steps before 10: it starts from window 11-20
    assert rows["standard.first_loss"]["numbers"]["step"] == 20
    assert rows["standard.mean_loss"]["verdict"] == "unknown"
    assert rows["drift"]["verdict"] in ("noise", "offset")
    assert doc["code"] == 0
