"""Every fix checked before it is kept (issue 35) and the writer's guards (issue 32): a
result that does not load, leaves its finding, changes another row or edits an inherited
base file is refused with the files byte-identical; anchors, aliases and merge keys keep
every other use; template-v2 keys are writable; links, read-only files, BOMs and a side
changed by a concurrent fix are handled."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from cfglint.check.fix_verify import checked_plan, verify_plan
from cfglint.check.fixes import plan_fixes
from cfglint.check.pipeline import Options, lint
from cfglint.check.rulebook import load_rules
from cfglint.cli.app import main
from cfglint.cli.fix import write_plan
from cfglint.model.errors import InputError
from conftest import FIXTURES

GLM = FIXTURES / "realpairs" / "glm4_9b_sft_msl"


def _glm(tmp: Path, yaml_edit: tuple[str, str] | None = None, sh_edit=None) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    mf, sh = tmp / "mf.yaml", tmp / "mg.sh"
    text = (GLM / "mindformers.yaml").read_text()
    script = (GLM / "megatron.sh").read_text()
    for old, new in [yaml_edit] if yaml_edit else []:
        assert old in text
        text = text.replace(old, new)
    for old, new in sh_edit or []:
        assert old in script
        script = script.replace(old, new)
    mf.write_text(text)
    sh.write_text(script)
    return mf, sh


def _fix(mf: Path, sh: Path, *more: str) -> int:
    return main([str(mf), "--megatron", str(sh), "--fix", *more])


# -- anchors, aliases, merge keys -------------------------------------------------------------
ANCHORED = (
    "    hidden_dropout: 0.0\n    attention_dropout: 0.0\n",
    "    hidden_dropout: &drop 0.0\n    attention_dropout: *drop\n",
)


def test_fixing_an_anchored_value_keeps_the_anchor_for_its_other_uses(tmp_path: Path) -> None:
    """Before: the anchor was deleted with the value, *drop became undefined and the file
    no longer loaded (exit 2 after writing it)."""
    mf, sh = _glm(tmp_path, ANCHORED, [("--hidden-dropout 0.0", "--hidden-dropout 0.1")])
    assert _fix(mf, sh, "--select", "STR009,STR010") == 0
    model = yaml.safe_load(mf.read_text())["model"]["model_config"]
    assert (model["hidden_dropout"], model["attention_dropout"]) == (0.1, 0.0)
    assert "    hidden_dropout: 0.1\n    attention_dropout: &drop 0.0\n" in mf.read_text()


def test_fixing_an_alias_breaks_only_that_use(tmp_path: Path) -> None:
    """Before: the fix rewrote the anchor's value, changing every other use."""
    mf, sh = _glm(tmp_path, ANCHORED, [("--attention-dropout 0.0", "--attention-dropout 0.1")])
    assert _fix(mf, sh, "--select", "STR009,STR010") == 0
    assert "    hidden_dropout: &drop 0.0\n    attention_dropout: 0.1\n" in mf.read_text()


def test_a_key_taken_from_a_merge_is_overridden_in_its_own_mapping(tmp_path: Path) -> None:
    """Editing the merged mapping would change every config section that merges it."""
    text = (GLM / "mindformers.yaml").read_text()
    old = (
        "optimizer:\n  type: AdamW\n  betas: [0.9, 0.999]\n  eps: 1.e-8\n"
        "  learning_rate: 1.e-6\n  weight_decay: 0.01\n"
    )
    assert old in text
    text = text.replace(old, "optimizer:\n  <<: *opt\n  betas: [0.9, 0.999]\n")
    text = (
        "defaults: &opt\n  type: AdamW\n  eps: 1.e-8\n  learning_rate: 1.e-6\n"
        "  weight_decay: 0.01\nother:\n  <<: *opt\n" + text
    )
    mf, sh = tmp_path / "mf.yaml", tmp_path / "mg.sh"
    mf.write_text(text)
    shutil.copy(GLM / "megatron.sh", sh)
    assert _fix(mf, sh, "--select", "OPT008") == 0
    doc = yaml.safe_load(mf.read_text())
    assert doc["optimizer"]["weight_decay"] == 0.1
    assert doc["defaults"]["weight_decay"] == doc["other"]["weight_decay"] == 0.01
    assert "optimizer:\n  <<: *opt\n  weight_decay: 0.1\n  betas:" in mf.read_text()


