"""A pair lint against yamllint on one of the two files, measured alternately in one run.

    python bench/bench_vs_yamllint.py [--runs N] [--wheel] [--baseline SRC]

The cfglint rows run this tree two ways:

- ``checkout``: the source in src/ (PYTHONPATH), as ``./cfglint`` and the tests run it. A
  checkout validates its rule files (the result is cached) and reads the ready tables only
  where an editable install wrote them;
- ``wheel`` (``--wheel``): a wheel built from this tree (``pip wheel``, which fetches the
  build backend) installed into a temporary venv that takes every dependency from the
  running environment, as the README's ``pip install 'cfglint-align @ git+...'`` gives a
  user: the tables, the dialect index and the rule set ship ready (hatch_build.py).

``--baseline SRC`` adds the same rows for another source tree (``git archive <commit>``
unpacked), measured in the same rounds, so that a change is compared with what came before
under the same load.

Each command is a fresh interpreter (as in a pre-commit hook) with bytecode cached; one
warm-up round fills the caches. Reported per command: median wall time, median CPU time
(user + system, which a loaded machine disturbs far less than wall time) and the least CPU
time of the rounds (what the command costs when nothing else competes for the cache), each
as a multiple of yamllint's. Prints numbers; no pass/fail.

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
import subprocess
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


def wheel_python(tree: Path, where: Path) -> str:
    """An interpreter that runs ``tree`` as its wheel installs it: the wheel (built with
    build isolation) in a venv of its own whose other packages are the running
    environment's (a ``.pth`` line), so both paths run the same dependencies."""
    dist, venv = where / "dist", where / "venv"
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(dist), str(tree)], check=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    site = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    deps = [p for p in sys.path if p.endswith("site-packages")]
    Path(site, "zz_bench_deps.pth").write_text("\n".join(deps) + "\n")
    wheel = next(dist.glob("*.whl"))
    subprocess.run([*pip, "install", "--no-deps", "--target", site, str(wheel)], check=True)
    return py


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--wheel", action="store_true", help="also the wheel path (builds wheels)")
    ap.add_argument("--baseline", help="another source tree for the cfglint rows")
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
    }
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    }
    envs = {name: env for name in rows}
    trees = {"": ROOT, **({"baseline ": Path(args.baseline).resolve()} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as work:
        for label, tree in trees.items():
            paths = {"checkout": (py, {**env, "PYTHONPATH": str(tree / "src")})}
            if args.wheel:
                where = Path(work) / f"wheel-{len(paths)}-{label.strip() or 'this'}"
                paths["wheel"] = (wheel_python(tree, where), env)
            for path, (python, path_env) in paths.items():
                for what, argv in (
                    ("MF.yaml", [MF]),
                    ("MF.yaml --megatron MG.sh", [MF, "--megatron", MG]),
                ):
                    name = f"{label}{path}: cfglint {what}"
                    rows[name] = [python, "-m", "cfglint", *argv]
                    envs[name] = dict(path_env)
        cache = Path(work) / "cache"
        for e in envs.values():
            e["CFGLINT_CACHE_DIR"] = str(cache)
        for name, cmd in rows.items():  # warm-up: bytecode and cfglint's data caches
            run(cmd, envs[name])
        load = [os.getloadavg()[0]]
        wall: dict[str, list[float]] = {k: [] for k in rows}
        cpu: dict[str, list[float]] = {k: [] for k in rows}
        for _ in range(args.runs):
            for name, cmd in rows.items():
                w, c = run(cmd, envs[name])
                wall[name].append(w)
                cpu[name].append(c)
            load.append(os.getloadavg()[0])
    ref_w = statistics.median(wall["yamllint -d relaxed MF.yaml"])
    ref_c = statistics.median(cpu["yamllint -d relaxed MF.yaml"])
    print(f"{'command':48} {'wall':>9} {'x':>6} {'cpu':>9} {'x':>6} {'min cpu':>9} {'x':>6}")
    ref_m = min(cpu["yamllint -d relaxed MF.yaml"])
    for name in rows:
        w, c, m = statistics.median(wall[name]), statistics.median(cpu[name]), min(cpu[name])
        print(
            f"{name:48} {w * 1000:7.1f}ms {w / ref_w:5.2f}x {c * 1000:7.1f}ms {c / ref_c:5.2f}x"
            f" {m * 1000:7.1f}ms {m / ref_m:5.2f}x"
        )
    print(
        f"{args.runs} rounds; load average (1 min) {min(load):.1f}-{max(load):.1f} on "
        f"{os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
