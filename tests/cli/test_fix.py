"""--fix, --diff, --unsafe-fixes and --fix-to (issue 23): after a fix the same lint no
longer reports what was fixed, everything outside the edited values stays byte for byte,
a changed file is refused, and the exit codes are ruff's."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from pathlib import Path

import pytest

from cfglint.check.fix_verify import checked_plan, converge
from cfglint.check.fixes import plan_fixes
from cfglint.check.pipeline import Options, lint
from cfglint.check.rulebook import load_rules
from cfglint.cli.app import main
from cfglint.cli.fix import write_plan
from cfglint.load.edit_shell import add_export, add_flag, remove_flag_at, set_value_at
from cfglint.load.edit_yaml import set_or_add, yaml_scalar
from cfglint.model.edits import apply_edits
from cfglint.model.errors import InputError
from cfglint.model.values import Loc
from conftest import CORPUS, FIXTURES, campaign

REAL = FIXTURES / "realpairs"
# (folder, MindFormers YAML, Megatron script, MindFormers launch)
PAIRS = [
    *[
        (p.name, "mindformers.yaml", "megatron.sh", None)
        for p in sorted(REAL.iterdir())
        if p.is_dir()
    ],
    ("llama2_7b", "pretrain_llama2_7b.yaml", "pretrain_llama2_7b.sh", None),
    ("llama_fp32_knobs", "llama_fp32_knobs.yaml", "llama_fp32_knobs.sh", None),
    ("llama2_dense", "llama2_7b_align.yaml", "pretrain_llama2_align.sh", "msrun_align.sh"),
    ("qwen3_moe", "qwen3_moe_align.yaml", "pretrain_qwen3_moe_align.sh", "msrun_align.sh"),
]
SOURCES = {
    "llama2_7b": FIXTURES / "examples" / "llama2_7b",
    "llama_fp32_knobs": FIXTURES / "probe",
    "llama2_dense": FIXTURES / "pairs" / "llama2_dense",
    "qwen3_moe": FIXTURES / "pairs" / "qwen3_moe",
}


def _copy(tmp: Path, name: str, files: tuple[str, ...]) -> Path:
    src = SOURCES.get(name, REAL / name)
    for f in files:
        shutil.copy(src / f, tmp / f)
    return tmp


def _opts(tmp: Path, mf: str, mg: str, launch: str | None, profile: str) -> Options:
    return Options(
        mindformers=[str(tmp / mf)],
        megatron=str(tmp / mg),
        launch=str(tmp / launch) if launch else None,
        profile=profile,
    )


def _key(f) -> tuple[str, tuple[str, ...]]:  # type: ignore[no-untyped-def]
    return f.rule, tuple(sorted(f.values))


def _comments(text: str) -> list[str]:
    return [m.group(0) for m in re.finditer(r"(?m)(?:^|\s)#.*$", text)]


def _argv(tmp: Path, mf: str, mg: str, launch: str | None, *more: str) -> list[str]:
    argv = [str(tmp / mf), "--megatron", str(tmp / mg)]
    return [*argv, *(["--launch", str(tmp / launch)] if launch else []), *more]


# both directions, both profiles (align adds the alignment-run recommendations)
@pytest.mark.parametrize(("fix_to", "profile"), [("megatron", "default"), ("mindformers", "align")])
@pytest.mark.parametrize(
    ("name", "mf", "mg", "launch"),
    # the README's example and the MoE pair with its launch script in ./test; every real
    # pair in CI
    campaign(PAIRS, [p[0] for p in PAIRS], keep={"llama2_7b", "qwen3_moe"}),
)
def test_fix_removes_what_it_fixed_and_keeps_the_rest_byte_for_byte(
    tmp_path: Path, name: str, mf: str, mg: str, launch: str | None, fix_to: str, profile: str
) -> None:
    files = tuple(x for x in (mf, mg, launch) if x)
    _copy(tmp_path, name, files)
    opts = _opts(tmp_path, mf, mg, launch, profile)
    before = {f: (tmp_path / f).read_bytes() for f in files}
    report, ctx = lint(opts)
    plan = converge(report, ctx, opts, load_rules(), fix_to=fix_to, unsafe=True)
    fixed = {_key(fx.finding) for fx in plan.fixes if not fx.part}  # parts: the finding stays
    argv = _argv(tmp_path, mf, mg, launch, "--fix", "--unsafe-fixes", "--fix-to", fix_to)
    main([*argv, "--profile", profile, "--format", "json", "-o", str(tmp_path / "r.json")])
    after, _ = lint(opts)
    assert not fixed & {_key(f) for f in after.findings}
    for f in files:
        old, new = before[f].decode(), (tmp_path / f).read_text()
        edits = plan.edits_by_file().get(str(tmp_path / f), [])
        assert new == plan.changed().get(str(tmp_path / f), (old, old))[1]  # what was planned
        # comments survive, removed flag lines aside (a switch flag's own line)
        removed = [e for e in edits if not e.text]
        if not removed:
            assert _comments(old) == _comments(new), f
    # idempotent: a second run has nothing left to fix
    assert main(
        [
            *_argv(tmp_path, mf, mg, launch, "--diff", "--unsafe-fixes"),
            "--fix-to",
            fix_to,
            "--profile",
            profile,
        ]
    ) in (0, 1)
    again, ctx2 = lint(opts)
    replan = checked_plan(again, ctx2, opts, load_rules(), fix_to=fix_to, unsafe=True)
    assert not {_key(fx.finding) for fx in replan.fixes} & fixed


# real public MindFormers configs (../shared corpus, copied before editing) against the
# fixtures' launch scripts of the same model
CORPUS_PAIRS = [
    ("configs__llama2__pretrain_llama2_7b_bf16.yaml", "llama2_7b_pretrain_msl"),
    ("configs__glm4__finetune_glm4_9b.yaml", "glm4_9b_sft_msl"),
    ("research__llama3_1__llama3_1_8b__finetune_llama3_1_8b.yaml", "llama31_8b_sft_msl"),
    ("research__mixtral__mixtral_8x7b__pretrain_mixtral-8x7b.yaml", "mixtral_8x7b_pretrain_msl"),
    ("configs__qwen3_moe__pretrain_qwen3_30b_a3b_4k.yaml", "qwen3_30b_a3b_pretrain_msl"),
]


@pytest.mark.parametrize("fix_to", ["megatron", "mindformers"])
@pytest.mark.parametrize(
    ("config", "script"),
    campaign(CORPUS_PAIRS, [p[1] for p in CORPUS_PAIRS], keep={"llama2_7b_pretrain_msl"}),
)
def test_fix_on_real_public_configs(tmp_path: Path, config: str, script: str, fix_to: str) -> None:
    if not (CORPUS / config).is_file():
        pytest.skip("../shared corpus not available")
    shutil.copy(CORPUS / config, tmp_path / "mf.yaml")
    os.chmod(tmp_path / "mf.yaml", 0o644)  # the corpus is read-only, which --fix refuses
    shutil.copy(REAL / script / "megatron.sh", tmp_path / "mg.sh")
    opts = _opts(tmp_path, "mf.yaml", "mg.sh", None, "default")
    before = {f: (tmp_path / f).read_text() for f in ("mf.yaml", "mg.sh")}
    report, ctx = lint(opts)
    plan = converge(report, ctx, opts, load_rules(), fix_to=fix_to, unsafe=True)
    assert plan.fixes
    fixed = {_key(fx.finding) for fx in plan.fixes if not fx.part}  # parts: the finding stays
    assert main(
        [
            *_argv(tmp_path, "mf.yaml", "mg.sh", None),
            "--fix",
            "--unsafe-fixes",
            "--fix-to",
            fix_to,
            "--format",
            "json",
            "-o",
            str(tmp_path / "r.json"),
        ]
    ) in (0, 1)
    after, _ = lint(opts)
    assert not fixed & {_key(f) for f in after.findings}
    for f, old in before.items():
        new = (tmp_path / f).read_text()
        edits = plan.edits_by_file().get(str(tmp_path / f), [])
        assert new == plan.changed().get(str(tmp_path / f), (old, old))[1]
        if not [e for e in edits if not e.text]:
            assert _comments(old) == _comments(new), f


def test_real_pairs_have_fixes_on_both_sides() -> None:
    """The parametrized test above is not vacuous: every real pair has safe fixes."""
    for p in sorted(REAL.iterdir()):
        if not p.is_dir():
            continue
        report, ctx = lint(
            Options(mindformers=[str(p / "mindformers.yaml")], megatron=str(p / "megatron.sh"))
        )
        for to in ("megatron", "mindformers"):
            plan = plan_fixes(report.findings, ctx, load_rules(), fix_to=to)
            assert plan.fixes, (p.name, to)
            assert all(fx.safety == "safe" for fx in plan.fixes)


def test_diff_writes_nothing_and_exits_1_then_0_after_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy(tmp_path, "glm4_9b_sft_msl", ("mindformers.yaml", "megatron.sh"))
    argv = _argv(tmp_path, "mindformers.yaml", "megatron.sh", None)
    before = (tmp_path / "mindformers.yaml").read_bytes()
    assert main([*argv, "--diff"]) == 1
    out = capsys.readouterr().out
    assert (tmp_path / "mindformers.yaml").read_bytes() == before
    assert "-  betas: [0.9, 0.999]\n+  betas: [0.9, 0.95]\n" in out
    assert "+export HCCL_DETERMINISTIC=true\n" in out
    assert "Found" not in out  # the diff is the whole output
    main([*argv, "--fix"])
    capsys.readouterr()
    assert main([*argv, "--diff"]) == 0
    assert capsys.readouterr().out == ""
    assert not [p for p in os.listdir(tmp_path) if "cfglint" in p]  # no temporary left


def test_fix_exit_code_follows_what_remains(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    _copy(tmp_path, "llama_fp32_knobs", ("llama_fp32_knobs.yaml", "llama_fp32_knobs.sh"))
    # WGT005 (output projections' init scaling) has no setting on either side to fix it, nor
    # STR009 moving MindFormers: the legacy Llama has no dropout setting to write
    argv = [
        *_argv(tmp_path, "llama_fp32_knobs.yaml", "llama_fp32_knobs.sh", None),
        "--ignore",
        "WGT005,STR009",
    ]
    assert main([*argv, "--fail-on", "error"]) == 1
    assert main([*argv, "--fix", "--fail-on", "error"]) == 1  # the optimizer type is unsafe
    assert "more fixable with --unsafe-fixes" in capsys.readouterr().err
    assert main([*argv, "--fix", "--unsafe-fixes", "--fail-on", "error"]) == 0
    text = (tmp_path / "llama_fp32_knobs.yaml").read_text()
    assert "  type: AdamW\n" in text and 'softmax_compute_type: "float32"' in text


def test_fix_to_mindformers_edits_the_launch_script_at_the_variable(tmp_path: Path) -> None:
    _copy(tmp_path, "glm4_9b_sft_msl", ("mindformers.yaml", "megatron.sh"))
    argv = _argv(tmp_path, "mindformers.yaml", "megatron.sh", None)
    main([*argv, "--fix", "--unsafe-fixes", "--fix-to", "mindformers"])
    sh = (tmp_path / "megatron.sh").read_text()
    assert "\nTP=1\nPP=4\n" in sh  # edited where TP and PP are assigned, not at ${TP}
    assert "    --tensor-model-parallel-size ${TP} \\\n" in sh
    # beta2 follows MindFormers' 0.999, then the recommendation it superseded (OPT007:
    # 0.95) is fixed on both sides in the next round: one --fix reaches the fixed point
    assert "    --adam-beta2 0.95 \\\n" in sh
    assert "betas: [0.9, 0.95]" in (tmp_path / "mindformers.yaml").read_text()
    assert "    --seed 42 \\\n" in sh  # a default made explicit, among the other flags


def test_base_config_value_is_edited_in_the_base_file_only_with_unsafe_fixes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A base file may be inherited by other configs: a plain --fix names it and them and
    writes nothing; --unsafe-fixes edits the value where it is written."""
    base = (
        "# shared optimizer settings\n"
        "optimizer:   # used by every run\n"
        "  type: AdamW\n"
        "  betas: [0.9, 0.999]  # beta2 too high?\n"
        "  eps: 1.e-8\n"
        "  weight_decay: &wd 0.1   # anchored\n"
    )
    child = (
        "base_config: ['./base.yaml']\nseed: 1234  # same as Megatron\n"
        "model:\n  model_config:\n    type: LlamaConfig\n    num_layers: 2\n"
    )
    (tmp_path / "base.yaml").write_text(base)
    (tmp_path / "run.yaml").write_text(child)
    (tmp_path / "run.sh").write_text(
        "#!/bin/bash\nARGS=(\n    --adam-beta2 0.95\n    --weight-decay 0.1\n"
        '    --num-layers 2\n)\ntorchrun pretrain_gpt.py "${ARGS[@]}"\n'
    )
    (tmp_path / "other.yaml").write_text("base_config: ['./base.yaml']\n")
    argv = [str(tmp_path / "run.yaml"), "--megatron", str(tmp_path / "run.sh")]
    assert main([*argv, "--fix", "--select", "OPT006", "-v"]) == 1
    err = capsys.readouterr().err
    assert "fixed 0 finding(s)" in err and "1 more fixable with --unsafe-fixes" in err
    assert "base.yaml, which run.yaml inherits through base_config; so do other.yaml" in err
    assert (tmp_path / "base.yaml").read_text() == base
    rc = main([*argv, "--fix", "--unsafe-fixes", "--select", "OPT006"])
    assert rc == 0
    assert (tmp_path / "run.yaml").read_text() == child
    assert (tmp_path / "base.yaml").read_text() == base.replace("0.999]", "0.95]")


