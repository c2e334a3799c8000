"""What reading a Megatron launch asks of the argument tables (issue 29: a pair lint within
2x yamllint's cost): only the tables and the argument specs the launch needs. Each test
counts what is read or built, never how long it takes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cfglint.load import dialects
from cfglint.load.classify import plan
from cfglint.load.dialects import detect_dialect, table_entries
from cfglint.load.reads import Reads
from cfglint.load.tree_parser import FlagDef
from cfglint.normalize.megatron import args
from cfglint.normalize.megatron.args import ArgSpec
from cfglint.normalize.megatron.build import normalize_megatron
from cfglint.normalize.megatron.input import load_megatron
from conftest import ROOT

# flags of Megatron-LM's own table (core_v0.19.0), as the README's llama2_7b launch passes them
EXAMPLE = "fixtures/examples/llama2_7b/pretrain_llama2_7b.sh"
MEGATRON_FLAGS = ["--num-layers", "--hidden-size", "--bf16", "--swiglu", "--lr", "--train-iters"]


def _asked_tables(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tables detection asks the flags of, each time it asks (the run's cache aside)."""
    asked: list[str] = []
    real = dialects.table_flags

    def counting(name: str) -> frozenset[str]:
        asked.append(name)
        return real(name)

    monkeypatch.setattr(dialects, "table_flags", counting)
    return asked


def test_a_megatron_lm_launch_reads_no_mindspeed_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its flags are all Megatron-LM's: no MindSpeed release can claim one of them, so
    neither MindSpeed-LLM table is read to tell (they were, ~60 KB of JSON a run)."""
    asked = _asked_tables(monkeypatch)
    found = detect_dialect(MEGATRON_FLAGS, "pretrain_gpt.py", str(tmp_path / "train.sh"))
    assert found.dialect.name == "megatron-lm"
    assert set(asked) == {"megatron-lm"}


def test_a_mindspeed_flag_still_reads_the_mindspeed_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _asked_tables(monkeypatch)
    flags = [*MEGATRON_FLAGS, "--use-mcore-models", "--use-fused-rmsnorm"]
    found = detect_dialect(flags, "pretrain_gpt.py", str(tmp_path / "train.sh"))
    assert found.dialect.name == "mindspeed-llm"
    assert "mindspeed-llm" in asked


# -- argument specs: built when asked (normalize/megatron/args.py) ---------------------------


def _eager(name: str) -> tuple[dict[str, ArgSpec], dict[str, ArgSpec]]:
    """Every spec of table ``name`` built up front, a later definition replacing an earlier
    one: what load_table built before it built them lazily."""
    by_flag: dict[str, ArgSpec] = {}
    by_dest: dict[str, ArgSpec] = {}
    for e, src in table_entries(name)[1]:
        spec = args._spec(e, src)
        by_flag.update(dict.fromkeys(spec.flags, spec))
        if spec.action == "boolean_optional":
            by_flag.update({"--no-" + f[2:]: spec for f in spec.flags})
        by_dest[spec.dest] = spec
    return by_flag, by_dest


@pytest.mark.parametrize("name", ["megatron-lm", "mindspeed-llm", "core_v0.12.1", "megatron-llama"])
def test_lazy_specs_are_the_specs_built_up_front(name: str) -> None:
    table = args.load_table(name)
    by_flag, by_dest = _eager(name)
    assert list(table.by_flag) == list(by_flag)  # the order difflib's suggestions see
    assert dict(table.by_flag) == by_flag
    assert dict(table.by_dest) == by_dest
    # one argument, one spec, whichever view asks (a dest two entries share is the later's)
    shared = [f for f, s in by_flag.items() if by_dest[s.dest] is s]
    assert all(table.by_flag[f] is table.by_dest[by_flag[f].dest] for f in shared)


def test_a_pair_lint_builds_only_the_specs_it_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's llama2_7b launch: loading its table builds no spec; reading the launch
    and normalizing it builds those it asks for, a fraction of the table's ~800."""
    built: list[str] = []
    real = args._spec

    def counting(entry: dict[str, Any], source: str) -> ArgSpec:
        built.append(entry["dest"])
        return real(entry, source)

    monkeypatch.setattr(args, "_spec", counting)
    args.load_table.cache_clear()
    table = args.load_table("megatron-lm")
    assert built == []
    cfg = normalize_megatron(load_megatron(f"{ROOT}/{EXAMPLE}"))
    assert cfg.structure.num_layers.value == 32
    assert 0 < len(built) < len(table.by_dest) // 4, len(built)
    args.load_table.cache_clear()


