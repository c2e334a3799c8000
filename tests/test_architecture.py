"""The layout's promises, checked on the source: data flows one way through the stage
folders, there are no import cycles (lazy imports inside functions count), and no module
imports another module's private names."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

SRC = ROOT / "src"
PKG = SRC / "cfglint"
# each stage may import itself and the stages before it, never a later one
STAGES = ["model", "load", "normalize", "evidence", "check", "report", "cli"]
TOP_LEVEL_OK = {"__init__", "__main__"}


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _imports(path: Path, name: str) -> list[tuple[str, list[str], int]]:
    """(imported module, names taken from it, line) for every import, lazy ones included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_pkg else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names = [a.name for a in node.names]
            subs = [n for n in names if f"{base}.{n}" in MODULES]
            out += [(f"{base}.{n}", [], node.lineno) for n in subs]
            rest = [n for n in names if n not in subs]
            if rest:
                out.append((base, rest, node.lineno))
    return [(m, ns, ln) for m, ns, ln in out if m == "cfglint" or m.startswith("cfglint.")]


GRAPH = {name: _imports(path, name) for name, path in MODULES.items()}


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in STAGES else None


def test_every_top_level_module_sits_in_a_stage_folder() -> None:
    loose = [p.stem for p in PKG.glob("*.py") if p.stem not in TOP_LEVEL_OK]
    folders = sorted(p.name for p in PKG.iterdir() if (p / "__init__.py").exists())
    assert loose == []
    assert set(folders) <= {*STAGES, "data"}


def test_data_flows_one_way_through_the_stages() -> None:
    upward = []
    for name, imports in GRAPH.items():
        here = _stage(name)
        if here is None:
            continue
        for target, _, line in imports:
            there = _stage(target)
            if there is not None and STAGES.index(there) > STAGES.index(here):
                upward.append(f"{MODULES[name].relative_to(ROOT)}:{line} imports {target}")
    assert upward == []


def test_model_imports_nothing_else_of_cfglint() -> None:
    bad = [
        f"{name} -> {t}"
        for name, imports in GRAPH.items()
        if _stage(name) == "model"
        for t, _, _ in imports
        if _stage(t) not in ("model", None) or t == "cfglint.cli"
    ]
    assert bad == []


def test_no_import_cycles() -> None:
    edges = {
        n: {t if t in MODULES else t.rpartition(".")[0] for t, _, _ in imps} & MODULES.keys()
        for n, imps in GRAPH.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v] - {v}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert cycles == []


def test_no_module_takes_another_modules_private_names() -> None:
    taken = [
        f"{MODULES[name].relative_to(ROOT)}:{line} takes {t}.{n}"
        for name, imports in GRAPH.items()
        for t, names, line in imports
        for n in names
        if n.startswith("_") and not n.startswith("__") and t != name
    ]
    assert taken == []


def test_cli_calls_the_library_and_decides_nothing() -> None:
    """cli/ parses, calls the pipeline's API (check/, report/) and prints: it never reaches
    past that API into the evidence producers or the builtin checks, where the decisions
    are made (issue 34: the probe's thresholds and show's tolerance once lived in cli/)."""
    reached = [
        f"{MODULES[name].relative_to(ROOT)}:{line} imports {target}"
        for name, imports in GRAPH.items()
        if name.startswith("cfglint.cli")
        for target, _, line in imports
        if target.startswith(("cfglint.evidence", "cfglint.check.builtins"))
    ]
    assert reached == []


# what runs a lint or a fix round: the command line and the editor server call these, the
# report stage only renders what they return
PIPELINE_ENTRIES = (
    "cfglint.check.pipeline",
    "cfglint.check.workspace",
    "cfglint.check.fix_verify",
    "cfglint.check.engine",
)


def test_report_renders_and_runs_no_pipeline() -> None:
    """report/ turns reports into text, JSON, SARIF or an editor's diagnostics; it never
    lints (issue 34: report/editor.py ran the whole pipeline from the report stage)."""
    runs = [
        f"{MODULES[name].relative_to(ROOT)}:{line} imports {target}"
        for name, imports in GRAPH.items()
        if name.startswith("cfglint.report")
        for target, _, line in imports
        if target.startswith(PIPELINE_ENTRIES)
    ]
    assert runs == []


def test_the_pipeline_entries_exist() -> None:
    """The list above names real modules (a rename must not empty the check above)."""
    assert [m for m in PIPELINE_ENTRIES if m not in MODULES] == []
