"""For each component of data/mindformers.yaml, read its class at each MindFormers release
and record which of our defaults hold there (facts for data/mindformers_releases.yaml).

Reads the mirror with git and Python's ast (nothing imported or run): the class's
``__init__`` keyword defaults, or its annotated / plain class attributes (dataclasses and
template classes). ``differs``: our default is another literal there; ``unread``: not a
literal there (an object, a call); ``absent``: not in the class's own signature there (the
setting is new, or comes from a base class or decorator we did not read); ``present:
false``: no such class in its recorded file (or, for optimizers / schedules / wrappers,
anywhere under mindformers/core or mindformers/wrapper).

    python scripts/extract_mindformers_releases.py GIT_DIR > OUT.yaml
    (then prepend the header of src/cfglint/data/mindformers_releases.yaml)
"""

from __future__ import annotations

import ast
import subprocess
import sys
from typing import Any

import yaml

# tags (and master) as versions.yaml names them
RELEASES = {
    "v1.3.0": "debac6a97f98a8438536fa67b7519883c0d6d193",
    "v1.3.2": "024279c21923e555f7366940aed9017d13256052",
    "v1.5.0": "06e1af77d14e0b34bc1a4071bbae40de946bea26",
    "v1.6.0": "v1.6.0",
    "v1.7.0": "v1.7.0",
    "master": "f52743ca27a5a8af5fbc77c5b2037c1147c7004c",
}


# Research folders that ship their own copy of a recorded class under the same name: which
# one a job builds depends on the folder its config comes from (--register_path). Each copy is
# read like the recorded class, per release, under ``copies``.
COPIES = {
    "DeepseekV2Config@model_config_legacy": ["research/deepseek2/deepseek2_config.py"],
}


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], capture_output=True, text=True, check=False
    ).stdout


def find_class(git_dir: str, commit: str, name: str, hint: str) -> tuple[str, ast.ClassDef] | None:
    """The class in its recorded file; optimizers, schedules and wrappers may also have moved
    within mindformers/core and mindformers/wrapper (a model config of the same name
    elsewhere is another class: research/ keeps legacy ones)."""
    paths = [hint] if hint else []
    if hint.startswith(("mindformers/core/", "mindformers/wrapper/")):
        hits = git(
            git_dir,
            "grep",
            "-l",
            "-E",
            f"^class {name}\\b",
            commit,
            "--",
            "mindformers/core",
            "mindformers/wrapper",
        )
        paths += [h.split(":", 1)[1] for h in hits.splitlines() if ":" in h]
    for path in dict.fromkeys(paths):
        text = git(git_dir, "show", f"{commit}:{path}")
        if not text:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == name:
                return path, node
    return None


def class_defaults(cls: ast.ClassDef) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
            out[stmt.target.id] = _lit(stmt.value)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            t = stmt.targets[0]
            if isinstance(t, ast.Name):
                out[t.id] = _lit(stmt.value)
    init = next(
        (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )
    if init is not None:
        a = init.args
        pos = a.args[len(a.args) - len(a.defaults) :]
        for arg, d in zip(pos, a.defaults, strict=True):
            out[arg.arg] = _lit(d)
        for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
            if d is not None:
                out[arg.arg] = _lit(d)
    return out


_UNREAD = object()


def _lit(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return _UNREAD


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    if isinstance(a, str) and isinstance(b, str):
        return a.replace("mstype.", "") == b.replace("mstype.", "")
    return a == b


def main(git_dir: str, data: str) -> dict[str, Any]:
    with open(data, encoding="utf-8") as fh:
        comps = yaml.safe_load(fh)["components"]
    out: dict[str, Any] = {}
    for c in comps:
        if "MindSpore" in str(c.get("version")):
            continue
        key = f"{c['name']}@{c['role']}"
        per: dict[str, Any] = {}
        for rel, ref in RELEASES.items():
            commit = git(git_dir, "rev-parse", f"{ref}^{{commit}}").strip()
            name = c.get("template_class") or c["name"]
            per[rel] = _entry(git_dir, commit, name, c.get("file", ""), c)
            copies = {}
            for path in COPIES.get(key, ()):
                got = _entry(git_dir, commit, name, path, c)
                if got["present"]:
                    copies[path.rsplit("/", 1)[0]] = got
            if copies:
                per[rel]["copies"] = copies
        out[key] = per
    return out


def _entry(git_dir: str, commit: str, name: str, hint: str, c: dict[str, Any]) -> dict[str, Any]:
    """The class ``name`` at ``commit`` (in ``hint``) against our recorded defaults."""
    found = find_class(git_dir, commit, name, hint)
    if found is None:
        return {"present": False}
    path, cls = found
    got = class_defaults(cls)
    differs, unread, absent = {}, [], []
    for k, v in (c.get("defaults") or {}).items():
        if k not in got:
            absent.append(k)
        elif got[k] is _UNREAD:
            unread.append(k)
        elif not _same(got[k], v) and v != "<required>":
            differs[k] = got[k]
    entry: dict[str, Any] = {"present": True, "file": f"{path}:{cls.lineno}@{commit[:8]}"}
    if differs:
        entry["differs"] = differs
    if unread:
        entry["unread"] = unread
    if absent:
        entry["absent"] = absent
    return entry


if __name__ == "__main__":
    res = main(
        sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "src/cfglint/data/mindformers.yaml"
    )
    yaml.safe_dump({"components": res}, sys.stdout, sort_keys=False, width=100)
