"""Issue 30: model features that the sweep of both frameworks' shipped recipes showed read
wrongly. Each test pairs a real MindFormers config of ../shared/corpus (read in place) with a
fixture restating the other side's real file (fixtures/pairsem/, each naming its source)."""

from __future__ import annotations

from pathlib import Path

from cfglint.check.pipeline import Options, lint
from cfglint.model.findings import Report
from conftest import FIXTURES, need_shared

PAIRSEM = FIXTURES / "pairsem"
DS2_MF = ("research__deepseek2__train_deepseek2_236B.yaml",)  # mindformers research/deepseek2
DS2_MSL = PAIRSEM / "deepseek2_236b_glg.sh"  # MindSpeed-LLM v2.2.0 deepseek2 236b pretrain


def _lint(mf: Path | str, mg: Path | str) -> Report:
    report, _ = lint(Options(mindformers=[str(mf)], megatron=str(mg)))
    return report


def _by_rule(report: Report) -> dict[str, object]:
    return {f.rule: f for f in report.findings}


def _edited(src: Path, tmp: Path, old: str, new: str) -> Path:
    dst = tmp / src.name
    text = src.read_text()
    assert old in text, f"{old!r} not in {src}"
    dst.write_text(text.replace(old, new, 1))
    return dst


def test_group_limited_greedy_keeps_full_softmax_weights_like_mindformers() -> None:
    """MindSpeed-LLM's group_limited_greedy router takes the softmax over all experts and,
    without --norm-topk-prob, keeps those probabilities times the scaling factor (router.py:
    39-61 @ c77308a1); MindFormers' TopkRouterV2 with norm_topk_prob False does the same. No
    normalization or scaling difference; the expert-level losses agree (per sequence at one
    sequence per micro-batch), and so do the device-level losses."""
    r = _by_rule(_lint(need_shared("corpus", "mindformers", *DS2_MF), DS2_MSL))
    assert not {"MOE014", "MOE015", "MOE017", "MOE020", "MOE024"} & set(r)


def test_group_limited_greedy_normalizes_only_with_the_flag_and_then_does_not_scale(
    tmp_path: Path,
) -> None:
    """With --norm-topk-prob the router divides by the sum and skips the scaling factor
    (the else branch of router.py:57-61), while MindFormers multiplies by
    routed_scaling_factor whatever it normalizes (moe.py:1573-1576 @ fd4deebc)."""
    mg = _edited(DS2_MSL, tmp_path, "    --seq-aux \\", "    --seq-aux \\\n    --norm-topk-prob \\")
    r = _by_rule(_lint(need_shared("corpus", "mindformers", *DS2_MF), mg))
    assert r["MOE014"].values == {"mindformers": False, "megatron": True}  # type: ignore[attr-defined]
    assert r["MOE015"].values == {"mindformers": 16.0, "megatron": 1.0}  # type: ignore[attr-defined]
    assert "scales only weights it does not normalize" in r["MOE015"].message  # type: ignore[attr-defined]


def test_communication_losses_are_different_functions() -> None:
    """MindFormers' "comm" loss counts the expert choices per expert-parallel rank
    (moe.py:1861-1888); MindSpeed-LLM's counts tokens reaching each group (router.py:
    149-196): at the same weight 0.02 the two penalties differ, and the message says how."""
    r = _by_rule(_lint(need_shared("corpus", "mindformers", *DS2_MF), DS2_MSL))
    f = r["MOE025"]
    assert f.values == {  # type: ignore[attr-defined]
        "mindformers": "0.02 x expert choices on each of 4 expert-parallel ranks",
        "megatron": "0.02 x tokens reaching each of 8 expert groups",
    }


