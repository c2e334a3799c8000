"""The smallest input that showed each class of issue 12, as data shared by the regression
tests (tests/fuzz/test_bounded.py) and the worst-case bench (bench/bench_worst.py).

Each case builds its files in a scratch folder and returns the command line, the file that
is responsible if the run ends with an input error, and extra expectations. ``scale`` makes
the size-driven cases bigger for the bench (1 = the regression-test size).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures"
MF = FIX / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"
MG = FIX / "examples" / "llama2_7b" / "pretrain_llama2_7b.sh"
MG_LOG = FIX / "logs" / "megatron_train.log"

# a config that includes the file under test (enough MindFormers sections to be linted)
TOP_YAML = (
    "base_config: base.yaml\nseed: 1\ntrainer:\n  type: CausalLanguageModelingTrainer\n"
    "model:\n  model_config:\n    type: LlamaConfig\n"
)


@dataclass
class Case:
    argv: list[str]
    responsible: str | None = None
    json_out: bool = True
    max_rss_mib: float | None = 600.0  # a plain lint stays around 100-200 MiB
    # the run must end in an input error (exit 2) rather than a report
    want_exit: tuple[int, ...] = (0, 1, 2)
    canaries: tuple[Path, ...] = ()
    note: str = ""
    setup_as_root_skips: bool = False
    extra: dict[str, str] = field(default_factory=dict)
    # wall-clock bound: a hang never ends, so the bound only has to exceed honest work on a
    # loaded 2-core machine (long simulations get more room)
    timeout: float = 20.0
    # a cache folder the case prepared (planted entries); None: a fresh one
    cache: Path | None = None
    # the file a run must leave byte for byte as it was (an output target that is an input)
    untouched: Path | None = None


Builder = Callable[[Path, int], Case]
CASES: dict[str, Builder] = {}
# class of each case, for the bench table
CLASS: dict[str, str] = {}


def case(cls: str) -> Callable[[Builder], Builder]:
    def deco(fn: Builder) -> Builder:
        CASES[fn.__name__.removeprefix("c_")] = fn
        CLASS[fn.__name__.removeprefix("c_")] = cls
        return fn

    return deco


def _w(p: Path, text: str | bytes) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def _fifo(p: Path) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(p)
    return p


def _sparse(p: Path, size: int) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "wb") as fh:
        fh.truncate(size)
    return p


def _mf(d: Path) -> Path:
    return Path(shutil.copy(MF, d / "mf.yaml"))


def _mg(d: Path) -> Path:
    return Path(shutil.copy(MG, d / "mg.sh"))


def _json(argv: list[str]) -> list[str]:
    return [*argv, "--format", "json"]


# -- infinite loops ---------------------------------------------------------------------------


@case("infinite loop")
def c_dangling_pipe(d: Path, scale: int) -> Case:
    sh = _w(d / "p.sh", "a | b |\n")
    return Case(_json(["--megatron", str(sh)]), responsible=str(sh))


@case("infinite loop")
def c_log_lines_without_arguments(d: Path, scale: int) -> Case:
    # a training log without its arguments block, read as a launch script: one iteration
    # line is a pipeline with a dangling `|` too
    log = _w(d / "train.log", "iteration 1/ 5 | lm loss: 1.0 | grad norm: 2.0 |\n")
    return Case(_json(["--megatron", str(log)]), responsible=str(log))


# -- blocking reads: a FIFO in every slot -----------------------------------------------------


@case("blocking read")
def c_fifo_yaml(d: Path, scale: int) -> Case:
    f = _fifo(d / "mf.yaml")
    return Case(_json([str(f)]), responsible=str(f), want_exit=(2,))


@case("blocking read")
def c_fifo_base_config(d: Path, scale: int) -> Case:
    _fifo(d / "base.yaml")
    top = _w(d / "top.yaml", TOP_YAML)
    return Case(_json([str(top)]), responsible="base.yaml", want_exit=(2,))


@case("blocking read")
def c_fifo_megatron(d: Path, scale: int) -> Case:
    f = _fifo(d / "args.sh")
    return Case(_json(["--megatron", str(f)]), responsible=str(f), want_exit=(2,))


@case("blocking read")
def c_fifo_launch(d: Path, scale: int) -> Case:
    f = _fifo(d / "msrun.sh")
    return Case(_json([str(_mf(d)), "--launch", str(f)]), responsible=str(f), want_exit=(2,))


@case("blocking read")
def c_fifo_source(d: Path, scale: int) -> Case:
    _w(d / "src" / "train.py", "import torch\ntorch.manual_seed(1)\n")
    f = _fifo(d / "src" / "stuck.py")
    return Case(_json(["--source", str(d / "src")]), responsible=str(f))


@case("blocking read")
def c_fifo_data(d: Path, scale: int) -> Case:
    _fifo(d / "ds.idx")
    _fifo(d / "ds.bin")
    return Case(
        _json([str(_mf(d)), "--megatron", str(_mg(d)), "--data", str(d / "ds")]),
        responsible="ds.",
    )


@case("blocking read")
def c_fifo_tokenizer(d: Path, scale: int) -> Case:
    _fifo(d / "tok" / "config.json")
    return Case(
        _json([str(_mf(d)), "--megatron", str(_mg(d)), "--tokenizer", str(d / "tok")]),
        responsible="config.json",
    )


@case("blocking read")
def c_fifo_loss_log(d: Path, scale: int) -> Case:
    f = _fifo(d / "loss.log")
    return Case(
        _json([str(_mf(d)), "--megatron", str(_mg(d)), "--loss-log", str(f)]),
        responsible=str(f),
    )


@case("blocking read")
def c_fifo_pyproject(d: Path, scale: int) -> Case:
    f = _fifo(d / "pyproject.toml")
    return Case(_json([str(_mf(d)), "--config", str(f)]), responsible=str(f), want_exit=(2,))


# -- unbounded memory -------------------------------------------------------------------------


def _dataset(d: Path, bin_bytes: int) -> Path:
    """A .bin/.idx pair: ``bin_bytes`` of zero token ids, one more than the index says."""
    import struct

    prefix = d / "ds"
    _sparse(prefix.with_suffix(".bin"), bin_bytes)
    n = bin_bytes // 2 - 1  # one token short: the data rows report the .bin, located there
    idx = b"MMIDIDX\x00\x00" + struct.pack("<QBQQ", 1, 8, 1, 2)
    idx += struct.pack("<i", n) + struct.pack("<q", 0) + struct.pack("<qq", 0, 1)
    _w(prefix.with_suffix(".idx"), idx)
    return prefix


@case("unbounded memory")
def c_suppress_reads_bin(d: Path, scale: int) -> Case:
    # the data rows locate their findings in the .bin; suppression used to read it whole
    prefix = _dataset(d, 256 * 1024 * 1024 * scale)
    mf = _w(d / "mf.yaml", MF.read_text().replace("vocab_size: 32000", "vocab_size: 8"))
    return Case(
        _json([str(mf), "--megatron", str(_mg(d)), "--data", str(prefix)]),
        responsible="ds",
        max_rss_mib=400.0,
    )


@case("unbounded memory")
def c_megatron_dev_zero(d: Path, scale: int) -> Case:
    return Case(_json(["--megatron", "/dev/zero"]), responsible="/dev/zero", want_exit=(2,))


@case("unbounded memory")
def c_lr_long_schedule(d: Path, scale: int) -> Case:
    steps = 2_000_000 * scale
    mg = _w(
        d / "mg.sh",
        MG.read_text().replace("--train-iters 5000", f"--train-iters {steps}"),
    )
    mf = _mf_edit(d, "total_steps: -1", f"total_steps: {steps}")
    # ~50 MiB since curves are compared and plotted without holding them whole (180+ before)
    return Case(
        ["lr", str(mf), "--megatron", str(mg)], json_out=False, max_rss_mib=150.0, timeout=90.0
    )


@case("unbounded memory")
def c_big_python_source(d: Path, scale: int) -> Case:
    # ~0.5 MB of ordinary statements per scale unit
    body = "".join(
        f"x{i} = foo(a={i}, b=[1, 2, 3], c={{'k': {i}}})\n" for i in range(12_000 * scale)
    )
    src = _w(d / "src" / "big.py", "import torch\n" + body)
    return Case(_json(["--source", str(src.parent)]), responsible=str(src), max_rss_mib=900.0)


@case("unbounded memory")
def c_huge_pyproject(d: Path, scale: int) -> Case:
    line = "# " + "x" * 98 + "\n"
    pp = _w(
        d / "pyproject.toml", "[tool.cfglint]\nprofile = 'default'\n" + line * (200_000 * scale)
    )
    return Case(_json([str(_mf(d)), "--config", str(pp)]), responsible=str(pp))


@case("unbounded memory")
def c_huge_loss_log(d: Path, scale: int) -> Case:
    line = MG_LOG.read_text().splitlines()[54] + "\n"
    log = _w(d / "loss.log", line * (100_000 * scale))
    return Case(
        _json([str(_mf(d)), "--megatron", str(_mg(d)), "--loss-log", str(log)]),
        responsible=str(log),
        # each case has an empty cache: the compiled log scanner (numba) is built first,
        # ~15 s of CPU on a quiet 2-core machine, then the log reads in ~1 s; 20 s was
        # exceeded under CI's load (a fresh clone of 52209f2)
        timeout=60.0,
    )


# -- crash --------------------------------------------------------------------------------------


@case("crash")
def c_nested_parens_py(d: Path, scale: int) -> Case:
    src = _w(d / "src" / "deep.py", "x = " + "(" * 2000 + "1" + ")" * 2000 + "\n")
    _w(d / "src" / "train.py", "import torch\ntorch.manual_seed(1)\n")
    return Case(_json(["--source", str(src.parent)]), responsible=str(src))


# -- super-linear time --------------------------------------------------------------------------


@case("super-linear time")
def c_broken_bash_array(d: Path, scale: int) -> Case:
    words = " ".join(f"--flag{i} {i}" for i in range(5000 * scale))
    sh = _w(d / "a.sh", f'ARGS=( {words} "\nAB=1\ntorchrun pretrain_gpt.py ${{ARGS[@]}}\n')
    return Case(_json(["--megatron", str(sh)]), responsible=str(sh))


@case("super-linear time")
def c_long_python_expression(d: Path, scale: int) -> Case:
    src = _w(d / "src" / "expr.py", "x = " + " + ".join(["1"] * 5000 * scale) + "\n")
    return Case(_json(["--source", str(src.parent)]), responsible=str(src))


@case("super-linear time")
def c_long_python_expression_broken(d: Path, scale: int) -> Case:
    # found by the fuzz run: the same chain in a file CPython rejects (libcst still tried)
    chain = " + ".join(["1"] * 3000 * scale)
    src = _w(d / "src" / "expr.py", "x = {" + chain + " 'a': 1}\n")
    return Case(_json(["--source", str(src.parent)]), responsible=str(src))


@case("super-linear time")
def c_python_as_launch_script(d: Path, scale: int) -> Case:
    # found by the fuzz run: tree-sitter-bash's error recovery on ~170 KB that is not bash
    lines = [f"        self.layer{i} = nn.Linear(64, 64)  # layer {i}\n" for i in range(2000)]
    sh = _w(d / "msrun.sh", "#!/bin/bash\n\nclass GPTModel(nn.Module):\n" + "".join(lines) * scale)
    return Case(_json([str(_mf(d)), "--launch", str(sh)]), responsible=str(sh))


@case("super-linear time")
def c_yaml_open_brackets(d: Path, scale: int) -> Case:
    y = _w(d / "mf.yaml", "a: " + "[" * 3000 * scale + "\n")
    return Case(_json([str(y)]), responsible=str(y), want_exit=(2,))


@case("super-linear time")
def c_yaml_deep_block(d: Path, scale: int) -> Case:
    # block sequences nested on one line: `- - - ... 1`, 2 bytes a level
    y = _w(d / "mf.yaml", "a:\n  " + "- " * (5000 * scale) + "1\n")
    return Case(_json([str(y)]), responsible=str(y), want_exit=(2,))


@case("super-linear time")
def c_source_root_folder(d: Path, scale: int) -> Case:
    # `cfglint /` must not walk the whole filesystem
    return Case(_json(["/"]), responsible="/")


# -- internal errors -----------------------------------------------------------------------------


def _mf_edit(d: Path, old: str, new: str) -> Path:
    text = MF.read_text()
    assert old in text, old
    return _w(d / "mf.yaml", text.replace(old, new, 1))


@case("internal error")
def c_yaml_int_4300_digits(d: Path, scale: int) -> Case:
    y = _mf_edit(d, "seed: 0", "seed: " + "9" * 4400)
    return Case(_json([str(y), "--megatron", str(_mg(d))]), responsible=str(y))


@case("internal error")
def c_beta1_1e999(d: Path, scale: int) -> Case:
    y = _mf_edit(d, "beta1: 0.9", "beta1: 1e999")
    return Case(_json([str(y), "--megatron", str(_mg(d))]), responsible=str(y))


@case("internal error")
def c_float_field_400_digits(d: Path, scale: int) -> Case:
    y = _mf_edit(d, "beta1: 0.9", "beta1: " + "9" * 400)
    return Case(_json([str(y), "--megatron", str(_mg(d))]), responsible=str(y))


@case("internal error")
def c_lr_schedule_list(d: Path, scale: int) -> Case:
    y = _w(d / "mf.yaml", MF.read_text() + "\n")
    text = y.read_text()
    start = text.index("lr_schedule:")
    end = text.index("\n\n", start) if "\n\n" in text[start:] else len(text)
    y.write_text(text[:start] + "lr_schedule: [1, 2]\n" + text[end:])
    return Case(_json([str(y), "--megatron", str(_mg(d))]), responsible=str(y))


@case("internal error")
def c_lr_schedule_scalar(d: Path, scale: int) -> Case:
    y = _w(d / "mf.yaml", MF.read_text() + "\n")
    text = y.read_text()
    start = text.index("lr_schedule:")
    end = text.index("\n\n", start) if "\n\n" in text[start:] else len(text)
    y.write_text(text[:start] + "lr_schedule: cosine\n" + text[end:])
    return Case(["lr", str(y), "--megatron", str(_mg(d))], responsible=str(y), json_out=False)


@case("internal error")
def c_bash_arith_5000_digits(d: Path, scale: int) -> Case:
    sh = _w(d / "a.sh", f"N=$(( {'9' * 5000} * 2 ))\ntorchrun pretrain_gpt.py --seed $N\n")
    return Case(_json(["--megatron", str(sh)]), responsible=str(sh))


@case("internal error")
def c_total_steps_1e5_lr(d: Path, scale: int) -> Case:
    y = _mf_edit(d, "total_steps: -1", "total_steps: 1e5")
    return Case(["lr", str(y), "--megatron", str(_mg(d))], responsible=str(y), json_out=False)


@case("internal error")
def c_tokenizer_config_list(d: Path, scale: int) -> Case:
    _w(d / "tok" / "config.json", "[1, 2, 3]")
    return Case(
        _json([str(_mf(d)), "--megatron", str(_mg(d)), "--tokenizer", str(d / "tok")]),
        responsible="config.json",
    )


@case("internal error")
def c_tokenizer_config_deep(d: Path, scale: int) -> Case:
    _w(d / "tok" / "config.json", "[" * 100_000 + "]" * 100_000)
    return Case(
        _json([str(_mf(d)), "--megatron", str(_mg(d)), "--tokenizer", str(d / "tok")]),
        responsible="config.json",
    )


@case("internal error")
def c_pyproject_deep(d: Path, scale: int) -> Case:
    pp = _w(d / "pyproject.toml", "x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    return Case(_json([str(_mf(d)), "--config", str(pp)]), responsible=str(pp), want_exit=(2,))


@case("internal error")
def c_pyproject_not_utf8(d: Path, scale: int) -> Case:
    pp = _w(d / "pyproject.toml", b"[tool.cfglint]\nprofile = '\xff'\n")
    return Case(_json([str(_mf(d)), "--config", str(pp)]), responsible=str(pp), want_exit=(2,))


@case("internal error")
def c_loss_log_io_error(d: Path, scale: int) -> Case:
    # a regular file whose read fails (EIO): /proc/self/mem
    log = d / "loss.log"
    os.symlink("/proc/self/mem", log)
    return Case(
        _json([str(_mf(d)), "--megatron", str(_mg(d)), "--loss-log", str(log)]),
        responsible=str(log),
    )


@case("output contract")
def c_python_syntax_warning(d: Path, scale: int) -> Case:
    # found by the fuzz run: CPython's SyntaxWarning leaked to stderr as a second line
    src = _w(d / "src" / "train.py", "x = [1if 1 else 2]\ny = (1]\n")
    return Case(_json(["--source", str(src.parent)]), responsible=str(src), want_exit=(2,))


@case("output contract")
def c_pyproject_unknown_selector(d: Path, scale: int) -> Case:
    # found by the fuzz run after merging main: the error did not name the pyproject
    pp = _w(d / "pyproject.toml", '[tool.cfglint]\nignore = ["structure.f@usion"]\n')
    return Case(_json([str(_mf(d)), "--config", str(pp)]), responsible=str(pp), want_exit=(2,))


@case("output contract")
def c_empty_folder_named(d: Path, scale: int) -> Case:
    # found by the fuzz run after merging main: "nothing to check" did not name the folder
    _w(d / "configs" / "notes.txt", "x\n")
    return Case(_json([str(d / "configs")]), responsible="configs", want_exit=(2,))


# -- output contract -----------------------------------------------------------------------------


@case("output contract")
def c_show_json_nan(d: Path, scale: int) -> Case:
    y = _mf_edit(d, "beta1: 0.9", "beta1: .nan")
    return Case(["show", str(y), "--format", "json"], responsible=str(y))


@case("output contract")
def c_bash_valid_quote(d: Path, scale: int) -> Case:
    # `bash -n` accepts both (reduced from two upstream scripts): an empty backquote command
    # substitution across a line break, and a bad ${a b} substitution inside "$( )"
    sh = _w(d / "a.sh", "`\n`\ntorchrun pretrain_gpt.py --seed 1\n")
    return Case(_json(["--megatron", str(sh)]), responsible=str(sh), want_exit=(0, 1))


@case("output contract")
def c_bash_valid_bad_substitution(d: Path, scale: int) -> Case:
    sh = _w(d / "a.sh", 'X="$(ls "${a b}")"\nY="$E}"\ntorchrun pretrain_gpt.py --seed 1\n')
    return Case(_json(["--megatron", str(sh)]), responsible=str(sh), want_exit=(0, 1))


@case("output contract")
def c_duplicate_anchor(d: Path, scale: int) -> Case:
    y = _w(d / "mf.yaml", MF.read_text() + "\nx: &a 1\ny: &a 2\n")
    return Case(_json([str(y)]), responsible=str(y))


@case("output contract")
def c_symlink_loop_source(d: Path, scale: int) -> Case:
    (d / "src").mkdir()
    os.symlink("loop.py", d / "src" / "loop.py")
    return Case(
        _json(["--source", str(d / "src" / "loop.py")]),
        responsible="loop.py",
        extra={"also": "link"},
    )


@case("output contract")
def c_unreadable_source_folder(d: Path, scale: int) -> Case:
    _w(d / "src" / "train.py", "import torch\ntorch.manual_seed(1)\n")
    locked = d / "src" / "locked"
    _w(locked / "hidden.py", "import random\n")
    locked.chmod(0)
    return Case(_json(["--source", str(d / "src")]), responsible="locked", setup_as_root_skips=True)


@case("output contract")
def c_base_config_error_names_includer(d: Path, scale: int) -> Case:
    _w(d / "base.yaml", "a: [1, 2\n")
    top = _w(d / "top.yaml", TOP_YAML)
    return Case(
        _json([str(top)]), responsible="base.yaml", want_exit=(2,), extra={"also": "top.yaml"}
    )


# -- walks (issue 20): 1000-deep folders, the filesystem root --------------------------------


def _deep(top: Path, levels: int) -> Path:
    d = top
    d.mkdir(parents=True, exist_ok=True)
    for _ in range(levels):  # Path.mkdir(parents=True) recurses once per level
        d = d / "d"
        d.mkdir()
    return d


@case("walk")
def c_deep_folder_lint(d: Path, scale: int) -> Case:
    _mf(_deep(d / "repo", 1000 * scale))
    _mf(d / "repo")
    return Case(_json([str(d / "repo")]), want_exit=(0, 1), extra={"also": "levels deep"})


@case("walk")
def c_deep_source_folder(d: Path, scale: int) -> Case:
    _w(_deep(d / "src", 1000 * scale) / "x.py", "import random\n")
    _w(d / "src" / "train.py", "import random\nrandom.seed(1)\n")
    return Case(_json(["--source", str(d / "src")]), want_exit=(0, 1))


@case("walk")
def c_deep_lr_data(d: Path, scale: int) -> Case:
    _deep(d / "data", 1000 * scale)
    return Case(
        ["lr", str(_mf(d)), "--data", str(d / "data")],
        responsible="data",
        json_out=False,
        want_exit=(2,),
    )


@case("walk")
def c_lr_data_root(d: Path, scale: int) -> Case:
    return Case(["lr", str(_mf(d)), "--data", "/"], responsible="/", json_out=False, want_exit=(2,))


# -- .gitignore (issue 20) ---------------------------------------------------------------------


def _gitignore_repo(d: Path, text: str | None) -> Case:
    (d / "repo").mkdir()
    _mf(d / "repo")
    for i in range(20):  # long names: a backtracking pattern costs (length ** stars)
        _w(d / "repo" / (f"{i}" + "a" * 200 + ".yaml"), "seed: 1\n")
    if text is not None:
        _w(d / "repo" / ".gitignore", text)
    return Case(_json([str(d / "repo")]), want_exit=(0, 1))


@case(".gitignore")
def c_gitignore_lone_backslash(d: Path, scale: int) -> Case:
    return _gitignore_repo(d, "\\\n!\n[\n")


@case(".gitignore")
def c_gitignore_60_stars(d: Path, scale: int) -> Case:
    return _gitignore_repo(d, "*" * 60 * scale + "a\n" + "*a" * 8 + "b\n")


@case(".gitignore")
def c_gitignore_1gib(d: Path, scale: int) -> Case:
    c = _gitignore_repo(d, None)
    _sparse(d / "repo" / ".gitignore", (1 << 30) * scale)
    c.extra["also"] = "its patterns are not applied"
    return c


# -- cache entries (issue 20): every file of a filled cache replaced -------------------------


def _filled_cache(d: Path) -> tuple[list[str], Path]:
    """A pair and a source, and a cache folder a real run filled."""
    import subprocess
    import sys

    mf, mg = _mf(d), _mg(d)
    py = _w(d / "train.py", "import torch\ntorch.manual_seed(1)\n")
    argv = _json([str(mf), "--megatron", str(mg), "--source", str(py)])
    cache = d / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CFGLINT_")}
    env |= {"CFGLINT_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT / "src")}
    subprocess.run(
        [sys.executable, "-m", "cfglint", *argv], env=env, capture_output=True, check=False
    )
    return argv, cache


def _planted(d: Path, plant: Callable[[Path], None]) -> Case:
    argv, cache = _filled_cache(d)
    for p in [p for p in cache.rglob("*.json") if p.is_file()]:
        p.unlink()
        plant(p)
    # the pair has findings: a planted entry that silenced the rules would exit 0
    return Case(argv, cache=cache, want_exit=(1,))


@case("cache entry")
def c_cache_empty_lists(d: Path, scale: int) -> Case:
    return _planted(d, lambda p: p.write_text("[]"))


@case("cache entry")
def c_cache_deep_nesting(d: Path, scale: int) -> Case:
    return _planted(d, lambda p: p.write_text("[" * 100_000 * scale + "]" * 100_000 * scale))


@case("cache entry")
def c_cache_fifo(d: Path, scale: int) -> Case:
    return _planted(d, lambda p: os.mkfifo(p))


# -- output targets (issue 20) -------------------------------------------------------------------


@case("output target")
def c_output_is_the_config(d: Path, scale: int) -> Case:
    mf, mg = _mf(d), _mg(d)
    return Case(
        [str(mf), "--megatron", str(mg), "-o", str(mf)],
        responsible=str(mf),
        json_out=False,
        want_exit=(2,),
        untouched=mf,
    )


@case("output target")
def c_output_links_to_the_launch(d: Path, scale: int) -> Case:
    mf, mg = _mf(d), _mg(d)
    os.symlink(mg.name, d / "report.txt")
    return Case(
        [str(mf), "--megatron", str(mg), "-o", str(d / "report.txt")],
        responsible="report.txt",
        json_out=False,
        want_exit=(2,),
        untouched=mg,
    )


@case("output target")
def c_output_is_an_included_base(d: Path, scale: int) -> Case:
    base = _w(d / "base.yaml", "seed: 2\n")
    top = _w(d / "top.yaml", "base_config: base.yaml\n" + MF.read_text())
    return Case(
        [str(top), "-o", str(base)],
        responsible="base.yaml",
        json_out=False,
        want_exit=(2,),
        untouched=base,
    )


@case("output target")
def c_output_fifo(d: Path, scale: int) -> Case:
    mf, mg = _mf(d), _mg(d)
    f = _fifo(d / "report.fifo")
    return Case(
        [str(mf), "--megatron", str(mg), "-o", str(f)],
        responsible="report.fifo",
        json_out=False,
        want_exit=(2,),
    )


@case("output target")
def c_output_in_a_missing_folder(d: Path, scale: int) -> Case:
    mf, mg = _mf(d), _mg(d)
    out = d / "no" / "such" / "report.txt"
    return Case(
        [str(mf), "--megatron", str(mg), "-o", str(out)],
        responsible="report.txt",
        json_out=False,
        want_exit=(2,),
    )


def unreadable_dirs_work() -> bool:
    """chmod 0 does not stop root; such cases are skipped there."""
    return os.geteuid() != 0


def _dirs(top: Path) -> list[Path]:
    """Every folder under ``top``, parents first, without recursion (rglob and rmtree
    recurse once per level: a 1000-deep case folder defeats them)."""
    out, stack = [], [top]
    while stack:
        p = stack.pop()
        out.append(p)
        with contextlib.suppress(OSError), os.scandir(p) as it:
            stack.extend(Path(e.path) for e in it if e.is_dir(follow_symlinks=False))
    return out


def restore(d: Path) -> None:
    """Undo chmod 0 so the scratch folder can be removed, and remove what shutil.rmtree
    cannot (folders nested deeper than the recursion limit)."""
    dirs = _dirs(d)
    for p in dirs:
        with contextlib.suppress(OSError):
            p.chmod(stat.S_IRWXU)
    if len(dirs) < 200:
        return
    for p in reversed(dirs):
        with contextlib.suppress(OSError), os.scandir(p) as it:
            for e in it:
                if not e.is_dir(follow_symlinks=False):
                    os.unlink(e.path)
        with contextlib.suppress(OSError):
            p.rmdir()


__all__ = ["CASES", "CLASS", "Case", "json", "restore", "unreadable_dirs_work"]
