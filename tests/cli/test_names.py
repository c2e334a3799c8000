"""Issue 32, names: SARIF URIs percent-encoded as RFC 3986 asks, ``--`` ends the options, and
a control character in a file name does not split the one-line error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from cfglint.cli import main
from conftest import FIXTURES

MF = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"
MG = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.sh"


def _run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("name", ["ünï cødé.yaml", "a:b,c%d.yaml", "x#y?z.yaml"])
def test_sarif_uris_are_percent_encoded(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / name).write_text(MF.read_text())
    monkeypatch.chdir(tmp_path)
    _rc, out, _ = _run(capsys, name, "--megatron", MG, "--format", "sarif")
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for result in json.loads(out)["runs"][0]["results"]
        for loc in result["locations"]
        if loc["physicalLocation"]["artifactLocation"].get("uriBaseId") == "%SRCROOT%"
    }
    assert uris, out[:500]
    for uri in uris:
        parts = urlsplit(uri)
        # a relative reference: no scheme, nothing but unreserved characters, "/" and escapes
        assert parts.scheme == "" and parts.query == "" and parts.fragment == "", uri
        assert all(c.isascii() and (c.isalnum() or c in "-._~/%") for c in uri), uri
    assert name in {unquote(u) for u in uris}


def test_double_dash_ends_the_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("-odd.yaml").write_text(MF.read_text())
    rc, out, err = _run(capsys, "--megatron", MG, "--format", "json", "--", "-odd.yaml")
    assert rc in (0, 1), err
    inputs = {(i["path"], i["kind"]) for i in json.loads(out)["inputs"]}
    assert ("-odd.yaml", "mindformers") in inputs, inputs
    # and a file named like a command, after "--", is a file
    Path("rules").write_text(MF.read_text())
    rc, out, err = _run(capsys, "--format", "json", "--", "rules")
    assert rc in (0, 1, 2) and "rules" in out + err and "RULE-ID" not in out


def test_a_newline_in_a_file_name_keeps_the_error_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad\nname\x1b[2J.yaml"
    bad.write_text("a: [\n")
    rc, _, err = _run(capsys, bad)
    assert rc == 2
    assert err.count("\n") == 1 and "\x1b" not in err, repr(err)
    assert "bad\\nname\\x1b[2J.yaml" in err
