"""Benchmark the source scanner on a generated training repository.

Generates a tree of Python modules (default 1200) of realistic size, importing each other,
with a few training entry points, then reports files/s for a cold scan (empty cache), a
warm scan (full cache) and a scan after one file changed. Numbers only, no asserts:

    python bench/bench_scan.py [--files N] [--jobs J] [--keep DIR]

With ``--repo DIR`` (e.g. a Megatron-LM work tree) it scans that repository instead and puts
the cold scan next to its floor, the cost of merely reading and ``ast.parse``-ing the same
files, both measured in this run, in one process (CPU seconds of this process and its
workers), and reports the ratio (issue 9's goal: at most 5x):

    python bench/bench_scan.py --repo /tmp/repos/Megatron-LM [--jobs 1]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

PACKAGES = ("core", "models", "data", "optim", "parallel", "utils", "tokenizer", "ops")


def _function(rng: random.Random, name: str, callees: list[str]) -> str:
    lines = [f"def {name}(x, config, scale=1.0):", f'    """Compute {name} for a batch."""']
    for i in range(rng.randint(6, 18)):
        kind = rng.random()
        if kind < 0.3 and callees:
            lines.append(f"    x = {rng.choice(callees)}(x, config)")
        elif kind < 0.5:
            lines.append(f"    if config.flag_{i % 5}:")
            lines.append(f"        x = x * scale + {rng.random():.3f}")
        elif kind < 0.65:
            lines.append(f"    for step in range(config.steps_{i % 3}):")
            lines.append("        x = torch.relu(x) + step")
        elif kind < 0.8:
            lines.append(f"    tmp_{i} = [v * 2 for v in range(10) if v % 3]  # keep small")
            lines.append(f"    x = x + sum(tmp_{i})")
        else:
            lines.append(f'    logger.debug("step {i}: %s", x.shape if hasattr(x, "shape") else x)')
    lines.append("    return x")
    return "\n".join(lines)


def _class(rng: random.Random, name: str, callees: list[str]) -> str:
    out = [f"class {name}(nn.Module):", f'    """Layer {name}."""', ""]
    out.append("    def __init__(self, config):")
    out.append("        super().__init__()")
    out.append("        self.config = config")
    out.append("        self.proj = nn.Linear(config.hidden_size, config.hidden_size)")
    out.append("        self.dropout = nn.Dropout(config.hidden_dropout)")
    for m in range(rng.randint(3, 6)):
        out.append("")
        out.append(f"    def method_{m}(self, x):")
        for j in range(rng.randint(3, 10)):
            if callees and rng.random() < 0.3:
                out.append(f"        x = {rng.choice(callees)}(x, self.config)")
            else:
                out.append(f"        x = self.proj(x) * {j + 1}")
        out.append("        return self.dropout(x)")
    return "\n".join(out)


def generate(root: Path, n_files: int, seed: int = 0) -> list[Path]:
    rng = random.Random(seed)
    modules: list[tuple[str, Path]] = []
    for i in range(n_files):
        pkg = PACKAGES[i % len(PACKAGES)]
        sub = f"part{(i // len(PACKAGES)) % 12}"
        modules.append((f"repo.{pkg}.{sub}.mod{i}", root / "repo" / pkg / sub / f"mod{i}.py"))
    for _, path in modules:
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in (path.parent, path.parent.parent, path.parent.parent.parent):
            init = parent / "__init__.py"
            if not init.exists():
                init.write_text('"""Package."""\n')
    for i, (_, path) in enumerate(modules):
        deps = rng.sample(range(n_files), k=min(4, n_files)) if n_files > 1 else []
        deps = [d for d in deps if d != i]
        head = [
            f'"""Module {i}: generated for the scanner benchmark."""',
            "",
            "import logging",
            "import math",
            "",
            "import torch",
            "from torch import nn",
            "",
        ]
        callees = []
        for d in deps:
            dotted = modules[d][0]
            head.append(f"from {dotted} import func_{d}_0")
            callees.append(f"func_{d}_0")
        head += ["", "logger = logging.getLogger(__name__)", f"SCALE = {rng.random():.4f}", ""]
        body = []
        for c in range(rng.randint(1, 2)):
            body.append(_class(rng, f"Block{i}x{c}", callees))
        for f in range(rng.randint(4, 9)):
            body.append(_function(rng, f"func_{i}_{f}", callees))
        path.write_text("\n".join(head) + "\n\n" + "\n\n\n".join(body) + "\n")
    entries = []
    for e in range(4):
        target = rng.randrange(n_files)
        entry = root / f"train_{e}.py"
        seed_call = "    seed_all(1234)\n" if e == 0 else ""
        entry.write_text(
            "import os\nimport random\n\nimport numpy as np\nimport torch\n\n"
            f"from {modules[target][0]} import func_{target}_0\n\n\n"
            "def seed_all(seed=42):\n    random.seed(seed)\n"
            "    os.environ['PYTHONHASHSEED'] = str(seed)\n    np.random.seed(seed)\n"
            "    torch.manual_seed(seed)\n    torch.use_deterministic_algorithms(True)\n\n\n"
            "def main():\n    model = torch.nn.Linear(8, 8)\n"
            "    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1)\n"
            "    return func_" + f"{target}_0(opt, None)\n\n\n"
            f'if __name__ == "__main__":\n{seed_call}    main()\n'
        )
        entries.append(entry)
    return [p for _, p in modules] + entries


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the scan's workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _ast_floor(files: list[str]) -> tuple[float, float, int]:
    """(wall, cpu) seconds to read and ast.parse every file, and how many parsed."""
    import ast
    import warnings

    w0, c0 = time.perf_counter(), _cpu()
    ok = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences in old code
        for f in files:
            try:
                ast.parse(Path(f).read_text(encoding="utf-8"))
                ok += 1
            except (SyntaxError, UnicodeDecodeError, ValueError, RecursionError):
                pass
    return time.perf_counter() - w0, _cpu() - c0, ok


def bench_repo(repo: str, jobs: int | None) -> None:
    from cfglint.evidence.scan.runner import discover

    base = Path(tempfile.mkdtemp(prefix="cfglint-bench-"))
    os.environ["CFGLINT_CACHE_DIR"] = str(base / "cache")
    try:
        files = [display for display, _, _ in discover([repo], [])]
        size = sum(Path(f).stat().st_size for f in files)
        print(
            f"repo: {repo}: {len(files)} files, {size / 1024 / 1024:.1f} MiB; jobs: {jobs or 'all'}"
        )
        floor_w, floor_c, ok = _ast_floor(files)
        print(f"ast.parse floor: {floor_w:7.2f} s wall, {floor_c:7.2f} s CPU ({ok} parsed)")
        c0 = _cpu()
        cold_w, cold = _run([repo], jobs)
        cold_c = _cpu() - c0
        warm_w, _ = _run([repo], jobs)
        st = cold.stats  # type: ignore[attr-defined]
        print(
            f"cold scan:       {cold_w:7.2f} s wall, {cold_c:7.2f} s CPU "
            f"(parsed {st.parsed}, full passes {st.full}, workers {st.workers})"
        )
        print(f"warm scan:       {warm_w:7.2f} s wall")
        print(f"ratio cold/floor: {cold_c / floor_c:.2f}x CPU, {cold_w / floor_w:.2f}x wall")
        entries = cold.entries  # type: ignore[attr-defined]
        print(f"entry points: {len(entries)}: " + ", ".join(e.path for e in entries[:8]))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _run(paths: list[str], jobs: int | None) -> tuple[float, object]:
    from cfglint.evidence.scan import scan_paths

    t0 = time.perf_counter()
    res = scan_paths(paths, jobs=jobs)
    return time.perf_counter() - t0, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1200)
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: cores)")
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it")
    ap.add_argument("--repo", metavar="DIR", help="scan this repository against its ast floor")
    args = ap.parse_args()
    if args.repo:
        bench_repo(args.repo, args.jobs)
        return

    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="cfglint-bench-"))
    tree = base / "tree"
    cache = base / "cache"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["CFGLINT_CACHE_DIR"] = str(cache)
    try:
        files = generate(tree, args.files)
        total = sum(p.stat().st_size for p in tree.rglob("*.py"))
        count = sum(1 for _ in tree.rglob("*.py"))
        print(
            f"tree: {count} files ({len(files)} modules + packages), "
            f"{total / 1024 / 1024:.1f} MiB, mean {total / count / 1024:.1f} KiB/file"
        )
        print(f"cores: {os.cpu_count()}, jobs: {args.jobs or 'all'}")

        cold_s, cold = _run([str(tree)], args.jobs)
        warm_s, warm = _run([str(tree)], args.jobs)
        victim = files[len(files) // 2]
        victim.write_text(victim.read_text() + "\n\ndef added_later():\n    return 1\n")
        touch_s, touched = _run([str(tree)], args.jobs)

        for name, secs, res in (
            ("cold", cold_s, cold),
            ("warm", warm_s, warm),
            ("one file changed", touch_s, touched),
        ):
            st = res.stats  # type: ignore[attr-defined]
            print(
                f"{name:>17}: {secs:7.2f} s  {st.files / secs:9.1f} files/s  "
                f"(parsed {st.parsed}, cached {st.cached}, workers {st.workers})"
            )
        entries = cold.entries  # type: ignore[attr-defined]
        print(
            f"entry points: {len(entries)}, function bodies followed: "
            f"{sum(e.followed for e in entries)}"
        )
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
