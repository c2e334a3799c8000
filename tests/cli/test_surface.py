"""Issue 22: the everyday surface as a ruff user expects it, each through the real command
line: options anywhere, help, selection and suppression, warnings and unchecked rows in
every output, CI formats, messages that read right, one finding per cause, install hints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cfglint.cli import main
from conftest import FIXTURES, ROOT, script_module

EX = FIXTURES / "examples" / "llama2_7b"
EX_MF, EX_MG = str(EX / "pretrain_llama2_7b.yaml"), str(EX / "pretrain_llama2_7b.sh")
ENV = {k: v for k, v in os.environ.items() if k != "CFGLINT_DEBUG"}


def cli(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """The real program, as a user starts it."""
    return subprocess.run(
        [sys.executable, "-m", "cfglint", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=ENV,
        check=False,
    )


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def rules_of(out: str) -> list[str]:
    return [f["rule"] for f in json.loads(out)["findings"]]


# -- command line ----------------------------------------------------------------------------
def test_options_and_files_in_any_order_and_one_prefix() -> None:
    proc = cli(EX_MF, "--format", "json", EX_MG)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert [i["kind"] for i in data["inputs"]] == ["mindformers", "megatron"]
    bad = cli(EX_MF, "--bogus", EX_MG)
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("cfglint: unrecognized arguments: --bogus")
    sub = cli("show", "--bogus")
    assert sub.stderr.strip() == "cfglint: show: unrecognized arguments: --bogus"


def test_top_level_help_lists_the_lint_options_and_the_commands() -> None:
    proc = cli("--help")
    assert proc.returncode == 0
    for option in ("--megatron", "--select", "--ignore", "--config", "--pairs", "--exit-zero"):
        assert option in proc.stdout, option
    for command in ("show", "rules", "explain", "lr", "probe", "cache"):
        assert f"\n  {command} " in proc.stdout, command


def test_quiet_exit_zero_and_json_statistics(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--quiet", "--format", "concise")
    assert code == 1 and out and "Found " not in out and "Not checked" not in out
    assert all(line.startswith("fixtures/") or line.startswith("/") for line in out.splitlines())
    code, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--exit-zero")
    assert code == 0 and "Found " in out
    code, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--statistics", "--format", "json")
    stats = json.loads(out)
    _, full, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--format", "json")
    assert sum(s["count"] for s in stats) == len(json.loads(full)["findings"])
    assert {s["rule"] for s in stats} == set(rules_of(full))
    assert all(set(s) == {"rule", "count", "severity", "title"} for s in stats)


def test_explain_suggests_the_closest_id(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "explain", "opt06")
    assert code == 2 and "did you mean OPT006" in err


def test_github_annotations(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--output-format", "github")
    assert code == 1
    lines = out.splitlines()
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    beta2 = next(line for line in lines if "title=OPT006" in line)
    assert beta2.startswith(f"::error file={EX_MF},line=25,col=10,title=OPT006 optimizer.beta2::")
    # a setting both sides leave at their defaults: where the first file would set it (the
    # legacy Llama class has no dropout key, so no section holds it: line 1)
    dropout = next(line for line in lines if "title=STR009" in line)
    assert dropout.startswith(f"::error file={EX_MF},line=1,col=1,title=STR009")


# -- selection and suppression ---------------------------------------------------------------
def test_the_more_specific_selector_wins(capsys: pytest.CaptureFixture[str]) -> None:
    base = (EX_MF, "--megatron", EX_MG, "--format", "json")
    assert rules_of(run(capsys, *base, "--select", "OPT006", "--ignore", "OPT")[1]) == ["OPT006"]
    assert "OPT006" not in rules_of(run(capsys, *base, "--select", "OPT", "--ignore", "opt006")[1])
    kept = rules_of(run(capsys, *base, "--select", "optimizer", "--ignore", "optimizer.beta2")[1])
    assert kept and "OPT006" not in kept and all(r.startswith("OPT") for r in kept)
    # equally specific: the ignore wins
    assert rules_of(run(capsys, *base, "--select", "OPT006", "--ignore", "OPT006")[1]) == []


def test_per_file_ignores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "configs"
    folder.mkdir()
    mf = folder / "llama.yaml"
    mf.write_text(Path(EX_MF).read_text())
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cfglint]\nper-file-ignores = {"configs/*.yaml" = ["OPT", "determinism"]}\n'
    )
    pyproject = str(tmp_path / "pyproject.toml")
    args = (str(mf), "--megatron", EX_MG, "--format", "json", "--config", pyproject)
    found = rules_of(run(capsys, *args)[1])
    # findings located in the matching file are gone; the Megatron script's own stay
    assert "OPT018" not in found and "DET001" not in found and "STR004" in found
    assert "OPT008" in found  # located in the script only
    # --select of the exact id is more specific than the pattern's prefix
    assert rules_of(run(capsys, *args, "--select", "OPT018")[1]) == ["OPT018"]
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cfglint]\nper-file-ignores = {"configs/*.yaml" = ["OPT0006"]}\n'
    )
    code, _, err = run(capsys, *args)
    assert code == 2 and "per-file-ignores" in err and "did you mean OPT006" in err


def _script(tmp_path: Path, last: str) -> Path:
    sh = tmp_path / "pretrain.sh"
    sh.write_text(
        "#!/bin/bash\n"
        "torchrun --nproc_per_node 1 pretrain_gpt.py \\\n"
        "    --num-layers 2 \\\n"
        "    --hiden-dropout 0.1 \\\n"
        "    --num-attention-heads 4 \\\n"
        "    --seq-length 128 \\\n"
        "    --max-position-embeddings 128 \\\n"
        "    --micro-batch-size 1 \\\n"
        f"    --hidden-size 64{last}\n"
    )
    return sh


def test_unknown_megatron_flag_is_an_error_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sh = _script(tmp_path, "")
    code, out, _ = run(capsys, "--megatron", str(sh), "--format", "json")
    data = json.loads(out)
    oth = [f for f in data["findings"] if f["rule"] == "OTH011"]
    assert code == 1 and len(oth) == 1 and oth[0]["severity"] == "error"
    assert (
        "--hiden-dropout" in oth[0]["message"]
        and "did you mean --hidden-dropout" in (oth[0]["message"])
    )
    assert oth[0]["locations"][0]["line"] == 4
    assert not any("hiden" in w["message"] for w in data["warnings"])  # one cause, one finding


def test_suppression_in_any_case_with_a_reason_on_a_continued_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a flag inside a `\`-continued command: the comment goes on the command's last line
    sh = _script(tmp_path, "  # CFGLINT: Disable=oth011 -- our extra_args_provider adds it")
    code, out, _ = run(capsys, "--megatron", str(sh), "--format", "json")
    data = json.loads(out)
    assert code == 0 and "OTH011" not in rules_of(out) and data["warnings"] == []
    # free text without `--` is not silently dropped: the rule is applied, the word warned
    sh = _script(tmp_path, "  # cfglint: disable=OTH011 keep")
    _, out, _ = run(capsys, "--megatron", str(sh), "--format", "json")
    warned = json.loads(out)["warnings"]
    assert "OTH011" not in rules_of(out)
    assert [w["line"] for w in warned] == [9] and "'keep'" in warned[0]["message"]


def test_a_suppression_that_silences_nothing_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf = tmp_path / "mf.yaml"
    mf.write_text(
        Path(EX_MF)
        .read_text()
        .replace("  beta2: 0.95\n", "  beta2: 0.95  # cfglint: disable=OPT004 -- stale\n")
    )
    code, out, _ = run(capsys, str(mf), "--megatron", EX_MG, "--format", "json")
    data = json.loads(out)
    assert code == 1  # a warning alone never changes the exit code; the findings do
    assert [(w["line"], "suppresses nothing" in w["message"]) for w in data["warnings"]] == [
        (25, True)
    ]
    # a rule that was not selected cannot be unused
    _, out, _ = run(capsys, str(mf), "--megatron", EX_MG, "--format", "json", "--select", "STR")
    assert json.loads(out)["warnings"] == []
    # the SARIF report carries it as a warning notification; the text summary counts it
    _, out, _ = run(capsys, str(mf), "--megatron", EX_MG, "--format", "sarif")
    notes = json.loads(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["warning"]
    assert notes[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 25
    _, out, _ = run(capsys, str(mf), "--megatron", EX_MG)
    assert out.rstrip().endswith("1 input warning; -v lists them.")


def test_input_warnings_reach_json_and_sarif(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf = tmp_path / "mf.yaml"
    text = Path(EX_MF).read_text()
    mf.write_text(text + "seed: 1\n")  # a duplicate key
    line = len(text.splitlines()) + 1
    _, out, _ = run(capsys, str(mf), "--format", "json")
    warnings = json.loads(out)["warnings"]
    # the line is a field (not only words in the message), so every output can point at it
    dup = [w for w in warnings if "duplicate key 'seed'" in w["message"]]
    assert [(w["path"], w.get("line")) for w in dup] == [(str(mf), line)]
    assert not dup[0]["message"].startswith(str(mf))
    _, out, _ = run(capsys, str(mf), "--format", "sarif")
    run_ = json.loads(out)["runs"][0]
    notes = run_["invocations"][0]["toolExecutionNotifications"]
    seed = [n for n in notes if n["level"] == "warning" and "seed" in n["message"]["text"]]
    assert seed[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == line
    assert run_["invocations"][0]["executionSuccessful"] is True
    _, out, _ = run(capsys, str(mf), "--output-format", "github")
    assert f"::warning file={mf},line={line},title=cfglint input warning::" in out


def test_the_summary_says_how_many_rows_were_not_checked_and_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = run(capsys, EX_MF, "--megatron", EX_MG)
    text = " ".join(out.split())
    _, data, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--format", "json", "-v")
    n = len(json.loads(data)["not_checked"])
    assert f"Not checked: {n} rules." in text
    # the example's lr rows: total_steps -1 leaves the length to the dataset
    assert "OPT016 (lr_schedule.total_steps is unknown)" in text
    assert "--source (11)" in text and "-v lists each reason." in text


# -- CI -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "setting"),
    [
        (["--select", "NOPE999"], ""),
        ([], "[tool.cfglint]\nfail_onn = 'error'\n"),
    ],
)
def test_a_usage_error_still_writes_the_sarif_it_was_asked_for(
    tmp_path: Path, argv: list[str], setting: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(setting)
    target = tmp_path / "report.sarif"
    proc = cli(EX_MF, "--megatron", EX_MG, *argv, "-o", str(target), cwd=ROOT)
    if setting:  # the typo sits in the pyproject.toml the run reads
        proc = cli(
            EX_MF,
            "--megatron",
            EX_MG,
            "--config",
            str(tmp_path / "pyproject.toml"),
            "-o",
            str(target),
        )
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    sarif = json.loads(target.read_text())
    invocation = sarif["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert sarif["runs"][0]["results"] == []
    text = invocation["toolExecutionNotifications"][0]["message"]["text"]
    assert ("NOPE999" if not setting else "fail_onn") in text


def test_sarif_validates_with_warnings_and_a_failed_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from conftest import need_shared

    schema = json.loads(need_shared("schemas", "sarif-schema-2.1.0.json").read_text())
    target = tmp_path / "r.sarif"
    run(capsys, EX_MF, "--megatron", EX_MG, "--select", "zzz", "-o", str(target))
    jsonschema.validate(json.loads(target.read_text()), schema)
    _, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--format", "sarif")
    jsonschema.validate(json.loads(out), schema)


def test_one_repository_url_for_readme_sarif_and_pyproject(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from cfglint import HOMEPAGE

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["urls"]["Homepage"] == HOMEPAGE
    manual = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    assert all("your-org" not in p.read_text(encoding="utf-8") for p in manual)
    hook = (ROOT / "docs" / "setup" / "pre-commit.md").read_text(encoding="utf-8")
    assert f"repo: {HOMEPAGE}" in hook
    _, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--format", "sarif")
    driver = json.loads(out)["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == HOMEPAGE
    assert driver["rules"][0]["helpUri"].startswith(f"{HOMEPAGE}/blob/main/docs/rules.md#")


def test_the_everyday_surface_through_python_m_cfglint(tmp_path: Path) -> None:
    """The items above that the in-process tests cover, once more as a user starts the
    program: a settings file found from the working directory, per-file-ignores, suppression
    comments (any case, a reason, an unused one), input warnings in JSON, SARIF and GitHub
    output, --exit-zero, --quiet, --statistics in JSON and the SARIF helpUri."""
    from cfglint import HOMEPAGE

    (tmp_path / "configs").mkdir()
    mf = tmp_path / "configs" / "llama.yaml"
    text = Path(EX_MF).read_text()
    text = text.replace(
        "  beta2: 0.95\n", "  beta2: 0.95  # CFGLINT: Disable=opt006 -- from ckpt\n"
    )
    text = text.replace("  beta1: 0.9\n", "  beta1: 0.9  # cfglint: disable=OPT004 -- stale\n")
    mf.write_text(text + "seed: 1234\n")  # a duplicate key: an input warning
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cfglint]\nper-file-ignores = {"configs/*.yaml" = ["determinism"]}\n'
    )
    dup_line = len(text.splitlines()) + 1
    # options after the positionals, settings from the working directory
    proc = cli("configs/llama.yaml", "--format", "json", EX_MG, "--exit-zero", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    found = {f["rule"] for f in data["findings"]}
    # DET001 / DET002 point into the ignored file; DET006 (both sides at defaults) nowhere
    assert not {"OPT006", "DET001", "DET002"} & found and "DET006" in found
    assert {"OPT001", "STR004"} <= found
    warned = {(w["line"], w["message"].split(":")[0]) for w in data["warnings"]}
    assert (24, "`disable=OPT004` suppresses nothing") in warned
    assert (dup_line, "duplicate key 'seed'; the last one wins (as in PyYAML)") in warned
    sarif = tmp_path / "r.sarif"
    proc = cli("configs/llama.yaml", "--megatron", EX_MG, "-o", str(sarif), cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    run_ = json.loads(sarif.read_text())["runs"][0]
    lines = [
        n["locations"][0]["physicalLocation"]["region"]["startLine"]
        for n in run_["invocations"][0]["toolExecutionNotifications"]
    ]
    assert sorted(lines) == [24, dup_line]
    assert run_["tool"]["driver"]["rules"][0]["helpUri"].startswith(f"{HOMEPAGE}/blob/main/")
    proc = cli("configs/llama.yaml", "--megatron", EX_MG, "--output-format", "github", cwd=tmp_path)
    assert f"::warning file=configs/llama.yaml,line={dup_line}," in proc.stdout
    assert "title=OPT001 optimizer.type::" in proc.stdout and "title=OPT006" not in proc.stdout
    proc = cli(
        "configs/llama.yaml", "--megatron", EX_MG, "--statistics", "--format", "json", cwd=tmp_path
    )
    stats = {s["rule"]: s["count"] for s in json.loads(proc.stdout)}
    assert set(stats) == found and sum(stats.values()) == len(data["findings"])
    proc = cli(
        "configs/llama.yaml", "--megatron", EX_MG, "--quiet", "--format", "concise", cwd=tmp_path
    )
    assert proc.returncode == 1 and "Found " not in proc.stdout and "warning" not in proc.stdout
    # what fails the run (the default --fail-on warning): the hooks' view; -v adds the notes
    blocking = [f for f in data["findings"] if f["severity"] != "note"]
    assert len(proc.stdout.splitlines()) == len(blocking) < len(data["findings"])


# -- messages and findings -------------------------------------------------------------------
def test_opt006_reads_right_when_megatron_holds_the_recipe_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf, mg = tmp_path / "mf.yaml", tmp_path / "mg.sh"
    mf.write_text(Path(EX_MF).read_text().replace("  beta2: 0.95\n", "  beta2: 0.999\n"))
    mg.write_text(
        Path(EX_MG)
        .read_text()
        .replace("    --weight-decay 0.1\n", "    --weight-decay 0.1 --adam-beta2 0.95\n")
    )
    _, out, _ = run(capsys, str(mf), "--megatron", str(mg), "--select", "OPT006")
    text = " ".join(out.split())
    assert (
        "MindFormers 0.999 (optimizer.beta2 at" in text and "vs Megatron 0.95 (--adam-beta2" in text
    )
    assert "default beta2 is 0.999" not in text.split("why:")[0]
    fix = text.split("fix: ", 1)[1]
    assert fix.startswith("Set --adam-beta2 to 0.999 on Megatron, or optimizer.beta2 to 0.95 on")
    # the example's direction: Megatron left at its default, so the fix changes Megatron
    _, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--select", "OPT006")
    assert "fix: Set --adam-beta2 to 0.95 on Megatron (most" in " ".join(out.split())


def test_one_cause_one_finding(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--format", "json")
    found = rules_of(out)
    assert "OPT006" in found and "OPT007" not in found  # superseded by the comparison
    assert "STR009" in found and "STR012" not in found
    det = [f for f in json.loads(out)["findings"] if f["rule"] == "DET003"]
    assert len(det) == 1 and set(det[0]["values"]) == {"mindformers", "megatron"}
    assert "both sides" in det[0]["message"]
    _, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--format", "json", "--profile", "align")
    on_eps = [
        f["rule"]
        for f in json.loads(out)["findings"]
        if any(loc["line"] == 26 and loc["path"] == EX_MF for loc in f["locations"])
    ]
    # the job cannot start (OPT018), said once: not also OPT002 / ALN005 / OPT003 on the string
    assert on_eps == ["OPT018"]


def test_lr_says_what_it_assumed_instead_of_curves_agree() -> None:
    proc = cli("lr", EX_MF, "--megatron", EX_MG)
    assert proc.returncode == 0, proc.stderr
    assert "curves agree" not in proc.stdout.lower()
    assert "Assuming MindFormers trains as long as Megatron (5000 steps" in " ".join(
        proc.stdout.split()
    )
    given = cli("lr", EX_MF, "--megatron", EX_MG, "--steps", "5000")
    assert "The curves agree within 1%" in given.stdout


# -- README, docs and install ----------------------------------------------------------------
def _generator():  # type: ignore[no-untyped-def]
    return script_module("update_readme_rules")


def test_readme_option_table_and_quickstart_are_generated() -> None:
    gen = _generator()
    for page in gen.PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        assert gen.with_parts(text, page) == text, f"{page}: run scripts/update_readme_rules.py"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lint = (ROOT / "docs" / "commands" / "lint.md").read_text(encoding="utf-8")
    table = lint.split("<!-- options:start -->\n", 1)[1].split("<!-- options:end -->", 1)[0]
    for option in ("--config", "--pairs", "--exit-zero", "--quiet", "--output-format"):
        assert f"`{option}`" in table, option
    # every rule the Quickstart prose names is one the example reports
    prose = readme.split("## Quickstart", 1)[1].split("<!-- example:start -->", 1)[0]
    import re

    named = set(re.findall(r"\b[A-Z]{3}\d{3}\b", prose))
    block = readme.split("<!-- example:start -->", 1)[1].split("<!-- example:end -->", 1)[0]
    assert named and all(f"  {rule}  " in block for rule in named)


def test_rules_markdown_is_the_rules_page(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "rules", "--format", "markdown")
    assert out == (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")


def test_every_install_instruction_installs_this_project() -> None:
    from cfglint import DISTRIBUTION, HOMEPAGE, INSTALL_PROBE

    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"] == DISTRIBUTION
    assert f"{DISTRIBUTION}[probe] @ git+{HOMEPAGE}" in INSTALL_PROBE
    import re

    manual = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    lines = [line for page in manual for line in page.read_text(encoding="utf-8").splitlines()]
    assert any("pip install" in line for line in lines)
    for line in lines:
        for cmd in re.findall(r"pip install [^#`]*", line):
            # the index's `cfglint` is another project: never install it by name
            assert not re.search(r"(^|\s|')cfglint(\[|'|\s|$)", cmd.split("install", 1)[1]), line
            # this project by its distribution name comes from its repository or a checkout
            # (tools such as uv, and locked environments, are other installs)
            if DISTRIBUTION in cmd:
                assert "git+" in cmd or "-e " in cmd, line
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "language: python" in hooks  # pre-commit installs the hook repository itself


def test_test_script_names_each_step_before_its_output() -> None:
    lines = (ROOT / "test").read_text().splitlines()
    ruff = next(i for i, line in enumerate(lines) if "/bin/ruff" in line)
    assert any("echo" in line and "ruff check" in line for line in lines[:ruff])


def test_output_name_implies_the_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sarif, text = tmp_path / "r.sarif", tmp_path / "r.txt"
    code, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "-o", str(sarif))
    assert code == 1 and out == "" and json.loads(sarif.read_text())["version"] == "2.1.0"
    run(capsys, EX_MF, "--megatron", EX_MG, "-o", str(text))
    assert text.read_text().rstrip().endswith(".")  # a name that implies nothing: text
    assert oct(sarif.stat().st_mode & 0o777) != "0o600"  # written whole, with a usual mode


def test_the_hooks_print_what_blocks_the_commit(capsys: pytest.CaptureFixture[str]) -> None:
    # a blocked commit shows the findings that block it, one line each (ruff's hook does);
    # the others are one counted line, and -v lists them
    import yaml

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert all("--format concise --quiet" in h["entry"] for h in hooks), hooks
    hook = ["--format", "concise", "--quiet", "--fail-on", "error"]
    code, out, err = run(capsys, EX_MF, "--megatron", EX_MG, *hook)
    _, full, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--format", "json")
    findings = json.loads(full)["findings"]
    errors = [f for f in findings if f["severity"] == "error"]
    assert code == 1 and 0 < len(errors) < len(findings)
    assert len(out.splitlines()) == len(errors)
    assert f"{len(findings) - len(errors)} more finding(s) below --fail-on error" in err
    assert len(err.splitlines()) == 1, err
    code, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, *hook, "-v")
    assert code == 1 and len(out.splitlines()) == len(findings)


def test_the_readme_statistics_example_is_what_the_command_prints(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- example:start -->\n", 1)[1].split("<!-- example:end -->", 1)[0]
    lines = block.strip().removeprefix("```text\n").removesuffix("```").splitlines()
    command, shown = lines[0].removeprefix("$ cfglint ").split(), lines[1:]
    monkeypatch.chdir(ROOT)
    _, out, _ = run(capsys, *command)
    assert shown == out.splitlines()
    # the Quickstart block is the two commands: the lint and the tests
    quick = readme.split("## Quickstart", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    assert [c.split()[0] for c in quick.splitlines()] == ["./cfglint", "./test"]
