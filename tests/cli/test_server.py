"""``cfglint server`` through a real client (issue 23): a JSON-RPC session against the
server process: initialize, didOpen, publishDiagnostics for both files of a configured
pair, didChange linted from the unsaved text, codeAction with the fix, hover with the other
side's value and origin."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES

need_pygls = pytest.mark.skipif(
    importlib.util.find_spec("pygls") is None, reason="pygls is not installed (server extra)"
)

PAIR = FIXTURES / "realpairs" / "glm4_9b_sft_msl"


@pytest.fixture
def session(tmp_path: Path):  # type: ignore[no-untyped-def]
    from lsp_client import LspClient

    for f in ("mindformers.yaml", "megatron.sh"):
        shutil.copy(PAIR / f, tmp_path / f)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cfglint]\npairs = [{mindformers = "mindformers.yaml", megatron = "megatron.sh"}]\n'
    )
    client = LspClient(tmp_path)
    result = client.request(
        "initialize",
        {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
    )
    caps = result["capabilities"]
    assert caps["hoverProvider"] and caps["codeActionProvider"]
    client.notify("initialized", {})
    yield client, tmp_path
    assert client.close() == 0


def _open(client, path: Path, version: int = 1) -> None:  # type: ignore[no-untyped-def]
    client.notify(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": path.as_uri(),
                "languageId": "yaml" if path.suffix == ".yaml" else "shellscript",
                "version": version,
                "text": path.read_text(),
            }
        },
    )


@need_pygls
def test_diagnostics_code_actions_and_hover_over_stdio(session) -> None:  # type: ignore[no-untyped-def]
    client, root = session
    yaml, sh = root / "mindformers.yaml", root / "megatron.sh"
    _open(client, yaml)
    diags = client.diagnostics(yaml.as_uri())
    by_code = {d["code"]: d for d in diags}
    beta = by_code["OPT006"]
    assert beta["range"]["start"] == {"line": 68, "character": 15}  # the 0.999 in betas
    assert beta["severity"] == 1 and "0.95" in beta["message"]
    # the paired script gets its diagnostics too (the same finding, at --adam-beta2)
    sh_codes = {d["code"] for d in client.diagnostics(sh.as_uri())}
    assert "OPT006" in sh_codes and "DET004" in sh_codes

    # code action: the fix edits the YAML at the value
    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": yaml.as_uri()},
            "range": beta["range"],
            "context": {"diagnostics": [beta]},
        },
    )
    fix = next(a for a in actions if "OPT006" in a["title"])
    edit = fix["edit"]["changes"][yaml.as_uri()][0]
    assert edit["newText"] == "0.95"
    assert edit["range"]["start"] == {"line": 68, "character": 15}
    assert edit["range"]["end"] == {"line": 68, "character": 20}
    assert any(a["title"].startswith("cfglint: apply all") for a in actions)

    # hover on the setting: both sides with their origins
    hover = client.request(
        "textDocument/hover",
        {"textDocument": {"uri": yaml.as_uri()}, "position": {"line": 68, "character": 16}},
    )
    text = hover["contents"]["value"]
    assert "optimizer.beta2" in text and "`0.999`" in text and "`0.95`" in text
    assert "megatron.sh:64" in text

    # didChange: the unsaved buffer is linted, the file on disk is not read for it
    on_disk = yaml.read_text()
    changed = on_disk.replace("betas: [0.9, 0.999]", "betas: [0.9, 0.95]")
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": yaml.as_uri(), "version": 2},
            "contentChanges": [{"text": changed}],
        },
    )
    after = {d["code"] for d in client.diagnostics(yaml.as_uri())}
    assert "OPT006" not in after and "OPT008" in after
    assert yaml.read_text() == on_disk


@need_pygls
def test_single_file_without_pairs_and_a_broken_buffer(tmp_path: Path) -> None:
    """No pairs: a MindFormers YAML is linted alone; the number PyYAML reads as a string
    gets its fix; a buffer that does not parse is one input diagnostic."""
    from lsp_client import LspClient

    run = tmp_path / "run.yaml"
    run.write_text((PAIR / "mindformers.yaml").read_text().replace("eps: 1.e-8", "eps: 1e-8"))
    client = LspClient(tmp_path)
    client.request(
        "initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}
    )
    client.notify("initialized", {})
    _open(client, run)
    eps_line = run.read_text().split("\n").index("  eps: 1e-8")
    diags = [d for d in client.diagnostics(run.as_uri()) if d["range"]["start"]["line"] == eps_line]
    assert diags and diags[0]["severity"] == 1  # MindFormers refuses to start
    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": run.as_uri()},
            "range": diags[0]["range"],
            "context": {"diagnostics": diags},
        },
    )
    edits = actions[0]["edit"]["changes"][run.as_uri()]
    assert [e["newText"] for e in edits] == ["1.0e-08"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: [unclosed\n")
    _open(client, bad)
    diags = client.diagnostics(bad.as_uri())
    assert diags and diags[0]["code"] == "input" and diags[0]["severity"] == 1
    assert client.close() == 0


def test_without_the_server_extra_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from cfglint.cli.app import main

    monkeypatch.setitem(sys.modules, "pygls", None)  # what an install without the extra has
    monkeypatch.setitem(sys.modules, "pygls.server", None)
    assert main(["server"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e '.[server]'" in err


# -- issue 35: base files, settings reloaded, no partner, debounce and versions ----------------
def _client(root: Path):  # type: ignore[no-untyped-def]
    from lsp_client import LspClient

    client = LspClient(root)
    client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    return client


def _change(client, path: Path, text: str, version: int) -> None:  # type: ignore[no-untyped-def]
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": path.as_uri(), "version": version},
            "contentChanges": [{"text": text}],
        },
    )


def _until(client, uri: str, ok, timeout: float = 60):  # type: ignore[no-untyped-def]
    """The first diagnostics of ``uri`` that ``ok`` accepts."""
    while True:
        msg = client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
            ),
            timeout,
        )
        if ok(msg["params"]):
            return msg["params"]


BASE = "optimizer:\n  type: AdamW\n  betas: [0.9, 0.999]\n  eps: 1.e-8\n  weight_decay: 0.1\n"
CHILD = (
    "base_config: ['./base.yaml']\nseed: 1234\n"
    "model:\n  model_config:\n    type: LlamaConfig\n    num_layers: 2\n"
)
SCRIPT = (
    "#!/bin/bash\nARGS=(\n    --adam-beta2 0.95\n    --weight-decay 0.1\n"
    '    --num-layers 2\n)\ntorchrun pretrain_gpt.py "${ARGS[@]}"\n'
)


@need_pygls
def test_a_base_config_file_keeps_and_relints_its_pairs_diagnostics(tmp_path: Path) -> None:
    """Before: opening base.yaml linted it alone (the pair's OPT006 on it was wiped) and
    editing it did not re-lint the pair."""
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "run.yaml").write_text(CHILD)
    (tmp_path / "run.sh").write_text(SCRIPT)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cfglint]\npairs = [{mindformers = "run.yaml", megatron = "run.sh"}]\n'
    )
    client = _client(tmp_path)
    base, sh = tmp_path / "base.yaml", tmp_path / "run.sh"
    _open(client, base)
    diags = client.diagnostics(base.as_uri())
    assert "OPT006" in {d["code"] for d in diags}  # the pair's finding, at the base's betas
    _change(client, base, BASE.replace("0.999]", "0.95]"), 2)
    after = _until(client, base.as_uri(), lambda p: p.get("version") == 2)
    assert "OPT006" not in {d["code"] for d in after["diagnostics"]}
    # the pair's other file, re-linted in the same pass (published before or after)
    sh_last = [
        m["params"]
        for m in client.log
        if m.get("method") == "textDocument/publishDiagnostics"
        and m["params"]["uri"] == sh.as_uri()
    ][-1]
    assert "OPT006" not in {d["code"] for d in sh_last["diagnostics"]}
    assert client.close() == 0


@need_pygls
def test_pairs_added_while_running_and_a_lone_file_told_once(tmp_path: Path) -> None:
    """Before: pyproject.toml was read once at start, and a file with no partner was
    linted alone without a word."""
    for f in ("mindformers.yaml", "megatron.sh"):
        shutil.copy(PAIR / f, tmp_path / f)
    yaml, sh = tmp_path / "mindformers.yaml", tmp_path / "megatron.sh"
    client = _client(tmp_path)
    _open(client, yaml)
    alone = {d["code"] for d in client.diagnostics(yaml.as_uri())}
    assert "OPT006" not in alone  # a pair rule needs the other side
    text = yaml.read_text()
    _change(client, yaml, text + "\n", 2)
    _until(client, yaml.as_uri(), lambda p: p.get("version") == 2)
    told = [
        m
        for m in client.log
        if m.get("method") == "window/showMessage"
        and "no configured partner" in m["params"]["message"]
    ]
    assert len(told) == 1 and "[tool.cfglint] pairs" in told[0]["params"]["message"]
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cfglint]\npairs = [{mindformers = "mindformers.yaml", megatron = "megatron.sh"}]\n'
    )
    _change(client, yaml, text, 3)
    paired = _until(client, yaml.as_uri(), lambda p: p.get("version") == 3)
    assert "OPT006" in {d["code"] for d in paired["diagnostics"]}
    assert "OPT006" in {d["code"] for d in client.diagnostics(sh.as_uri())}
    assert client.close() == 0


@need_pygls
def test_an_edit_storm_is_linted_once_with_the_last_version(session) -> None:  # type: ignore[no-untyped-def]
    """Before: 200 edits sent at once were linted one by one (3.8-7.6 s to the last) and
    diagnostics carried no version. bench/server_storm.md times the settle."""
    client, root = session
    yaml = root / "mindformers.yaml"
    _open(client, yaml)
    client.diagnostics(yaml.as_uri())
    text = yaml.read_text()
    for v in range(2, 202):
        _change(client, yaml, text + f"# edit {v}\n", v)
    final = _until(client, yaml.as_uri(), lambda p: p.get("version") == 201)
    assert "OPT006" in {d["code"] for d in final["diagnostics"]}
    published = [
        m
        for m in client.log
        if m.get("method") == "textDocument/publishDiagnostics"
        and m["params"]["uri"] == yaml.as_uri()
    ]
    assert len(published) < 20  # debounced: not one lint per edit
    assert all("version" in m["params"] for m in published)
