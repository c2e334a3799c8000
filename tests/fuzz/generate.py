"""Seeded generator of hostile inputs for every input slot of cfglint.

Seeds are our own fixtures (fixtures/) plus a few small files written here (tokenizer JSON,
pyproject, a Megatron dataset); each case copies one seed into a scratch folder, mutates it
with one to three mutators drawn from a seeded ``random.Random``, and builds the command line
that feeds it through one slot. The same ``(seed, index)`` always gives the same case, so a
failure found in CI can be replayed with ``CFGLINT_FUZZ_SEED``.
"""

from __future__ import annotations

import random
import shutil
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures"
GOOD_MF = FIX / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"
GOOD_MG = FIX / "examples" / "llama2_7b" / "pretrain_llama2_7b.sh"
CANARY = "CANARY_EXECUTED"

# a config that includes the file under test (enough MindFormers sections to be linted)
TOP_YAML = (
    "base_config: base.yaml\nseed: 1\ntrainer:\n  type: CausalLanguageModelingTrainer\n"
    "model:\n  model_config:\n    type: LlamaConfig\n"
)


def _files(*globs: str) -> list[Path]:
    out: list[Path] = []
    for g in globs:
        out += sorted(FIX.glob(g))
    return out


SEEDS: dict[str, list[Path]] = {
    "yaml": _files("examples/*/*.yaml", "pairs/*/*.yaml"),
    "megatron": _files("examples/*/*.sh", "pairs/*/pretrain_*.sh", "megatron/*", "logs/megatron*"),
    "launch": _files("pairs/*/msrun_*.sh", "megatron/msrun_launch.sh"),
    "source": _files("sources/**/*.py"),
    "loss_log": _files("logs/*.log"),
}

TOKENIZER_CONFIG = '{\n  "bos_token": "<s>",\n  "eos_token": "</s>",\n  "added_tokens_decoder": {\n    "1": {"content": "<s>"},\n    "2": {"content": "</s>"}\n  }\n}\n'  # noqa: E501
MODEL_CONFIG = '{\n  "bos_token_id": 1,\n  "eos_token_id": 2,\n  "pad_token_id": 0,\n  "vocab_size": 32000\n}\n'  # noqa: E501
PYPROJECT = (
    '[project]\nname = "train"\n\n[tool.cfglint]\nprofile = "default"\nfail-on = "warning"\n'
    'ignore = ["structure.fusion"]\nmegatron-version = "megatron-lm"\n'
)

HOSTILE = [
    "|",
    "| |",
    "||",
    "&&",
    ";;",
    '"',
    "'",
    "`",
    "$(",
    "${",
    "$((",
    "))",
    "\\",
    "\\\n",
    "\x00",
    "\r",
    "\t",
    "\ufeff",
    "\u202e",
    "é",
    "\U0001f642",
    "&a ",
    "*a",
    "<<: *a",
    "!!binary ",
    "!!python/object:os.system ",
    "!!float ",
    "1e999",
    "-1e999",
    "-.inf",
    ".nan",
    "nan",
    "inf",
    "9" * 5000,
    "0x",
    "-0",
    "1_000",
    "null",
    "~",
    "{",
    "}",
    "[",
    "]",
    ": ",
    "- ",
    "\n  ",
    "---\n",
    "...\n",
    "%YAML 1.2\n",
    "#",
    "# cfglint: disable=all\n",
    "base_config: x.yaml\n",
    "base_config: /dev/zero\n",
    "base_config: /\n",
    "/dev/zero",
    "/dev/null",
    "..",
    "iteration 1/ 2 | lm loss: nan | grad norm: inf |",
    "step:[1/2], loss: 1e999,",
    "------------------------ arguments ------------------------\n",
    "-------------------- end of arguments ---------------------\n",
    "  lr .............................................. 1e999\n",
    "<<EOF\n",
    "EOF\n",
    "if [ 1 ]; then\n",
    "fi\n",
    "case x in\n",
    "esac\n",
    "( ",
    " )",
    "lambda: ",
    "def f(:\n",
    "class X(",
    "async ",
    "await ",
    "yield ",
    "**",
    "@",
    "\x0c",
    "torchrun ",
    "msrun --worker_num=",
    "python pretrain_gpt.py ",
    "--lr ",
    "--seed ",
]


def _canary_injections(canary: Path) -> list[str]:
    c = str(canary)
    return [
        f"$(touch {c})",
        f"`touch {c}`",
        f"<(touch {c})",
        f"X=$(touch {c})\n",
        f'eval "touch {c}"\n',
        f"source <(echo touch {c})\n",
        f'!!python/object/apply:os.system ["touch {c}"]',
        f"!!python/object/apply:subprocess.call [[touch, {c}]]",
        f"__import__('os').system('touch {c}')",
        f"open('{c}', 'w')",
        f"exec(\"open('{c}', 'w')\")\n",
        f"  seed ............................................ __import__('os').system('touch {c}')\n",  # noqa: E501
    ]