# -- shared shell variables converge ------------------------------------------------------------
def test_a_variable_feeding_two_flags_is_refused_with_the_reason_and_fix_converges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: --fix changed DROP (a new attention-dropout difference), the next --fix
    changed it back, forever."""
    mf, sh = _glm(
        tmp_path,
        ("    hidden_dropout: 0.0\n", "    hidden_dropout: 0.1\n"),
        [
            ("--attention-dropout 0.0", "--attention-dropout ${DROP}"),
            ("--hidden-dropout 0.0", "--hidden-dropout ${DROP}"),
            ("TP=2\n", "TP=2\nDROP=0.0\n"),
        ],
    )
    before = sh.read_bytes(), mf.read_bytes()
    argv = ["--fix-to", "mindformers", "--select", "STR009,STR010", "-v"]
    assert _fix(mf, sh, *argv) == 1
    err = capsys.readouterr().err
    # DROP also feeds --attention-dropout: the attention dropouts would differ (STR010)
    assert "set --hidden-dropout to 0.1 (mg.sh:14): not written: it changes" in err
    assert "(STR010) would be reported" in err
    assert (sh.read_bytes(), mf.read_bytes()) == before
    assert _fix(mf, sh, *argv) == 1  # a second run: the same, nothing written
    assert (sh.read_bytes(), mf.read_bytes()) == before


# -- the check itself -----------------------------------------------------------------------
def test_a_fix_whose_finding_stays_is_not_counted_nor_written(tmp_path: Path) -> None:
    """The DET003 case: a fix that writes a value the framework reads some other way leaves
    its finding; it is refused instead of counted as fixed."""
    mf, sh = _glm(tmp_path)
    opts = Options(mindformers=[str(mf)], megatron=str(sh))
    report, ctx = lint(opts)
    rules = load_rules()
    plan = plan_fixes(report.findings, ctx, rules)
    assert plan.fixes
    n = len(plan.fixes)
    # a re-read that sees no change at all (as if the framework ignored every written key)
    verify_plan(plan, report, ctx, rules, lambda texts: (report, ctx))
    assert not plan.fixes
    assert sum("not written" in why for _, why in plan.skipped) == n
    assert any("is still reported after it" in why for _, why in plan.skipped)


def test_a_result_that_does_not_load_is_refused(tmp_path: Path) -> None:
    mf, sh = _glm(tmp_path)
    opts = Options(mindformers=[str(mf)], megatron=str(sh))
    report, ctx = lint(opts)
    rules = load_rules()
    plan = plan_fixes(report.findings, ctx, rules)
    broken = report.model_copy(deep=True)
    broken.errors = [
        type(report)
        .model_fields["errors"]
        .annotation.__args__[0]
        .model_construct(  # type: ignore[union-attr]
            path=str(mf), message="YAML syntax error", line=3
        )
    ]
    verify_plan(plan, report, ctx, rules, lambda texts: (broken, ctx))
    assert not plan.fixes
    assert all("does not load" in why for _, why in plan.skipped if "not written" in why)


def test_second_fix_is_a_no_op(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mf, sh = _glm(tmp_path)
    _fix(mf, sh, "--unsafe-fixes")
    after = mf.read_bytes(), sh.read_bytes()
    capsys.readouterr()
    _fix(mf, sh, "--unsafe-fixes")
    assert "fixed 0 finding(s)" in capsys.readouterr().err
    assert (mf.read_bytes(), sh.read_bytes()) == after


# -- fix semantics --------------------------------------------------------------------------
def test_seed_zero_is_not_copied_to_mindformers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """MindFormers' legacy trainer seeds only ``if self.config.seed`` (mindformers/trainer/
    trainer.py:285 @ fd4deebc): --seed 0 written as seed: 0 would mean "do not seed"."""
    mf, sh = _glm(
        tmp_path, None, [("    --no-load-rng \\\n", "    --no-load-rng \\\n    --seed 0 \\\n")]
    )
    mf.write_text(mf.read_text().replace("use_parallel: True", "use_parallel: False"))
    before = mf.read_bytes()
    _fix(mf, sh, "--select", "DET001,DET002", "-v")
    err = capsys.readouterr().err
    assert mf.read_bytes() == before
    assert "DET001: set seed to 0 (mf.yaml:4): not written: it changes another row" in err
    assert "determinism.framework_seed (DET002)" in err  # "MindFormers does not seed"


def test_rotary_dtype_is_not_fixed_alone_against_a_different_compute_dtype(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a safe fix set rotary_dtype bfloat16 while compute_dtype stayed float16."""
    mf, sh = _glm(tmp_path, ('    compute_dtype: "bfloat16"', '    compute_dtype: "float16"'))
    _fix(mf, sh, "--select", "PRC", "-v")
    text = mf.read_text()
    assert 'rotary_dtype: "float32"' in text and 'compute_dtype: "float16"' in text
    assert "left out while precision.compute_dtype differs too (PRC001" in capsys.readouterr().err
    _fix(mf, sh, "--select", "PRC", "--unsafe-fixes")
    text = mf.read_text()
    assert 'compute_dtype: "bfloat16"' in text and 'rotary_dtype: "bfloat16"' in text


