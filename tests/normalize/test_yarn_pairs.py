"""Issue 10, class 3: YaRN compared in full on our own real-pair-style fixtures.

fixtures/yarn/ holds MindFormers / MindSpeed-LLM pairs written by us in the upstream styles;
each truth.yaml gives, derived by hand from the frameworks' sources (fixtures/yarn/README.md),
what each side computes for the YaRN rules and whether the two differ. The tool must raise
every YaRN rule in ``differ`` with the stated values and no YaRN rule in ``agree``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cfglint.check.pipeline import Options, lint
from cfglint.normalize.megatron.build import normalize_megatron
from cfglint.normalize.megatron.input import load_megatron
from cfglint.normalize.mindformers.build import load_mindformers

ROOT = Path(__file__).resolve().parents[2]
YARN = ROOT / "fixtures" / "yarn"
FIELDS = {"STR028": "structure.rope_scaling", "STR030": "structure.yarn_mscale"}


def _pairs() -> list[str]:
    return sorted(p.name for p in YARN.iterdir() if (p / "truth.yaml").is_file())


def _truth(pair: str) -> dict:
    return yaml.safe_load((YARN / pair / "truth.yaml").read_text())


def test_the_set_covers_mla_and_non_mla_legacy_and_mcore() -> None:
    kinds = [_truth(p)["kind"] for p in _pairs()]
    assert {k["attention"] for k in kinds} >= {"mla", "gqa"}
    assert any(_truth(p)["differ"] for p in _pairs())  # a true difference to find
    assert any(not _truth(p)["differ"] for p in _pairs())  # and a pair that agrees
    texts = [(YARN / p / "mindformers.yaml").read_text() for p in _pairs()]
    assert any("use_legacy: False" in t for t in texts)
    assert any('extend_method: "YARN"' in t for t in texts)


@pytest.mark.parametrize("pair", _pairs())
def test_each_side_computes_what_the_sources_say(pair: str) -> None:
    t = _truth(pair)
    mf = load_mindformers(str(YARN / pair / "mindformers.yaml"))
    mg = normalize_megatron(load_megatron(str(YARN / pair / "megatron.sh")))
    for side, cfg in (("mindformers", mf), ("megatron", mg)):
        for rule, want in t[side].items():
            v = cfg.get(FIELDS[rule])
            assert v is not None and v.known, f"{pair} {side} {FIELDS[rule]}: {v}"
            assert v.value == want, f"{pair} {side} {FIELDS[rule]}"


@pytest.mark.parametrize("pair", _pairs())
def test_every_yarn_difference_found_and_no_agreeing_row_flagged(pair: str) -> None:
    t = _truth(pair)
    d = YARN / pair
    report, _ = lint(
        Options(mindformers=[str(d / "mindformers.yaml")], megatron=str(d / "megatron.sh"))
    )
    raised = {f.rule: f for f in report.findings}
    for rule in t["differ"]:
        assert rule in raised, f"{pair}: true YaRN difference {rule} not found"
        assert raised[rule].values == {
            "mindformers": t["mindformers"][rule],
            "megatron": t["megatron"][rule],
        }
    for rule in t["agree"]:
        assert rule not in raised, f"{pair}: agreeing {rule} flagged: {raised[rule].message}"
    # YaRN is RoPE on both sides: the position type must not differ because of it
    assert "STR020" not in raised


# -- single edits of the pairs: one behaviour each ------------------------------------------
def _edited(tmp: Path, pair: str, name: str, old: str, new: str) -> Path:
    d = tmp / pair
    d.mkdir(parents=True)
    for f in ("mindformers.yaml", "megatron.sh"):
        text = (YARN / pair / f).read_text()
        if f == name:
            assert old in text, f"{old!r} not in {name}"
            text = text.replace(old, new, 1)
        (d / f).write_text(text)
    return d


def _lint(d: Path):  # type: ignore[no-untyped-def]
    report, _ = lint(
        Options(mindformers=[str(d / "mindformers.yaml")], megatron=str(d / "megatron.sh"))
    )
    return report


def test_mcore_mla_softmax_takes_mscale_not_mscale_all_dim(tmp_path: Path) -> None:
    pair = "deepseek3_mcore_yarn_pretrain_msl"
    # written 1.0 / 1.0 like DeepSeek-V3: both sides softmax x g(40, 1)^2, nothing differs
    d = _edited(
        tmp_path / "a",
        pair,
        "mindformers.yaml",
        "      beta_slow: 1\n",
        "      beta_slow: 1\n      mscale: 1.0\n      mscale_all_dim: 1.0\n",
    )
    assert not {"STR028", "STR030"} & {f.rule for f in _lint(d).findings}
    # mscale_all_dim alone at 1.0: MindSpeed-LLM's softmax would follow it, MindFormers'
    # mcore MLA follows mscale (0.707 by default); cos/sin g(40, .707) / g(40, 1)
    d = _edited(
        tmp_path / "b",
        pair,
        "mindformers.yaml",
        "      beta_slow: 1\n",
        "      beta_slow: 1\n      mscale_all_dim: 1.0\n",
    )
    mf = load_mindformers(str(d / "mindformers.yaml")).structure.yarn_mscale
    assert mf.value == "cos/sin x0.921042, softmax scale x1.58963"


def test_legacy_yarn_without_all_six_keys_is_unknown(tmp_path: Path) -> None:
    pair = "qwen25_7b_yarn_sft_msl"
    d = _edited(tmp_path, pair, "mindformers.yaml", "      mscale_all_dim: 0.0\n", "")
    r = _lint(d)
    assert not {"STR028", "STR030"} & {f.rule for f in r.findings}
    why = [w for _, w in r.not_checked if w.startswith("STR028:")]
    assert why and "mscale_all_dim" in why[0] and "KeyError" in why[0]


def test_mindspeed_deprecated_beta_flags_are_read(tmp_path: Path) -> None:
    # deprecated_args.py:108-117 @ v26.1.0 copies them onto --beta-fast / --beta-slow
    pair = "deepseek3_671b_yarn_sft_msl"
    d = _edited(tmp_path, pair, "megatron.sh", "--beta-fast 32", "--rope-scaling-beta-fast 24")
    f = {f.rule: f for f in _lint(d).findings}["STR028"]
    assert f.values["megatron"] == "yarn(factor=40, original=4096, beta_fast=24, beta_slow=1)"


def test_mindspeed_yarn_without_original_context_is_unknown(tmp_path: Path) -> None:
    pair = "deepseek3_671b_yarn_sft_msl"
    d = _edited(
        tmp_path,
        pair,
        "megatron.sh",
        "    --rope-scaling-original-max-position-embeddings 4096 \\\n",
        "",
    )
    s = normalize_megatron(load_megatron(str(d / "megatron.sh"))).structure
    assert not s.rope_scaling.known and "the run fails" in s.rope_scaling.detail
    assert "STR028" not in {f.rule for f in _lint(d).findings}


def test_mindspeed_mla_softmax_ignores_mscale(tmp_path: Path) -> None:
    # MlaDotProductAttention rescales by mscale_all_dim only; mscale moves the cos/sin tables
    pair = "deepseek3_671b_yarn_sft_msl"
    d = _edited(
        tmp_path, pair, "megatron.sh", "--rope-scaling-mscale 1.0", "--rope-scaling-mscale 0.707"
    )
    s = normalize_megatron(load_megatron(str(d / "megatron.sh"))).structure
    assert s.yarn_mscale.value == "cos/sin x0.921042, softmax scale x1.87385"
    f = {f.rule: f for f in _lint(d).findings}["STR030"]
    assert f.values["mindformers"] == "cos/sin x1, softmax scale x1.87385"


def test_megatron_lm_mla_rope_is_unknown_not_none(tmp_path: Path) -> None:
    from cfglint.normalize.megatron.input import load_megatron as load

    p = tmp_path / "mla.sh"
    p.write_text(
        "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 256 --num-attention-heads 4 "
        "--seq-length 128 --max-position-embeddings 128 --position-embedding-type rope "
        "--multi-latent-attention --rope-type yarn --rotary-scaling-factor 40\n"
    )
    s = normalize_megatron(load(str(p))).structure
    assert not s.rope_scaling.known and "multi-latent attention" in s.rope_scaling.detail


@pytest.mark.parametrize("with_flag", [True, False])
def test_legacy_mla_latent_norms_are_megatrons_qk_layernorm(
    tmp_path: Path, with_flag: bool
) -> None:
    """Legacy MindFormers DeepSeek attention always normalizes the q and kv latents
    (lq_norm, lkv_norm); Megatron's MLA builds those norms only with --qk-layernorm. The
    legacy DeepSeek-V3 pair (which passes it) agrees; without the flag it differs."""
    pair = YARN / "deepseek3_671b_yarn_sft_msl"
    script = pair / "megatron.sh"
    if not with_flag:
        text = script.read_text()
        assert "--qk-layernorm" in text
        script = tmp_path / "megatron.sh"
        script.write_text(text.replace("--qk-layernorm", ""))
    mf = load_mindformers(str(pair / "mindformers.yaml"))
    assert mf.structure.qk_norm is not None and mf.structure.qk_norm.value is True
    report, _ = lint(Options(mindformers=[str(pair / "mindformers.yaml")], megatron=str(script)))
    fired = {f.rule for f in report.findings}
    assert ("STR027" in fired) is (not with_flag)
