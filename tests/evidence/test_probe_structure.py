"""The probe on structural differences, rule ownership of knobs, its input checks and its
device layer (issue 21).

Each side builds its own parameter set: a bias, an output layer, an up projection, q/k
norms or norm biases that only one side has are that side's alone. Before, both sides
started from (and trained) Megatron's set: a difference in biases measured exactly 0, and a
weight only the MindFormers side has crashed the run (KeyError).
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

from cfglint.check.pipeline import Options, lint
from cfglint.cli.app import main
from cfglint.evidence.probe.devices import (
    DeviceMissing,
    half_matmul,
    mindspore_device,
    torch_device,
)
from cfglint.evidence.probe.spec import Spec, pair_specs
from cfglint.evidence.probe.weights import canonical_shapes, conform, init_weights
from conftest import FIXTURES

HAVE_TORCH = importlib.util.find_spec("torch") is not None
need_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (probe extra)")
PAIR = FIXTURES / "probe"
TORCH_ONLY = {"torch": True, "mindspore": False}
STRUCT_ROWS = {
    "structure.linear_bias",
    "structure.tied_embeddings",
    "structure.qk_norm",
    "structure.activation",
    "structure.normalization",
}


def _lint(mf: Path, mg: Path):
    report, ctx = lint(Options(mindformers=[str(mf)], megatron=str(mg)))
    assert not report.errors, report.errors
    return report, ctx


def _megatron(tmp_path: Path, drop: tuple[str, ...], add: str) -> Path:
    text = (PAIR / "llama_fp32.sh").read_text(encoding="utf-8")
    for flag in drop:
        text = text.replace(f"    {flag}\n", "")
    text = text.replace("    --init-method-std 0.02\n", "    --init-method-std 0.02\n" + add)
    (tmp_path / "mg.sh").write_text(text, encoding="utf-8")
    return tmp_path / "mg.sh"


def _legacy_mf(tmp_path: Path) -> Path:
    """Legacy Llama with QKV biases and tied embeddings (Megatron has neither)."""
    text = (PAIR / "llama_fp32.yaml").read_text(encoding="utf-8")
    old = "    init_method_std: 0.02\n"
    text = text.replace(old, old + "    qkv_has_bias: True\n    tie_word_embeddings: True\n")
    (tmp_path / "mf.yaml").write_text(text, encoding="utf-8")
    return tmp_path / "mf.yaml"


def _mcore_mf(tmp_path: Path) -> Path:
    """MindFormers' Megatron-style Qwen3, dense, float32: q/k norms (Qwen3 always builds
    them), plain GeLU without the gated unit, LayerNorm; no biases, untied."""
    src = FIXTURES / "pairs" / "qwen3_moe" / "qwen3_moe_align.yaml"
    lines = src.read_text(encoding="utf-8").split("\n")
    moe = re.compile(r"num_experts|moe_|router_dense_type|norm_topk_prob")
    text = "\n".join(x for x in lines if not moe.search(x))
    text = text.replace('"qwen3_moe"', '"qwen3"').replace("Qwen3MoeForCausalLM", "Qwen3ForCausalLM")
    text = text.replace('compute_dtype: "bfloat16"', 'compute_dtype: "float32"')
    text = text.replace(
        "hidden_act: 'silu'",
        "hidden_act: 'gelu'\n    gated_linear_unit: False\n    normalization: LayerNorm",
    )
    (tmp_path / "mf.yaml").write_text(text, encoding="utf-8")
    return tmp_path / "mf.yaml"


# -- numpy only ---------------------------------------------------------------------------
def test_each_side_gets_its_own_parameter_set() -> None:
    mg = Spec()
    mf = Spec(qkv_bias=True, linear_bias=True, tied=True, qk_norm=True, norm="LayerNorm")
    start = init_weights(mg)
    own = conform(start, mf, init_weights(mf))
    assert set(own) == set(canonical_shapes(mf))
    assert "lm_head" not in own and "layers.0.attention.wq.bias" in own
    # shared weights keep the shared start; the spec's own ones come from its draw
    np.testing.assert_array_equal(
        own["layers.1.feed_forward.w3"], start["layers.1.feed_forward.w3"]
    )
    assert not np.any(own["layers.0.attention.wq.bias"])  # biases start at zero
    np.testing.assert_array_equal(own["layers.0.attention.q_norm"], 1.0)
    gelu = conform(start, Spec(activation="gelu"))
    assert "layers.0.feed_forward.w3" not in gelu


def test_activation_spellings_of_both_frameworks() -> None:
    """Megatron's --squared-relu normalizes to 'squared_relu', --quick-geglu to
    'quick_geglu', MindFormers' gated GeLU to 'geglu': each is the probe's activation."""
    from cfglint.evidence.probe.spec import ACTIVATION_SPELLINGS, GATED

    assert ACTIVATION_SPELLINGS["squared_relu"] == "squared-relu"
    assert ACTIVATION_SPELLINGS["quick_geglu"] == "quick-geglu"
    assert {"swiglu", "geglu", "quick-geglu"} == set(GATED)


def test_squared_relu_flag_reaches_the_spec(tmp_path: Path) -> None:
    # before: "activation 'squared_relu' is not modelled (... squared-relu)"
    mg = _megatron(tmp_path, ("--swiglu",), "    --squared-relu\n")
    _, ctx = _lint(PAIR / "llama_fp32.yaml", mg)
    pair = pair_specs(ctx.mf, ctx.mg)
    assert pair.megatron.activation == "squared-relu"
    assert not [g for g in pair.gaps if g.field == "activation"]


def test_rule_knobs_come_from_the_rules() -> None:
    """The probe's knowledge of each rule is the rule's probe block: MOE017 (the balancing
    type) owns moe_aux alone, MOE020 the loss weight; every knob is a spec field."""
    from cfglint.check.rulebook import load_rules

    rules = {r.id: r for r in load_rules()}
    assert rules["MOE017"].probe.knobs == ("moe_aux",)
    assert "moe_aux_coeff" in rules["MOE020"].probe.knobs
    assert rules["STR028"].probe.why and not rules["STR028"].probe.knobs
    for r in rules.values():
        if r.probe is not None:
            assert set(r.probe.knobs) <= set(Spec.model_fields), r.id


def test_a_probe_block_naming_an_unknown_knob_is_refused(tmp_path: Path) -> None:
    from cfglint.check.rulebook import RuleFileError, _validate

    text = (Path(__file__).parents[2] / "rules" / "optimizer.yaml").read_text(encoding="utf-8")
    bad = text.replace("probe: {knobs: [eps]}", "probe: {knobs: [epsilon]}", 1)
    assert bad != text
    (tmp_path / "optimizer.yaml").write_text(bad, encoding="utf-8")
    with pytest.raises(RuleFileError, match="epsilon"):
        _validate([tmp_path / "optimizer.yaml"])


def test_rule_validation_reads_the_spec_without_a_framework() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from pathlib import Path; from cfglint.check.rulebook import _validate; "
        "rules = _validate(sorted(Path('rules').glob('*.yaml'))); "
        "assert any(r.probe for r in rules); "
        "print(sorted(m for m in ('torch', 'mindspore', 'numpy') if m in sys.modules))"
    )
    root = Path(__file__).parents[2]
    env = {"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-500:]
    assert out.stdout.strip() == "[]"


def test_aux_coefficient_alone_does_not_confirm_the_balancing_type(tmp_path: Path) -> None:
    """Only the aux-loss weights differ: MOE017 (the type) has no knob of its own that
    differs, so the probe says so instead of confirming it with the coefficient's."""
    from cfglint.evidence.probe.plan import plan
    from cfglint.model.findings import Finding, RuleProbe

    mf = Spec(moe_experts=4, moe_ffn=24, moe_aux="aux_loss", moe_aux_coeff=0.001)
    mg = mf.model_copy(update={"moe_aux_coeff": 0.01})
    from cfglint.evidence.probe.spec import SpecPair

    f017 = Finding(
        rule="MOE017",
        row="moe.load_balancing",
        severity="warning",
        message="m",
        values={"mindformers": "gbs_aux_loss", "megatron": "aux_loss"},
        probe=RuleProbe(knobs=("moe_aux",)),
    )
    f020 = f017.model_copy(
        update={
            "rule": "MOE020",
            "row": "moe.aux_loss_factor",
            "probe": RuleProbe(knobs=("moe_aux", "moe_aux_coeff")),
        }
    )
    knobs, unprobed = plan(SpecPair(mindformers=mf, megatron=mg), [f017, f020])
    assert [(c.rule, fields) for c, fields in knobs] == [("MOE020", ("moe_aux_coeff",))]
    assert [c.rule for c in unprobed] == ["MOE017"]
    assert unprobed[0].reason == "the two specs agree on this knob at the probe's size"


