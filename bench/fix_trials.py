"""--fix on every real MindFormers config of the shared corpus (../shared/corpus/mindformers,
not in a user's clone), each paired with the real launch script of fixtures/realpairs that
fits its model family best (else the GLM-4 one), in both directions with --unsafe-fixes.

For each run: the fixes written and the findings they removed, the fixes refused and why
(grouped), whether every YAML still loads with PyYAML, whether the pair still lints
without an input error, and whether a second --fix changes any byte.

    python bench/fix_trials.py > bench/fix_trials.md
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("CFGLINT_SHARED", ROOT.parent / "shared")) / "corpus" / "mindformers"
REAL = ROOT / "fixtures" / "realpairs"
FAMILY = [
    ("llama3", "llama31_8b_sft_msl"),
    ("llama", "llama2_7b_pretrain_msl"),
    ("mixtral", "mixtral_8x7b_pretrain_msl"),
    ("qwen3_moe", "qwen3_30b_a3b_pretrain_msl"),
    ("moe", "qwen3_30b_a3b_pretrain_msl"),
    ("glm", "glm4_9b_sft_msl"),
]


def _script(name: str) -> Path:
    for key, pair in FAMILY:
        if key in name:
            return REAL / pair / "megatron.sh"
    return REAL / "glm4_9b_sft_msl" / "megatron.sh"


def _run(argv: list[str]) -> tuple[int, str]:
    from cfglint.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(argv)
    return rc, err.getvalue()


def _reason(why: str) -> str:
    """A refusal's kind, for the tally."""
    for key in (
        "does not load",
        "still reported",
        "still differs",
        "changes another row",
        "also changes",
        "inherits through base_config",
        "unsafe fix",
        "no automatic fix",
        "derived",
        "branch",
        "not known",
        "not one of the settings",
        "left out while",
        "not applied",
        "conflicts",
        "no such setting",
        "no spelling",
    ):
        if key in why:
            return key
    return "other"


def trial(config: Path, fix_to: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        mf, sh = Path(tmp) / "mf.yaml", Path(tmp) / "mg.sh"
        shutil.copy(config, mf)
        os.chmod(mf, 0o644)
        shutil.copy(_script(config.name), sh)
        argv = [str(mf), "--megatron", str(sh), "--fix", "--unsafe-fixes", "--fix-to", fix_to, "-v"]
        rc, err = _run(argv)
        m = re.search(r"fixed (\d+) finding", err)
        skipped = re.findall(r"not fixed: (\w+): (.*)", err)
        loads = True
        try:
            yaml.safe_load(mf.read_text())
        except yaml.YAMLError:
            loads = False
        after = mf.read_bytes(), sh.read_bytes()
        rc2, _ = _run(argv)
        again = (mf.read_bytes(), sh.read_bytes()) == after
        return {
            "rc": rc,
            "fixed": int(m.group(1)) if m else 0,
            "refused": collections.Counter(
                _reason(w)
                for _, w in skipped
                if "not written" in w or "inherits" in w or "left out" in w
            ),
            "loads": loads and rc2 != 2,
            "again": again,
            "error": err.strip().splitlines()[-1] if rc == 2 else "",
        }


def main() -> None:
    sys.path.insert(0, str(ROOT / "src"))
    configs = sorted(p for p in CORPUS.glob("*.yaml"))
    print("| config | to | exit | fixed | refused (why) | loads after | 2nd --fix no-op |")
    print("|---|---|---|---|---|---|---|")
    totals = collections.Counter()
    for c in configs:
        for to in ("megatron", "mindformers"):
            r = trial(c, to)
            why = ", ".join(f"{k} {v}" for k, v in sorted(r["refused"].items())) or "-"  # type: ignore[union-attr]
            note = f" ({r['error'][:60]})" if r["error"] else ""
            print(
                f"| {c.name} | {to} | {r['rc']}{note} | {r['fixed']} | {why} | "
                f"{'yes' if r['loads'] else 'NO'} | {'yes' if r['again'] else 'NO'} |"
            )
            totals["runs"] += 1
            totals["fixed"] += r["fixed"]  # type: ignore[operator]
            totals["refused"] += sum(r["refused"].values())  # type: ignore[union-attr]
            totals["broken"] += not r["loads"]
            totals["unsettled"] += not r["again"]
            totals["input errors"] += r["rc"] == 2
    print()
    print(", ".join(f"{k}: {v}" for k, v in totals.items()))


if __name__ == "__main__":
    main()
