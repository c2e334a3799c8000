"""Issue 11: what a ruff / yamllint user expects from the command line. Directories are
linted, each file is recognised before rules apply (MindFormers launch beside its config,
converters and other non-training scripts skipped with a note, FSDP2 scripts refused,
compose files and READMEs left alone), ``--source`` takes one value, ``-`` is stdin,
selection errors name the closest rule, and nothing is ever silently "No findings."."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cfglint.cli import main
from conftest import FIXTURES, ROOT

INPUTS = FIXTURES / "inputs"
REPO = INPUTS / "config_repo"
LAUNCHERS = INPUTS / "launchers"
EX = FIXTURES / "examples" / "llama2_7b"
EX_MF, EX_MG = str(EX / "pretrain_llama2_7b.yaml"), str(EX / "pretrain_llama2_7b.sh")
DENSE = FIXTURES / "pairs" / "llama2_dense"
ALIGN_MF = str(DENSE / "llama2_7b_align.yaml")
ALIGN_MG = str(DENSE / "pretrain_llama2_align.sh")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:
    code, out, err = run(capsys, *argv, "--format", "json")
    return code, json.loads(out), err


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The config repository fixture, plus files its .gitignore ignores (written here: git
    would not keep them in our own checkout), as the working directory."""
    dst = tmp_path / "config_repo"
    shutil.copytree(REPO, dst)
    (dst / "generated").mkdir()
    (dst / "generated" / "out.yaml").write_text("model: {model_config: [unclosed\n")
    (dst / "configs" / "scratch.tmp.yaml").write_text("model: [unclosed\n")
    (dst / "archive").mkdir()  # excluded by the fixture's [tool.cfglint] exclude
    (dst / "archive" / "old.yaml").write_text(BROKEN_CONFIG)
    (dst / ".git").mkdir()  # the repository root: settings are looked up no further
    monkeypatch.chdir(dst)
    return dst


# -- directories --------------------------------------------------------------------------
# A MindFormers config whose mapping a bad indent breaks (line 8). Written at test time: a
# broken file among the fixtures would trip every test that loads all fixture YAML files.
BROKEN_CONFIG = """# a MindFormers config whose mapping is broken by a bad indent
runner_config:
  epochs: 2
  batch_size: 1
model:
  model_config:
    num_layers: 32
   hidden_size: 4096
"""


def test_directory_with_a_broken_config_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(EX_MF, tmp_path / "good.yaml")
    (tmp_path / "broken.yaml").write_text(BROKEN_CONFIG)
    code, out, err = run(capsys, str(tmp_path))
    assert code == 2
    assert "broken.yaml:8" in err  # the bad indent, named with its line
    assert "No findings." not in out + err


def test_a_config_with_only_its_model_section_that_does_not_parse_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # no top-level key of MindFormers' own: its model section's model_config shows what it
    # is, so a folder holding it is not "nothing to check" (exit 0)
    (tmp_path / "llama.yaml").write_text(
        "seed: 0\nmodel:\n  model_config:\n    hidden_size: 4096\n"
        "    num_layers: [32\noptimizer:\n  type: AdamW\n"
    )
    code, out, err = run(capsys, str(tmp_path))
    assert code == 2 and "llama.yaml:" in err, err
    assert "No findings." not in out + err


