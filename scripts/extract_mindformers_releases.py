"""For each component of data/mindformers.yaml, read its class at each MindFormers release
and record which of our defaults hold there (facts for data/mindformers_releases.yaml).

Reads a release's source as text with Python's ast (nothing imported or run), from either
of two sources: a git tree of the mirror (the tags and master, ``RELEASES``), or an unpacked
wheel of the package index (``WHEELS``: the releases after the mirror, whose sources moved
to atomgit; ``pip download --no-deps mindformers==X`` then unzip). The class's ``__init__``
keyword defaults, or its annotated / plain class attributes (dataclasses and template
classes). ``differs``: our default is another literal there; ``unread``: not a literal there
(an object, a call); ``absent``: not in the class's own signature there (the setting is new,
or comes from a base class or decorator we did not read); ``present: false``: no such class
in its recorded file (or, for optimizers / schedules / wrappers, anywhere under
mindformers/core or mindformers/wrapper); ``present: null`` with ``why``: the source does
not ship that file's folder (a wheel has no research/), so nothing is known there.
``sources`` records where each release was read: the commit, or the wheel's file name,
version, sha256 and the date of its RECORD.

    python scripts/extract_mindformers_releases.py GIT_DIR [WHEEL_DIR [TAGS_GIT_DIR]] > OUT.yaml
    (WHEEL_DIR holds mindformers-X-py3-none-any.whl for each of WHEELS; TAGS_GIT_DIR is the
    mindspore-ai/mindformers mirror, for TAGGED's research/; then prepend the header of
    src/cfglint/data/mindformers_releases.yaml)
"""

from __future__ import annotations

import ast
import hashlib
import re
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any, Protocol

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
# releases after the mirror's master (2026-01-15), read from the package index's wheels
WHEELS = {"v1.8.0": "1.8.0", "v1.9.0": "1.9.0", "v2.0.0": "2.0.0", "v2.1.0": "2.1.0"}
# the releases whose tag a later GitHub mirror holds (mindspore-ai/mindformers, updated to
# 2026-07-24: after 1.9.0, before 2.0.0): their research/, which no wheel ships
TAGGED = {"v1.8.0": "v1.8.0", "v1.9.0": "v1.9.0"}


# Research folders that ship their own copy of a recorded class under the same name: which
# one a job builds depends on the folder its config comes from (--register_path). Each copy is
# read like the recorded class, per release, under ``copies``.
COPIES = {
    "DeepseekV2Config@model_config_legacy": ["research/deepseek2/deepseek2_config.py"],
}

# where optimizers, schedules and wrappers may have moved between releases
MOVABLE = ("mindformers/core", "mindformers/wrapper")


class Source(Protocol):
    """One release's source files, by repository path."""

    tag: str  # how a citation names the release: a commit's 8 digits, or "mindformers-X.whl"

    def read(self, path: str) -> str:
        """The file's text ("" when the release has no such file)."""
        ...

    def defining(self, name: str, folders: tuple[str, ...]) -> list[str]:
        """The files under ``folders`` with a line ``class NAME``."""
        ...

    def ships(self, path: str) -> bool:
        """Whether this source would hold ``path`` if the release had it."""
        ...

    def cite(self, path: str) -> str:
        """How a citation of ``path`` names where it was read."""
        ...


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], capture_output=True, text=True, check=False
    ).stdout


class GitTree:
    """A commit of the mirror."""

    def __init__(self, git_dir: str, ref: str) -> None:
        self.git_dir = git_dir
        self.commit = git(git_dir, "rev-parse", f"{ref}^{{commit}}").strip()
        self.tag = self.commit[:8]

    def read(self, path: str) -> str:
        return git(self.git_dir, "show", f"{self.commit}:{path}")

    def defining(self, name: str, folders: tuple[str, ...]) -> list[str]:
        hits = git(
            self.git_dir, "grep", "-l", "-E", f"^class {name}\\b", self.commit, "--", *folders
        )
        return [h.split(":", 1)[1] for h in hits.splitlines() if ":" in h]

    def ships(self, path: str) -> bool:
        return True

    def cite(self, path: str) -> str:
        return self.tag

    def provenance(self) -> dict[str, Any]:
        return {"commit": self.commit}