def test_dropout_advice_never_targets_a_model_without_dropout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    probe = FIXTURES / "probe"
    main(
        [
            str(probe / "llama_fp32_knobs.yaml"),
            "--megatron",
            str(probe / "llama_fp32_knobs.sh"),
            "--select",
            "STR009",
            "--no-color",
        ]
    )
    out = capsys.readouterr().out
    assert "Set --hidden-dropout to 0 on Megatron;" in out
    assert "hidden_dropout to 0.1 on MindFormers" not in out


def test_verbose_lists_findings_that_have_no_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf, sh = _glm(tmp_path)
    main([str(mf), "--megatron", str(sh), "--diff", "-v", "--select", "OPT014,OPT006"])
    err = capsys.readouterr().err
    assert "not fixed: OPT014: no automatic fix" in err


# -- template v2 --------------------------------------------------------------------------
V2 = """\
# template-v2 excerpt (configs/llm_template_v2_experimental/llm_pretrain_template.yaml,
# mindspore-lab/mindformers branch br_feature_llm_trainer @ 26cd9a4f)
run_mode: 'train'
use_parallel: False
train_precision_sync: True
training_args:
  epochs: 1
  global_batch_size: 8
  training_seed: 42
  stop_step: null
train_dataset:
  data_loader:
    type: BlendedMegatronDatasetDataLoader
    sizes: [1000, 0, 0]
    config:
      seq_length: 4096
      seed: 42
      data_path: ['1.0', "/path/megatron_data1"]
model_config:
  model_type: qwen3
  compute_dtype: "bfloat16"
  rms_norm_eps: 1.e-6
"""
V2_SH = """\
#!/bin/bash
torchrun pretrain_gpt.py \\
    --seq-length 4096 \\
    --norm-epsilon 1e-5 \\
    --seed 7 \\
    --bf16
"""


def test_template_v2_keys_are_written_where_the_v2_trainer_reads_them(tmp_path: Path) -> None:
    """The v2 trainer writes ``dataset_seed or training_seed or 1234`` over
    data_loader.config.seed (llm_trainer.py:1380, llm_dataset.py:331 @ 26cd9a4f): before,
    the fix edited config.seed, which the trainer overwrites, and the re-lint agreed."""
    mf, sh = tmp_path / "mf.yaml", tmp_path / "mg.sh"
    mf.write_text(V2)
    sh.write_text(V2_SH)
    _fix(mf, sh, "--select", "DET001,DET007,STR008")
    doc = yaml.safe_load(mf.read_text())
    assert doc["training_args"]["training_seed"] == 7
    assert doc["training_args"]["dataset_seed"] == 7
    assert doc["train_dataset"]["data_loader"]["config"]["seed"] == 42  # overwritten anyway
    assert doc["model_config"]["rms_norm_eps"] == 1e-5
    report, _ = lint(Options(mindformers=[str(mf)], megatron=str(sh), select=["DET", "STR008"]))
    assert not {f.rule for f in report.findings} & {"DET001", "DET007", "STR008"}