def test_a_file_changed_after_planning_is_not_written(tmp_path: Path) -> None:
    _copy(tmp_path, "glm4_9b_sft_msl", ("mindformers.yaml", "megatron.sh"))
    report, ctx = lint(
        Options(
            mindformers=[str(tmp_path / "mindformers.yaml")], megatron=str(tmp_path / "megatron.sh")
        )
    )
    plan = plan_fixes(report.findings, ctx, load_rules())
    edited = (tmp_path / "mindformers.yaml").read_text() + "# edited meanwhile\n"
    (tmp_path / "mindformers.yaml").write_text(edited)
    sh = (tmp_path / "megatron.sh").read_bytes()
    with pytest.raises(InputError, match="changed since it was read"):
        write_plan(plan)
    assert (tmp_path / "mindformers.yaml").read_text() == edited
    assert (tmp_path / "megatron.sh").read_bytes() == sh  # nothing written at all


def test_fix_keeps_the_file_mode(tmp_path: Path) -> None:
    _copy(tmp_path, "glm4_9b_sft_msl", ("mindformers.yaml", "megatron.sh"))
    os.chmod(tmp_path / "megatron.sh", 0o755)
    main([*_argv(tmp_path, "mindformers.yaml", "megatron.sh", None), "--fix"])
    assert "HCCL_DETERMINISTIC" in (tmp_path / "megatron.sh").read_text()
    assert os.stat(tmp_path / "megatron.sh").st_mode & 0o777 == 0o755


