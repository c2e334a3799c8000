"""``cfglint server``: a language server over stdio (pygls).

Diagnostics for MindFormers YAML, launch scripts and training sources as they are edited
(paired through ``[tool.cfglint] pairs`` of the workspace's pyproject.toml, else each file
alone), code actions from the fixes (one per finding, and one that applies every safe fix
of a pair), and hover on a setting with both sides' values and where each came from. The
protocol lives here; the lints come from :class:`cfglint.check.workspace.Workspace` (the
library API the command line calls) and what is shown of them from
:mod:`cfglint.report.editor`. pygls and lsprotocol come with the ``server`` extra and are
imported by nothing else.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cfglint import install_hint
from cfglint.model.errors import InputError

if TYPE_CHECKING:
    from cfglint.check.workspace import Workspace
    from cfglint.report.editor import Action, Diagnostic

SEVERITY = {"error": 1, "warning": 2, "note": 3}
# an edit is linted this long after the last one of a burst (typing, a paste, a tool that
# sends many edits): one lint per pause instead of one per keystroke
DEBOUNCE_S = 0.08
_FROZEN: list[bool] = []
# path -> the diagnostics last sent for it
_PUBLISHED: dict[str, Any] = {}


def add_arguments(p: Any) -> None:
    p.add_argument("--config", metavar="PYPROJECT", help="pyproject.toml with [tool.cfglint]")
    p.add_argument(
        "--fix-to",
        choices=("megatron", "mindformers"),
        default="megatron",
        help="the side code actions keep (default: megatron, the reference run)",
    )


def cmd_server(args: Any) -> int:
    try:
        from lsprotocol import types as t
        from pygls.server import LanguageServer
    except ImportError:
        raise InputError(None, f"cfglint server needs pygls: {install_hint('server')}") from None
    from cfglint import __version__

    server = _guarded_server(LanguageServer)("cfglint", __version__)
    state: dict[str, Any] = {"told": set(), "timers": {}}

    def workspace() -> Any:
        # the settings are read again whenever pyproject.toml changed (a pair added while
        # the editor runs); the open documents carry over
        stamp = _settings_stamp(args, state.get("root"))
        if "ws" not in state or state.get("stamp") != stamp:
            old = state.get("ws")
            state["ws"] = _workspace(args, state.get("root"))
            if old is not None:
                state["ws"].texts.update(old.texts)
            state["stamp"] = stamp
        return state["ws"]

    @server.feature(t.INITIALIZED)
    def initialized(ls: Any, params: Any) -> None:
        state["root"] = ls.workspace.root_path

    @server.feature(t.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Any, params: Any) -> None:
        _refresh(ls, workspace(), params.text_document.uri, state)

    @server.feature(t.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Any, params: Any) -> None:
        # debounced: a burst of edits is linted once, DEBOUNCE_S after the last of them
        import asyncio

        uri = params.text_document.uri
        timers = state["timers"]
        if uri in timers:
            timers.pop(uri).cancel()

        def run() -> None:
            timers.pop(uri, None)
            _refresh(ls, workspace(), uri, state)

        timers[uri] = asyncio.get_event_loop().call_later(DEBOUNCE_S, run)

    @server.feature(t.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Any, params: Any) -> None:
        _refresh(ls, workspace(), params.text_document.uri, state)

    @server.feature(t.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Any, params: Any) -> None:
        from pygls.uris import to_fs_path

        pending = state["timers"].pop(params.text_document.uri, None)
        if pending is not None:  # a closed document's last edits are not linted
            pending.cancel()
        workspace().close(to_fs_path(params.text_document.uri))

    @server.feature(
        t.TEXT_DOCUMENT_CODE_ACTION,
        t.CodeActionOptions(code_action_kinds=[t.CodeActionKind.QuickFix]),
    )
    def code_action(ls: Any, params: Any) -> list[Any]:
        from pygls.uris import to_fs_path

        path = to_fs_path(params.text_document.uri)
        actions = _guard(
            ls,
            lambda: code_actions(workspace(), path, params.range.start.line, params.range.end.line),
        )
        return [_lsp_action(t, a) for a in actions or []]

    @server.feature(t.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: Any, params: Any) -> Any:
        from pygls.uris import to_fs_path

        path = to_fs_path(params.text_document.uri)
        text = _guard(ls, lambda: hover(workspace(), path, params.position.line))
        if not text:
            return None
        return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=text))

    return _serve(server)


def _guarded_server(base: Any) -> Any:
    """pygls's server with its error hook answering the requests pygls could not read
    (cli/lsp_transport.py)."""
    from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

    class GuardedServer(base):  # type: ignore[misc, valid-type]
        guard: Any = None

        def report_server_error(self, error: Exception, source: Any) -> None:
            unread = isinstance(error, (JsonRpcInvalidParams, JsonRpcInternalError))
            if unread and self.guard is not None and self.guard.answer_failed(error):
                return
            super().report_server_error(error, source)

    return GuardedServer


def _serve(server: Any) -> int:
    """Serve stdio through the guarded transport; the exit code the protocol asks for."""
    import sys

    from cfglint.cli.lsp_transport import GuardedInput, LockedOutput

    out = LockedOutput(sys.stdout.buffer)
    guard = GuardedInput(sys.stdin.buffer, out)
    server.guard = guard
    server.start_io(stdin=guard, stdout=out)
    return guard.exit_code()


def _pyproject(args: Any, root: str | None) -> Path | None:
    from cfglint.cli.settings import find_pyproject

    return Path(args.config) if args.config else find_pyproject(root or os.getcwd())


def _settings_stamp(args: Any, root: str | None) -> Any:
    """What tells that the settings changed: the settings file found, its size and time."""
    path = _pyproject(args, root)
    try:
        st = os.stat(path) if path is not None else None
    except OSError:
        st = None
    return (str(path), st.st_mtime_ns, st.st_size) if st is not None else (str(path), None)


def _workspace(args: Any, root: str | None) -> Any:
    from cfglint.check.workspace import Workspace
    from cfglint.cli.settings import load_settings

    pyproject = _pyproject(args, root)
    try:
        cfg = load_settings(pyproject) if pyproject else {}
    except InputError:  # a half-typed pyproject.toml: no pairs until it reads again
        cfg = {}
    return Workspace(
        cfg.get("pairs") or [],
        profile=cfg.get("profile", "default"),
        select=list(cfg.get("select", [])),
        ignore=list(cfg.get("ignore", [])),
        megatron_version=cfg.get("megatron_version"),
        fix_to=args.fix_to,
        base=str(pyproject.parent) if pyproject else "",
    )


def diagnostics(ws: Workspace, path: str) -> dict[str, list[Diagnostic]]:
    """Every file of every job ``path`` belongs to, linted now -> its diagnostics."""
    from cfglint.report import editor

    return editor.diagnostics(path, ws.lint_path(path), ws.fixable, ws.text)


def code_actions(ws: Workspace, path: str, first: int, last: int) -> list[Action]:
    """The code actions for lines ``first``..``last`` (0-based) of ``path``."""
    from cfglint.report import editor

    planned = [ws.fixes(linted) for linted in ws.last_lints(path)]
    return editor.code_actions(path, first, last, planned, ws.text)


def hover(ws: Workspace, path: str, line: int) -> str | None:
    """The hover text for the setting on ``line`` (0-based) of ``path``."""
    from cfglint.report import editor

    return editor.hover(path, line, ws.last_lints(path))


def _tell_alone(ls: Any, ws: Any, path: str, told: set[str]) -> None:
    """Once per file: a file no configured pair names is linted alone, and how to pair it."""
    full = os.path.abspath(path)
    if full in told or ws.jobs_for(full) != ws.alone(full) or not ws.alone(full):
        return
    told.add(full)
    name = os.path.basename(full)
    other = (
        'megatron = "run.sh"' if full.endswith((".yaml", ".yml")) else 'mindformers = "config.yaml"'
    )
    side = "mindformers" if full.endswith((".yaml", ".yml")) else "megatron"
    ls.show_message(
        f"cfglint: {name} has no configured partner and is linted alone (pair rules need "
        f"both sides). Pair it in pyproject.toml: [tool.cfglint] pairs = "
        f'[{{{side} = "{name}", {other}}}]'
    )


def _refresh(ls: Any, ws: Any, uri: str, state: dict[str, Any] | None = None) -> None:
    """Take the document's current text, lint what it belongs to, publish every file
    (each with the version of its open document, so an editor can drop stale ones)."""
    from lsprotocol import types as t
    from pygls.uris import from_fs_path, to_fs_path

    path = to_fs_path(uri)
    doc = ls.workspace.get_text_document(uri)
    ws.open(path, doc.source)
    if state is not None:
        _guard(ls, lambda: _tell_alone(ls, ws, path, state["told"]))
    found = _guard(ls, lambda: diagnostics(ws, path)) or {}
    if not _FROZEN:
        # the rules, the imported modules and the first sides live as long as the server:
        # kept out of the cyclic collector's walks, they stop costing every later re-lint
        import gc

        gc.freeze()
        _FROZEN.append(True)
    for file, diags in found.items():
        # the other files of a pair are sent only when their diagnostics changed:
        # serializing them is a good part of a keystroke's cost
        if file != os.path.abspath(path) and _PUBLISHED.get(file) == diags:
            continue
        _PUBLISHED[file] = diags
        ls.publish_diagnostics(
            from_fs_path(file),
            version=_version(ls, from_fs_path(file)),
            diagnostics=[
                t.Diagnostic(
                    range=t.Range(
                        start=t.Position(line=d.line, character=d.column),
                        end=t.Position(line=d.line, character=d.end_column),
                    ),
                    severity=t.DiagnosticSeverity(SEVERITY[d.severity]),
                    code=d.code,
                    source="cfglint",
                    message=d.message,
                    data={"fixable": d.fixable},
                )
                for d in diags
            ],
        )


def _version(ls: Any, uri: str) -> int | None:
    """The version of the open document ``uri`` (None for a file not open)."""
    doc = ls.workspace.text_documents.get(uri)
    return doc.version if doc is not None else None


def _lsp_action(t: Any, a: Any) -> Any:
    from pygls.uris import from_fs_path

    changes = {
        from_fs_path(path): [
            t.TextEdit(
                range=t.Range(
                    start=t.Position(line=r[0], character=r[1]),
                    end=t.Position(line=r[2], character=r[3]),
                ),
                new_text=r[4],
            )
            for r in ranges
        ]
        for path, ranges in a.edits.items()
    }
    return t.CodeAction(
        title=a.title,
        kind=t.CodeActionKind.QuickFix,
        is_preferred=a.safe and bool(a.rule),
        edit=t.WorkspaceEdit(changes=changes),
    )


def _guard(ls: Any, work: Any) -> Any:
    """An input the lint cannot read is a diagnostic; anything else is logged, and the
    server keeps serving."""
    try:
        return work()
    except InputError as exc:
        ls.show_message_log(f"cfglint: {exc.one_line()}")
    except Exception as exc:  # a bug must not take the editor's server down
        if os.environ.get("CFGLINT_DEBUG"):
            raise
        ls.show_message_log(f"cfglint: internal error ({type(exc).__name__}: {exc})")
    return None