class Wheel:
    """A wheel of the package index, read in place (zip members are the repository's paths
    for what the wheel ships: mindformers/ and configs/; no research/)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip = zipfile.ZipFile(path)
        self.names = set(self.zip.namelist())
        self.tag = path.name.split("-py3", 1)[0] + ".whl"

    def read(self, path: str) -> str:
        if path not in self.names:
            return ""
        return self.zip.read(path).decode("utf-8")

    def defining(self, name: str, folders: tuple[str, ...]) -> list[str]:
        pattern = re.compile(rf"^class {name}\b", re.M)
        return sorted(
            n
            for n in self.names
            if n.endswith(".py") and n.startswith(folders) and pattern.search(self.read(n))
        )

    def ships(self, path: str) -> bool:
        return path.split("/", 1)[0] in {n.split("/", 1)[0] for n in self.names}

    def cite(self, path: str) -> str:
        return self.tag

    def provenance(self) -> dict[str, Any]:
        record = next(i for i in self.zip.infolist() if i.filename.endswith(".dist-info/RECORD"))
        y, mo, d, h, mi, _ = record.date_time
        return {
            "wheel": self.path.name,
            "version": self.path.name.split("-")[1],
            "sha256": hashlib.sha256(self.path.read_bytes()).hexdigest(),
            "record_date": f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}",
        }


def find_class(src: Source, name: str, hint: str) -> tuple[str, ast.ClassDef] | None:
    """The class in its recorded file; optimizers, schedules and wrappers may also have moved
    within mindformers/core and mindformers/wrapper (a model config of the same name
    elsewhere is another class: research/ keeps legacy ones)."""
    paths = [hint] if hint else []
    if hint.startswith(tuple(f + "/" for f in MOVABLE)):
        paths += src.defining(name, MOVABLE)
    for path in dict.fromkeys(paths):
        text = src.read(path)
        if not text:
            continue
        try:
            with warnings.catch_warnings():
                # invalid escapes in the package's own docstrings
                warnings.simplefilter("ignore", SyntaxWarning)
                warnings.simplefilter("ignore", DeprecationWarning)
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
    init = _init(cls)
    if init is not None:
        # the decorator's keywords come first: the signature's defaults win on a clash
        # (register_mf_model_parameter merges {**its kwargs, **signature defaults, **kwargs},
        # models/model_config_utils.py:208 @ mindformers-1.9.0.whl)
        out.update(_decorator_defaults(init))
        a = init.args
        pos = a.args[len(a.args) - len(a.defaults) :]
        for arg, d in zip(pos, a.defaults, strict=True):
            out[arg.arg] = _lit(d)
        for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
            if d is not None:
                out[arg.arg] = _lit(d)
    return out


def _init(cls: ast.ClassDef) -> ast.FunctionDef | None:
    return next(
        (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )


def _decorator_defaults(init: ast.FunctionDef | None) -> dict[str, Any]:
    """The keywords ``@register_mf_model_parameter`` gives an HF-style config's ``__init__``:
    ``mf_model_kwargs=MFModelConfig(k=v, ...)`` up to master, plain ``k=v`` from 1.9.0 on
    (only those named: MFModelConfig's other fields are the MFModelConfig component's)."""
    out: dict[str, Any] = {}
    for dec in init.decorator_list if init is not None else ():
        if not (isinstance(dec, ast.Call) and _name(dec.func) == "register_mf_model_parameter"):
            continue
        for kw in dec.keywords:
            if kw.arg == "mf_model_kwargs" and isinstance(kw.value, ast.Call):
                out.update({k.arg: _lit(k.value) for k in kw.value.keywords if k.arg})
            elif kw.arg:
                out[kw.arg] = _lit(kw.value)
    return out


def search_names(cls: ast.ClassDef) -> list[str]:
    """The ``search_names`` of the class's ``@MindFormerRegister.register(...)`` (the
    model_type values an HF-style config selects it by), as a list."""
    for dec in cls.decorator_list:
        if isinstance(dec, ast.Call) and _name(dec.func) == "register":
            for kw in dec.keywords:
                if kw.arg == "search_names":
                    got = _lit(kw.value)
                    if isinstance(got, str):
                        return [got]
                    if isinstance(got, (list, tuple)):
                        return [str(x) for x in got]
    return []


def _name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


_UNREAD = object()


def _lit(node: ast.expr) -> Any:
    """A literal default; a dataclass ``field(default=X, metadata=...)`` is X (1.9.0's
    TransformerConfig declares every field so)."""
    if isinstance(node, ast.Call) and _name(node.func) == "field":
        given = {k.arg: k.value for k in node.keywords if k.arg}
        return _lit(given["default"]) if "default" in given else _UNREAD
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


class WheelAndTag:
    """A wheel, and for the folders it does not ship (research/) the release's tag in a
    later GitHub mirror (mindspore-ai/mindformers holds tags v1.8.0 and v1.9.0; its
    mindformers/ classes read the same there as in the wheels)."""

    def __init__(self, wheel: Wheel, tree: GitTree) -> None:
        self.wheel, self.tree = wheel, tree
        self.tag = wheel.tag

    def _source(self, path: str) -> Source:
        return self.wheel if self.wheel.ships(path) else self.tree

    def read(self, path: str) -> str:
        return self._source(path).read(path)

    def defining(self, name: str, folders: tuple[str, ...]) -> list[str]:
        return self.wheel.defining(name, folders)

    def ships(self, path: str) -> bool:
        return True

    def cite(self, path: str) -> str:
        return self._source(path).cite(path)

    def provenance(self) -> dict[str, Any]:
        return {**self.wheel.provenance(), "research": f"tag of the mirror {self.tree.commit}"}


def sources(git_dir: str, wheel_dir: str | None, tags_dir: str | None = None) -> dict[str, Any]:
    """release -> its source: the mirror's commits, then the wheels (when a folder is
    given), with TAGGED's research/ from the later mirror (when given)."""
    out: dict[str, Any] = {rel: GitTree(git_dir, ref) for rel, ref in RELEASES.items()}
    if wheel_dir:
        for rel, version in WHEELS.items():
            out[rel] = Wheel(Path(wheel_dir) / f"mindformers-{version}-py3-none-any.whl")
            if tags_dir and rel in TAGGED:
                out[rel] = WheelAndTag(out[rel], GitTree(tags_dir, TAGGED[rel]))
    return out