def test_fix_refuses_standard_input(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["-", "--fix"]) == 2
    assert "standard input" in capsys.readouterr().err


# -- the writers on their own ---------------------------------------------------------------
def test_yaml_values_are_written_as_pyyaml_reads_them() -> None:
    assert yaml_scalar(1e-8) == "1.0e-08"  # YAML 1.1: a dot and a signed exponent
    assert yaml_scalar(0.95) == "0.95"
    assert yaml_scalar(True) == "True" and yaml_scalar(False, like="true") == "false"
    assert yaml_scalar("float32", like='"float16"') == '"float32"'
    assert yaml_scalar("yes") == '"yes"'  # a plain yes is a boolean in YAML 1.1


def test_yaml_key_added_under_its_mapping_with_the_files_indentation() -> None:
    text = "model:\n    model_config:\n        hidden_size: 8   # small\n        seq_length: 16\n"
    e = set_or_add(text, "f.yaml", "model.model_config.rope_theta", 500000.0)
    assert e is not None
    assert apply_edits(text, [e]) == text + "        rope_theta: 500000.0\n"
    e = set_or_add(text, "f.yaml", "optimizer.eps", 1e-8)
    assert apply_edits(text, [e]) == text + "optimizer:\n    eps: 1.0e-08\n"  # type: ignore[list-item]


