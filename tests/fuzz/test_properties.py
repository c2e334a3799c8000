"""Property-based fuzz (issue 20): hypothesis writes MindFormers YAML, launch scripts, Python
sources and cache entries, and every run must keep the input-error contract:

* it ends with exit 0, 1 or 2 and raises nothing (conftest sets CFGLINT_DEBUG: an internal
  error surfaces as its exception, which hypothesis shrinks to a minimal input);
* exit 2 prints one line on stderr; exit 0/1 with ``--format json`` prints strict JSON;
* nothing in an input is executed (a command substitution that would create a canary file);
* no example takes longer than PER_EXAMPLE_SECONDS (a hang is a failure, not a stuck CI);
* whatever the cache holds, a lint reports what a lint without the cache reports.

The CI profile runs a few dozen examples per property (tens of seconds in all). The long
campaign is a command (docs/development.md, "Fuzzing"):

    CFGLINT_FUZZ_EXAMPLES=3000 python -m pytest tests/fuzz/test_properties.py -p no:randomly

``CFGLINT_FUZZ_EXAMPLES`` sets the examples per property; hypothesis prints a failing
example with a ``@reproduce_failure`` line to replay it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cfglint.cli import main  # noqa: E402
from conftest import read_tables_through_the_cache  # noqa: E402

# hypothesis campaigns: CI runs them (--slow); ./test stays within minutes
pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
MF = ROOT / "fixtures" / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"
MG = ROOT / "fixtures" / "examples" / "llama2_7b" / "pretrain_llama2_7b.sh"
CANARY = "cfglint_fuzz_canary"
EXAMPLES = int(os.environ.get("CFGLINT_FUZZ_EXAMPLES", "25"))
PER_EXAMPLE_SECONDS = 20.0

SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,  # a loaded 2-core CI machine varies; the alarm below bounds each example
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,  # conftest's autouse env settings only
    ],
    derandomize=EXAMPLES <= 100,  # CI: the same examples every run; the campaign explores
    database=None,
)


class Hang(Exception):
    pass


@contextlib.contextmanager
def _bounded(seconds: float) -> Iterator[None]:
    def alarm(signum: int, frame: object) -> None:
        raise Hang(f"no result within {seconds:.0f} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _cli(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with (
            _bounded(PER_EXAMPLE_SECONDS),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            rc = main(argv)
    finally:
        os.chdir(here)
    return rc, out.getvalue(), err.getvalue()


def _strict(text: str) -> object:
    def bad(name: str) -> object:
        raise ValueError(f"bare {name} is not JSON")

    return json.loads(text, parse_constant=bad)


def _contract(rc: int, out: str, err: str, work: Path) -> None:
    assert rc in (0, 1, 2), rc
    if rc == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1, err
    else:
        _strict(out)
    assert not (work / CANARY).exists(), "an input was executed"


# -- strategies -------------------------------------------------------------------------------

NUMBERS = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(
        [".inf", "-.inf", ".nan", "1.0e+400", "1e-400", "-0", "0x1F", "1_000", "1e5", "0.0"]
    ),
)
SCALARS = st.one_of(
    NUMBERS,
    st.sampled_from(["true", "False", "null", "~", "''", '""', "[]", "{}", "yes", "auto"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12).map(json.dumps),
)
MF_LINES = MF.read_text().splitlines()
# lines of the form `  key: value` whose value a mutation replaces
VALUE_LINES = [i for i, ln in enumerate(MF_LINES) if ": " in ln and not ln.strip().startswith("#")]


@st.composite
def yaml_configs(draw: st.DrawFn) -> str:
    lines = list(MF_LINES)
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.sampled_from(VALUE_LINES))
        key = lines[i].split(": ", 1)[0]
        lines[i] = f"{key}: {draw(SCALARS)}"
    if draw(st.booleans()):
        depth = draw(st.integers(1, 200))
        lines.append("extra: " + "[" * depth + "1" + "]" * depth)
    return "\n".join(lines) + "\n"


MG_TEXT = MG.read_text()
FLAGS = sorted({w for w in MG_TEXT.split() if w.startswith("--")})
SHELL_VALUES = st.one_of(
    NUMBERS,
    st.sampled_from(
        [
            "$UNSET",
            "${UNSET:-3}",
            '"$(touch ' + CANARY + ')"',
            "`touch " + CANARY + "`",
            "$((1<<70))",
            "$((2**4000))",
            "'quoted'",
            '"',
            "\\",
            "${A[@]}",
            "|",
            "&&",
            "$(( 1 / 0 ))",
        ]
    ),
)


@st.composite
def launch_scripts(draw: st.DrawFn) -> str:
    flags = draw(st.lists(st.sampled_from(FLAGS), min_size=1, max_size=8))
    extra = " ".join(f"{f} {draw(SHELL_VALUES)}" for f in flags)
    prefix = draw(
        st.sampled_from(
            [
                "",
                "set -e\n",
                f"X=$(touch {CANARY})\n",
                "f() { torchrun pretrain_gpt.py --seed 3; }\n",
                'if [ -n "$A" ]; then\n  LR=1\nelse\n  LR=2\nfi\n',
                "for i in 1 2 3; do\n  export N$i=$i\ndone\n",
                "A=(\n",
            ]
        )
    )
    return prefix + MG_TEXT.replace("pretrain_gpt.py \\", f"pretrain_gpt.py {extra} \\", 1)


PY_STATEMENTS = st.sampled_from(
    [
        "import torch",
        "import torch.nn as nn",
        "import random",
        "import numpy as np",
        "from torch import nn",
        "torch.manual_seed({n})",
        "random.seed({n})",
        "np.random.seed({n})",
        "x = nn.Dropout(p={n})",
        "y = nn.Dropout({n})",
        "torch.use_deterministic_algorithms({n})",
        "def f(a={n}):\n    return a",
        "class M(nn.Module):\n    def __init__(self):\n        self.d = nn.Dropout({n})",
        "if __name__ == '__main__':\n    f()",
        "z = (" * 50 + "1" + ")" * 50,
        "def g(:",
        "lambda: {n}",
        "exec('import os')",
        "__import__('os').system('touch " + CANARY + "')",
    ]
)


@st.composite
def python_sources(draw: st.DrawFn) -> str:
    lines = draw(st.lists(PY_STATEMENTS, min_size=1, max_size=12))
    return "\n".join(s.replace("{n}", draw(NUMBERS)) for s in lines) + "\n"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@st.composite
def cache_entries(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["json", "envelope", "bytes", "nested"]))
    if kind == "json":
        return json.dumps(draw(JSON_VALUES)).encode()
    if kind == "envelope":
        env = {
            "format": draw(st.sampled_from([1, 2, "1"])),
            "part": draw(st.sampled_from(["data", "rules", "scan", "x"])),
            "tool": draw(st.sampled_from(["0.1.0", "9.9"])),
            "key": draw(st.text(alphabet="0123456789abcdef", max_size=64)),
            "payload": draw(JSON_VALUES),
        }
        return json.dumps(env).encode()
    if kind == "nested":
        n = draw(st.integers(1, 50_000))
        return b"[" * n + b"]" * n
    return draw(st.binary(max_size=64))


# -- properties -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def work() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="cfglint-prop-") as d:
        yield Path(d)


@SETTINGS
@given(text=yaml_configs())
def test_yaml_configs(text: str, work: Path) -> None:
    cfg = work / "mf.yaml"
    cfg.write_text(text)
    rc, out, err = _cli([str(cfg), "--megatron", str(MG), "--format", "json"], work)
    _contract(rc, out, err, work)


@SETTINGS
@given(text=launch_scripts())
def test_launch_scripts(text: str, work: Path) -> None:
    sh = work / "launch.sh"
    sh.write_text(text)
    rc, out, err = _cli([str(MF), "--megatron", str(sh), "--format", "json"], work)
    _contract(rc, out, err, work)
    rc, out, err = _cli(["lr", str(MF), "--megatron", str(sh)], work)
    assert rc in (0, 1, 2) and (rc != 2 or len(err.strip().splitlines()) == 1), err


@SETTINGS
@given(text=python_sources())
def test_python_sources(text: str, work: Path) -> None:
    src = work / "train.py"
    src.write_text(text)
    rc, out, err = _cli(["--source", str(src), "--format", "json", "--no-cache"], work)
    _contract(rc, out, err, work)


@pytest.fixture(scope="module")
def filled(work: Path) -> Iterator[tuple[list[str], str, Path]]:
    """A lint whose every cache part is filled, and its report without any cache."""
    cache = work / "cache"
    src = work / "cached_train.py"
    src.write_text("import torch\ntorch.manual_seed(1)\nx = torch.nn.Dropout(0.1)\n")
    argv = [str(MF), "--megatron", str(MG), "--source", str(src), "--format", "json"]
    old = os.environ.get("CFGLINT_CACHE_DIR")
    os.environ["CFGLINT_CACHE_DIR"] = str(cache)
    mp = pytest.MonkeyPatch()
    read_tables_through_the_cache(mp)  # the data part is filled too
    try:
        import cfglint.check.rulebook as rulebook

        rc, clean, _ = _cli([*argv, "--no-cache"], work)
        assert rc == 1
        rulebook.load_rules.cache_clear()  # loaded in memory already: write its cache entry
        _cli(argv, work)
        files = {p: p.read_bytes() for p in sorted(cache.rglob("*.json")) if p.is_file()}
        yield argv, clean, files
    finally:
        mp.undo()
        if old is None:
            os.environ.pop("CFGLINT_CACHE_DIR", None)
        else:
            os.environ["CFGLINT_CACHE_DIR"] = old


@SETTINGS
@given(data=st.data())
def test_cache_entries_never_change_the_result(
    data: st.DataObject, filled: tuple[list[str], str, dict[Path, bytes]], work: Path
) -> None:
    import cfglint.check.rulebook as rulebook

    argv, clean, files = filled
    assert {p.parent.name for p in files} >= {"data", "rules"}
    for p, raw in files.items():  # every example starts from the filled cache
        p.write_bytes(raw)
    names = sorted(files)
    for p in data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=5, unique=True)):
        p.write_bytes(data.draw(cache_entries()))
    os.environ["CFGLINT_CACHE_DIR"] = str(work / "cache")
    rulebook.load_rules.cache_clear()  # read the rules from the disk cache again
    rc, out, err = _cli(argv, work)
    assert (rc, out) == (1, clean), err