Mutator = Callable[[random.Random, str, Path], str]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True) or [""]


def m_delete_line(r: random.Random, t: str, _: Path) -> str:
    ls = _lines(t)
    del ls[r.randrange(len(ls))]
    return "".join(ls)


def m_duplicate_line(r: random.Random, t: str, _: Path) -> str:
    ls = _lines(t)
    i = r.randrange(len(ls))
    ls[i:i] = [ls[i]] * r.choice([1, 2, 50, 2000])
    return "".join(ls)


def m_truncate(r: random.Random, t: str, _: Path) -> str:
    return t[: r.randrange(len(t) + 1)]


def m_insert_token(r: random.Random, t: str, _: Path) -> str:
    i = r.randrange(len(t) + 1)
    return t[:i] + r.choice(HOSTILE) + t[i:]


def m_replace_value(r: random.Random, t: str, _: Path) -> str:
    ls = _lines(t)
    i = r.randrange(len(ls))
    line = ls[i]
    for sep in (": ", " ", "="):
        if sep in line.strip():
            head = line[: line.index(sep) + len(sep)]
            return "".join([*ls[:i], head + r.choice(HOSTILE) + "\n", *ls[i + 1 :]])
    return t


def m_swap_lines(r: random.Random, t: str, _: Path) -> str:
    ls = _lines(t)
    i, j = r.randrange(len(ls)), r.randrange(len(ls))
    ls[i], ls[j] = ls[j], ls[i]
    return "".join(ls)


def m_nest(r: random.Random, t: str, _: Path) -> str:
    i = r.randrange(len(t) + 1)
    opener = r.choice(["[", "{", "(", "$(", "${", "((", "- ", "\n  "])
    k = r.choice([50, 500, 3000])
    closer = {"[": "]", "{": "}", "(": ")", "$(": ")", "${": "}", "((": "))"}.get(opener, "")
    mid = "1"
    return t[:i] + opener * k + mid + (closer * k if r.random() < 0.5 else "") + t[i:]


def m_long_line(r: random.Random, t: str, _: Path) -> str:
    i = r.randrange(len(t) + 1)
    return (
        t[:i]
        + r.choice(["a ", "1 + ", "x,", "--f 1 ", "'", "\\"]) * r.choice([1000, 20000])
        + t[i:]
    )


def m_splice(r: random.Random, t: str, _: Path) -> str:
    other = r.choice([p for ps in SEEDS.values() for p in ps])
    ls = _lines(t)
    o = _lines(other.read_text(encoding="utf-8", errors="replace"))
    a = r.randrange(len(o))
    i = r.randrange(len(ls) + 1)
    ls[i:i] = o[a : a + r.randint(1, 10)]
    return "".join(ls)


def m_canary(r: random.Random, t: str, canary: Path) -> str:
    ls = _lines(t)
    i = r.randrange(len(ls) + 1)
    inj = r.choice(_canary_injections(canary))
    if r.random() < 0.5 and i < len(ls) and ":" in ls[min(i, len(ls) - 1)]:
        line = ls[i]
        ls[i] = line[: line.index(":") + 1] + " " + inj + "\n"
    else:
        ls.insert(i, inj + ("\n" if not inj.endswith("\n") else ""))
    return "".join(ls)


MUTATORS: list[Mutator] = [
    m_delete_line,
    m_duplicate_line,
    m_truncate,
    m_insert_token,
    m_insert_token,
    m_replace_value,
    m_replace_value,
    m_swap_lines,
    m_nest,
    m_long_line,
    m_splice,
    m_canary,
    m_canary,
]


def mutate_text(r: random.Random, text: str, canary: Path) -> str:
    for _ in range(r.choice([1, 1, 2, 3])):
        text = r.choice(MUTATORS)(r, text, canary)
    return text