SCRIPT = (
    "#!/bin/bash\n"
    "# launch\n"
    "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
    'LR="1e-5"\n'
    "torchrun --nproc_per_node 8 pretrain_gpt.py \\\n"
    "    --lr $LR \\\n"
    "    --adam-beta2 '0.95' \\\n"
    "    --sequence-parallel \\\n"
    "    --bf16\n"
)


def _loc(line: int, col: int) -> Loc:
    return Loc(path="s.sh", line=line, column=col)


def test_shell_value_edited_inside_its_quotes_and_at_its_variable() -> None:
    e = set_value_at(SCRIPT, "s.sh", _loc(7, 18), (), 0.999, "--adam-beta2", "0.95")
    assert apply_edits(SCRIPT, [e]).count("--adam-beta2 '0.999' \\\n") == 1  # type: ignore[list-item]
    e = set_value_at(SCRIPT, "s.sh", _loc(6, 10), (_loc(4, 1),), 2e-5, "--lr", "1e-5")
    assert 'LR="2e-05"\n' in apply_edits(SCRIPT, [e])  # type: ignore[list-item]


def test_shell_flags_added_and_removed_in_the_commands_style() -> None:
    e = remove_flag_at(SCRIPT, "s.sh", _loc(8, 5), "--sequence-parallel")
    assert apply_edits(SCRIPT, [e]) == SCRIPT.replace("    --sequence-parallel \\\n", "")  # type: ignore[list-item]
    e = remove_flag_at(SCRIPT, "s.sh", _loc(9, 5), "--bf16")  # the last line: stop continuing
    assert apply_edits(SCRIPT, [e]).endswith("    --sequence-parallel\n")  # type: ignore[list-item]
    e = add_flag(SCRIPT, "s.sh", [9, 8], "--seed", 42)
    assert "    --sequence-parallel \\\n    --seed 42 \\\n    --bf16\n" in apply_edits(SCRIPT, [e])  # type: ignore[list-item]
    e = add_export(SCRIPT, "s.sh", "HCCL_DETERMINISTIC", "true", 5)
    assert "MAX_CONNECTIONS=1\nexport HCCL_DETERMINISTIC=true\nLR=" in apply_edits(SCRIPT, [e])  # type: ignore[list-item]