def main(
    git_dir: str, data: str, wheel_dir: str | None = None, tags_dir: str | None = None
) -> dict[str, Any]:
    with open(data, encoding="utf-8") as fh:
        comps = yaml.safe_load(fh)["components"]
    srcs = sources(git_dir, wheel_dir, tags_dir)
    out: dict[str, Any] = {}
    for c in comps:
        if "MindSpore" in str(c.get("version")):
            continue
        key = f"{c['name']}@{c['role']}"
        per: dict[str, Any] = {}
        for rel, src in srcs.items():
            name = c.get("template_class") or c["name"]
            per[rel] = entry_at(src, name, c.get("file", ""), c)
            copies = {}
            for path in COPIES.get(key, ()):
                got = entry_at(src, name, path, c)
                if got["present"]:
                    copies[path.rsplit("/", 1)[0]] = got
            if copies:
                per[rel]["copies"] = copies
        out[key] = per
    return {"sources": {rel: src.provenance() for rel, src in srcs.items()}, "components": out}


def entry_at(src: Source, name: str, hint: str, c: dict[str, Any]) -> dict[str, Any]:
    """The class ``name`` in ``src`` (in ``hint``) against our recorded defaults."""
    found = find_class(src, name, hint)
    if found is None:
        if hint and not src.ships(hint):
            return {"present": None, "why": f"{hint.split('/', 1)[0]}/ is not in its wheel"}
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
    entry: dict[str, Any] = {"present": True, "file": f"{path}:{cls.lineno}@{src.cite(path)}"}
    adds = {
        k: v
        for k, v in _decorator_defaults(_init(cls)).items()
        if k not in (c.get("defaults") or {}) and v is not _UNREAD
    }
    if adds:
        # keywords the release's decorator passes that our class has no default for
        # (v1.9.0's Qwen3Config passes seq_length=4096 and is_dynamic=False itself)
        entry["adds"] = adds
    names = search_names(cls)
    if c["role"] == "model_config" and names:
        # which model_type values pick the class there (they move between classes: v1.9.0's
        # TeleChat3Config is a dense model, the MoE one became TeleChat3MoeConfig)
        entry["model_type"] = names
    if differs:
        entry["differs"] = differs
    if unread:
        entry["unread"] = unread
    if absent:
        entry["absent"] = absent
    return entry


