"""Extract an argparse table from a fork's source at a commit (facts for data/dialects/).

Reads ``add_argument`` calls with Python's ast (nothing is imported or run) from files in a
bare mirror, and prints YAML entries in the shape of data/megatron_lm_*.yaml: flags, dest,
type, action, default (null with default_note when the default is not a literal), nargs,
choices, const, and ``line`` (file:line@commit, for citations).

    python scripts/extract_argparse.py GIT_DIR REF PATH [PATH ...]
"""

from __future__ import annotations

import ast
import subprocess
import sys
from typing import Any

import yaml

from cfglint.load.tree_parser import argument_wrappers, called_name

_ACTIONS = {
    "store_true": ("bool", False),
    "store_false": ("bool", True),
}


def _literal(node: ast.expr | None) -> tuple[bool, Any]:
    if node is None:
        return True, None
    try:
        return True, ast.literal_eval(node)
    except ValueError:
        return False, ast.unparse(node)


def _entry(call: ast.Call, path: str, commit: str) -> dict[str, Any] | None:
    flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not flags or not all(f.startswith("-") for f in flags):
        return None
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    action = "store"
    if "action" in kw:
        ok, act = _literal(kw["action"])
        action = act if ok and isinstance(act, str) else "custom"
    long = next((f for f in flags if f.startswith("--")), flags[0])
    dest = long.lstrip("-").replace("-", "_")
    if "dest" in kw:
        ok, d = _literal(kw["dest"])
        dest = d if ok else dest
    typ = "str"
    if "type" in kw:
        t = ast.unparse(kw["type"])
        typ = t if t in ("int", "float", "str") else "str"
    if action in _ACTIONS:
        typ, dflt = _ACTIONS[action]
    else:
        dflt = None
    out: dict[str, Any] = {"flags": flags, "dest": dest, "type": typ, "action": action}
    if "default" in kw:
        ok, d = _literal(kw["default"])
        if ok:
            out["default"] = d
        else:
            out["default"] = None
            out["default_note"] = f"not a literal: {d}"
    else:
        out["default"] = dflt
    for key in ("nargs", "choices", "const"):
        if key in kw:
            ok, v = _literal(kw[key])
            if ok:
                out[key] = list(v) if isinstance(v, tuple) else v
    out["line"] = f"{path}:{call.lineno}@{commit[:8]}"
    return out


def extract(git_dir: str, ref: str, paths: list[str]) -> list[dict[str, Any]]:
    commit = subprocess.check_output(
        ["git", "--git-dir", git_dir, "rev-parse", f"{ref}^{{commit}}"], text=True
    ).strip()
    out: list[dict[str, Any]] = []
    for path in paths:
        text = subprocess.check_output(
            ["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], text=True
        )
        tree = ast.parse(text)
        # a module's own wrapper (`patch_if_not_exist(group, "--x", type=int, default=1)`)
        # registers its flag like add_argument does
        registering = {"add_argument", *argument_wrappers(tree)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and called_name(node) in registering:
                e = _entry(node, path, commit)
                if e is not None:
                    out.append(e)
    out.sort(key=lambda e: (e["line"].split(":")[0], int(e["line"].split(":")[1].split("@")[0])))
    return out


if __name__ == "__main__":
    entries = extract(sys.argv[1], sys.argv[2], sys.argv[3:])
    yaml.safe_dump({"args": entries}, sys.stdout, sort_keys=False, width=100)