def test_fix_action_is_validated_at_load() -> None:
    from pydantic import ValidationError

    from cfglint.check.schema import RuleFile

    rule = {
        "id": "OPT901",
        "row": "optimizer.beta2",
        "severity": "error",
        "title": "t",
        "message": "m",
        "rationale": "r",
        "fix": "f",
        "kind": "compare",
        "field": "optimizer.beta2",
    }
    ok = {"safety": "safe", "megatron": {"keys": ["--adam-beta2"]}}
    RuleFile.model_validate(
        {"section": "optimizer", "title": "O", "rules": [{**rule, "fix_action": ok}]}
    )
    for bad, why in [
        ({"safety": "safe", "megatron": {"keys": ["adam-beta2"]}}, "flags"),
        ({"safety": "maybe", "megatron": {"keys": ["--adam-beta2"]}}, "safety"),
        ({"safety": "safe"}, "needs mindformers"),
        ({"safety": "safe", "export": "1"}, "env rules"),
    ]:
        with pytest.raises(ValidationError, match=why):
            RuleFile.model_validate(
                {"section": "optimizer", "title": "O", "rules": [{**rule, "fix_action": bad}]}
            )


HAVE_PROBE = all(importlib.util.find_spec(m) is not None for m in ("torch", "mindspore"))


@pytest.mark.skipif(not HAVE_PROBE, reason="torch and mindspore are not installed (probe extra)")
def test_probe_residual_on_the_fixed_real_pair_is_at_the_floor(tmp_path: Path) -> None:
    """llama2-7B pretraining (MindSpeed-LLM against MindFormers): after --fix, the probe
    confirms none of the fixed findings and what remains sits on the noise floor."""
    import json

    _copy(tmp_path, "llama2_7b_pretrain_msl", ("mindformers.yaml", "megatron.sh"))
    opts = _opts(tmp_path, "mindformers.yaml", "megatron.sh", None, "default")
    report, ctx = lint(opts)
    plan = plan_fixes(report.findings, ctx, load_rules(), unsafe=True)
    fixed = {fx.rule for fx in plan.fixes}
    assert {"OPT001", "OPT008", "PAR003"} <= fixed
    argv = _argv(tmp_path, "mindformers.yaml", "megatron.sh", None)
    main([*argv, "--fix", "--unsafe-fixes"])
    out = tmp_path / "probe.json"
    main(["probe", *argv, "--steps", "3", "--format", "json", "-o", str(out)])
    probe = json.loads(out.read_text())["probe"]
    confirmed = {c["rule"] for c in probe["confirmations"] if c["verdict"] == "confirmed"}
    assert not confirmed & fixed
    assert probe["residual"]["floor_multiple"] < 10