# -- the pynative trainer's config dataclasses ---------------------------------------------
PYNATIVE_FILE = "mindformers/pynative/config/config.py"


def pynative_tables(src: Source) -> dict[str, Any]:
    """Each dataclass of the pynative trainer's config module at one release: its fields with
    their literal defaults (``field(default_factory=lambda: [...])`` read as the list;
    ``<unread>`` for anything else), the line it starts on, and whether ``allow_extra`` lets
    it take keys it does not define (BaseConfig.from_dict raises on them otherwise).
    ``present: false`` where the release has no such module (before v1.9.0)."""
    text = src.read(PYNATIVE_FILE)
    if not text:
        return {"present": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        tree = ast.parse(text)
    classes: dict[str, Any] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        fields: dict[str, Any] = {}
        extra = False
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if stmt.target.id == "allow_extra":
                    extra = _lit(stmt.value) is True if stmt.value else False
                    continue
                fields[stmt.target.id] = _field_default(stmt.value)
            elif isinstance(stmt, ast.Assign) and _name(stmt.targets[0]) == "allow_extra":
                extra = _lit(stmt.value) is True
        base = [_name(b) for b in node.bases]
        classes[node.name] = {
            "line": node.lineno,
            "bases": base,
            "allow_extra": extra,
            "fields": {k: (v if v is not _UNREAD else "<unread>") for k, v in fields.items()},
        }
    return {
        "present": True,
        "file": f"{PYNATIVE_FILE}@{src.cite(PYNATIVE_FILE)}",
        "classes": classes,
    }


def _field_default(value: ast.expr | None) -> Any:
    if value is None:
        return "<required>"
    if isinstance(value, ast.Call) and _name(value.func) == "field":
        for kw in value.keywords:
            if kw.arg == "default":
                return _lit(kw.value)
            if kw.arg == "default_factory":
                if isinstance(kw.value, ast.Lambda):
                    return _lit(kw.value.body)
                return f"<{_name(kw.value)}>"  # a nested config: its own class's defaults
        return _UNREAD
    return _lit(value)


if __name__ == "__main__" and sys.argv[1] == "--pynative":
    # python scripts/extract_mindformers_releases.py --pynative WHEEL_DIR > OUT.yaml
    wheels = {
        rel: Wheel(Path(sys.argv[2]) / f"mindformers-{v}-py3-none-any.whl")
        for rel, v in WHEELS.items()
    }
    res = {rel: pynative_tables(w) for rel, w in wheels.items()}
    prov = {rel: w.provenance() for rel, w in wheels.items()}
    yaml.safe_dump({"sources": prov, "releases": res}, sys.stdout, sort_keys=False, width=100)
elif __name__ == "__main__":
    more = sys.argv[2:4]
    res = main(sys.argv[1], "src/cfglint/data/mindformers.yaml", *more)
    yaml.safe_dump(res, sys.stdout, sort_keys=False, width=100)
