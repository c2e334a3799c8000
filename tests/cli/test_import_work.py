"""What a pair lint does at import (issue 29: a pair lint within 2x yamllint's cost): it
compiles only the module-level regular expressions it uses, and imports no module it does
not run. Each is counted in a process of its own, once the caches are warm; the costs are
in bench/results/fresh_env.md ("module-level work at import")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, fresh_python

EX = "fixtures/examples/llama2_7b"
PAIR = [f"{EX}/pretrain_llama2_7b.yaml", "--megatron", f"{EX}/pretrain_llama2_7b.sh"]


def _pair_lint(tmp_path: Path, after: str) -> str:
    """stderr's last line of a pair lint run twice (the first fills the caches), then
    ``after``: ``made`` lists the patterns cfglint's modules compiled as they were imported."""
    code = (
        "import re._compiler, sys\n"
        "real = re._compiler.compile\n"
        "made = []\n"
        "def counting(p, flags=0):\n"
        "    f = sys._getframe(1)\n"
        "    while f is not None and f.f_code.co_filename.endswith(('re/__init__.py',)):\n"
        "        f = f.f_back\n"
        "    if f is not None and f.f_code.co_name == '<module>' \\\n"
        "            and '/cfglint/' in f.f_code.co_filename:\n"
        "        made.append(f'{f.f_code.co_filename}:{f.f_lineno}')\n"
        "    return real(p, flags)\n"
        "re._compiler.compile = counting\n"
        "from cfglint.cli.app import main\n"
        f"main({PAIR!r})\n" + after
    )
    env = {**os.environ, "CFGLINT_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
            env=env,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stderr.strip().splitlines()[-1]


def test_pair_lint_compiles_only_the_patterns_it_uses(tmp_path: Path) -> None:
    # 5 module-level compiles since the patterns the pair lint never matches are compiled
    # on first use (cfglint.model.lazy_re), 44 before; the YAML 1.1 number patterns are
    # PyYAML's own (load/yamltree.py), 19 before; the shell's brace, glob and extglob patterns
    # are tried only on text holding a character they need (load/shell), 17 before; so are
    # the placeholder path pattern (normalize/placeholders.py), 14 before, the python
    # interpreter, dotted-flag, ${X:-default} and suppression-comment patterns, 13 before,
    # and the Pai backend and dataset-weight patterns, while a YAML text's brackets are
    # counted by str.count, 9 before. A new module-level re.compile on the lint path should
    # be compile_on_use unless the pair lint matches it
    last = _pair_lint(tmp_path, "print(len(made), made, file=sys.stderr)\n")
    count = int(last.split(" ", 1)[0])
    assert count <= 5, last


# imported by a pair lint before, used only by other runs: the curves are compared only when
# both schedules are built (the example leaves MindFormers' length to run time), the fix's
# edits only with --fix, tomllib only for a pyproject.toml not read before (this folder's);
# tree-sitter-bash's package __init__ imports importlib.resources for queries never read
# (cfglint.load.shell.base takes the grammar from its binding); the runtime probe's modules
# only with --probe (the lint's parser names its options, not the probe's code)
NOT_RUN = (
    "tomllib",
    "tree_sitter_bash",
    "cfglint.cli.probe",
    "cfglint.check.probe",
    "cfglint.evidence.lr.curves",
    "cfglint.evidence.lr.megatron",
    "cfglint.model.edits",
)


def test_pair_lint_imports_no_module_it_does_not_run(tmp_path: Path) -> None:
    last = _pair_lint(
        tmp_path, f"print([m for m in {NOT_RUN!r} if m in sys.modules], file=sys.stderr)\n"
    )
    assert last == "[]"


def test_the_rule_loader_imports_no_type_adapter() -> None:
    """pydantic's TypeAdapter validates a rule set (a checkout's, or one read back from the
    cache); a wheel's lint builds its ready rule set without it, so importing the loader
    does not import it."""
    code = (
        "import sys\nimport cfglint.check.rulebook\nprint('pydantic.type_adapter' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert proc.stdout.split() == ["False"], proc.stderr[-2000:]


def test_importing_the_command_line_runs_no_cyclic_collection() -> None:
    """The lint path's modules (everything cfglint.cli.app imports, on the first call) are
    imported with the cyclic collector paused (its passes over the new long-lived objects
    free nothing), and the collector is left as it was found: enabled when it was, off when
    the program had turned it off. Importing the package alone imports none of them."""
    code = (
        "import gc, sys\n"
        "runs = []\n"
        "def during(phase, info):\n"
        "    app = sys.modules.get('cfglint.cli.app')\n"
        "    if phase == 'start' and app is not None and 'main' not in vars(app):\n"
        "        runs.append(info['generation'])\n"
        "gc.callbacks.append(during)\n"
        "if sys.argv[1] == 'off':\n"
        "    gc.disable()\n"
        "import cfglint.cli\n"
        "assert 'cfglint.cli.app' not in sys.modules\n"
        "cfglint.cli.command_line()\n"
        "print(len(runs), gc.isenabled())\n"
    )
    for state, enabled in (("on", "True"), ("off", "False")):
        proc = fresh_python(code, state)
        assert proc.stdout.split() == ["0", enabled], proc.stdout
