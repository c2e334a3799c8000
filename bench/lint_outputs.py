"""Write the outputs of a fixed set of lint commands to a folder, to diff two trees byte for byte.

    python bench/lint_outputs.py OUT [--python PY] [--src SRC] [--shared DIR]

A change that only makes the lint path cheaper must leave every output as it was: run this on
the tree before and after (``--src`` another tree's ``src/``, or ``--python`` a wheel's
interpreter), then ``diff -r`` the two folders. Each command's stdout, stderr and exit code
land in one file named after it. The corpus rows need ../shared (skipped without it).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "fixtures/examples/llama2_7b"
MF, MG = str(EX / "pretrain_llama2_7b.yaml"), str(EX / "pretrain_llama2_7b.sh")


def commands(shared: Path | None) -> dict[str, list[str]]:
    pair = [MF, "--megatron", MG]
    cmds = {
        "pair-text": [*pair, "--no-color"],
        "pair-verbose": [*pair, "--no-color", "-v"],
        "pair-concise": [*pair, "--format", "concise"],
        "pair-json": [*pair, "--format", "json"],
        "pair-sarif": [*pair, "--format", "sarif"],
        "pair-github": [*pair, "--format", "github"],
        "pair-statistics": [*pair, "--statistics", "--format", "json"],
        "pair-nocache": [*pair, "--no-cache", "--format", "json"],
        "pair-diff": [*pair, "--diff"],
        "mf-alone": [MF, "--format", "json"],
        "show-json": ["show", *pair, "--format", "json"],
        "show-all": ["show", *pair, "--all", "--no-color"],
        "folder": [str(EX), "--format", "json"],
    }
    for pair_dir in sorted((ROOT / "fixtures/realpairs").iterdir()):
        if pair_dir.is_dir():
            mf, mg = pair_dir / "mindformers.yaml", pair_dir / "megatron.sh"
            cmds[f"real-{pair_dir.name}"] = [str(mf), "--megatron", str(mg), "--format", "json"]
    for pair_dir in sorted((ROOT / "fixtures/pairs").iterdir()):
        files = sorted(p for p in pair_dir.iterdir() if p.is_file())
        cmds[f"pairs-{pair_dir.name}"] = [*map(str, files), "--format", "json"]
    for arg in sorted((ROOT / "fixtures/megatron").iterdir()):
        cmds[f"megatron-{arg.name}"] = [MF, "--megatron", str(arg), "--format", "json"]
    if shared is not None and (shared / "corpus/mindformers").is_dir():
        for cfg in sorted((shared / "corpus/mindformers").rglob("*.yaml"))[:40]:
            rel = cfg.relative_to(shared / "corpus/mindformers")
            cmds[f"corpus-{str(rel).replace('/', '_')}"] = [str(cfg), "--format", "json"]
    return cmds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--src", type=Path, help="a tree's src/ (PYTHONPATH); default: none set")
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if args.src:
        env["PYTHONPATH"] = str(args.src.resolve())
    env.setdefault("CFGLINT_CACHE_DIR", str(args.out.resolve()) + ".cache")
    args.out.mkdir(parents=True, exist_ok=True)
    shared = args.shared if args.shared.is_dir() else None
    for name, argv in commands(shared).items():
        done = subprocess.run(
            [args.python, "-m", "cfglint", *argv], capture_output=True, text=True, env=env, cwd=ROOT
        )
        text = f"exit {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}"
        (args.out / f"{name}.txt").write_text(text)
    print(f"{len(list(args.out.iterdir()))} outputs in {args.out}")


if __name__ == "__main__":
    main()