def test_a_forks_flags_leave_the_table_it_extends_as_it_was() -> None:
    base = args.load_table("megatron-lm")
    size = len(base.by_flag)
    fork = FlagDef(("--num-layers", "--depth"), "num_layers", "float", "store", 7.0)
    out = args.with_fork_flags(base, [(fork, "the fork's parser")])
    assert out.by_flag["--depth"] is out.by_dest["num_layers"]
    assert out.by_flag["--num-layers"].type == "float"
    assert base.by_flag["--num-layers"].type == "int" and "--depth" not in base.by_flag
    assert len(base.by_flag) == size and len(out.by_flag) == size + 1


# -- the dialect: detected once a run (load/dialects.py detect_dialect's memo) ----------------


def _count_detections(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    made: list[str | None] = []
    real = dialects._detect_by_launch

    def counting(flags: list[str], entry: str | None, *rest: Any) -> Any:
        made.append(entry)
        return real(flags, entry, *rest)

    monkeypatch.setattr(dialects, "_detect_by_launch", counting)
    return made


def test_a_pair_lint_detects_the_megatron_dialect_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The input classifier names the launch's dialect; the loader that takes its parse
    over reads the same launch and uses that detection, not one of its own."""
    made = _count_detections(monkeypatch)
    reads = Reads()
    mf = EXAMPLE.replace(".sh", ".yaml")
    plan([f"{ROOT}/{mf}"], megatron=f"{ROOT}/{EXAMPLE}", reads=reads)
    m = load_megatron(f"{ROOT}/{EXAMPLE}", form="script", reads=reads)
    assert made == ["pretrain_gpt.py"]
    assert m.dialect is not None and m.dialect.name == "megatron-lm"
    assert m.evidence == ["entry script pretrain_gpt.py"]


def test_each_user_of_a_detection_gets_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _count_detections(monkeypatch)
    memo: dict[Any, Any] = {}
    where = str(tmp_path / "train.sh")
    first = detect_dialect(MEGATRON_FLAGS, "pretrain_gpt.py", where, memo=memo)
    first.evidence.append("changed by its user")
    again = detect_dialect(
        [*MEGATRON_FLAGS, "1", MEGATRON_FLAGS[0]], "pretrain_gpt.py", where, memo=memo
    )
    assert again.evidence == ["entry script pretrain_gpt.py"] and again.dialect == first.dialect
    # another launch (another flag, another entry script) is detected anew
    detect_dialect([*MEGATRON_FLAGS, "--use-mcore-models"], "pretrain_gpt.py", where, memo=memo)
    detect_dialect(MEGATRON_FLAGS, "pretrain_bert.py", where, memo=memo)
    assert made == ["pretrain_gpt.py", "pretrain_gpt.py", "pretrain_bert.py"]


def test_the_megatron_sides_internal_records_are_plain_records() -> None:
    """Never validated nor serialized: plain records (model/record.py), whose classes cost
    ~0.1 M instructions to create at import, not a pydantic model's ~1.4 M or a NamedTuple's
    ~0.85 M (a lint imports both modules)."""
    from pydantic import BaseModel

    from cfglint.load import detect
    from cfglint.model.record import Record

    for cls in (detect.Classified, detect._Seen, args.ArgSpec):
        assert issubclass(cls, Record) and not issubclass(cls, (BaseModel, tuple)), cls
    spec = args.ArgSpec(("--lr",), "lr", "float", "store", 0.1)
    assert spec == args.ArgSpec(("--lr",), "lr", "float", "store", 0.1) and spec.nargs is None


def test_a_classified_input_is_a_value() -> None:
    from cfglint.load.detect import Classified, InputKind, classified

    c = classified("a.sh", InputKind.HELPER, "it runs no python or launcher", entry="x.py")
    assert c == Classified("a.sh", InputKind.HELPER, "it runs no python or launcher", (), "x.py")
    assert c in [
        classified("a.sh", InputKind.HELPER, "it runs no python or launcher", entry="x.py")
    ]
    assert len({c, c.replace()}) == 1
    changed = c.replace(why=f"{c.why}; no --config found to pair it with")
    assert changed.why.endswith("pair it with") and c.why == "it runs no python or launcher"
    assert changed.describe() == f"{InputKind.HELPER.value} ({changed.why})"


def test_the_megatron_releases_are_listed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The package's table folder is listed once per process, as its tables are read once:
    a later ask does not list it again (here: a folder with no table in it)."""
    listed = dialects.megatron_versions()
    assert listed[0] == "core_v0.19.0" and "core_v0.12.1" in listed
    monkeypatch.setattr(dialects, "DATA", tmp_path)
    assert dialects.megatron_versions() == listed
