"""Which release of MindFormers and MindSpeed-LLM contains a file (facts for
src/cfglint/data/release_files/, one JSON file per project: a lint reads its project's).

Reads bare mirrors with git (nothing imported or run):

- ``paths``: every training config of MindFormers (``*.yaml`` under configs/ and research/)
  and every MindSpeed-LLM launch script (``*.sh`` under examples/), each with the releases
  whose tag holds a file at that path (``git ls-tree -r``);
- ``blobs``: the git blob id (first 12 hex digits) of each such file, with the releases that
  hold that exact content at any of those paths: a user's unchanged copy is recognised by
  its content wherever it lies;
- MindSpeed-LLM ``args_differ``: for each release, the argument dests whose default there
  is not the one the release of cfglint's argument table (v26.1.0) gives, or is not a
  literal at one of them, with the default there; for v26.1.0 itself, the dests whose
  default this reading does not confirm against cfglint's table. Each release's parser is
  Megatron-LM at the pinned core release, then MindSpeed (core) at its paired tag, then
  MindSpeed-LLM's own ``add_argument`` calls: a later layer's definition of a dest replaces
  an earlier one's; a dest defined twice in one layer with different defaults is not a
  literal there.

Releases are encoded as bit masks over ``releases`` (oldest first); ``heads`` are
development heads recorded after the last tag, never release candidates themselves.

    python scripts/extract_release_files.py MF_GIT MSL_GIT MINDSPEED_GIT MEGATRON_GIT WHEELS
        (writes src/cfglint/data/release_files/mindformers.json and mindspeed_llm.json)

WHEELS: a folder with mindformers-X-py3-none-any.whl for each of MF_WHEELS; an optional sixth
argument, the mindspore-ai/mindformers mirror, adds MF_TAGGED's research/ configs.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import yaml

# (release, ref) oldest first: the tags of each project (versions.yaml records the commits)
MF_RELEASES = [
    ("v1.0.0", "v1.0.0"),
    ("v1.1.0", "v1.1.0"),
    ("v1.2.0", "v1.2.0"),
    ("v1.3.0", "v1.3.0"),
    ("v1.3.2", "v1.3.2"),
    ("v1.5.0", "v1.5.0"),
    ("v1.6.0", "v1.6.0"),
    ("v1.7.0", "v1.7.0"),
    # (no v1.8.0 tag in the mirror: the r1.8.0 branch is no release yet)
    # master as cfglint's MindFormers tables read it (data/mindformers.yaml): a candidate
    # only because cfglint has its defaults
    ("master", "f52743ca27a5a8af5fbc77c5b2037c1147c7004c"),
]
# releases after the mirror (sources moved to atomgit): the configs/ their wheels ship
# (``pip download --no-deps mindformers==X``; a wheel has no research/), after master
# (2026-01-15) in time: 1.8.0's RECORD is dated 2026-01-16
MF_WHEELS = [("v1.8.0", "1.8.0"), ("v1.9.0", "1.9.0"), ("v2.0.0", "2.0.0"), ("v2.1.0", "2.1.0")]
# their tags in the later GitHub mirror mindspore-ai/mindformers (to 2026-07-24)
MF_TAGGED = {"v1.8.0": "v1.8.0", "v1.9.0": "v1.9.0"}
# MindSpeed-LLM tag, MindSpeed (core) tag it pairs with, Megatron-LM ref it pins
# (versions.yaml mindspeed_llm rows; 26.1.0's MindSpeed commit as data/mindspeed_llm.yaml)
MSL_RELEASES = [
    # ModelLink's release candidates: RC1 ran on a Megatron-LM commit with no MindSpeed pinned
    ("v1.0.RC1.0", "v1.0.RC1.0", None, "bcce6f54e075e3c3374ea67adefe54f3f2da2b07"),
    ("v1.0.RC2.0", "v1.0.RC2.0", "2b0edd216fee2deceab57439488a108d721683ff", "core_r0.6.0"),
    ("v1.0.RC3.0", "v1.0.RC3.0", "4ea42a239e2dce1b3c869a4c75789c84ed35aee9", "core_r0.6.0"),
    ("v1.0.0", "v1.0.0", "v1.0.0_core_r0.6.0", "core_r0.6.0"),
    ("v2.0.0", "v2.0.0", "v2.0.0_core_r0.8.0", "core_r0.8.0"),
    ("v2.1.0", "v2.1.0", "v2.1.0_core_r0.8.0", "core_r0.8.0"),
    ("v2.2.0", "v2.2.0", "v2.2.0_core_r0.12.1", "core_v0.12.1"),
    ("v2.3.0", "v2.3.0", "v2.3.0_core_r0.12.1", "core_v0.12.1"),
    ("v26.0.0", "v26.0.0", "v26.0.0_core_r0.12.1", "core_v0.12.1"),
    ("v26.1.0", "v26.1.0", "57a33053c4eccd5b14aa58e3ca595ab414e65b94", "core_v0.12.1"),
]
MSL_HEADS = [("master", "c77308a1")]
# the parser a head runs with: its install guide pairs MindSpeed master with Megatron-LM
# core_v0.12.1 (docs/zh/pytorch/training/install_guide.md:195,216 @ c77308a1); MindSpeed master
# as of the head's date (2026-08-21): 028de58c, 2026-07-21
MSL_HEAD_PARSERS = [
    ("master", "c77308a1", "028de58ca629d035185b00ff7d1eb7eff4f7fd48", "core_v0.12.1")
]
TABLE_RELEASE = "v26.1.0"
UNREAD = "<not a literal>"
UNDEFINED = "<no such argument>"


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], capture_output=True, text=True, check=False
    ).stdout


def commit_of(git_dir: str, ref: str) -> str:
    for name in (f"refs/tags/{ref}", f"refs/heads/{ref}", ref):
        out = git(git_dir, "rev-parse", "--verify", "-q", f"{name}^{{commit}}").strip()
        if out:
            return out
    raise SystemExit(f"{git_dir}: no ref {ref}")


def tree(git_dir: str, commit: str, wanted: Any) -> list[tuple[str, str]]:
    """(path, blob id) of the files ``wanted(path)`` accepts at ``commit``."""
    out = []
    for line in git(git_dir, "ls-tree", "-r", commit).splitlines():
        meta, path = line.split("\t", 1)
        if wanted(path):
            out.append((path, meta.split()[2][:12]))
    return out


def files(git_dir: str, refs: list[tuple[str, str]], wanted: Any) -> dict[str, Any]:
    paths: dict[str, int] = {}
    blobs: dict[str, int] = {}
    releases = []
    for bit, (name, ref) in enumerate(refs):
        commit = commit_of(git_dir, ref)
        releases.append([name, commit[:8]])
        _record(paths, blobs, bit, tree(git_dir, commit, wanted))
    return {"releases": releases, "paths": paths, "blobs": blobs}


def _record(paths: dict[str, int], blobs: dict[str, int], bit: int, got: Any) -> None:
    for path, blob in got:
        paths[path] = paths.get(path, 0) | (1 << bit)
        blobs[blob] = blobs.get(blob, 0) | (1 << bit)


def wheel_tree(wheel: Path, wanted: Any) -> list[tuple[str, str]]:
    """(path, git blob id) of the files ``wanted(path)`` accepts in a wheel (its members are
    the repository's paths of what it ships)."""
    with zipfile.ZipFile(wheel) as zf:
        return [
            (
                n,
                hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()[
                    :12
                ],
            )
            for n in sorted(zf.namelist())
            if wanted(n)
            for data in [zf.read(n)]
        ]


def add_wheels(
    found: dict[str, Any], wheel_dir: str, wanted: Any, tags_git: str | None = None
) -> dict[str, Any]:
    """The wheels of MF_WHEELS as further releases after the git refs (each named by its
    wheel file and the first 8 digits of its sha256); with ``tags_git`` (the later mirror
    mindspore-ai/mindformers), the research/ configs of MF_TAGGED's tags, which no wheel
    ships."""
    bit = len(found["releases"])
    for name, version in MF_WHEELS:
        wheel = Path(wheel_dir) / f"mindformers-{version}-py3-none-any.whl"
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()[:8]
        found["releases"].append([name, f"{wheel.name}@sha256:{digest}"])
        _record(found["paths"], found["blobs"], bit, wheel_tree(wheel, wanted))
        if tags_git and name in MF_TAGGED:
            commit = commit_of(tags_git, MF_TAGGED[name])
            research = tree(tags_git, commit, lambda p: wanted(p) and p.startswith("research/"))
            _record(found["paths"], found["blobs"], bit, research)
        bit += 1
    return found


def _sorted(found: dict[str, Any]) -> dict[str, Any]:
    return {
        **found,
        "paths": dict(sorted(found["paths"].items())),
        "blobs": dict(sorted(found["blobs"].items())),
    }


def _mf_config(path: str) -> bool:
    return path.startswith(("configs/", "research/")) and path.endswith((".yaml", ".yml"))


def _msl_script(path: str) -> bool:
    return path.startswith("examples/") and path.endswith(".sh")


# -- argument defaults -----------------------------------------------------------------
def _dest(call: ast.Call) -> str | None:
    flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not flags or not all(f.startswith("-") for f in flags):
        return None
    for k in call.keywords:
        if k.arg == "dest" and isinstance(k.value, ast.Constant):
            return str(k.value.value)
    long = next((f for f in flags if f.startswith("--")), flags[0])
    return long.lstrip("-").replace("-", "_")


def _default(call: ast.Call) -> Any:
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    action = kw.get("action")
    act = action.value if isinstance(action, ast.Constant) else None
    if "default" in kw:
        try:
            return ast.literal_eval(kw["default"])
        except ValueError:
            return UNREAD
    if act == "store_true":
        return False
    if act == "store_false":
        return True
    if action is not None and act not in ("store", "append", "count"):
        return UNREAD
    return None


def layer_defaults(git_dir: str, commit: str, folders: list[str]) -> dict[str, Any]:
    """dest -> default of every ``add_argument`` call under ``folders`` at ``commit``."""
    out: dict[str, Any] = {}
    overrides: dict[str, Any] = {}
    listed = git(
        git_dir, "grep", "-l", "-E", "add_argument\\(|set_defaults\\(", commit, "--", *folders
    )
    for hit in listed.splitlines():
        path = hit.split(":", 1)[1]
        try:
            module = ast.parse(git(git_dir, "show", f"{commit}:{path}"))
        except SyntaxError:
            continue
        for node in ast.walk(module):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr == "set_defaults":
                # parser.set_defaults(distributed_timeout_minutes=30) replaces the default
                # (mindspeed_llm/features_manager/megatron_basic/megatron_basic.py:24 @ v26.1.0)
                overrides.update(_set_defaults(node))
                continue
            if node.func.attr != "add_argument":
                continue
            dest = _dest(node)
            if dest is None:
                continue
            d = _default(node)
            if dest in out and out[dest] != d:
                d = UNREAD
            out[dest] = d
    out.update(overrides)
    return out


def _set_defaults(call: ast.Call) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in call.keywords:
        if k.arg:
            try:
                out[k.arg] = ast.literal_eval(k.value)
            except ValueError:
                out[k.arg] = UNREAD
    return out


def parser_defaults(
    msl: str, ms: str, meg: str, rel: tuple[str, str, str | None, str]
) -> dict[str, Any]:
    _, msl_ref, ms_ref, meg_ref = rel
    # megatron/arguments.py before the training/ folder existed (the RC1 commit)
    files = ["megatron/training/arguments.py", "megatron/arguments.py"]
    out = layer_defaults(meg, commit_of(meg, meg_ref), files)
    if ms_ref is not None:
        out.update(layer_defaults(ms, commit_of(ms, ms_ref), ["mindspeed"]))
    out.update(layer_defaults(msl, commit_of(msl, msl_ref), ["mindspeed_llm", "modellink"]))
    return out


def _json(v: Any) -> Any:
    """A default as JSON holds it (tuples as lists; sets and other objects: not a literal)."""
    if isinstance(v, (tuple, list)):
        return [_json(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return UNREAD


def stated_defaults() -> dict[str, Any]:
    """dest -> the default cfglint's MindSpeed-LLM table states (MindSpeed-LLM's entry over
    the Megatron-LM release under it): only these are ever stated, so only they are
    recorded."""
    out: dict[str, Any] = {}
    for name in ("megatron_lm_core_v0.12.1.yaml", "mindspeed_llm.yaml"):
        with open(f"src/cfglint/data/{name}", encoding="utf-8") as fh:
            for e in yaml.safe_load(fh)["args"]:
                if e.get("scope") != "mindspeed_core_only":
                    out[e["dest"]] = e.get("default")
    return out


def args_differ(msl: str, ms: str, meg: str) -> dict[str, dict[str, Any]]:
    """Per release: dest -> its default there, for the dests of cfglint's table whose
    default is not the table release's (UNDEFINED: that release's parser has no such
    argument); for the table release itself, the dests whose default is not a literal."""
    per = {r[0]: parser_defaults(msl, ms, meg, r) for r in [*MSL_RELEASES, *MSL_HEAD_PARSERS]}
    table = per[TABLE_RELEASE]
    stated = stated_defaults()
    known = set(stated)
    out: dict[str, dict[str, Any]] = {}
    for name, got in per.items():
        if name == TABLE_RELEASE:
            continue
        out[name] = {
            dest: _json(got[dest]) if dest in got else UNDEFINED
            for dest in sorted(known)
            if dest not in got
            or dest not in table
            or UNREAD in (got[dest], table[dest])
            or _json(got[dest]) != _json(table[dest])
        }
    # the table release itself: the dests whose default this reading does not confirm (not a
    # literal, or not the one the table states): no other release is compared on them
    out[TABLE_RELEASE] = {
        d: _json(table.get(d, UNDEFINED))
        for d in sorted(known)
        if d not in table or table[d] == UNREAD or _json(table[d]) != _json(stated[d])
    }
    return out


def main(
    mf: str, msl: str, ms: str, meg: str, wheels: str, tags: str | None = None
) -> dict[str, Any]:
    refs = [(r[0], r[1]) for r in MSL_RELEASES] + MSL_HEADS
    spd = _sorted(files(msl, refs, _msl_script))
    spd["heads"] = [h[0] for h in MSL_HEADS]
    spd["table_release"] = TABLE_RELEASE
    spd["parsers"] = {
        r[0]: {"mindspeed": (r[2] or "none")[:20], "megatron": r[3][:20]}
        for r in [*MSL_RELEASES, *MSL_HEAD_PARSERS]
    }
    spd["args_differ"] = args_differ(msl, ms, meg)
    note = {"generated_by": "scripts/extract_release_files.py"}
    return {
        "mindformers": {
            **note,
            "repo": "mindspore-lab/mindformers",
            **_sorted(add_wheels(files(mf, MF_RELEASES, _mf_config), wheels, _mf_config, tags)),
        },
        "mindspeed_llm": {**note, "repo": "Ascend/MindSpeed-LLM", **spd},
    }


def dump(data: dict[str, Any]) -> str:
    """One path, blob or release per line (reviewable diffs), lists of names on one line."""
    text = json.dumps(data, indent=1)
    return re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + re.sub(r"\s+", "", m[1]) + "]", text)


# where the facts go, one file per project (normalize/release_fit.py reads them)
OUT = Path(__file__).resolve().parents[1] / "src" / "cfglint" / "data" / "release_files"


if __name__ == "__main__":
    for project, facts in main(*sys.argv[1:7]).items():
        (OUT / f"{project}.json").write_text(dump(facts) + "\n", encoding="utf-8")