def test_v2_dataset_seed_is_read_as_the_v2_trainer_reads_it(tmp_path: Path) -> None:
    mf, sh = tmp_path / "mf.yaml", tmp_path / "mg.sh"
    mf.write_text(V2.replace("      seed: 42\n", "      seed: 7\n"))
    sh.write_text(V2_SH)
    report, ctx = lint(Options(mindformers=[str(mf)], megatron=str(sh), select=["DET007"]))
    assert ctx.mf.determinism.data_seed.value == 42  # training_seed: config.seed is overwritten
    assert [f.rule for f in report.findings] == ["DET007"]


# -- base files -------------------------------------------------------------------------------
# (tests/cli/test_fix.py: test_base_config_value_is_edited_in_the_base_file_only_with_unsafe_fixes)


# -- the writer (issue 32) ---------------------------------------------------------------------
def test_fix_through_a_symlink_edits_the_file_it_names(tmp_path: Path) -> None:
    """Before: the link was replaced by a fixed copy and the real file left unfixed."""
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    mf, sh = _glm(real_dir)
    link = tmp_path / "link.yaml"
    link.symlink_to(mf)
    main([str(link), "--megatron", str(sh), "--fix", "--select", "OPT006"])
    assert link.is_symlink()
    assert "betas: [0.9, 0.95]" in mf.read_text()


