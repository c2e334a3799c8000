"""A pair lint against yamllint on one of the two files, measured alternately in one run.

    python bench/bench_vs_yamllint.py [--runs N] [--baseline SRC]

``--baseline SRC`` adds the two cfglint rows run from another source tree (``SRC`` is put
first on PYTHONPATH: e.g. ``git archive <commit> src rules`` unpacked, with the ready tables
an editable install writes), measured in the same rounds, so that a change is compared
with what came before under the same load.

Each command is a fresh interpreter (as in a pre-commit hook) with bytecode cached; one
warm-up round fills the caches. Reported per command: median wall time and median CPU time
(user + system, which a loaded machine disturbs far less than wall time), and both as a
multiple of yamllint. Prints numbers; no pass/fail.

The floor rows are what the libraries a pair lint cannot do without cost on their own, so
that the rest is what cfglint itself spends:

- ``import pydantic.BaseModel``: already about one yamllint.
- ``one deferred pydantic model``: declaring any model with a field also imports
  ``pydantic.fields`` (and with it ``pydantic.types`` and ``annotated_types``); the model is
  ``defer_build`` as cfglint's are, so no validator (and no plugin loader, which imports
  ``importlib.metadata``) is built.
- ``import yaml, tree_sitter_bash``: the YAML composer (libyaml through PyYAML, which
  yamllint imports too) and the shell grammar.
- ``all of the above``: the floor of the pair lint. PRODUCT.md asks for the normalized
  config and the rule files to be pydantic models, so a pair lint cannot go below it: the
  goal of <= 1.0x yamllint is out of reach by this row alone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "fixtures/examples/llama2_7b"
MF, MG = str(EX / "pretrain_llama2_7b.yaml"), str(EX / "pretrain_llama2_7b.sh")
# a model declared as cfglint declares its own: a field, no validator built until one is used
MODEL = (
    "from pydantic import BaseModel, ConfigDict\n"
    "class M(BaseModel):\n"
    "    model_config = ConfigDict(defer_build=True)\n"
    "    x: int = 0\n"
)


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child: silence output, then become the command
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execve(cmd[0], cmd, env)
    _, _, usage = os.wait4(pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--baseline", help="another source tree (its src/) for the cfglint rows")
    args = ap.parse_args()
    yamllint = shutil.which("yamllint", path=str(Path(sys.executable).parent)) or shutil.which(
        "yamllint"
    )
    if yamllint is None:
        sys.exit("yamllint is not installed (pip install yamllint)")
    py = sys.executable
    rows = {
        "python -c pass": [py, "-c", "pass"],
        "yamllint -d relaxed MF.yaml": [yamllint, "-d", "relaxed", MF],
        "floor: import pydantic.BaseModel": [py, "-c", "from pydantic import BaseModel"],
        "floor: one deferred pydantic model": [py, "-c", MODEL],
        "floor: import yaml, tree_sitter_bash": [py, "-c", "import yaml, tree_sitter_bash"],
        "floor: all of the above": [py, "-c", MODEL + "import yaml, tree_sitter_bash\n"],
        "cfglint MF.yaml": [py, "-m", "cfglint", MF],
        "cfglint MF.yaml --megatron MG.sh": [py, "-m", "cfglint", MF, "--megatron", MG],
    }
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    envs = {name: env for name in rows}
    if args.baseline:
        base = {**env, "PYTHONPATH": str(Path(args.baseline) / "src")}
        for name in ("cfglint MF.yaml", "cfglint MF.yaml --megatron MG.sh"):
            rows[f"baseline: {name}"] = rows[name]
            envs[f"baseline: {name}"] = base
    with tempfile.TemporaryDirectory() as cache:
        for e in envs.values():
            e["CFGLINT_CACHE_DIR"] = cache
        for name, cmd in rows.items():  # warm-up: bytecode and cfglint's data caches
            run(cmd, envs[name])
        wall: dict[str, list[float]] = {k: [] for k in rows}
        cpu: dict[str, list[float]] = {k: [] for k in rows}
        for _ in range(args.runs):
            for name, cmd in rows.items():
                w, c = run(cmd, envs[name])
                wall[name].append(w)
                cpu[name].append(c)
    ref_w = statistics.median(wall["yamllint -d relaxed MF.yaml"])
    ref_c = statistics.median(cpu["yamllint -d relaxed MF.yaml"])
    print(f"{'command':38} {'wall':>9} {'x':>6} {'cpu':>9} {'x':>6}")
    for name in rows:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"{name:38} {w * 1000:7.1f}ms {w / ref_w:5.2f}x {c * 1000:7.1f}ms {c / ref_c:5.2f}x")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
