"""Helpers for tests/check/test_rule_variations.py: one-knob edits of the aligned fixture pairs.

An edit is applied to a copy of one file of a pair (never to the fixture itself); the lines
it touched are computed from the edited copy, so a test can check that a finding points at
exactly the line that was changed.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PAIRS = ROOT / "fixtures" / "pairs"

# pair name -> (folder, MindFormers YAML, Megatron / MindSpeed-LLM script, msrun script)
PAIR_FILES: dict[str, tuple[str, str, str, str]] = {
    "dense": ("llama2_dense", "llama2_7b_align.yaml", "pretrain_llama2_align.sh", "msrun_align.sh"),
    "moe": ("qwen3_moe", "qwen3_moe_align.yaml", "pretrain_qwen3_moe_align.sh", "msrun_align.sh"),
}
# the MindFormers release a pair's YAML is written for, where its defaults differ by release
# (the fixtures are in no release: without it, every release with their classes is a
# candidate). The MoE pair leaves the load-balancing type and loss weight to
# TransformerConfig, whose defaults are master's (sub_seq_aux_loss, 0) but not v1.6.0's
# (aux_loss, no moe_aux_loss_coeff field: transformer_config.py:249 @ 68fa8494).
PAIR_RELEASES: dict[str, str] = {"moe": "master"}
# which file of a pair an edit targets
ROLES = ("mf", "mg", "launch")


# -- edits ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Replace:
    """Replace one exact substring (it must occur exactly once) with another."""

    old: str
    new: str

    def apply(self, text: str) -> str:
        n = text.count(self.old)
        if n != 1:
            raise AssertionError(f"{self.old!r} occurs {n} times; an edit needs exactly one")
        return text.replace(self.old, self.new)


@dataclass(frozen=True)
class Delete:
    """Delete the one line that contains this substring."""

    line: str

    def apply(self, text: str) -> str:
        lines = text.splitlines(keepends=True)
        hits = [i for i, ln in enumerate(lines) if self.line in ln]
        if len(hits) != 1:
            raise AssertionError(f"{self.line!r} is on {len(hits)} lines; a delete needs one")
        del lines[hits[0]]
        return "".join(lines)


@dataclass(frozen=True)
class Append:
    """Append text at the end of the file."""

    text: str

    def apply(self, text: str) -> str:
        if not text.endswith("\n"):
            text += "\n"
        return text + self.text if self.text.endswith("\n") else text + self.text + "\n"


Edit = Replace | Delete | Append


@dataclass
class Pair:
    """Copies of one fixture pair in a temporary folder, paths as given to the CLI."""

    mf: Path
    mg: Path
    launch: Path
    release: str | None = None  # --mindformers-version (PAIR_RELEASES)

    def path(self, role: str) -> Path:
        return {"mf": self.mf, "mg": self.mg, "launch": self.launch}[role]

    def argv(self, profile: str = "default", *extra: str) -> list[str]:
        return [
            str(self.mf),
            "--megatron",
            str(self.mg),
            "--launch",
            str(self.launch),
            "--profile",
            profile,
            "--format",
            "json",
            "--config",
            str(self.mf.parent / "pyproject.toml"),
            *(("--mindformers-version", self.release) if self.release else ()),
            *extra,
        ]


def copy_pair(name: str, dest: Path) -> Pair:
    folder, mf, mg, launch = PAIR_FILES[name]
    dest.mkdir(parents=True, exist_ok=True)
    src = PAIRS / folder
    for f in (mf, mg, launch):
        shutil.copyfile(src / f, dest / f)
    # an empty settings file: a [tool.cfglint] table in the checkout must not change the runs
    (dest / "pyproject.toml").write_text("", encoding="utf-8")
    return Pair(mf=dest / mf, mg=dest / mg, launch=dest / launch, release=PAIR_RELEASES.get(name))


@dataclass
class Applied:
    """What an edit did to a file: the 1-based line numbers it added or changed in the
    edited copy, and the 1-based numbers (in the original) of the lines it removed."""

    path: Path
    changed: list[int] = field(default_factory=list)
    removed: list[int] = field(default_factory=list)
    removed_text: list[str] = field(default_factory=list)


def apply_edit(path: Path, edit: Edit) -> Applied:
    before = path.read_text(encoding="utf-8")
    after = edit.apply(before)
    assert after != before, f"edit {edit!r} changed nothing in {path.name}"
    path.write_text(after, encoding="utf-8")
    a, b = before.splitlines(), after.splitlines()
    out = Applied(path=path)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            out.changed.extend(range(j1 + 1, j2 + 1))
        if tag == "delete":
            out.removed.extend(range(i1 + 1, i2 + 1))
            out.removed_text.extend(a[i1:i2])
    return out


# -- running the CLI in-process -------------------------------------------------------------
def run_cli(argv: list[str]) -> tuple[int, dict[str, Any]]:
    """Run ``cfglint`` in-process with ``argv``; returns the exit code and the JSON report."""
    from cfglint.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    text = out.getvalue()
    assert text.strip(), f"cfglint printed nothing (exit {rc}); stderr: {err.getvalue()}"
    try:
        report = json.loads(text)
    except json.JSONDecodeError as exc:  # pragma: no cover - a failure message
        raise AssertionError(
            f"not JSON (exit {rc}): {text[:500]!r}; stderr: {err.getvalue()}"
        ) from exc
    return rc, report


def same_values(got: dict[str, Any], want: dict[str, Any]) -> bool:
    """`values` equality: numbers with a relative tolerance, everything else exactly (a bool
    is not a number here, and 1 is not True)."""
    if set(got) != set(want):
        return False
    for k, w in want.items():
        g = got[k]
        if (
            isinstance(w, bool)
            or isinstance(g, bool)
            or not isinstance(w, (int, float))
            or not isinstance(g, (int, float))
        ):
            if type(g) is not type(w) or g != w:
                return False
        elif abs(g - w) > 1e-9 * max(abs(g), abs(w)):
            return False
    return True


def brief(findings: list[dict[str, Any]]) -> str:
    """Findings in one line each, for assertion messages."""
    rows = []
    for f in findings:
        locs = ", ".join(f"{Path(loc['path']).name}:{loc['line']}" for loc in f["locations"])
        rows.append(f"{f['rule']} {f['row']} {f['severity']} [{locs}] {f['message']}")
    return "\n  ".join(["", *rows]) if rows else " (none)"
