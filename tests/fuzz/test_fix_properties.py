"""Property-based test of ``--fix`` (issue 35): hypothesis writes MindFormers YAML with
anchors and aliases, ``<<`` merge keys, flow mappings and base_config chains, and launch
scripts with shared variables, ``if`` branches and arrays, from the real pair
fixtures/realpairs/glm4_9b_sft_msl. After ``--fix`` (either direction):

* every YAML file still loads with PyYAML (MindFormers' reader) and the pair lints without
  an input error;
* the count ``--fix`` claims is the number of findings gone on the re-lint, and no finding
  appeared;
* every finding left reports the values it reported before (no other row changed), and a
  config that inherits the same base file reads the same values;
* a second ``--fix`` changes no byte.

CI runs a few examples (``CFGLINT_FIX_EXAMPLES``, default 6); the campaign is marked slow:

    python -m pytest tests/fuzz/test_fix_properties.py --slow -m slow   # CFGLINT_FIX_CAMPAIGN=N
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
import yaml  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cfglint.check.pipeline import Options, lint  # noqa: E402
from cfglint.cli import main  # noqa: E402
from conftest import examples  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAIR = ROOT / "fixtures" / "realpairs" / "glm4_9b_sft_msl"
EXAMPLES = examples(3, 6, env="CFGLINT_FIX_EXAMPLES")
RULES = "STR009,STR010,OPT006,OPT008,DET001"

OPTIMIZER = (
    "optimizer:\n  type: AdamW\n  betas: [0.9, 0.999]\n  eps: 1.e-8\n"
    "  learning_rate: 1.e-6\n  weight_decay: 0.01\n"
)
DROPOUT = "    hidden_dropout: 0.0\n    attention_dropout: 0.0\n"


def _settings(n: int) -> Any:
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        derandomize=n <= 20,
        database=None,
    )


@st.composite
def pairs(draw: Any) -> dict[str, Any]:
    return {
        "hidden": draw(st.sampled_from([0.0, 0.1])),
        "attention": draw(st.sampled_from([0.0, 0.1])),
        "dropout_yaml": draw(st.sampled_from(["plain", "anchor", "alias_first"])),
        "beta2": draw(st.sampled_from([0.95, 0.999])),
        "wd": draw(st.sampled_from([0.01, 0.1])),
        "optimizer_yaml": draw(st.sampled_from(["block", "flow", "merge", "base"])),
        "seed": draw(st.sampled_from([42, 1234])),
        "mg_hidden": draw(st.sampled_from([0.0, 0.1])),
        "mg_attention": draw(st.sampled_from([0.0, 0.1])),
        "dropout_sh": draw(st.sampled_from(["literal", "shared", "branch"])),
        "args_sh": draw(st.sampled_from(["string", "array"])),
        "beta2_sh": draw(st.sampled_from(["literal", "variable"])),
        "fix_to": draw(st.sampled_from(["megatron", "mindformers"])),
    }


def _yaml(p: dict[str, Any], tmp: Path) -> None:
    text = (PAIR / "mindformers.yaml").read_text().replace("seed: 42\n", f"seed: {p['seed']}\n")
    h, a = p["hidden"], p["attention"]
    if p["dropout_yaml"] == "plain" or h != a:
        drop = f"    hidden_dropout: {h}\n    attention_dropout: {a}\n"
    elif p["dropout_yaml"] == "anchor":
        drop = f"    hidden_dropout: &drop {h}\n    attention_dropout: *drop\n"
    else:
        drop = f"    attention_dropout: &drop {a}\n    hidden_dropout: *drop\n"
    text = text.replace(DROPOUT, drop)
    opt = OPTIMIZER.replace("0.999", str(p["beta2"])).replace("0.01", str(p["wd"]))
    form = p["optimizer_yaml"]
    if form == "flow":
        body = ", ".join(ln.strip() for ln in opt.splitlines()[1:])
        text = text.replace(OPTIMIZER, f"optimizer: {{{body}}}\n")
    elif form == "merge":
        text = text.replace(OPTIMIZER, "optimizer:\n  <<: *opt\n")
        text = opt.replace("optimizer:", "defaults: &opt") + "other:\n  <<: *opt\n" + text
    elif form == "base":
        text = "base_config: ['./base.yaml']\n" + text.replace(OPTIMIZER, "")
        (tmp / "base.yaml").write_text(opt)
        (tmp / "sibling.yaml").write_text("base_config: ['./base.yaml']\n")
    (tmp / "mf.yaml").write_text(text)


def _script(p: dict[str, Any], tmp: Path) -> None:
    text = (PAIR / "megatron.sh").read_text()
    h, a = p["mg_hidden"], p["mg_attention"]
    head = ""
    if p["dropout_sh"] == "shared" and h == a:
        head = f"DROP={h}\n"
        hd, ad = "${DROP}", "${DROP}"
    elif p["dropout_sh"] == "branch":
        head = f'if [ "$MODE" = "a" ]; then\n    HD={h}\nelse\n    HD={h}\nfi\n'
        hd, ad = "${HD}", str(a)
    else:
        hd, ad = str(h), str(a)
    text = text.replace("--hidden-dropout 0.0", f"--hidden-dropout {hd}")
    text = text.replace("--attention-dropout 0.0", f"--attention-dropout {ad}")
    if p["beta2_sh"] == "variable":
        head += "BETA2=0.95\n"
        text = text.replace("--adam-beta2 0.95", "--adam-beta2 $BETA2")
    text = text.replace("TP=2\n", "TP=2\n" + head)
    if p["args_sh"] == "array":
        text = re.sub(r'GPT_ARGS="\n(.*?)\n"', r"GPT_ARGS=(\n\1\n)", text, flags=re.DOTALL)
        text = text.replace("    ${GPT_ARGS} \\", '    "${GPT_ARGS[@]}" \\')
    (tmp / "mg.sh").write_text(text)


def _files(tmp: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(tmp.iterdir()) if p.is_file()}


def _rows(opts: Options) -> dict[tuple[str, str, tuple[str, ...]], str]:
    report, _ = lint(opts)
    assert not report.errors, report.errors
    return {
        (f.rule, f.row, tuple(sorted(f.values))): repr(sorted(f.values.items()))
        for f in report.findings
    }


def _run_fix(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(argv)
    return rc, err.getvalue()


def check_fix(p: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        _yaml(p, tmp)
        _script(p, tmp)
        opts = Options(
            mindformers=[str(tmp / "mf.yaml")], megatron=str(tmp / "mg.sh"), select=RULES.split(",")
        )
        before = _rows(opts)
        sibling = (
            yaml.safe_load((tmp / "base.yaml").read_text())
            if (tmp / "base.yaml").exists()
            else None
        )
        argv = [str(tmp / "mf.yaml"), "--megatron", str(tmp / "mg.sh"), "--select", RULES]
        rc, err = _run_fix([*argv, "--fix", "--fix-to", p["fix_to"]])
        assert rc in (0, 1), err
        for f in tmp.glob("*.yaml"):
            yaml.safe_load(f.read_text())  # every YAML loads as MindFormers reads it
        after = _rows(opts)
        claimed = int(re.search(r"fixed (\d+) finding", err).group(1))  # type: ignore[union-attr]
        assert claimed == len(before.keys() - after.keys()), (err, before, after)
        assert after.keys() <= before.keys(), "a fix made a new finding"
        for key, values in after.items():
            assert before[key] == values, f"{key} changed: {before[key]} -> {values}"
        if sibling is not None:  # safe fixes leave an inherited base file alone
            assert yaml.safe_load((tmp / "base.yaml").read_text()) == sibling
        written = _files(tmp)
        _run_fix([*argv, "--fix", "--fix-to", p["fix_to"]])
        assert _files(tmp) == written, "a second --fix changed something"


@_settings(EXAMPLES)
@given(pairs())
def test_fix_keeps_files_loading_and_converges(p: dict[str, Any]) -> None:
    check_fix(p)


@pytest.mark.slow
@_settings(int(os.environ.get("CFGLINT_FIX_CAMPAIGN", "40")))
@given(pairs())
def test_fix_campaign(p: dict[str, Any]) -> None:
    check_fix(p)