def test_fix_refuses_a_read_only_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a 0444 file was rewritten and the run exited 0."""
    mf, sh = _glm(tmp_path)
    os.chmod(mf, 0o444)
    before = mf.read_bytes(), sh.read_bytes()
    assert _fix(mf, sh) == 2
    assert "is read-only; not fixed" in capsys.readouterr().err
    assert (mf.read_bytes(), sh.read_bytes()) == before
    assert os.stat(mf).st_mode & 0o777 == 0o444


def test_fix_keeps_a_utf8_bom(tmp_path: Path) -> None:
    mf, sh = _glm(tmp_path)
    mf.write_bytes(b"\xef\xbb\xbf" + mf.read_bytes())
    _fix(mf, sh, "--select", "OPT006")
    data = mf.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"betas: [0.9, 0.95]" in data


def test_a_side_changed_by_a_concurrent_fix_is_refused(tmp_path: Path) -> None:
    """Two --fix runs in opposite directions: each planned from the side the other edits.
    The writer re-reads both sides and refuses when either changed."""
    mf, sh = _glm(tmp_path)
    opts = Options(mindformers=[str(mf)], megatron=str(sh), select=["OPT006"])
    report, ctx = lint(opts)
    plan = checked_plan(report, ctx, opts, load_rules(), fix_to="megatron")
    assert list(plan.edits_by_file()) == [str(mf)]  # planned from the script, edits the YAML
    # the other run (fix-to mindformers) wrote the script meanwhile
    sh.write_text(sh.read_text().replace("--adam-beta2 0.95", "--adam-beta2 0.999"))
    mf_before = mf.read_bytes()
    with pytest.raises(InputError, match="changed since it was read"):
        write_plan(plan)
    assert mf.read_bytes() == mf_before


def test_a_tab_after_a_colon_is_read_as_the_lint_reads_it(tmp_path: Path) -> None:
    """libyaml (the lint's and MindFormers' reader) accepts a tab after a colon; the fixer
    used a stricter reader and died with a multi-line ScannerError."""
    mf, sh = _glm(tmp_path, ("run_mode: 'finetune'", "run_mode:\t'finetune'"))
    assert _fix(mf, sh, "--select", "OPT006") == 0
    assert "betas: [0.9, 0.95]" in mf.read_text() and "run_mode:\t'finetune'" in mf.read_text()


# -- inputs ---------------------------------------------------------------------------------
def test_an_infinite_warmup_ratio_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: OverflowError, an internal error (int(total steps x inf))."""
    pair = FIXTURES / "realpairs" / "llama2_7b_pretrain_msl"
    mf = tmp_path / "mf.yaml"
    text = (pair / "mindformers.yaml").read_text()
    mf.write_text(
        text.replace("warmup_ratio: 0.03", "warmup_ratio: .inf").replace(
            "total_steps: -1", "total_steps: 1000"
        )
    )
    assert main([str(mf), "--megatron", str(pair / "megatron.sh")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "mf.yaml:" in err and "warmup_ratio is inf" in err


def test_explicit_megatron_on_pretrain_gpt_with_unknown_flags_is_linted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: refused (exit 2) as "another framework" for its two unknown flags."""
    sh = tmp_path / "run.sh"
    sh.write_text(
        "#!/bin/bash\ntorchrun pretrain_gpt.py \\\n    --num-layers 2 \\\n"
        "    --my-flag 3 \\\n    --other-flag 5\n"
    )
    pair = FIXTURES / "realpairs" / "llama2_7b_pretrain_msl"
    rc = main([str(pair / "mindformers.yaml"), "--megatron", str(sh), "--select", "OTH011"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "--my-flag is not an argument" in out and "--other-flag is not an argument" in out


def test_the_lr_schedules_fixable_parts_are_fixed(tmp_path: Path) -> None:
    """Before: learning-rate differences (OPT010, a builtin) were never fixable. Peak and
    minimum lr are one setting on each side: both directions write them."""
    mf, sh = _glm(tmp_path)
    _fix(mf, sh, "--select", "OPT010")
    doc = yaml.safe_load(mf.read_text())["lr_schedule"]
    assert (doc["learning_rate"], doc["lr_end"]) == (1.25e-6, 1e-8)
    mf, sh = _glm(tmp_path)
    _fix(mf, sh, "--select", "OPT010", "--fix-to", "mindformers")
    assert "    --lr 1e-06 \\\n" in sh.read_text() and "    --min-lr 1e-06 \\\n" in sh.read_text()


def test_a_megatron_yaml_cfg_is_writable(tmp_path: Path) -> None:
    """Every dialect the lint reads is writable: Megatron's --yaml-cfg file too (a value
    written there is edited where it stands; the nested sections are kept)."""
    mg = tmp_path / "mg.yaml"
    shutil.copy(FIXTURES / "megatron" / "gpt_yaml_cfg.yaml", mg)
    mf, _ = _glm(tmp_path)
    main(
        [
            str(mf),
            "--megatron",
            str(mg),
            "--fix",
            "--fix-to",
            "mindformers",
            "--select",
            "OPT006,STR008",
        ]
    )
    doc = yaml.safe_load(mg.read_text())
    assert doc["adam_beta2"] == 0.999 and doc["language_model"]["layernorm_epsilon"] == 1.5625e-07


def test_a_mindformers_seed_zero_is_not_copied_to_megatron(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: --fix-to mindformers wrote --seed 0, though MindFormers' seed 0 means "do
    not seed" (trainer.py:285 @ fd4deebc): the pair looked equal and was not."""
    mf, sh = _glm(tmp_path, ("seed: 42\n", "seed: 0\n"))
    before = sh.read_bytes()
    _fix(mf, sh, "--select", "DET001", "--fix-to", "mindformers", "-v")
    assert sh.read_bytes() == before
    assert "the mindformers value 0 is not applied" in capsys.readouterr().err


def test_an_anchor_and_its_alias_both_fixed_in_one_run(tmp_path: Path) -> None:
    """Found by the property campaign: the anchor's fix and the alias's fix edit the same
    alias, so one --fix fixed one and a second --fix the other. Rounds settle it in one."""
    mf, sh = _glm(
        tmp_path,
        ANCHORED,
        [
            ("--hidden-dropout 0.0", "--hidden-dropout 0.1"),
            ("--attention-dropout 0.0", "--attention-dropout 0.1"),
        ],
    )
    assert _fix(mf, sh, "--select", "STR009,STR010") == 0
    model = yaml.safe_load(mf.read_text())["model"]["model_config"]
    assert (model["hidden_dropout"], model["attention_dropout"]) == (0.1, 0.1)
    written = mf.read_bytes()
    _fix(mf, sh, "--select", "STR009,STR010")
    assert mf.read_bytes() == written


def test_a_fix_that_pulls_another_row_apart_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """GLM-4 runs with recomputation: writing Megatron's hidden dropout 0.1 into it would
    turn dropout on beside recomputation, which MindSpore cannot combine (STR011)."""
    mf, sh = _glm(tmp_path, None, [("--hidden-dropout 0.0", "--hidden-dropout 0.1")])
    before = mf.read_bytes()
    assert _fix(mf, sh, "-v") == 1
    err = capsys.readouterr().err
    assert "STR009: set model.model_config.hidden_dropout to 0.1" in err
    assert "structure.dropout (STR011) would be reported" in err
    assert b"hidden_dropout: 0.0" in mf.read_bytes() and mf.read_bytes() != before