def test_device_selection() -> None:
    assert torch_device("auto", cuda=True, npu=True) == "cuda"
    assert torch_device("auto", cuda=False, npu=True) == "npu"
    assert torch_device("auto", cuda=False, npu=False) == "cpu"
    assert torch_device("cpu", cuda=True, npu=False) == "cpu"
    with pytest.raises(DeviceMissing, match="CUDA"):
        torch_device("cuda", cuda=False, npu=True)
    with pytest.raises(DeviceMissing, match="NPU"):
        torch_device("npu", cuda=True, npu=False)
    assert mindspore_device("npu", ascend=True) == "Ascend"
    assert mindspore_device("auto", ascend=True) == "Ascend"
    assert mindspore_device("cuda", ascend=False) == "CPU"
    with pytest.raises(DeviceMissing):
        mindspore_device("npu", ascend=False)
    assert not half_matmul("mindspore", "CPU") and half_matmul("mindspore", "Ascend")
    assert half_matmul("torch", "cpu")


def test_steps_are_bounded(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        [
            "probe",
            str(PAIR / "llama_fp32.yaml"),
            "--megatron",
            str(PAIR / "llama_fp32.sh"),
            "--steps",
            "100000",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "between 3 and 50" in err[0]


@need_torch
def test_absent_cuda_is_refused_before_any_framework_process(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch

    from cfglint.evidence.probe import runner

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")

    def no_process(*_a: object, **_k: object) -> None:
        raise AssertionError("a framework process was started")

    monkeypatch.setattr(runner, "Worker", no_process)
    rc = main(
        [
            "probe",
            str(PAIR / "llama_fp32.yaml"),
            "--megatron",
            str(PAIR / "llama_fp32.sh"),
            "--device",
            "cuda",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "CUDA" in err[0]


@need_torch
def test_a_side_with_no_model_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (PAIR / "llama_fp32.yaml").read_text(encoding="utf-8")
    cut = text[: text.index("\nmodel:")] + text[text.index("\nrunner_wrapper:") :]
    (tmp_path / "mf.yaml").write_text(cut, encoding="utf-8")
    rc = main(
        [
            "probe",
            str(tmp_path / "mf.yaml"),
            "--megatron",
            str(PAIR / "llama_fp32.sh"),
            "--steps",
            "3",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert "mf.yaml" in err[0] and "model" in err[0]


# -- real steps ---------------------------------------------------------------------------
def _confirmed_rows(res) -> dict[str, str]:
    return {c.row: c.verdict for c in res.confirmations if c.row in STRUCT_ROWS and c.knobs}


@need_torch
def test_structural_knobs_confirmed_mindformers_side_has_more(tmp_path: Path) -> None:
    """MindFormers: QKV biases, tied embeddings, SwiGLU, RMSNorm; Megatron: no biases, an
    output layer, q/k norms, GeLU, LayerNorm."""
    from cfglint.evidence.probe.runner import probe

    mg = _megatron(
        tmp_path,
        ("--swiglu", "--normalization RMSNorm"),
        "    --qk-layernorm\n    --normalization LayerNorm\n",
    )
    report, ctx = _lint(_legacy_mf(tmp_path), mg)
    res = probe(ctx.mf, ctx.mg, report.findings, steps=4, frameworks=TORCH_ONLY)
    knobs = {c.row: c.knobs for c in res.confirmations if c.knobs}
    assert knobs["structure.linear_bias"] == {"qkv_bias": [True, False]}
    assert knobs["structure.tied_embeddings"] == {"tied": [True, False]}
    assert knobs["structure.activation"] == {"activation": ["swiglu", "gelu"]}
    assert _confirmed_rows(res) == dict.fromkeys(STRUCT_ROWS, "confirmed")
    assert res.residual["floor_multiple"] < 10, res.residual


@need_torch
def test_structural_knobs_confirmed_megatron_side_has_more(tmp_path: Path) -> None:
    """The other way round: MindFormers (mcore Qwen3): q/k norms, plain GeLU, LayerNorm,
    untied; Megatron: QKV biases, tied embeddings, SwiGLU, RMSNorm."""
    from cfglint.evidence.probe.runner import probe

    mg = _megatron(tmp_path, ("--untie-embeddings-and-output-weights",), "    --add-qkv-bias\n")
    report, ctx = _lint(_mcore_mf(tmp_path), mg)
    res = probe(ctx.mf, ctx.mg, report.findings, steps=4, frameworks=TORCH_ONLY)
    knobs = {c.row: c.knobs for c in res.confirmations if c.knobs}
    assert knobs["structure.linear_bias"] == {"qkv_bias": [False, True]}
    assert knobs["structure.activation"] == {"activation": ["gelu", "swiglu"]}
    assert knobs["structure.normalization"] == {"norm": ["LayerNorm", "RMSNorm"]}
    assert _confirmed_rows(res) == dict.fromkeys(STRUCT_ROWS, "confirmed")


@need_torch
def test_residual_does_not_list_a_named_knob_as_unnamed(tmp_path: Path) -> None:
    """A knob a finding named but the probe did not confirm stays different in the
    residual run; it is not a cause 'the lint did not name'."""
    from cfglint.evidence.probe.runner import probe

    mg = tmp_path / "mg.sh"
    mg.write_text(
        (PAIR / "llama_fp32.sh").read_text().replace("--adam-eps 1e-8", "--adam-eps 1.00001e-8")
    )
    report, ctx = _lint(PAIR / "llama_fp32.yaml", mg)
    assert "optimizer.eps" in {f.row for f in report.findings}
    res = probe(ctx.mf, ctx.mg, report.findings, steps=3, frameworks=TORCH_ONLY)
    c = next(c for c in res.confirmations if c.row == "optimizer.eps")
    assert c.verdict == "no measurable effect", c
    assert "eps" not in res.residual["unnamed"]
    assert res.residual["named_unconfirmed"] == ["eps"]
    # every measurement says where it ran
    m = {x["measure"]: x["runs"] for x in res.measurements}
    assert {r["framework"] for r in m["floor"]} == {"torch"}
    assert all({"framework", "device", "dtype"} <= set(r) for rs in m.values() for r in rs)
    assert c.ran and c.ran[0]["dtype"] == "float32"
    # the result rides on the report, and every format renders it
    from cfglint.report import RenderOptions, render

    report.probe = res.model_dump(mode="json")
    out = {
        fmt: render(fmt, report, RenderOptions()) for fmt in ("text", "json", "sarif", "concise")
    }
    assert "Runtime probe" in out["text"] and "OPT002" in out["text"].split("Runtime probe")[1]
    assert json.loads(out["json"])["probe"]["residual"]["named_unconfirmed"] == ["eps"]
    sarif = json.loads(out["sarif"])["runs"][0]
    assert sarif["properties"]["probe"]["steps"] == 3
    opt002 = next(r for r in sarif["results"] if r["ruleId"] == "OPT002")
    assert opt002["properties"]["probe"]["verdict"] == "no measurable effect"
    assert "probe: OPT002 no measurable effect" in out["concise"]


@need_torch
def test_real_learning_rates_are_judged_where_they_can_show(tmp_path: Path) -> None:
    """A 25% peak-lr difference at 1e-6 under bf16: both schedules are scaled to the probe's
    learning rate and run in float32, where the difference shows."""
    from cfglint.evidence.probe.runner import probe

    # GLM-4 SFT: MindFormers 1e-6 constant, MindSpeed-LLM 1.25e-6 with a warmup from 0
    src = FIXTURES / "realpairs" / "glm4_9b_sft_msl"
    report, ctx = _lint(src / "mindformers.yaml", src / "megatron.sh")
    assert "optimizer.lr" in {f.row for f in report.findings}
    res = probe(ctx.mf, ctx.mg, report.findings, steps=4, frameworks=TORCH_ONLY)
    c = next(c for c in res.confirmations if c.row == "optimizer.lr")
    assert c.verdict == "confirmed", c
    assert "scaled" in c.reason and "float32" in c.reason
    assert c.ran[0]["dtype"] == "float32"


@pytest.mark.skipif(
    not (HAVE_TORCH and importlib.util.find_spec("mindspore")),
    reason="torch and mindspore are not installed (probe extra)",
)
def test_bf16_pair_gets_a_float32_cross_framework_part(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    ex = FIXTURES / "examples" / "llama2_7b"
    rc = main(
        [
            "probe",
            str(ex / "pretrain_llama2_7b.yaml"),
            "--megatron",
            str(ex / "pretrain_llama2_7b.sh"),
            "--steps",
            "3",
            "--format",
            "json",
            "-o",
            str(out),
        ]
    )
    assert rc in (0, 1)
    p = json.loads(out.read_text())["probe"]
    assert not p["cross_framework"]
    x = p["cross_float32"]
    assert x and x["floor"]["first_loss_abs"] < 1e-4
    assert x["verdict"].startswith("MindSpore and torch agree"), x
    m = {e["measure"]: e["runs"] for e in p["measurements"]}
    assert {r["framework"] for r in m["cross_float32 mindformers spec"]} == {"mindspore", "torch"}
    assert {r["dtype"] for r in m["cross_float32 floor"]} == {"float32"}
    assert any(r["dtype"].startswith("bfloat16") for r in m["gap"])