def test_device_loss_on_one_side_and_unread_outside_its_router(tmp_path: Path) -> None:
    """Weight 0 leaves MindSpeed-LLM without the device loss; a routing type other than
    group_limited_greedy never reads the flag (only that router computes it)."""
    mf = need_shared("corpus", "mindformers", *DS2_MF)
    off = _edited(
        DS2_MSL,
        tmp_path,
        "--moe-device-level-aux-loss-coeff 0.05",
        "--moe-device-level-aux-loss-coeff 0",
    )
    f = _by_rule(_lint(mf, off))["MOE024"]
    assert f.values == {  # type: ignore[attr-defined]
        "mindformers": "0.05 x group scores x group loads over 8 expert groups",
        "megatron": "none",
    }
    other = tmp_path / "aux"
    other.mkdir()
    plain = _edited(DS2_MSL, other, "type group_limited_greedy", "type aux_loss")
    f = _by_rule(_lint(mf, plain))["MOE024"]
    assert f.values["megatron"] == "none"  # type: ignore[attr-defined]
    assert "only group_limited_greedy" in f.message  # type: ignore[attr-defined]


def test_router_z_loss_on_one_side() -> None:
    """TopkRouterV2 adds the z-loss at z_loss_factor 0.01 on every step (moe.py:1526);
    the MindSpeed-LLM script sets no --moe-z-loss-coeff."""
    r = _by_rule(_lint(need_shared("corpus", "mindformers", *DS2_MF), DS2_MSL))
    assert r["MOE026"].values == {"mindformers": 0.01, "megatron": 0.0}  # type: ignore[attr-defined]


# -- the model class the job instantiates (Baichuan2 research classes on LlamaConfig) -------
MODELS = FIXTURES / "models"
BC2_MF = MODELS / "baichuan2_13b_finetune_mf.yaml"  # mindformers research/baichuan2 @ v1.3.2
BC2_MSL = MODELS / "baichuan2_13b_tune_msl.sh"  # MindSpeed-LLM v2.2.0 baichuan2 13b tune


def test_position_embedding_comes_from_the_arch_class_not_the_config_class() -> None:
    """model_config.type LlamaConfig (RoPE) but model.arch.type Baichuan13BV2ForCausalLM,
    which builds ALiBi (baichuan2_13b.py:326 @ 024279c2), as the MindSpeed-LLM script does
    with --position-embedding-type alibi: no position-embedding finding."""
    from cfglint.normalize.mindformers.build import load_mindformers

    pe = load_mindformers(str(BC2_MF)).structure.position_embedding_type
    assert pe.value == "alibi"
    assert "Baichuan13BV2ForCausalLM" in pe.detail
    assert "STR020" not in _by_rule(_lint(BC2_MF, BC2_MSL))


def test_an_unknown_research_class_on_a_shared_config_is_not_decided(tmp_path: Path) -> None:
    from cfglint.normalize.mindformers.build import load_mindformers

    y = _edited(BC2_MF, tmp_path, "type: Baichuan13BV2ForCausalLM", "type: MyResearchForCausalLM")
    s = load_mindformers(str(y)).structure
    assert not s.position_embedding_type.known
    assert "MyResearchForCausalLM" in s.position_embedding_type.detail
    assert not {"STR020", "STR031"} & set(_by_rule(_lint(y, BC2_MSL)))


def test_row_normalized_head_on_one_side_is_reported() -> None:
    """Baichuan2's NormHead divides each vocabulary row by its norm on every training step
    (baichuan2_13b.py:885-898 @ 024279c2); MindSpeed-LLM's output layer is plain."""
    f = _by_rule(_lint(BC2_MF, BC2_MSL))["STR031"]
    assert f.values == {"mindformers": "row-normalized", "megatron": "plain"}  # type: ignore[attr-defined]
    assert "NormHead" in f.message  # type: ignore[attr-defined]


def test_real_baichuan2_7b_config_reads_rope_and_the_norm_head() -> None:
    from cfglint.normalize.mindformers.build import load_mindformers

    y = need_shared(
        "corpus", "mindformers", "research__baichuan2__finetune_baichuan2_7b_auto_parallel.yaml"
    )
    s = load_mindformers(str(y)).structure
    assert s.position_embedding_type.value == "rope"
    assert s.output_head.value == "row-normalized"
    assert "Baichuan7BV2ForCausalLM" in s.output_head.detail
