"""Values of the wrong type or out of range anywhere in either input: cfglint reports what
it can and never crashes (conftest sets CFGLINT_DEBUG, so any exception fails here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cfglint.cli import main
from conftest import FIXTURES

MF = FIXTURES / "pairs" / "qwen3_moe" / "qwen3_moe_align.yaml"
MG = FIXTURES / "pairs" / "qwen3_moe" / "pretrain_qwen3_moe_align.sh"
LOG = FIXTURES / "logs" / "megatron_train.log"
YAML_CFG = FIXTURES / "megatron" / "gpt_yaml_cfg.yaml"
WEIRD_YAML = ['"abc"', "[1, 2]", "{a: 1}", "", "True", "0", "-1", "1e-5", ".inf", "-.nan"]
WEIRD_ARG = ["abc", "0", "-1", "inf", "nan", "1e400", "99999999999999999999"]
WEIRD_LOG = ["abc", "[1, 2]", "None", "True", "-1", "inf", "(1,"]


def _variants(path: Path, pattern: str, weird: list[str]) -> list[tuple[str, int, str, str]]:
    out = []
    for i, line in enumerate(path.read_text().splitlines()):
        m = re.match(pattern, line)
        if m:
            out += [
                (
                    path.name,
                    i,
                    m.group(1) + w + (m.group(3) if m.lastindex == 3 and m.group(3) else ""),
                    w,
                )
                for w in weird
            ]
    return out


CASES = (
    _variants(MF, r"^(\s{4}[a-z_]+: )(\S+)$", WEIRD_YAML)
    + _variants(MG, r"^(\s+--[a-z0-9-]+ )(\S+)( \\)$", WEIRD_ARG)
    + _variants(
        LOG,
        r"^(  (?:hidden_size|num_layers|lr|global_batch_size|seq_length|"
        r"lr_warmup_fraction|train_iters|ffn_hidden_size|num_attention_heads) \.* )(.*)$",
        WEIRD_LOG,
    )
    + _variants(YAML_CFG, r"^(\s*[a-z_]+: )(\S+)$", WEIRD_YAML)
)


# what the default run tries in each file, once, at its first line: a string where a number
# goes, a container, and a non-finite number (the kinds that once crashed a reader)
SAMPLED = {'"abc"', "[1, 2]", "-.nan", "abc", "nan", "1e400", "inf"}


def _sampled(cases: list[tuple[str, int, str, str]]) -> list[object]:
    """A few weird values in every file once (at its first line) in the default run; the
    whole campaign (every value at every line: about a thousand runs) is marked slow
    (.ci/run: --slow)."""
    seen: set[tuple[str, str]] = set()
    out: list[object] = []
    for name, line, text, weird in cases:
        marks = [pytest.mark.slow] if (name, weird) in seen or weird not in SAMPLED else []
        seen.add((name, weird))
        ident = f"{name}:{line + 1}:{text.strip()[:30]}"
        out.append(pytest.param(name, line, text, marks=marks, id=ident))
    return out


@pytest.mark.parametrize(("name", "line", "text"), _sampled(CASES))
def test_weird_values_never_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, line: int, text: str
) -> None:
    files = {p.name: p for p in (MF, MG, LOG, YAML_CFG)}
    src = files[name]
    lines = src.read_text().splitlines()
    lines[line] = text
    edited = tmp_path / name
    edited.write_text("\n".join(lines) + "\n")
    mf = edited if src == MF else MF
    mg = edited if src != MF else MG
    for argv in (
        [str(mf), "--megatron", str(mg), "--format", "json"],
        ["lr", str(mf), "--megatron", str(mg)],
    ):
        assert main(argv) in (0, 1, 2)
        capsys.readouterr()


def test_the_default_run_tries_each_weird_value_once_and_the_campaign_is_slow() -> None:
    # ./test stays within minutes: the thousand-run campaign is CI's (--slow), while every
    # kind of file meets the sampled weird values once in the default run
    params = _sampled(CASES)
    quick = [p for p in params if not p.marks]  # type: ignore[attr-defined]
    kinds = {(c[0], c[3]) for c in CASES if c[3] in SAMPLED}
    assert len(quick) == len(kinds) and len(params) == len(CASES) > 10 * len(quick)
    assert {(p.values[0], c[3]) for p, c in zip(params, CASES, strict=True) if not p.marks} == kinds  # type: ignore[attr-defined]
    assert {c[0] for c in CASES} == {name for name, _ in kinds}  # every file is tried