def test_shell_defaults_of_unset_variables_and_flag_equals_value() -> None:
    """``${WD:-0.01}``: the script runs with the default (cfglint reads it so), which is
    what gets edited; ``--flag=value`` keeps its form; a switch among other words on one
    line loses itself and one blank."""
    text = (
        "LR=${LR:-1e-5}\n"
        'ARGS="--num-layers 2 --sequence-parallel --adam-beta2=0.999"\n'
        "torchrun pretrain_gpt.py $ARGS --lr $LR --weight-decay ${WD:-0.01}\n"
    )
    e = set_value_at(text, "s.sh", _loc(3, 37), (_loc(1, 1),), 2e-5, "--lr", "1e-5")
    assert apply_edits(text, [e]).startswith("LR=${LR:-2e-05}\n")  # type: ignore[list-item]
    e = set_value_at(text, "s.sh", _loc(3, 56), (), 0.1, "--weight-decay", "0.01")
    assert apply_edits(text, [e]).endswith("--weight-decay ${WD:-0.1}\n")  # type: ignore[list-item]
    e = set_value_at(text, "s.sh", _loc(2, 42), (), 0.95, "--adam-beta2", "0.999")
    assert '--adam-beta2=0.95"' in apply_edits(text, [e])  # type: ignore[list-item]
    e = remove_flag_at(text, "s.sh", _loc(2, 22), "--sequence-parallel")
    assert 'ARGS="--num-layers 2 --adam-beta2=0.999"' in apply_edits(text, [e])  # type: ignore[list-item]
    assert set_value_at(text, "s.sh", _loc(3, 37), (), 1, "--lr", "1e-5") is None  # no LR=
    # a position that does not hold the value read there is refused, never guessed
    assert set_value_at(text, "s.sh", _loc(3, 38), (), 1, "--lr", "1e-5") is None


def test_environment_fixed_in_the_mindformers_msrun_launch(tmp_path: Path) -> None:
    files = ("llama2_7b_align.yaml", "pretrain_llama2_align.sh", "msrun_align.sh")
    _copy(tmp_path, "llama2_dense", files)
    launch = tmp_path / "msrun_align.sh"
    text = launch.read_text()
    broken = text.replace("HCCL_DETERMINISTIC=true", "HCCL_DETERMINISTIC=false").replace(
        "export ASCEND_LAUNCH_BLOCKING=1\n", ""
    )
    launch.write_text(broken)
    argv = _argv(tmp_path, *files)
    assert main([*argv, "--fix"]) == 0
    assert launch.read_text() == text.replace("export ASCEND_LAUNCH_BLOCKING=1\n", "").replace(
        "HCCL_DETERMINISTIC=true\n", "HCCL_DETERMINISTIC=true\nexport ASCEND_LAUNCH_BLOCKING=1\n"
    )


def test_a_number_pyyaml_reads_as_a_string_is_rewritten_by_any_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """warmup_ratio: 3e-2 is the string '3e-2' to MindFormers, which the learning-rate
    check (OPT010, a builtin with no fix_action) reports; writing it as a number is safe
    whichever side moves."""
    _copy(tmp_path, "llama2_7b_pretrain_msl", ("mindformers.yaml", "megatron.sh"))
    mf = tmp_path / "mindformers.yaml"
    mf.write_text(mf.read_text().replace("warmup_ratio: 0.03", "warmup_ratio: 3e-2"))
    argv = _argv(tmp_path, "mindformers.yaml", "megatron.sh", None)
    assert main([*argv, "--diff", "--select", "OPT010", "--fix-to", "mindformers"]) == 1
    assert "-  warmup_ratio: 3e-2\n+  warmup_ratio: 0.03\n" in capsys.readouterr().out


def test_explain_says_whether_a_rule_is_fixed(capsys: pytest.CaptureFixture[str]) -> None:
    main(["explain", "OPT006", "--no-color"])
    assert "`--fix` writes it (a safe fix" in capsys.readouterr().out
    main(["explain", "PAR002", "--no-color"])
    assert "--unsafe-fixes` writes it" in capsys.readouterr().out
    main(["explain", "OPT014", "--no-color"])
    assert "--fix" not in capsys.readouterr().out


def test_crlf_scripts_keep_their_line_endings() -> None:
    crlf = SCRIPT.replace("\n", "\r\n")
    e = add_flag(crlf, "s.sh", [9], "--seed", 42)
    out = apply_edits(crlf, [e])  # type: ignore[list-item]
    assert "    --sequence-parallel \\\r\n    --seed 42 \\\r\n    --bf16\r\n" in out
    e = add_export(crlf, "s.sh", "HCCL_DETERMINISTIC", "true", 5)
    assert "export HCCL_DETERMINISTIC=true\r\nLR=" in apply_edits(crlf, [e])  # type: ignore[list-item]