def test_a_base_config_child_is_read_through_its_base(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a child that only sets the seed: what it trains (beta2, weight decay) is its base's
    (tmp_path / "base").mkdir()
    shutil.copy(EX_MF, tmp_path / "base" / "llama2.yaml")
    child = tmp_path / "seed42.yaml"
    child.write_text("base_config: base/llama2.yaml\nseed: 42\n")
    code, data, _ = run_json(capsys, str(child), "--megatron", EX_MG)
    assert code == 1 and any(f["rule"] == "OPT006" for f in data["findings"])
    (tmp_path / "base" / "llama2.yaml").unlink()  # a base that is gone: an input error
    code, _, err = run(capsys, str(tmp_path))
    assert code == 2 and "seed42.yaml" in err and "not found" in err, err


def test_directory_is_walked_with_gitignore_and_exclude(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data, _err = run_json(capsys, ".")
    kinds = {Path(i["path"]).as_posix(): i["kind"] for i in data["inputs"]}
    assert kinds["configs/llama2/pretrain_llama2_7b.yaml"] == "mindformers"
    assert kinds["configs/llama2/msrun_pretrain.sh"] == "launch"  # its config's launch side
    assert kinds["scripts/pretrain_llama2_7b.sh"] == "megatron"
    # .gitignore'd and [tool.cfglint] exclude'd broken files are never read
    assert not any(p.startswith(("generated/", "archive/")) or "tmp" in p for p in kinds)
    assert data["errors"] == [] and code in (0, 1)
    skipped = {Path(s["path"]).as_posix(): s["message"] for s in data["skipped"]}
    assert "checkpoint or model converter" in skipped["tools/convert_ckpt.sh"]
    assert "data preprocessing" in skipped["tools/preprocess_data.sh"]
    assert "evaluation" in skipped["tools/evaluate.sh"]
    assert "evaluation or inference" in skipped["tools/generate.sh"]
    assert "runs no python" in skipped["tools/env_setup.sh"]
    assert "compose file" in skipped["docker-compose.yml"]
    assert "CI workflow" in skipped[".github/workflows/ci.yml"]
    # README.md and pyproject.toml are not candidates at all, let alone YAML errors
    assert "README.md" not in skipped and "pyproject.toml" not in skipped
    # no finding comes from a skipped file or treats the msrun script as Megatron
    for f in data["findings"]:
        for loc in f["locations"]:
            assert "tools/" not in loc["path"] and "docker-compose" not in loc["path"]
        assert not any("msrun_pretrain" in str(v) for v in f["values"].get("megatron", {}) or {})


def test_directory_text_headers_name_each_file(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, ".", "--no-color")
    assert code == 1
    assert "configs/llama2/pretrain_llama2_7b.yaml" in out
    assert "OPT015 optimizer.global_batch_size  scripts/pretrain_llama2_7b.sh" in out
    assert "skipped" in err and "-v lists them" in err
    code, out, err = run(capsys, ".", "--no-color", "-v")
    assert "tools/convert_ckpt.sh: skipped" in err


def test_nothing_checkable_is_said_never_no_findings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, str(INPUTS / "nothing_dir"))
    assert "No findings." not in out + err
    assert "nothing" in err.lower() and "compose.yaml" in err
    assert code == 0


def test_readme_and_pyproject_are_not_yaml_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(REPO / "README.md"), str(REPO / "pyproject.toml"))
    assert code == 0
    assert "YAML" not in err and "No findings." not in out


# -- what a file is -------------------------------------------------------------------------
def test_msrun_script_beside_its_config_is_the_launch_side(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cfg = str(REPO / "configs" / "llama2" / "pretrain_llama2_7b.yaml")
    msrun = str(REPO / "configs" / "llama2" / "msrun_pretrain.sh")
    _code, data, _ = run_json(capsys, cfg, msrun)
    assert [i["kind"] for i in data["inputs"]] == ["mindformers", "launch"]
    assert all(f["values"].get("megatron") is None for f in data["findings"])
    # its environment is read as the MindFormers side's: HCCL_DETERMINISTIC is set there
    assert not any(f["rule"] == "DET004" for f in data["findings"])


def test_msrun_script_alone_lints_the_config_it_names(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _code, data, _ = run_json(capsys, "configs/llama2/msrun_pretrain.sh")
    kinds = [(Path(i["path"]).as_posix(), i["kind"]) for i in data["inputs"]]
    assert ("configs/llama2/pretrain_llama2_7b.yaml", "mindformers") in kinds


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("tools/convert_ckpt.sh", "checkpoint or model converter"),
        ("tools/preprocess_data.sh", "data preprocessing"),
        ("tools/evaluate.sh", "evaluation"),
        ("tools/generate.sh", "evaluation or inference"),
        ("tools/env_setup.sh", "runs no python"),
    ],
)
def test_non_training_scripts_are_skipped_with_a_note(
    capsys: pytest.CaptureFixture[str], name: str, why: str
) -> None:
    code, out, err = run(capsys, str(REPO / name))
    assert code == 0
    assert why in err and "skipped" in err
    assert "No findings." not in out


def test_converter_given_as_megatron_side_is_an_input_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, EX_MF, "--megatron", str(REPO / "tools" / "convert_ckpt.sh"))
    assert code == 2 and "not a Megatron-family training launch" in err
    assert "checkpoint or model converter" in err


