"""SARIF 2.1.0 output: schema-valid, relative URIs, related locations, stable fingerprints,
input errors as notifications, readable by the sarif-tools package."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cfglint.cli import main
from conftest import FIXTURES, ROOT, need_shared

EX = FIXTURES / "examples" / "llama2_7b"
ARGS = [str(EX / "pretrain_llama2_7b.yaml"), "--megatron", str(EX / "pretrain_llama2_7b.sh")]


def sarif(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    main([*argv, "--format", "sarif"])
    return json.loads(capsys.readouterr().out)


def test_valid_against_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(need_shared("schemas", "sarif-schema-2.1.0.json").read_text())
    doc = sarif(capsys, *ARGS)
    jsonschema.validate(doc, schema)
    assert doc["runs"][0]["results"]


def test_results_point_at_files_relative_to_the_repository(
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = sarif(capsys, *ARGS)
    run = doc["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    for r in rules.values():
        assert {"id", "shortDescription", "fullDescription", "help", "defaultConfiguration"} <= set(
            r
        )
    beta2 = next(r for r in run["results"] if r["ruleId"] == "OPT006")
    loc = beta2["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "fixtures/examples/llama2_7b/pretrain_llama2_7b.yaml"
    assert loc["region"]["startLine"] == 25
    ffn = next(r for r in run["results"] if r["ruleId"] == "STR004")
    related = [x["physicalLocation"]["artifactLocation"]["uri"] for x in ffn["relatedLocations"]]
    assert "fixtures/examples/llama2_7b/pretrain_llama2_7b.sh" in related
    assert all(
        r["ruleId"] in rules and r["level"] in ("error", "warning", "note") for r in run["results"]
    )


def test_fingerprints_survive_unrelated_edits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    work = tmp_path / "copy"
    shutil.copytree(EX, work)
    mf, mg = work / "pretrain_llama2_7b.yaml", work / "pretrain_llama2_7b.sh"
    before = {
        r["ruleId"]: r["partialFingerprints"]
        for r in sarif(capsys, str(mf), "--megatron", str(mg))["runs"][0]["results"]
    }
    # unrelated edits: a comment at the top shifts every line; another value changes
    mf.write_text(
        "# a new comment\n# and another\n" + mf.read_text().replace("epochs: 2", "epochs: 3")
    )
    after = {
        r["ruleId"]: r["partialFingerprints"]
        for r in sarif(capsys, str(mf), "--megatron", str(mg))["runs"][0]["results"]
    }
    assert before == after
    assert len({json.dumps(v) for v in after.values()}) == len(after)  # distinct per finding


def test_input_errors_become_notifications(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1\n")
    doc = sarif(capsys, str(bad))
    inv = doc["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    note = inv["toolExecutionNotifications"][0]
    assert (
        note["level"] == "error"
        and note["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    )


def test_sarif_tools_reads_it(tmp_path: Path) -> None:
    pytest.importorskip("sarif")
    out = tmp_path / "cfglint.sarif"
    subprocess.run(
        [sys.executable, "-m", "cfglint", *ARGS, "--format", "sarif", "-o", str(out)],
        cwd=ROOT,
        check=False,
    )
    from sarif import loader

    data = loader.load_sarif_file(str(out))
    results = json.loads(out.read_text())["runs"][0]["results"]
    assert data.get_result_count() == len(results) > 0
    assert set(data.get_severities()) >= {"error", "warning", "note"}
    records = data.get_records()
    assert {r["Location"] for r in records} >= {
        "fixtures/examples/llama2_7b/pretrain_llama2_7b.yaml"
    }


def _locations(run: dict) -> list[tuple[str, dict]]:
    out = []
    for r in run["results"]:
        for key in ("locations", "relatedLocations"):
            out += [(r["ruleId"], x["physicalLocation"]) for x in r.get(key, [])]
    return out


def test_every_result_names_a_line_a_default_the_first_line_of_its_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GitHub code scanning rejects a result without region.startLine; a finding whose value
    # is a default (written nowhere) points at line 1 of the file that omits it
    run = sarif(capsys, *ARGS)["runs"][0]
    locs = _locations(run)
    assert locs and all(p["region"]["startLine"] >= 1 for _, p in locs), [
        rid for rid, p in locs if "region" not in p
    ]
    anchored = [p for _, p in locs if p["region"] == {"startLine": 1}]
    assert anchored, "the example pair has findings on defaults"


def _multitool() -> str | None:
    """The SARIF multitool (npm @microsoft/sarif-multitool; .ci/run installs it where npm is
    present): its platform binary, which the package's index names (the npm wrapper goes
    through a shell, which splits the rule kinds' `;`)."""
    found = shutil.which("sarif-multitool")
    node = shutil.which("node")
    if found is None or node is None:
        return None
    package = Path(found).resolve().parent
    proc = subprocess.run(
        [node, "-p", f"require({json.dumps(str(package))})"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    binary = proc.stdout.strip()
    return binary if proc.returncode == 0 and Path(binary).is_file() else None


# an external tool's run (about 15 s): CI installs the multitool for it (.ci/run, --slow)
@pytest.mark.slow
def test_the_sarif_multitool_github_rules_accept_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = _multitool()
    if tool is None:
        pytest.skip("needs the SARIF multitool: npm install -g @microsoft/sarif-multitool")
    log = tmp_path / "cfglint.sarif"
    log.write_text(json.dumps(sarif(capsys, *ARGS)))
    out = tmp_path / "validation.sarif"
    proc = subprocess.run(
        [
            tool,
            "validate",
            "--rule-kind",
            "Gh;Sarif",
            "--log",
            "ForceOverwrite",
            "--output",
            str(out),
            str(log),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
    found = json.loads(out.read_text())["runs"][0]["results"]
    # the GitHub rules (GH*) are errors; SARIF2017 is the region a location lacks
    bad = [
        f"{r['ruleId']}: {r['message'].get('text', r['message'].get('arguments'))}"
        for r in found
        if r.get("level", "warning") == "error" or r["ruleId"] == "SARIF2017"
    ]
    assert not bad, bad
