"""The command line: the main call, output contracts, selection, settings, suppression,
exit codes, and that bad input ends in one line with exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cfglint.cli import main
from conftest import FIXTURES, ROOT

EX = FIXTURES / "examples" / "llama2_7b"
EX_MF, EX_MG = str(EX / "pretrain_llama2_7b.yaml"), str(EX / "pretrain_llama2_7b.sh")
DENSE = FIXTURES / "pairs" / "llama2_dense"
ALIGN_MF = str(DENSE / "llama2_7b_align.yaml")
ALIGN_MG = str(DENSE / "pretrain_llama2_align.sh")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code, out, _ = run(capsys, *argv, "--format", "json")
    return code, json.loads(out)


def test_main_call_reports_the_example_mismatches(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, EX_MF, "--megatron", EX_MG)
    assert code == 1
    out = " ".join(out.split())  # the text report wraps lines
    # both values, where each came from, why and how to fix, in one block
    assert "Adam beta2 differs: MindFormers 0.95" in out
    assert (
        "Megatron 0.999 (default of Megatron-LM" in out
        and "not set in pretrain_llama2_7b.sh" in out
    )
    assert "why:" in out and "fix:" in out
    _, data = run_json(capsys, EX_MF, "--megatron", EX_MG)
    counts = {
        s: sum(f["severity"] == s for f in data["findings"]) for s in ("error", "warning", "note")
    }
    parts = [f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n]
    assert out.endswith(f"Found {', '.join(parts)}.")


def test_json_follows_the_contract(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_json(capsys, EX_MF, "--megatron", EX_MG)
    assert code == 1
    assert set(data) == {"tool", "inputs", "findings", "errors", "warnings"}
    assert data["tool"]["name"] == "cfglint"
    assert data["inputs"] == [
        {"path": EX_MF, "kind": "mindformers"},
        {"path": EX_MG, "kind": "megatron"},
    ]
    for f in data["findings"]:
        keys = {"rule", "row", "severity", "message", "values", "locations"}
        assert set(f) - {"unset_locations"} == keys
        assert f["severity"] in ("error", "warning", "note")
        for loc in f["locations"] + f.get("unset_locations", []):
            assert set(loc) == {"path", "line", "column", "side"}
            assert loc["path"] in (EX_MF, EX_MG)  # paths as given on the command line
    beta2 = next(
        f for f in data["findings"] if f["row"] == "optimizer.beta2" and f["severity"] == "error"
    )
    assert beta2["values"] == {"mindformers": 0.95, "megatron": 0.999}
    # the Megatron value is a default: no location on that side, and the message says so
    assert [loc["side"] for loc in beta2["locations"]] == ["mindformers"]
    assert "Megatron" in beta2["message"] and "default" in beta2["message"]
    assert beta2["locations"][0]["line"] == 25
    # ... only where the script would set it: its launch command (line 60)
    assert [(u["side"], u["line"]) for u in beta2["unset_locations"]] == [("megatron", 60)]
    # both sides at their defaults: no written location, only where each file would set it
    dropout = next(f for f in data["findings"] if f["rule"] == "STR009")
    assert dropout["locations"] == [] and "not set in" in dropout["message"]
    assert {u["side"] for u in dropout["unset_locations"]} == {"mindformers", "megatron"}


def test_python_dash_m_behaves_the_same() -> None:
    args = [EX_MF, "--megatron", EX_MG, "--format", "json"]
    a = subprocess.run(
        [sys.executable, "-m", "cfglint", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    b = subprocess.run(
        [str(Path(sys.executable).parent / "cfglint"), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert a.returncode == b.returncode == 1
    assert json.loads(a.stdout) == json.loads(b.stdout)


def test_aligned_pair_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_json(capsys, ALIGN_MF, "--megatron", ALIGN_MG, "--profile", "align")
    assert code == 0 and data["findings"] == [] and data["errors"] == []


def test_single_side_lint(capsys: pytest.CaptureFixture[str]) -> None:
    _, data = run_json(capsys, EX_MF)
    rules = {f["rule"] for f in data["findings"]}
    # eps: 1e-8 is a string for MindFormers, whose optimizer then refuses to start, even
    # without Megatron; no epsilon rule compares a value the run never uses
    assert "OPT018" in rules and not {"OPT002", "OPT003"} & rules
    assert "OPT006" not in rules  # comparisons need both sides
    assert all(loc["side"] == "mindformers" for f in data["findings"] for loc in f["locations"])
    assert data["inputs"] == [{"path": EX_MF, "kind": "mindformers"}]
    code, data = run_json(capsys, "--megatron", EX_MG)
    # one side at the default profile: only what is wrong in any run; the example's Megatron
    # script has no such defect, and its alignment advice waits for --profile align (issue 11)
    assert code == 0 and data["findings"] == []
    code, data = run_json(capsys, "--megatron", EX_MG, "--profile", "align")
    assert code == 1
    assert any(f["rule"] == "ALN006" for f in data["findings"])  # dropout 0.1 while aligning
    assert all(loc["side"] == "megatron" for f in data["findings"] for loc in f["locations"])


def test_select_and_ignore(capsys: pytest.CaptureFixture[str]) -> None:
    _, data = run_json(capsys, EX_MF, "--megatron", EX_MG, "--select", "optimizer")
    assert data["findings"] and all(f["row"].startswith("optimizer.") for f in data["findings"])
    _, data = run_json(capsys, EX_MF, "--megatron", EX_MG, "--select", "OPT006,STR004")
    assert {f["rule"] for f in data["findings"]} == {"OPT006", "STR004"}
    _, data = run_json(capsys, EX_MF, "--megatron", EX_MG, "--ignore", "structure.dropout")
    assert not any(f["row"] == "structure.dropout" for f in data["findings"])


def test_fail_on(capsys: pytest.CaptureFixture[str]) -> None:
    # OPT007 (beta2 is not the recommended 0.95) raises only notes on the example pair
    code, _ = run_json(
        capsys, EX_MF, "--megatron", EX_MG, "--select", "OPT007", "--fail-on", "warning"
    )
    assert code == 0  # only a note
    code, _ = run_json(
        capsys, EX_MF, "--megatron", EX_MG, "--select", "OPT007", "--fail-on", "note"
    )
    assert code == 1


def test_settings_from_pyproject(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cfglint]\nignore = ["optimizer"]\nformat = "json"\n'
    )
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, EX_MF, "--megatron", EX_MG)
    data = json.loads(out)
    assert data["findings"] and not any(f["row"].startswith("optimizer.") for f in data["findings"])
    (tmp_path / "pyproject.toml").write_text("[tool.cfglint]\nno_such_key = 1\n")
    code, _, err = run(capsys, EX_MF)
    assert code == 2 and "no_such_key" in err and len(err.strip().splitlines()) == 1


def test_inline_suppression_in_yaml_and_shell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf = tmp_path / "mf.yaml"
    mf.write_text(
        Path(EX_MF)
        .read_text()
        .replace("  beta2: 0.95\n", "  beta2: 0.95  # cfglint: disable=OPT006\n")
    )
    mg = tmp_path / "mg.sh"
    mg.write_text(
        Path(EX_MG)
        .read_text()
        .replace(
            "    --weight-decay 0.1\n",
            "    --weight-decay 0.1  # cfglint: disable=optimizer.weight_decay\n",
        )
    )
    _, data = run_json(capsys, str(mf), "--megatron", str(mg))
    rules = {f["rule"] for f in data["findings"]}
    assert "OPT006" not in rules and "OPT008" not in rules
    assert "OPT001" in rules  # other findings stay


def test_rules_listing_and_explain(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules", "--format", "json")
    rules = json.loads(out)["rules"]
    assert code == 0 and len(rules) > 80
    assert all(set(r) >= {"id", "row", "severity", "title"} for r in rules)
    assert len({r["id"] for r in rules}) == len(rules)
    code, out, _ = run(capsys, "explain", "OPT006")
    assert code == 0 and "beta2" in out and "How to fix" in out
    code, _, err = run(capsys, "explain", "NOPE999")
    assert code == 2 and "NOPE999" in err


def test_explain_takes_a_checklist_row(capsys: pytest.CaptureFixture[str]) -> None:
    """`--select optimizer.beta2` takes a row, so `explain` does too: every rule of it."""
    code, out, _ = run(capsys, "explain", "optimizer.beta2", "--no-color")
    assert code == 0
    titles = [line for line in out.splitlines() if line.startswith(("OPT006:", "OPT007:"))]
    assert [t[:6] for t in titles] == ["OPT006", "OPT007"]
    assert out.count("Why it matters:") == 2
    # a setting `show` prints names the rules that read it
    code, out, _ = run(capsys, "explain", "structure.ffn_hidden_size", "--no-color")
    assert code == 0 and out.startswith("STR004:")
    code, _, err = run(capsys, "explain", "optimizer.beta3")
    assert code == 2 and "optimizer.beta2" in err


def test_show_lists_values_with_provenance(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", EX_MF, "--megatron", EX_MG, "--format", "json")
    data = json.loads(out)
    ffn = data["settings"]["structure.ffn_hidden_size"]
    assert ffn["mindformers"]["value"] == 11008 and ffn["mindformers"]["origin"] == "derived"
    assert ffn["megatron"]["value"] == 10880
    beta2 = data["settings"]["optimizer.beta2"]["megatron"]
    assert beta2["origin"] == "default" and "Megatron-LM" in beta2["where"]
    code, out, _ = run(capsys, "show", EX_MF, "--megatron", EX_MG)
    assert code == 0 and "structure.ffn_hidden_size" in out


def test_lr_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mf = tmp_path / "mf.yaml"
    mf.write_text(
        Path(ALIGN_MF)
        .read_text()
        .replace(
            "  type: ConstantWarmUpLR\n  learning_rate: 1.e-5\n  warmup_steps: 0\n",
            "  type: CosineWithWarmUpLR\n  learning_rate: 1.e-5\n  lr_end: 1.e-6\n"
            "  warmup_steps: 10\n",
        )
    )
    code, out, _ = run(capsys, "lr", str(mf), "--megatron", ALIGN_MG)
    assert code == 1
    # warmup starts from lr 0 on MindFormers while Megatron is constant: step 1 differs
    assert "First step where they differ by more than 1%: 1" in out
    code, out, _ = run(capsys, "lr", ALIGN_MF, "--megatron", ALIGN_MG)
    assert code == 0 and "agree" in out


def test_lr_plot_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "lr.png"
    code, out, _ = run(capsys, "lr", ALIGN_MF, "--megatron", ALIGN_MG, "--plot", str(png))
    assert code == 0 and f"wrote {png}" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- bad input: one clear line naming the file, exit 2, no traceback ---------------------------
def _bad_inputs(tmp: Path, write: bool = True) -> list[tuple[str, list[str], str]]:
    if write:
        _write_bad_inputs(tmp)
    return [
        ("missing", [str(tmp / "nope.yaml")], "nope.yaml: no such"),
        ("directory", ["--megatron", str(tmp / "dir")], "is a directory"),
        ("syntax", [str(tmp / "syntax.yaml")], "syntax.yaml:"),
        ("alias bomb", [str(tmp / "bomb.yaml")], "alias bomb"),
        ("deep nesting", [str(tmp / "deep.yaml")], "nesting deeper"),
        ("binary", [str(tmp / "binary.yaml")], "binary"),
        ("non-UTF-8", [str(tmp / "latin1.yaml")], "latin1.yaml:2: is not valid UTF-8"),
        ("top-level list", [str(tmp / "list.yaml")], "top level is a list"),
        ("unterminated quote", ["--megatron", str(tmp / "quote.sh")], "quote.sh:1"),
        ("huge", [str(tmp / "huge.yaml")], "limit"),
        ("usage", ["--format", "xml", ALIGN_MF], "invalid choice"),
    ]


def _write_bad_inputs(tmp: Path) -> None:
    (tmp / "dir").mkdir()
    (tmp / "syntax.yaml").write_text("model:\n  model_config: [1,\n")
    bomb = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    bomb += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    (tmp / "bomb.yaml").write_text("\n".join(bomb) + "\n")
    (tmp / "deep.yaml").write_text("a: " + "[" * 20000 + "]" * 20000 + "\n")
    (tmp / "binary.yaml").write_bytes(b"\x00\x01\x02" * 100)
    (tmp / "latin1.yaml").write_bytes("seed: 1\nname: caf\xe9\n".encode("latin-1"))
    (tmp / "list.yaml").write_text("- 1\n- 2\n")
    (tmp / "quote.sh").write_text('ARGS="--num-layers 2\ntorchrun pretrain_gpt.py $ARGS\n')
    (tmp / "huge.yaml").write_text("a: 1\n" + "#" * (9 * 1024 * 1024))


BAD_INPUTS = [name for name, _, _ in _bad_inputs(Path("/nonexistent"), write=False)]


# one case per test (each starts cfglint as a process): ./test's workers share them out
@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_is_one_line_and_exit_2(case: str, tmp_path: Path) -> None:
    name, argv, expect = next(c for c in _bad_inputs(tmp_path) if c[0] == case)
    proc = subprocess.run(
        [sys.executable, "-m", "cfglint", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 2, (name, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, (name, proc.stderr)
    assert "Traceback" not in proc.stderr and expect in lines[0], (name, lines)


def test_input_errors_also_reach_json_and_sarif(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "list.yaml"
    bad.write_text("- 1\n")
    code, out, err = run(capsys, str(bad), "--format", "json")
    assert code == 2 and json.loads(out)["errors"][0]["path"] == str(bad)
    assert err.strip().endswith("top level is a list, expected a mapping of settings")
    code, out, _ = run(capsys, str(bad), "--format", "sarif")
    note = json.loads(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]
    assert code == 2 and "top level is a list" in note["message"]["text"]


def test_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "report.json"
    code, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--format", "json", "-o", str(target))
    assert code == 1 and out == ""
    assert json.loads(target.read_text())["findings"]


def _python(code: str, cache_dir: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -c code`` in the repository with its own cfglint cache."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        env={**os.environ, "CFGLINT_CACHE_DIR": cache_dir},
    )


def test_plain_lint_imports_no_heavy_modules() -> None:
    code = (
        "import sys\nfrom cfglint.cli.app import main\n"
        f"rc = main([{EX_MF!r}, '--megatron', {EX_MG!r}, '--format', 'json'])\n"
        "heavy = [m for m in ('torch', 'mindspore', 'libcst', 'numpy', 'matplotlib')\n"
        "         if m in sys.modules]\n"
        "print(heavy)\n"
    )
    proc = _python(code, "/tmp/cfglint-test-cache")
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout[-500:]


def test_plain_lint_builds_no_validator_and_no_fallback_parser(tmp_path: Path) -> None:
    """Start-up cost (see bench/): once the caches are warm, a text pair lint builds no
    validator for the models it reports with, never imports ruamel (only text too deep for
    libyaml needs it), and imports neither a framework (torch, mindspore), libcst (only
    Python 3.12 syntax read on 3.11 needs it) nor the probe's spec (only `cfglint probe` and
    a rule-file validation need it). What the standard library or pydantic import on their
    own is theirs to change: it is not asserted here."""
    heavy = ("ruamel.yaml", "torch", "mindspore", "libcst", "cfglint.evidence.probe.spec")
    code = (
        "import sys\nfrom cfglint.cli.app import main\n"
        f"main([{EX_MF!r}, '--megatron', {EX_MG!r}])\n"
        "from cfglint.check.schema import RULE_CLASSES\n"
        "from cfglint.model.config import Config\n"
        "from cfglint.model.findings import Finding, InputProblem, InputRef, Location, Report\n"
        "from cfglint.model.values import Loc, Value\n"
        "models = [Loc, Value, Location, Finding, InputProblem, InputRef, Report, Config,\n"
        "          *RULE_CLASSES.values()]\n"
        "built = [m.__name__ for m in models if m.__pydantic_complete__]\n"
        f"loaded = [m for m in {heavy!r} if m in sys.modules]\n"
        "print(built, loaded, file=sys.stderr)\n"
    )
    for _ in range(2):  # the first run fills the rule and data caches
        proc = _python(code, str(tmp_path / "cache"))
    assert proc.stderr.strip().splitlines()[-1] == "[] []", proc.stderr[-500:]


def test_pair_lint_creates_no_dataclass(tmp_path: Path) -> None:
    """Start-up cost (issue 29): Python 3.11's @dataclass compiles every generated method
    from source text when the class is created, a tenth of a pair lint's instructions for
    its thirty record classes; the lint path's records are model.record classes instead.
    Counts every cfglint class the dataclass machinery processes during a pair lint (cold
    caches: the run that reads the most); pydantic's and the standard library's are theirs."""
    code = (
        "import dataclasses, sys\n"
        "made = []\n"
        "real = dataclasses._process_class\n"
        "def spy(cls, *a, **k):\n"
        "    made.append(cls.__module__ + '.' + cls.__qualname__)\n"
        "    return real(cls, *a, **k)\n"
        "dataclasses._process_class = spy\n"
        "from cfglint.cli.app import main\n"
        f"main([{EX_MF!r}, '--megatron', {EX_MG!r}])\n"
        "print([m for m in made if m.startswith('cfglint.')], file=sys.stderr)\n"
    )
    proc = _python(code, str(tmp_path / "cache"))
    assert proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr[-800:]


def test_an_unknown_selector_gets_the_closest_names(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, EX_MF, "--select", "STR0099")
    assert code == 2
    # the closest id first; difflib's next picks depend on which rules exist
    assert "'STR0099'; did you mean STR009, STR0" in err
    code, _, err = run(capsys, EX_MF, "--ignore", "zzzz")
    assert code == 2 and "`cfglint rules` lists the rule ids and rows" in err