def mutate_bytes(r: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(r.choice([1, 4, 16])):
        if not b:
            break
        i = r.randrange(len(b))
        b[i] = r.randrange(256)
    if r.random() < 0.2:
        b = b[: r.randrange(len(b) + 1)]
    return bytes(b)


# -- cases ------------------------------------------------------------------------------------


@dataclass
class FuzzCase:
    slot: str
    argv: list[str]
    responsible: str | None
    json_out: bool
    canary: Path


def _write(p: Path, text: str | bytes) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        p.write_bytes(text.encode("utf-8", "surrogatepass"))
    else:
        p.write_bytes(text)
    return p


def _dataset(prefix: Path, docs: list[list[int]]) -> None:
    data = b"".join(struct.pack(f"<{len(d)}H", *d) for d in docs)
    _write(prefix.with_suffix(".bin"), data)
    lengths = struct.pack(f"<{len(docs)}i", *(len(d) for d in docs))
    offs, off = [], 0
    for d in docs:
        offs.append(off)
        off += 2 * len(d)
    pointers = struct.pack(f"<{len(docs)}q", *offs)
    bounds = struct.pack(f"<{len(docs) + 1}q", *range(len(docs) + 1))
    head = b"MMIDIDX\x00\x00" + struct.pack("<QBQQ", 1, 8, len(docs), len(docs) + 1)
    _write(prefix.with_suffix(".idx"), head + lengths + pointers + bounds)


SLOTS = (
    "yaml",
    "base_config",
    "megatron",
    "launch",
    "source",
    "data",
    "tokenizer",
    "loss_log",
    "pyproject",
    "show",
    "lr",
)


def make_case(r: random.Random, d: Path, slot: str) -> FuzzCase:
    """Write one mutated case for ``slot`` into the empty folder ``d``."""
    canary = d / CANARY
    mf = Path(shutil.copy(GOOD_MF, d / "good_mf.yaml"))
    mg = Path(shutil.copy(GOOD_MG, d / "good_mg.sh"))

    def mutated(seed: Path, name: str | None = None) -> Path:
        text = seed.read_text(encoding="utf-8")
        if r.random() < 0.1:
            return _write(d / (name or seed.name), mutate_bytes(r, text.encode()))
        return _write(d / (name or seed.name), mutate_text(r, text, canary))

    j = ["--format", "json"]
    if slot == "yaml":
        y = mutated(r.choice(SEEDS["yaml"]), "mf.yaml")
        other = ["--megatron", str(mg)] if r.random() < 0.5 else []
        return FuzzCase(slot, [str(y), *other, *j], str(y), True, canary)
    if slot == "base_config":
        base = mutated(r.choice(SEEDS["yaml"]), "base.yaml")
        top = _write(d / "top.yaml", TOP_YAML)
        return FuzzCase(slot, [str(top), *j], str(base), True, canary)
    if slot == "megatron":
        seed = r.choice(SEEDS["megatron"])
        m = mutated(seed, "mg_" + seed.name)
        return FuzzCase(slot, [str(mf), "--megatron", str(m), *j], str(m), True, canary)
    if slot == "launch":
        lau = mutated(r.choice(SEEDS["launch"]), "msrun.sh")
        return FuzzCase(slot, [str(mf), "--launch", str(lau), *j], str(lau), True, canary)
    if slot == "source":
        seed = r.choice(SEEDS["source"])
        src = mutated(seed, "src/" + seed.name)
        if r.random() < 0.5:
            other = r.choice([p for p in SEEDS["source"] if p.parent.name != "broken"])
            shutil.copy(other, d / "src" / ("other_" + other.name))
        return FuzzCase(slot, ["--source", str(d / "src"), *j], str(src), True, canary)
    if slot == "data":
        prefix = d / "ds"
        _dataset(prefix, [[r.randrange(40000) for _ in range(r.randint(1, 50))] for _ in range(3)])
        target = prefix.with_suffix(r.choice([".idx", ".bin"]))
        target.write_bytes(mutate_bytes(r, target.read_bytes()))
        argv = [str(mf), "--megatron", str(mg), "--data", str(prefix), *j]
        return FuzzCase(slot, argv, "ds.", True, canary)
    if slot == "tokenizer":
        name, seed_text = r.choice(
            [("tokenizer_config.json", TOKENIZER_CONFIG), ("config.json", MODEL_CONFIG)]
        )
        t = _write(d / "tok" / name, mutate_text(r, seed_text, canary))
        argv = [str(mf), "--megatron", str(mg), "--tokenizer", str(d / "tok"), *j]
        return FuzzCase(slot, argv, str(t), True, canary)
    if slot == "loss_log":
        log = mutated(r.choice(SEEDS["loss_log"]), "loss.log")
        argv = [str(mf), "--megatron", str(mg), "--loss-log", str(log), *j]
        return FuzzCase(slot, argv, str(log), True, canary)
    if slot == "pyproject":
        pp = _write(d / "pyproject.toml", mutate_text(r, PYPROJECT, canary))
        return FuzzCase(slot, [str(mf), *j], str(pp), True, canary)
    if slot == "show":
        y = mutated(r.choice(SEEDS["yaml"]), "mf.yaml")
        return FuzzCase(slot, ["show", str(y), "--format", "json"], str(y), True, canary)
    if slot == "lr":
        if r.random() < 0.5:
            y = mutated(r.choice(SEEDS["yaml"]), "mf.yaml")
            return FuzzCase(slot, ["lr", str(y), "--megatron", str(mg)], str(y), False, canary)
        m = mutated(r.choice(SEEDS["megatron"]), "mg.sh")
        # a training length of its own, so an error can only come from the mutated side
        mf.write_text(mf.read_text().replace("total_steps: -1", "total_steps: 5000"))
        return FuzzCase(slot, ["lr", str(mf), "--megatron", str(m)], str(m), False, canary)
    raise ValueError(slot)


# -- special files in every slot --------------------------------------------------------------

SPECIALS = ("fifo", "dev_zero", "symlink_loop", "directory", "binary", "huge", "deep")


def _special(kind: str, p: Path, r: random.Random) -> None:
    import os

    p.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", p)
    elif kind == "symlink_loop":
        os.symlink(p.name, p)
    elif kind == "directory":
        p.mkdir()
        (p / "inner.txt").write_text("x\n")
    elif kind == "binary":
        p.write_bytes(bytes(r.randrange(256) for _ in range(65536)))
    elif kind == "huge":
        with open(p, "wb") as fh:  # sparse: 300 MB of NUL bytes after a plausible first line
            fh.write(b"seed: 1\n")
            fh.truncate(300 * 1024 * 1024)
    elif kind == "deep":
        if p.suffix == ".py":
            p.write_text("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
        elif p.suffix in (".sh", ".log"):
            p.write_text("X=" + "$(" * 3000 + "1" + ")" * 3000 + "\n")
        elif p.suffix == ".json":
            p.write_text("[" * 100_000 + "]" * 100_000)
        elif p.suffix == ".toml":
            p.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
        else:
            p.write_text("a: " + "[" * 20_000 + "\n")


def special_case(r: random.Random, d: Path, slot: str, kind: str) -> FuzzCase:
    """``kind`` of special file in ``slot``; the rest of the command line is good."""
    canary = d / CANARY
    mf = Path(shutil.copy(GOOD_MF, d / "good_mf.yaml"))
    mg = Path(shutil.copy(GOOD_MG, d / "good_mg.sh"))
    j = ["--format", "json"]
    if slot in ("yaml", "show", "lr"):
        p = d / "mf.yaml"
        _special(kind, p, r)
        argv = {
            "yaml": [str(p), *j],
            "show": ["show", str(p), "--format", "json"],
            "lr": ["lr", str(p), "--megatron", str(mg)],
        }[slot]
        return FuzzCase(slot, argv, str(p), slot != "lr", canary)
    if slot == "base_config":
        p = d / "base.yaml"
        _special(kind, p, r)
        top = _write(d / "top.yaml", TOP_YAML)
        return FuzzCase(slot, [str(top), *j], str(p), True, canary)
    if slot == "megatron":
        p = d / "args.sh"
        _special(kind, p, r)
        return FuzzCase(slot, [str(mf), "--megatron", str(p), *j], str(p), True, canary)
    if slot == "launch":
        p = d / "msrun.sh"
        _special(kind, p, r)
        return FuzzCase(slot, [str(mf), "--launch", str(p), *j], str(p), True, canary)
    if slot == "source":
        _write(d / "src" / "train.py", "import torch\ntorch.manual_seed(1)\n")
        p = d / "src" / "odd.py"
        _special(kind, p, r)
        return FuzzCase(slot, ["--source", str(d / "src"), *j], str(p), True, canary)
    if slot == "data":
        prefix = d / "ds"
        _dataset(prefix, [[1, 2, 3]])
        p = prefix.with_suffix(r.choice([".idx", ".bin"]))
        p.unlink()
        _special(kind, p, r)
        argv = [str(mf), "--megatron", str(mg), "--data", str(prefix), *j]
        return FuzzCase(slot, argv, "ds.", True, canary)
    if slot == "tokenizer":
        p = d / "tok" / r.choice(["config.json", "tokenizer_config.json"])
        _special(kind, p, r)
        argv = [str(mf), "--megatron", str(mg), "--tokenizer", str(d / "tok"), *j]
        return FuzzCase(slot, argv, str(p), True, canary)
    if slot == "loss_log":
        p = d / "loss.log"
        _special(kind, p, r)
        argv = [str(mf), "--megatron", str(mg), "--loss-log", str(p), *j]
        return FuzzCase(slot, argv, str(p), True, canary)
    if slot == "pyproject":
        p = d / "pyproject.toml"
        _special(kind, p, r)
        return FuzzCase(slot, [str(mf), "--config", str(p), *j], str(p), True, canary)
    raise ValueError(slot)