def test_fsdp2_scripts_are_not_read_as_megatron(capsys: pytest.CaptureFixture[str]) -> None:
    script = str(LAUNCHERS / "fsdp2_tune.sh")
    code, out, err = run(capsys, script)
    assert code == 0 and "FSDP2" in err and "does not read" in err
    code, out, err = run(capsys, "--megatron", script)
    assert code == 2 and "FSDP2" in err
    code, out, err = run(capsys, "show", "--megatron", script)
    assert code == 2 and "global_batch" not in out


@pytest.mark.parametrize("name", ["uv_run.sh", "venv_prefix.sh", "sourced_launch.sh"])
def test_real_launch_forms_are_recognised(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, err = run(capsys, "show", "--megatron", str(LAUNCHERS / name), "--format", "json")
    assert code == 0, err
    s = json.loads(out)["settings"]
    assert s["structure.num_layers"]["megatron"]["value"] == 2
    assert s["optimizer.global_batch_size"]["megatron"]["value"] == 32
    assert s["parallel.world_size"]["megatron"]["value"] == 8  # from --nproc_per_node 8


def test_sourced_file_supplies_launcher_and_environment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _code, out, _err = run(
        capsys, "show", "--megatron", str(LAUNCHERS / "sourced_launch.sh"), "--format", "json"
    )
    s = json.loads(out)["settings"]
    env = s["env.CUDA_DEVICE_MAX_CONNECTIONS"]["megatron"]
    assert env["value"] == "1" and "common_launch.sh" in env["where"]


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_nothing_checkable_still_writes_the_machine_report(
    fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # a CI step that asked for JSON or SARIF (and uploads it) must get a valid, empty report
    code, out, err = run(capsys, str(REPO / "docker-compose.yml"), "--format", fmt)
    assert code == 0 and "nothing checked" in err
    data = json.loads(out)
    if fmt == "json":
        assert data["findings"] == [] and data["errors"] == []
        assert [Path(s["path"]).name for s in data["skipped"]] == ["docker-compose.yml"]
    else:
        assert data["version"] == "2.1.0" and data["runs"][0]["results"] == []


def test_compose_file_gets_no_optimizer_advice(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(REPO / "docker-compose.yml"))
    assert code == 0
    assert "OPT" not in out and "compose file" in err


# -- --source, stdin, data paths ------------------------------------------------------------
def test_source_takes_one_value_and_repeats(capsys: pytest.CaptureFixture[str]) -> None:
    src = FIXTURES / "sources" / "plain_decay"
    _code, data, _ = run_json(
        capsys, "--source", str(src / "train_plain.py"), "--source", str(src / "utils.py"), EX_MF
    )
    kinds = [(Path(i["path"]).name, i["kind"]) for i in data["inputs"]]
    assert ("pretrain_llama2_7b.yaml", "mindformers") in kinds  # not swallowed by --source
    assert ("train_plain.py", "source") in kinds and ("utils.py", "source") in kinds


def test_dash_reads_standard_input() -> None:
    text = Path(ALIGN_MF).read_text().replace("eps: 1.e-8", "eps: 1e-8")
    env = {k: v for k, v in __import__("os").environ.items() if k != "CFGLINT_DEBUG"}
    proc = subprocess.run(
        [sys.executable, "-m", "cfglint", "-", "--output-format", "concise"],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "<stdin>:" in proc.stdout and "OPT018" in proc.stdout


@pytest.mark.parametrize("opt", ["--data", "--tokenizer"])
def test_mistyped_data_paths_are_input_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, opt: str
) -> None:
    missing = str(tmp_path / "no" / "such_prefix")
    code, out, err = run(capsys, EX_MF, "--megatron", EX_MG, opt, missing)
    assert code == 2 and missing in err
    assert "No findings." not in out


# -- selection, profiles, exit codes ---------------------------------------------------------
def test_unknown_selector_names_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, EX_MF, "--select", "OPTT006")
    assert code == 2 and "OPT006" in err and "No findings." not in out
    code, out, err = run(capsys, EX_MF, "--ignore", "optimizer.beta_2")
    assert code == 2 and "optimizer.beta2" in err


def test_unknown_selector_in_pyproject_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text('[tool.cfglint]\nignore = ["PRC0100"]\n')
    code, _out, err = run(capsys, EX_MF, "--config", str(cfg))
    assert code == 2 and "PRC010" in err


def test_ids_are_case_insensitive_and_prefixes_select_families(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, upper, _ = run_json(capsys, EX_MF, "--megatron", EX_MG, "--select", "OPT006")
    _, lower, _ = run_json(capsys, EX_MF, "--megatron", EX_MG, "--select", "opt006")
    assert [f["rule"] for f in upper["findings"]] == [f["rule"] for f in lower["findings"]]
    assert {f["rule"] for f in upper["findings"]} == {"OPT006"}
    _, fam, _ = run_json(capsys, EX_MF, "--megatron", EX_MG, "--select", "OPT")
    rules = {f["rule"] for f in fam["findings"]}
    assert len(rules) > 1 and all(r.startswith("OPT") for r in rules)
    _, det, _ = run_json(
        capsys, EX_MF, "--megatron", EX_MG, "--select", "PRC00", "--profile", "align"
    )
    assert all(f["rule"].startswith("PRC00") for f in det["findings"])


def test_show_rows_select_rules(capsys: pytest.CaptureFixture[str]) -> None:
    """A row name printed by ``show`` is accepted by --select."""
    _code, out, _ = run(capsys, "show", EX_MF, "--megatron", EX_MG, "--format", "json")
    rows = json.loads(out)["settings"]
    assert "optimizer.beta2" in rows
    _code, data, _ = run_json(capsys, EX_MF, "--megatron", EX_MG, "--select", "optimizer.beta2")
    assert data["findings"] and all(f["row"] == "optimizer.beta2" for f in data["findings"])


def test_single_side_default_profile_reports_only_real_defects(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Alignment advice (recommendations) belongs to --profile align on a single side."""
    _, dflt, _ = run_json(capsys, EX_MF)
    _, align, _ = run_json(capsys, EX_MF, "--profile", "align")
    advice = {"DET002", "DET003", "PRC010", "OPT007"}
    assert not advice & {f["rule"] for f in dflt["findings"]}
    # a value MindFormers misreads (eps: 1e-8 is a string in YAML 1.1, on which its optimizer
    # refuses to start) is wrong in any run
    assert {"OPT018"} == {f["rule"] for f in dflt["findings"]}
    assert {"DET003"} <= {f["rule"] for f in align["findings"]}
    # the pair lint keeps its comparisons; the beta2 advice (OPT007) is superseded by the
    # comparison of the same value (OPT006): one cause, one finding
    _, pair, _ = run_json(capsys, EX_MF, "--megatron", EX_MG)
    assert "OPT006" in {f["rule"] for f in pair["findings"]}
    assert "OPT007" not in {f["rule"] for f in pair["findings"]}


def test_fail_on_never_and_exit_2_never_says_no_findings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--fail-on", "never")
    assert code == 0
    missing = str(tmp_path / "missing.yaml")
    code, out, err = run(capsys, missing, "--fail-on", "never")
    assert code == 2 and "No findings." not in out + err


# -- output ----------------------------------------------------------------------------------
def test_concise_format_is_one_line_per_finding(capsys: pytest.CaptureFixture[str]) -> None:
    _code, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--output-format", "concise")
    _, data, _ = run_json(capsys, EX_MF, "--megatron", EX_MG)
    lines = [ln for ln in out.splitlines() if ln.strip()]
    finding_lines = [ln for ln in lines if not ln.startswith("Found")]
    assert len(finding_lines) == len(data["findings"])
    import re

    for ln in finding_lines:
        assert re.match(r"^\S+:\d+:\d+: [A-Z]{3}\d{3} ", ln), ln


def test_statistics_counts_per_rule(capsys: pytest.CaptureFixture[str]) -> None:
    _code, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--statistics")
    _, data, _ = run_json(capsys, EX_MF, "--megatron", EX_MG)
    from collections import Counter

    counts = Counter(f["rule"] for f in data["findings"])
    for rule, n in counts.items():
        assert any(ln.split()[:2] == [str(n), rule] for ln in out.splitlines()), (rule, out)


@pytest.mark.parametrize("width", [60, 140])
def test_text_wraps_to_the_terminal_width(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    _, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--no-color")
    lengths = [len(ln) for ln in out.splitlines() if " " in ln.strip()]
    assert max(lengths) <= width
    assert max(lengths) > min(width, 100) - 20  # it uses the room it has


def test_show_fits_80_columns_and_diff_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "show", EX_MF, "--megatron", EX_MG, "--no-color")
    assert code == 0 and max(len(ln) for ln in out.splitlines()) <= 80
    assert "optimizer.beta2" in out and "structure.num_layers" in out
    code, diff, _ = run(capsys, "show", EX_MF, "--megatron", EX_MG, "--no-color", "--diff-only")
    assert "optimizer.beta2" in diff  # 0.95 vs Megatron's default 0.999
    assert "structure.num_layers" not in diff  # 32 on both sides
    monkeypatch.setenv("FORCE_COLOR", "1")
    code, colored, _ = run(capsys, "show", EX_MF, "--megatron", EX_MG)
    assert "\x1b[" in colored


@pytest.mark.parametrize(
    "argv",
    [
        [EX_MF, "--megatron", EX_MG],
        ["show", EX_MF, "--megatron", EX_MG],
        ["rules"],
        ["explain", "OPT006"],
        ["lr", ALIGN_MF, "--megatron", ALIGN_MG],
    ],
)
def test_color_switches_on_every_subcommand(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, forced, _ = run(capsys, *argv)
    assert "\x1b[" in forced
    _, plain, _ = run(capsys, *argv, "--no-color")
    assert "\x1b[" not in plain
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("FORCE_COLOR")
    _, none, _ = run(capsys, *argv)
    assert "\x1b[" not in none


# -- cfglint lr on real configs --------------------------------------------------------------
def test_lr_takes_the_length_from_the_other_side(capsys: pytest.CaptureFixture[str]) -> None:
    """The Quickstart pair: MindFormers total_steps is -1, Megatron trains 5000 iters."""
    code, out, err = run(capsys, "lr", EX_MF, "--megatron", EX_MG)
    assert code in (0, 1), err
    assert "5000 steps" in out
    assert "length from --train-iters" in out or "train-iters" in out


def test_lr_length_from_steps_and_one_side_alone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "lr", EX_MF, "--steps", "300")
    assert code == 0, err
    assert "300 steps" in out and "Megatron" not in out  # one curve, not compared with itself
    png = tmp_path / "one.png"
    code, out, err = run(capsys, "lr", EX_MF, "--steps", "300", "--plot", str(png))
    assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_lr_constant_schedule_needs_no_length(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "lr", ALIGN_MF)
    assert code == 0, err
    assert "constant" in out


def test_lr_without_any_length_says_where_to_get_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _out, err = run(capsys, "lr", EX_MF)
    assert code == 2 and "--steps" in err


def test_lr_length_from_a_mindrecord_dataset(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """total_steps -1 from the dataset, as MindFormers' trainer computes it: the example runs
    2 epochs in sink mode (sink_size 1) at global batch 64 (batch 1 x dp 8 x micro 1 x ...):
    10000 samples // 64 = 156 batches per epoch, x 2 epochs = 312 steps. One shard file
    stands for its whole group (the header names 4 shards); a folder is walked."""
    from cfglint.load.mindrecord import write_mindrecord

    data = tmp_path / "ds" / "sub"
    data.mkdir(parents=True)
    files = write_mindrecord(str(data / "wiki.mindrecord"), 10000, shards=4)
    for given in (files[0], str(tmp_path / "ds")):
        code, out, err = run(capsys, "lr", EX_MF, "--data", given)
        assert code == 0, err
        assert "312 steps" in out and "10000 samples" in out and "global batch 64" in out
    # the dataset is what MindFormers trains on: it beats the other side's length
    code, out, err = run(capsys, "lr", EX_MF, "--megatron", EX_MG, "--data", files[0])
    assert "MindFormers training length 312 steps" in out
    assert "runs end at different steps (MindFormers 312, Megatron 5000)" in out
    # an explicit --steps beats both
    code, out, err = run(capsys, "lr", EX_MF, "--data", files[0], "--steps", "40")
    assert code == 0 and "40 steps" in out and "312" not in out


@pytest.mark.parametrize(
    ("edit", "steps"),
    [
        # sink_size 2: epochs becomes int(156 / 2 * 2) = 156, x sink_size 2 = 312
        (("sink_size: 1", "sink_size: 2"), 312),
        # 10001 samples, drop_remainder False: ceil(10001 / 64) = 157 batches x 2 epochs
        (("drop_remainder: True", "drop_remainder: False"), 314),
        # not in sink mode: epochs x dataset size
        (("sink_mode: True", "sink_mode: False"), 312),
    ],
)
def test_lr_dataset_length_follows_the_trainer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, edit: tuple[str, str], steps: int
) -> None:
    from cfglint.load.mindrecord import write_mindrecord

    mf = tmp_path / "mf.yaml"
    mf.write_text(Path(EX_MF).read_text().replace(*edit))
    rows = 10001 if "drop_remainder" in edit[0] else 10000
    (f,) = write_mindrecord(str(tmp_path / "d.mindrecord"), rows)
    code, out, err = run(capsys, "lr", str(mf), "--data", f)
    assert code == 0, err
    assert f"{steps} steps" in out


def test_lr_dataset_errors_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from cfglint.load.mindrecord import write_mindrecord

    (f,) = write_mindrecord(str(tmp_path / "d.mindrecord"), 10)
    Path(f + ".db").unlink()
    bad = tmp_path / "bad.mindrecord"
    bad.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00nojson")
    prefix = tmp_path / "mg"
    cases = {
        f: "missing: every MindRecord shard has a .db index",
        str(bad): "not a MindRecord file",
        str(tmp_path / "absent"): "no such file or folder",
        str(prefix): "no such file or folder",
    }
    for given, why in cases.items():
        code, _out, err = run(capsys, "lr", EX_MF, "--data", given)
        assert code == 2 and why in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1, err


def test_lr_curves_stop_where_each_run_ends(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A shorter MindFormers run is not drawn (or compared) as lr 0 after its end."""
    mf = tmp_path / "short.yaml"
    mf.write_text(Path(EX_MF).read_text().replace("total_steps: -1", "total_steps: 2500"))
    _code, out, _err = run(capsys, "lr", str(mf), "--megatron", EX_MG)
    assert "100.00%" not in out
    assert "2500" in out and "5000" in out
    assert "runs end at different steps" in out


def test_lr_png_has_title_markers_and_curves_that_stop(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    from cfglint.check.schedules import lr_schedules
    from cfglint.report.lr_plot import figure_for

    mf = tmp_path / "short.yaml"
    mf.write_text(Path(EX_MF).read_text().replace("total_steps: -1", "total_steps: 2500"))
    scheds = lr_schedules(str(mf), EX_MG, None)
    fig = figure_for(scheds, "short.yaml vs pretrain_llama2_7b.sh")
    ax = fig.axes[0]
    assert "short.yaml" in ax.get_title() and "pretrain_llama2_7b.sh" in ax.get_title()
    ends = {line.get_label(): max(line.get_xdata()) for line in ax.get_lines()}
    assert any(v == 2500 for v in ends.values()) and any(v == 5000 for v in ends.values())
    labels = " ".join(line.get_label() for line in ax.get_lines())
    assert "warmup ends" in labels and "largest absolute gap" in labels
    png = tmp_path / "lr.png"
    _code, _out, _ = run(capsys, "lr", str(mf), "--megatron", EX_MG, "--plot", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plotext_is_not_a_dependency_and_matplotlib_is() -> None:
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not any(d.startswith("plotext") for d in deps)
    assert any(d.startswith("matplotlib") for d in deps)


# -- SARIF: where each rule is explained, and regions that point at the value ---------------
def test_sarif_help_uri_points_into_the_generated_rules_page(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import re
    import tomllib

    _code, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--format", "sarif")
    driver = json.loads(out)["runs"][0]["tool"]["driver"]
    home = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Homepage"]
    assert driver["informationUri"] == home
    page = (ROOT / "docs" / "rules.md").read_text()
    anchors = set(re.findall(r'<a id="([a-z0-9]+)"></a>', page))
    for rule in driver["rules"]:
        uri = rule["helpUri"]
        assert uri.startswith(home) and "docs/rules.md#" in uri
        assert uri.rsplit("#", 1)[1] in anchors


def test_rules_page_is_up_to_date() -> None:
    from cfglint.check.rulebook import load_rules
    from cfglint.report.rules_doc import rules_page

    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert page == rules_page(load_rules()), "run scripts/update_readme_rules.py"


def test_sarif_regions_cover_the_value_the_message_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _code, out, _ = run(capsys, EX_MF, "--megatron", EX_MG, "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    beta2 = next(r for r in results if r["ruleId"] == "OPT006")
    region = beta2["locations"][0]["physicalLocation"]["region"]
    line = Path(EX_MF).read_text().splitlines()[region["startLine"] - 1]
    assert line[region["startColumn"] - 1 : region["endColumn"] - 1] == "0.95"
    assert "0.95" in beta2["message"]["text"]
    # a setting that is not written anywhere points at the first line of the file that
    # omits it, underlining nothing (GitHub code scanning needs a startLine on every result)
    dropout = next(r for r in results if r["ruleId"] == "STR009")
    assert dropout["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}


# -- configured pairs ------------------------------------------------------------------------
@pytest.fixture
def pair_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "configs").mkdir()
    (tmp_path / "scripts").mkdir()
    shutil.copy(EX_MF, tmp_path / "configs" / "llama2.yaml")
    shutil.copy(EX_MG, tmp_path / "scripts" / "pretrain.sh")
    shutil.copy(ALIGN_MF, tmp_path / "configs" / "align.yaml")
    shutil.copy(ALIGN_MG, tmp_path / "scripts" / "align.sh")
    (tmp_path / "pyproject.toml").write_text(
        "[tool.cfglint]\npairs = [\n"
        '  {mindformers = "configs/llama2.yaml", megatron = "scripts/pretrain.sh"},\n'
        '  {mindformers = "configs/align.yaml", megatron = "scripts/align.sh"},\n]\n'
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_no_arguments_lints_every_configured_pair(
    pair_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data, _ = run_json(capsys)
    paths = [(Path(i["path"]).as_posix(), i["kind"]) for i in data["inputs"]]
    assert paths == [
        ("configs/llama2.yaml", "mindformers"),
        ("scripts/pretrain.sh", "megatron"),
        ("configs/align.yaml", "mindformers"),
        ("scripts/align.sh", "megatron"),
    ]
    assert code == 1 and any(f["rule"] == "OPT006" for f in data["findings"])


def test_pairs_option_runs_only_the_pairs_a_change_touches(
    pair_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data, _ = run_json(capsys, "--pairs", "scripts/align.sh")
    assert [Path(i["path"]).name for i in data["inputs"]] == ["align.yaml", "align.sh"]
    assert code == 0
    code, _, err = run(capsys, "--pairs", "README.md")
    assert code == 0 and "nothing checked" in err
    code, data, _ = run_json(capsys, "--pairs", "pyproject.toml")  # the pair list changed
    assert len(data["inputs"]) == 4


def test_folders_holding_a_configured_pair_lint_it_as_a_pair(
    pair_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # each file alone would say "No findings": the pair's beta2 differs
    code, data, _ = run_json(capsys, "configs", "scripts")
    pairs = sorted(
        (Path(f["path"]).name for f in data["inputs"] if f["kind"] == "mindformers"),
    )
    assert pairs == ["align.yaml", "llama2.yaml"]
    assert code == 1 and any(f["rule"] == "OPT006" for f in data["findings"])
    kinds = {Path(i["path"]).name: i["kind"] for i in data["inputs"]}
    assert kinds == {
        "llama2.yaml": "mindformers",
        "pretrain.sh": "megatron",
        "align.yaml": "mindformers",
        "align.sh": "megatron",
    }


def test_bad_pairs_setting_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text('[tool.cfglint]\npairs = [{mindformer = "a.yaml"}]\n')
    code, _, err = run(capsys, "--config", str(cfg), "--pairs")
    assert code == 2 and "unknown key(s) mindformer" in err


@pytest.mark.parametrize(
    ("name", "body", "kind", "why"),
    [
        # python -m with a dotted module: its last part names the tool
        (
            "serve.sh",
            "torchrun --nproc_per_node 8 -m tools.run_text_generation_server --tp 8\n",
            "EVALUATION",
            "run_text_generation_server",
        ),
        # a checkpoint tool that takes the model flags: WORLD_SIZE=2 python ... --num-layers
        (
            "merge.sh",
            "WORLD_SIZE=2 python tools/merge_mp_partitions.py --model-type BERT"
            " --tensor-model-parallel-size 2 --num-layers 24 --hidden-size 1024"
            " --num-attention-heads 16 --load ckpt\n",
            "CONVERTER",
            "merge_mp_partitions.py",
        ),
        # `torchrun ${SCRIPT}` shared by many scripts: the script's own name decides
        (
            "quantize.sh",
            "torchrun --nproc_per_node 8 ${SCRIPT} --num-layers 2 --tp 8\n",
            "CONVERTER",
            "quantize.sh",
        ),
        (
            "train.sh",
            "torchrun --nproc_per_node 8 ${SCRIPT} --num-layers 2 --tensor-model-parallel-size 8\n",
            "MG_LAUNCH",
            "",
        ),
        # MindSpeed-LLM's MindSpore backend: msrun, but Megatron's entry and flags
        (
            "pretrain_ms.sh",
            "msrun --worker_num 8 pretrain_gpt.py --num-layers 2\n",
            "MG_LAUNCH",
            "",
        ),
        (
            "launch.sh",
            'bash scripts/msrun_launcher.sh "run_mindformer.py --config a.yaml"\n',
            "MF_LAUNCH",
            "",
        ),
    ],
)
def test_detector_table(tmp_path: Path, name: str, body: str, kind: str, why: str) -> None:
    from cfglint.load.detect import InputKind, classify

    script = tmp_path / name
    script.write_text("#!/bin/bash\n" + body)
    d = classify(str(script))
    assert d.kind is InputKind[kind], d
    assert why in d.why


def test_documented_workflow_uploads_sarif_even_when_the_lint_fails() -> None:
    """The documented workflow (docs/setup/github-action.md) uses this repository's action, which
    uploads the SARIF report after a failed lint too (findings fail the job and are still
    uploaded)."""
    import yaml

    from cfglint import HOMEPAGE

    page = (ROOT / "docs" / "setup" / "github-action.md").read_text(encoding="utf-8")
    block = page.split("# .github/workflows/cfglint.yml\n", 1)[1].split("```", 1)[0]
    steps = yaml.safe_load(block)["jobs"]["cfglint"]["steps"]
    used = next(s for s in steps if "cfglint" in str(s.get("uses", "")))
    assert used["uses"].split("@")[0] == HOMEPAGE.removeprefix("https://github.com/")
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    upload = next(s for s in action["runs"]["steps"] if "upload-sarif" in str(s.get("uses")))
    assert "always()" in upload["if"]
    lint = next(s for s in action["runs"]["steps"] if "cfglint $" in str(s.get("run", "")))
    assert "--fail-on never" not in lint["run"] and "--format sarif" in lint["run"]


def test_the_action_expands_globs_and_uploads_under_its_category(tmp_path: Path) -> None:
    """upload-sarif@v4 (v3 is retired), a category per use (two uses in one workflow must
    not replace each other's alerts), and `configs/*.yaml` reaching cfglint as the files it
    names: the lint step's own script, run by bash with a stand-in cfglint."""
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    steps = action["runs"]["steps"]
    upload = next(s for s in steps if "upload-sarif" in str(s.get("uses")))
    assert upload["uses"] == "github/codeql-action/upload-sarif@v4"
    assert upload["with"]["category"] == "${{ inputs.category }}"
    assert action["inputs"]["category"]["default"] == "cfglint"
    lint = next(s for s in steps if "cfglint $" in str(s.get("run", "")))
    (tmp_path / "bin").mkdir()
    stub = tmp_path / "bin" / "cfglint"
    stub.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    stub.chmod(0o755)
    (tmp_path / "configs" / "sub").mkdir(parents=True)
    for name in ("a.yaml", "b.yaml", "sub/c.yaml"):
        (tmp_path / "configs" / name).write_text("seed: 1\n")
    env = {
        "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin",
        "CFGLINT_ARGS": "configs/*.yaml configs/**/c.yaml --megatron 'x.sh' none/*.yaml",
        "CFGLINT_SARIF": "out.sarif",
    }
    proc = subprocess.run(
        ["bash", "-e", "-c", lint["run"]], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.stdout.splitlines() == [
        "configs/a.yaml",
        "configs/b.yaml",
        "configs/sub/c.yaml",
        "--megatron",
        "'x.sh'",  # quotes are not read: the input's description says so
        "none/*.yaml",
        "--format",
        "sarif",
        "--output",
        "out.sarif",
    ], proc.stderr


def test_walk_skips_fifos_and_symlink_loops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(tmp_path / "pipe.yaml")  # opening it would block forever
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "loop").symlink_to(tmp_path)
    shutil.copy(ALIGN_MF, tmp_path / "sub" / "config.yaml")
    code, data, _ = run_json(capsys, str(tmp_path))
    assert [Path(i["path"]).name for i in data["inputs"]] == ["config.yaml"]
    assert code == 0
