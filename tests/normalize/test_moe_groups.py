"""Group-limited MoE routing (moe.group_limit / moe.group_score) read from every dialect.

Expected values come from the frameworks' routers: MindFormers' legacy TopkRouterV2 groups
only for topk_method group_limited_greedy (each group's maximum) or noaux_tc (its top-2 sum)
(mindformers/modules/transformer/moe.py:1151-1174 @ f52743c); the mcore router groups for
moe_router_num_groups > 1 and sums each group's top (topk // group_topk) scores
(training_graph/transformer/moe/router.py:247-249, 331-338 @ 477621fd); Megatron core groups
when --moe-router-group-topk is set, on logits for softmax without pre-softmax
(moe_utils.py group_limited_topk / topk_softmax_with_capacity @ core_v0.19.0);
MindSpeed-LLM adds the deprecated --n-group / --topk-group, its own group_limited_greedy
routing type and a top-2 group score under --topk-softmax-in-fp32 (c77308a1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfglint.model.values import Origin
from cfglint.normalize.megatron.build import normalize_megatron
from cfglint.normalize.megatron.input import load_megatron
from cfglint.normalize.mindformers.build import load_mindformers
from conftest import FIXTURES, need_shared

LEGACY = FIXTURES / "yarn/deepseek3_671b_yarn_sft_msl/mindformers.yaml"
MCORE = FIXTURES / "pairs/qwen3_moe/qwen3_moe_align.yaml"
MCORE_DSV3 = FIXTURES / "yarn/deepseek3_mcore_yarn_pretrain_msl/mindformers.yaml"


def _edited(tmp_path: Path, src: Path, old: str, new: str):  # type: ignore[no-untyped-def]
    text = src.read_text()
    assert text.count(old) == 1, old
    p = tmp_path / src.name
    p.write_text(text.replace(old, new))
    return load_mindformers(str(p)).moe


_LEGACY_TAIL = (
    '  aux_loss_factors: [0.0001]\n  aux_loss_types: ["expert"]\n  use_gating_sigmoid: True\n'
)


def _legacy(tmp_path: Path, method: str, groups: str = "  topk_group: 4\n  n_group: 8\n"):  # type: ignore[no-untyped-def]
    old = "  topk_group: 4\n  n_group: 8\n" + _LEGACY_TAIL + '  topk_method: "greedy"\n'
    new = groups + _LEGACY_TAIL + f'  topk_method: "{method}"\n'
    return _edited(tmp_path, LEGACY, old, new)


def test_legacy_greedy_ignores_n_group(tmp_path: Path) -> None:
    # the fixture writes n_group 8 / topk_group 4 but keeps topk_method greedy
    e = load_mindformers(str(LEGACY)).moe
    assert e.group_limit.value == "no grouping"
    assert "greedy" in e.group_limit.detail
    assert e.group_score.value == "no grouping"


@pytest.mark.parametrize(
    ("method", "score"), [("noaux_tc", "sum of top 2"), ("group_limited_greedy", "max")]
)
def test_legacy_grouped_methods(tmp_path: Path, method: str, score: str) -> None:
    e = _legacy(tmp_path, method)
    assert e.group_limit.value == "4 of 8 groups kept"
    assert e.group_score.value == score
    lines = {v.loc.line for v in e.group_limit.inputs if v.loc}
    assert len(lines) == 2  # n_group and topk_group, where they are written


def test_legacy_gmm_with_shared_experts_does_not_group(tmp_path: Path) -> None:
    # MoEV3 (use_gmm with shared experts) takes a plain top-k whatever topk_method says
    e = _legacy(tmp_path, "noaux_tc", "  topk_group: 4\n  n_group: 8\n  use_gmm: True\n")
    assert e.group_limit.value == "no grouping" and "MoEV3" in e.group_limit.detail


def test_legacy_every_group_kept_is_no_grouping(tmp_path: Path) -> None:
    e = _legacy(tmp_path, "noaux_tc", "  topk_group: 8\n  n_group: 8\n")
    assert e.group_limit.value == "no grouping"
    assert "no-op" in e.group_limit.detail
    assert e.group_score.value == "no grouping"


def test_legacy_grouped_method_without_n_group_is_unknown(tmp_path: Path) -> None:
    e = _legacy(tmp_path, "noaux_tc", "  topk_group: 4\n")
    assert e.group_limit.origin is Origin.UNKNOWN
    assert "moe_config.n_group" in e.group_limit.detail


def test_legacy_more_groups_kept_than_exist_is_unknown(tmp_path: Path) -> None:
    e = _legacy(tmp_path, "noaux_tc", "  topk_group: 9\n  n_group: 8\n")
    assert e.group_limit.origin is Origin.UNKNOWN


def _mcore(tmp_path: Path, extra: str):  # type: ignore[no-untyped-def]
    old = "    moe_aux_loss_coeff: 0.0\n"
    return _edited(tmp_path, MCORE, old, old + extra)


def test_mcore_hf_keys_are_the_group_fields(tmp_path: Path) -> None:
    # n_group / topk_group are renamed onto moe_router_num_groups / moe_router_group_topk
    e = _mcore(tmp_path, "    n_group: 8\n    topk_group: 4\n")
    assert e.group_limit.value == "4 of 8 groups kept"
    assert e.group_score.value == "sum of top 2"  # 8 experts from 4 groups
    e = _mcore(tmp_path, "    moe_router_num_groups: 8\n    moe_router_group_topk: 2\n")
    assert (e.group_limit.value, e.group_score.value) == ("2 of 8 groups kept", "sum of top 4")


def test_mcore_no_op_and_refused_groupings(tmp_path: Path) -> None:
    assert load_mindformers(str(MCORE)).moe.group_limit.value == "no grouping"
    assert _mcore(tmp_path, "    n_group: 1\n    topk_group: 1\n").group_limit.value == (
        "no grouping"
    )
    # topk_group without n_group: TransformerConfig refuses it
    assert not _mcore(tmp_path, "    topk_group: 4\n").group_limit.known
    # n_group without topk_group: the router divides the top-k by None
    assert not _mcore(tmp_path, "    n_group: 8\n").group_limit.known
    # 8 experts per token cannot come evenly from 3 groups: refused
    assert not _mcore(tmp_path, "    n_group: 8\n    topk_group: 3\n").group_limit.known


def test_mcore_deepseek3_class_defaults_group(tmp_path: Path) -> None:
    # DeepseekV3Config defaults to n_group 8 / topk_group 4; with 6 experts per token
    # MindFormers' TransformerConfig refuses 6 % 4 != 0
    # (the fixture itself writes DeepSeek-V2-Lite's n_group 1 / topk_group 1: no grouping)
    assert load_mindformers(str(MCORE_DSV3)).moe.group_limit.value == "no grouping"
    text = MCORE_DSV3.read_text().replace("    n_group: 1\n    topk_group: 1\n", "")
    assert "n_group" not in text
    p = tmp_path / "dsv3.yaml"
    p.write_text(text)
    e = load_mindformers(str(p)).moe
    assert not e.group_limit.known and "divisible" in e.group_limit.detail
    p.write_text(text.replace("num_experts_per_tok: 6", "num_experts_per_tok: 8"))
    e = load_mindformers(str(p)).moe
    assert (e.group_limit.value, e.group_score.value) == ("4 of 8 groups kept", "sum of top 2")
    assert e.group_limit.inputs[0].origin is Origin.DEFAULT


def _mg(tmp_path: Path, flags: str, version: str = "core_v0.19.0"):  # type: ignore[no-untyped-def]
    p = tmp_path / "run.sh"
    p.write_text(
        "#!/bin/bash\npython pretrain_gpt.py --num-layers 2 --hidden-size 1024 "
        "--num-attention-heads 8 --num-experts 64 --moe-router-topk 8 " + flags + "\n"
    )
    return normalize_megatron(load_megatron(str(p), version)).moe


@pytest.mark.parametrize("version", ["core_v0.19.0", "core_v0.12.1"])
def test_megatron_group_score_follows_the_score_function(tmp_path: Path, version: str) -> None:
    g = "--moe-router-num-groups 8 --moe-router-group-topk 4"
    e = _mg(tmp_path, g, version)
    assert e.group_limit.value == "4 of 8 groups kept"
    assert e.group_score.value == "sum of top 2 logits"  # softmax without pre-softmax
    assert _mg(tmp_path, g + " --moe-router-pre-softmax", version).group_score.value == (
        "sum of top 2"
    )
    sig = _mg(tmp_path, g + " --moe-router-score-function sigmoid", version)
    assert sig.group_score.value == "sum of top 2"
    # one score per kept group: the maximum, on logits or probabilities alike
    one = _mg(tmp_path, "--moe-router-num-groups 8 --moe-router-group-topk 8", version)
    assert one.group_limit.value == "no grouping"


def test_megatron_groups_need_the_group_topk(tmp_path: Path) -> None:
    assert _mg(tmp_path, "").group_limit.value == "no grouping"
    e = _mg(tmp_path, "--moe-router-num-groups 8")
    assert e.group_limit.value == "no grouping" and "alone" in e.group_limit.detail
    assert not _mg(tmp_path, "--moe-router-group-topk 4").group_limit.known
    assert not _mg(
        tmp_path, "--moe-router-num-groups 7 --moe-router-group-topk 4"
    ).group_limit.known
    e = _mg(tmp_path, "--moe-router-num-groups 8 --moe-router-group-topk 8")
    assert e.group_limit.value == "no grouping" and "no-op" in e.group_limit.detail


def test_groups_ranked_by_their_maximum_keeping_k_groups_is_no_grouping(tmp_path: Path) -> None:
    # the top-k experts' groups always rank first by their maximum: keeping at least k of
    # them masks none of the chosen experts
    e = _legacy(tmp_path, "group_limited_greedy", "  topk_group: 4\n  n_group: 8\n")
    assert e.group_limit.value == "4 of 8 groups kept"  # top-8: 4 groups can mask
    text = LEGACY.read_text().replace("num_experts_chosen: 8", "num_experts_chosen: 4")
    p = tmp_path / "k4.yaml"
    p.write_text(text.replace('topk_method: "greedy"', 'topk_method: "group_limited_greedy"'))
    e = load_mindformers(str(p)).moe
    assert e.group_limit.value == "no grouping" and "no-op" in e.group_limit.detail
    # Megatron: top-8 from 8 groups keeping 6 scores a group by its top 8 // 6 = 1
    e = _mg(tmp_path, "--moe-router-num-groups 8 --moe-router-group-topk 6")
    assert (e.group_limit.value, e.group_score.value) == ("6 of 8 groups kept", "max")
    e = _mg(tmp_path, "--moe-router-topk 2 --moe-router-num-groups 4 --moe-router-group-topk 2")
    assert e.group_limit.value == "no grouping"  # top 2 // 2 = 1: a maximum, 2 groups kept


def test_megatron_more_groups_kept_than_experts_chosen_is_unknown(tmp_path: Path) -> None:
    # topk // group_topk = 0: every group scores 0, torch.topk keeps an arbitrary set
    e = _mg(tmp_path, "--moe-router-num-groups 16 --moe-router-group-topk 12")
    assert e.group_limit.value == "12 of 16 groups kept"
    assert not e.group_score.known and "arbitrary" in e.group_score.detail


def test_mindspeed_deprecated_flags_and_routing_types(tmp_path: Path) -> None:
    e = _mg(
        tmp_path,
        "--n-group 8 --topk-group 4 --moe-router-load-balancing-type none",
        "mindspeed-llm",
    )
    assert e.group_limit.value == "4 of 8 groups kept"
    assert {v.knob for v in e.group_limit.inputs} == {"--n-group", "--topk-group"}
    # its own group_limited_greedy: one group per expert-parallel rank, each group's maximum
    e = _mg(
        tmp_path,
        "--moe-router-load-balancing-type group_limited_greedy --moe-router-group-topk 3 "
        "--expert-model-parallel-size 8",
        "mindspeed-llm",
    )
    assert (e.group_limit.value, e.group_score.value) == ("3 of 8 groups kept", "max")
    # pai_megatron_aux_loss never passes the groups (DeepSeek2-lite's script sets them)
    e = _mg(
        tmp_path,
        "--moe-router-load-balancing-type pai_megatron_aux_loss --moe-router-num-groups 8 "
        "--moe-router-group-topk 1",
        "mindspeed-llm",
    )
    assert e.group_limit.value == "no grouping" and "not read" in e.group_limit.detail
    # --topk-softmax-in-fp32 installs MindSpeed-LLM's router: top-2 sum whatever the top-k
    g = "--moe-router-load-balancing-type none --moe-router-num-groups 8 --moe-router-group-topk 2"
    assert _mg(tmp_path, g + " --moe-router-pre-softmax", "mindspeed-llm").group_score.value == (
        "sum of top 4"
    )
    e = _mg(tmp_path, g + " --moe-router-pre-softmax --topk-softmax-in-fp32", "mindspeed-llm")
    assert e.group_score.value == "sum of top 2"


def test_corpus_deepseek_yamls() -> None:
    """The released DeepSeek-V3 pretrain YAML comments on group-limited routing but keeps
    the default topk_method greedy; DeepSeek-V2's names group_limited_greedy."""
    v3 = need_shared(
        "corpus", "mindformers", "research__deepseek3__deepseek3_671b__pretrain_deepseek3_671b.yaml"
    )
    assert load_mindformers(str(v3)).moe.group_limit.value == "no grouping"
    v2 = need_shared("corpus", "mindformers", "research__deepseek2__train_deepseek2_236B.yaml")
    e = load_mindformers(str(v2)).moe
    assert (e.group_limit.value, e.group_score.value) == ("3 of 8 groups kept", "max")
