"""Package build hook: the wheel ships every YAML table (src/cfglint/data/, rules/) ready as
JSON, so an installed cfglint reads no YAML on its first run (an empty cache: a fresh CI
runner, a pre-commit or GitHub Action run). The tables are parsed exactly as cfglint parses
them at run time (src/cfglint/load/datayaml.py); each is named by its YAML's hash, so a
table edited after the build is parsed and cached as before. An editable install (a
checkout's ./cfglint and ./test) gets them too, written beside the tables in src/."""

from __future__ import annotations

import importlib.util
import json
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ROOT = Path(__file__).resolve().parent


def _datayaml() -> Any:
    # by path: the package itself (pydantic, ...) is not installed in the build environment
    path = ROOT / "src" / "cfglint" / "load" / "datayaml.py"
    spec = importlib.util.spec_from_file_location("_cfglint_datayaml", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ReadyTables(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        datayaml = _datayaml()
        if version == "editable":
            # a checkout's install (./cfglint, ./test): the package is read from src/, so
            # the ready tables go there (git-ignored); a table edited later has another
            # hash and is parsed and cached as before
            out = ROOT / "src" / "cfglint" / "data" / datayaml.READY
            out.mkdir(exist_ok=True)
        else:
            out = Path(tempfile.mkdtemp(prefix="cfglint-ready-"))
        for table in _tables():
            raw = table.read_bytes()
            name = f"{datayaml.ready_name(raw)}.json"
            data = datayaml.parse_data_yaml(raw, str(table))
            (out / name).write_text(json.dumps(data))
            names = [name]
            flags = datayaml.flag_table(data)
            if flags is not None:
                # an argument table's flag names alone (load/dialects.py's detection), and
                # its index (normalize/megatron/args.py decodes the entries a lint asks for)
                names.append(f"{datayaml.flag_table_name(raw)}.json")
                (out / names[-1]).write_text(json.dumps(flags))
                names.append(f"{datayaml.indexed_table_name(raw)}.json")
                (out / names[-1]).write_bytes(datayaml.indexed_table(data))
            keyed = datayaml.keyed_table(data)
            if keyed is not None:
                # its mappings of records decoded a record at a time (load/datacache.py)
                names.append(f"{datayaml.keyed_table_name(raw)}.json")
                (out / names[-1]).write_bytes(keyed)
            if version != "editable":
                for name in names:
                    build_data["force_include"][str(out / name)] = (
                        f"cfglint/data/{datayaml.READY}/{name}"
                    )
        names = [_dialect_index(datayaml, out)]
        if version != "editable":
            for name in names:
                build_data["force_include"][str(out / name)] = (
                    f"cfglint/data/{datayaml.READY}/{name}"
                )
            # the rule set is used without validating it: a wheel is built from a tested
            # tree, while a checkout's rule files may be mid-edit when it is installed (a
            # checkout validates them, and caches the result, as before)
            name = _rule_set(datayaml, out)
            build_data["force_include"][str(out / name)] = f"cfglint/data/{datayaml.READY}/{name}"


def _dialect_index(datayaml: Any, out: Path) -> str:
    """The dialect index (datayaml.dialect_index) beside the tables; returns its file name."""
    paths = sorted((ROOT / "src" / "cfglint" / "data" / "dialects").glob("*.yaml"))
    raws = [(p.stem, p.read_bytes()) for p in paths]
    tables = {stem: datayaml.parse_data_yaml(raw, stem) for stem, raw in raws}
    name = f"{datayaml.dialect_index_name(raws)}.json"
    (out / name).write_text(json.dumps(datayaml.dialect_index(tables)))
    return name


def _rule_set(datayaml: Any, out: Path) -> str:
    """The rule files as one ready set (check/rulebook.py builds the rules from it without
    validating them; tests/check/test_ready_rules.py checks that this gives the rules
    validation gives), with the hash of its content; returns its file name."""
    paths = sorted((ROOT / "rules").glob("*.yaml"))
    raws = [(p.name, p.read_bytes()) for p in paths]
    files = [[n, datayaml.parse_data_yaml(raw, n)] for n, raw in raws]
    name = f"{datayaml.rules_ready_name(raws)}.json"
    (out / name).write_bytes(datayaml.ready_rule_set(files))
    return name


def _tables() -> list[Path]:
    data = ROOT / "src" / "cfglint" / "data"
    return sorted([*data.rglob("*.yaml"), *(ROOT / "rules").glob("*.yaml")])
