"""Learning-rate schedules: expected values are derived by hand in the comments.

Indexing recap (see the cfglint.evidence.lr.schedule docstring): update ``i`` runs with
scheduler index ``g = i - 1`` in both frameworks. Megatron counts that index in samples
(``num_steps = g * global_batch_size``), MindFormers in optimizer steps.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("cfglint") is None:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from cfglint.evidence.lr import (
    Schedule,
    compare,
    curve,
    lr_at,
    megatron_schedule,
    mindformers_schedule,
    wsd_decay_style,
)
from cfglint.report.lr_plot import plot_terminal, write_png


def approx(value: float) -> object:
    return pytest.approx(value, rel=1e-9, abs=1e-18)


def meg(**args: object) -> Schedule:
    gbs = args.pop("gbs", 8)
    assert gbs is None or isinstance(gbs, int)
    return megatron_schedule(args, gbs)


# --------------------------------------------------------------------------- Megatron


def test_megatron_warmup_then_cosine() -> None:
    s = meg(lr=1e-4, min_lr=1e-5, lr_decay_style="cosine", train_iters=1000, lr_warmup_iters=100)
    assert (s.warmup_steps, s.decay_steps, s.total_steps) == (100, 1000, 1000)
    # Update 1 runs at num_steps 0: lr_warmup_init (0.0). The first update is wasted.
    assert lr_at(s, 1) == 0.0
    # Update 51: index 50 of a 100-step warmup -> 1e-4 * 50/100.
    assert lr_at(s, 51) == approx(5e-5)
    # Update 101: index 100, the warmup end is inclusive (num_steps <= warmup) -> max.
    assert lr_at(s, 101) == approx(1e-4)
    # Update 551: index 550, decay ratio (550-100)/(1000-100) = 0.5 -> (max + min) / 2.
    assert lr_at(s, 551) == approx(5.5e-5)
    # Update 1000 (the last): ratio 899/900 -> min + 9e-5 * (1 - cos(pi/900)) / 2.
    assert lr_at(s, 1000) == approx(1e-5 + 9e-5 * (1 - math.cos(math.pi / 900)) / 2)
    # Index 1000 ends the cosine (cos(pi) = -1), past it Megatron holds min_lr.
    assert lr_at(s, 1001) == approx(1e-5)
    assert lr_at(s, 5000) == 1e-5


def test_megatron_linear_with_decay_iters() -> None:
    s = meg(
        lr=1e-3,
        min_lr=1e-4,
        lr_decay_style="linear",
        train_iters=100,
        lr_warmup_iters=10,
        lr_decay_iters=60,
    )
    # Update 36: ratio (35-10)/(60-10) = 0.5 -> 1e-4 + 0.5 * 9e-4.
    assert lr_at(s, 36) == approx(5.5e-4)
    # Update 61: ratio 1 -> min_lr; the rest of training stays there.
    assert lr_at(s, 61) == approx(1e-4)
    assert lr_at(s, 100) == 1e-4


def test_megatron_defaults_linear_to_zero() -> None:
    # No style, min_lr or warmup given: Megatron decays linearly to 0 from update 1.
    s = meg(lr=2e-4, train_iters=200)
    assert s.style == "linear"
    assert lr_at(s, 1) == approx(2e-4)
    # Update 101: ratio 100/200 -> 1e-4.
    assert lr_at(s, 101) == approx(1e-4)


def test_megatron_constant_ignores_min_lr() -> None:
    s = meg(lr=3e-4, min_lr=1e-5, lr_decay_style="constant", train_iters=100, lr_warmup_iters=4)
    # Update 3: index 2 of 4 -> 1.5e-4; afterwards 3e-4 forever, min_lr unused.
    assert lr_at(s, 3) == approx(1.5e-4)
    assert lr_at(s, 5) == approx(3e-4)
    assert lr_at(s, 1000) == 3e-4
    assert s.min_lr == 3e-4
    assert s.extra["min_lr_arg"] == 1e-5
    assert s.decay_steps is None


def test_megatron_inverse_square_root() -> None:
    s = meg(lr=1e-3, lr_decay_style="inverse-square-root", train_iters=1000, lr_warmup_iters=100)
    # Update 401: 1e-3 * sqrt(100 * 8) / sqrt(400 * 8) = 5e-4 (the batch size cancels).
    assert lr_at(s, 401) == approx(5e-4)
    floored = meg(
        lr=1e-3,
        min_lr=6e-4,
        lr_decay_style="inverse-square-root",
        train_iters=1000,
        lr_warmup_iters=100,
    )
    assert lr_at(floored, 401) == approx(6e-4)


def test_megatron_inverse_square_root_without_warmup_counts_samples() -> None:
    # With no warmup Megatron uses max(warmup, 1) = 1 *sample*: update 2 (16 samples seen)
    # already runs at 1e-3 / sqrt(16). Counting iterations would give 1e-3.
    s = meg(lr=1e-3, lr_decay_style="inverse-square-root", train_iters=100, gbs=16)
    assert lr_at(s, 1) == approx(1e-3)
    assert lr_at(s, 2) == approx(2.5e-4)


def test_megatron_wsd() -> None:
    base = {
        "lr": 1e-3,
        "min_lr": 1e-4,
        "lr_decay_style": "WSD",
        "train_iters": 1000,
        "lr_warmup_iters": 100,
        "lr_wsd_decay_iters": 200,
    }
    lin = meg(**base, lr_wsd_decay_style="linear")
    assert wsd_decay_style(lin) == "linear"
    # The anneal starts at 1000 - 200 = 800; until then lr stays at max.
    assert lr_at(lin, 801) == approx(1e-3)
    # Update 901: (900-800)/200 = 0.5 -> 1e-4 + 0.5 * 9e-4.
    assert lr_at(lin, 901) == approx(5.5e-4)
    assert lr_at(lin, 1001) == approx(1e-4)
    cos = meg(**base, lr_wsd_decay_style="cosine")
    # Update 851: r = 0.25 -> coeff (cos(pi/4) + 1) / 2 = 0.8535534.
    assert lr_at(cos, 851) == approx(1e-4 + 0.5 * (math.cos(math.pi / 4) + 1) * 9e-4)
    exp = meg(**base)  # Megatron's default anneal shape is exponential
    assert wsd_decay_style(exp) == "exponential"
    # r = 0.5 -> 2 * 0.5**0.5 - 1 = 0.4142136.
    assert lr_at(exp, 901) == approx(1e-4 + (2 * 0.5**0.5 - 1) * 9e-4)


def test_megatron_wsd_needs_anneal_length() -> None:
    with pytest.raises(ValueError, match="lr_wsd_decay_iters"):
        meg(lr=1e-3, lr_decay_style="WSD", train_iters=100)


def test_megatron_warmup_fraction_is_of_the_decay_length() -> None:
    s = meg(lr=1e-4, lr_decay_style="cosine", train_iters=1000, lr_warmup_fraction=0.01)
    # 0.01 * lr_decay_iters (= train_iters 1000) = 10 steps; update 6 -> 1e-4 * 5/10.
    assert s.warmup_steps == 10
    assert lr_at(s, 6) == approx(5e-5)
    short = meg(
        lr=1e-4,
        lr_decay_style="cosine",
        train_iters=1000,
        lr_decay_iters=500,
        lr_warmup_fraction=0.01,
    )
    # 0.01 * 500 = 5 steps; update 3 -> 1e-4 * 2/5.
    assert short.warmup_steps == 5
    assert lr_at(short, 3) == approx(4e-5)


def test_megatron_fractional_warmup_is_kept_exact() -> None:
    s = meg(lr=1e-4, lr_decay_style="cosine", train_iters=1000, lr_warmup_fraction=0.0155)
    # 15.5 steps of warmup: update 16 (index 15 <= 15.5) is still warming up.
    assert lr_at(s, 16) == approx(1e-4 * 15 / 15.5)
    assert any("15.5" in note for note in s.notes)


def test_megatron_sample_based() -> None:
    s = meg(
        lr=1e-4,
        lr_decay_style="cosine",
        train_samples=12810,
        lr_warmup_samples=1600,
        gbs=16,
    )
    # 12810 // 16 = 800 updates; warmup 1600 / 16 = 100; decay 12810 samples ~ 800.6 updates.
    assert (s.total_steps, s.warmup_steps, s.decay_steps) == (800, 100, 801)
    assert any("sample-based" in note for note in s.notes)
    # Update 51: 50 * 16 = 800 samples of 1600 -> 5e-5.
    assert lr_at(s, 51) == approx(5e-5)
    # Update 451: 7200 samples, ratio (7200-1600)/(12810-1600) -> cosine of that ratio.
    ratio = (7200 - 1600) / (12810 - 1600)
    assert lr_at(s, 451) == approx(0.5 * (math.cos(math.pi * ratio) + 1) * 1e-4)


def test_megatron_sample_based_needs_batch_size() -> None:
    with pytest.raises(ValueError, match="global batch size"):
        megatron_schedule({"lr": 1e-4, "train_samples": 1000})
    # ... which may also come from the args themselves.
    s = megatron_schedule({"lr": 1e-4, "train_samples": 1000, "global_batch_size": 10})
    assert s.total_steps == 100


def test_megatron_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="lr is not set"):
        megatron_schedule({"train_iters": 10})
    with pytest.raises(ValueError, match="train_iters or train_samples"):
        megatron_schedule({"lr": 1e-4})
    with pytest.raises(ValueError, match="unsupported Megatron lr_decay_style"):
        megatron_schedule({"lr": 1e-4, "train_iters": 10, "lr_decay_style": "step"})


# --------------------------------------------------------------------------- MindFormers


def test_mindformers_cosine_with_ratio_and_lr_end() -> None:
    block = {
        "type": "CosineWithWarmUpLR",
        "learning_rate": 1e-4,
        "lr_end": 1e-6,
        "warmup_ratio": 0.1,
        "total_steps": -1,
    }
    s = mindformers_schedule(block, 1000)
    # int(1000 * 0.1) = 100 warmup steps, 900 cosine steps, cut-off at 1000.
    assert (s.warmup_steps, s.total_steps, s.min_lr) == (100, 1000, 1e-6)
    assert lr_at(s, 1) == 0.0
    # Update 51: global_step 50 -> 1e-4 * 50/100.
    assert lr_at(s, 51) == approx(5e-5)
    assert lr_at(s, 101) == approx(1e-4)
    # Update 551: progress (550-100)/900 = 0.5 -> (1e-4 + 1e-6) / 2.
    assert lr_at(s, 551) == approx(5.05e-5)
    # global_step >= decay_steps (default total_steps) -> lr_end.
    assert lr_at(s, 1001) == 1e-6


def test_mindformers_warmup_ratio_is_floored() -> None:
    block = {"type": "cosine", "learning_rate": 1e-4, "warmup_ratio": 0.1}
    # int(1005 * 0.1) = int(100.5) = 100, not 101.
    assert mindformers_schedule(block, 1005).warmup_steps == 100


def test_mindformers_upstream_docstring_examples() -> None:
    # Values printed in the MindFormers docstrings (float32 there): lr(Tensor(g)).
    cos = mindformers_schedule(
        {"type": "CosineWithWarmUpLR", "learning_rate": 0.005, "warmup_steps": 10}, 20
    )
    assert lr_at(cos, 2) == approx(0.0005)
    assert lr_at(cos, 16) == pytest.approx(0.0024999997, rel=1e-6)
    ann = mindformers_schedule(
        {"type": "CosineAnnealingLR", "base_lr": 0.005, "t_max": 10, "eta_min": 1e-7}, 100
    )
    assert lr_at(ann, 2) == pytest.approx(0.0048776437, rel=1e-6)
    assert lr_at(ann, 16) == pytest.approx(0.0025000498, rel=1e-6)
    restarts = mindformers_schedule(
        {
            "type": "CosineAnnealingWarmRestarts",
            "base_lr": 0.005,
            "t_0": 10,
            "t_mult": 2,
            "eta_min": 1e-7,
        },
        100,
    )
    # g = 15 lies in the second cycle [10, 30): (1 + cos(pi * 5/20)) / 2 = 0.8535534.
    assert lr_at(restarts, 16) == pytest.approx(0.0042677815, rel=1e-6)


def test_mindformers_linear_decays_to_zero() -> None:
    block = {"type": "LinearWithWarmUpLR", "learning_rate": 1e-3, "warmup_steps": 10}
    s = mindformers_schedule(block, 110)
    # Update 61: global_step 60, (110 - 60) / (110 - 10) = 0.5 -> 5e-4.
    assert lr_at(s, 61) == approx(5e-4)
    # Update 110 (the last): (110 - 109) / 100 -> 1e-5; there is no lr_end.
    assert lr_at(s, 110) == approx(1e-5)
    assert s.min_lr == 0.0
    assert lr_at(s, 111) == 0.0


def test_mindformers_constant_warmup() -> None:
    block = {"type": "ConstantWarmUpLR", "learning_rate": 5e-3, "warmup_steps": 10}
    s = mindformers_schedule(block, 20)
    # Update 2: global_step 1 -> 5e-3 * 1/10 (the docstring's 0.0005).
    assert lr_at(s, 2) == approx(5e-4)
    assert lr_at(s, 11) == 5e-3
    assert lr_at(s, 500) == 5e-3


def test_mindformers_polynomial_power() -> None:
    block = {
        "type": "PolynomialWithWarmUpLR",
        "learning_rate": 1e-3,
        "power": 2.0,
        "warmup_steps": 0,
    }
    s = mindformers_schedule(block, 100)
    # lr_end defaults to 1e-7. Update 51: remaining 1 - 50/100 = 0.5, squared 0.25.
    assert lr_at(s, 51) == approx((1e-3 - 1e-7) * 0.25 + 1e-7)
    # Update 101: remaining 0 -> lr_end; global_step > total_steps -> lr_end.
    assert lr_at(s, 101) == approx(1e-7)
    assert lr_at(s, 102) == 1e-7


def test_mindformers_cosine_with_restarts() -> None:
    block = {
        "type": "CosineWithRestartsAndWarmUpLR",
        "learning_rate": 1e-3,
        "num_cycles": 2,
        "warmup_steps": 0,
    }
    s = mindformers_schedule(block, 100)
    # phase = (2 * g / 100) % 1. Update 26: phase 0.5 -> (1 + cos(pi/2)) / 2 = 0.5.
    assert lr_at(s, 26) == approx(5e-4)
    # Update 51: phase 0 -> restart at the full rate.
    assert lr_at(s, 51) == approx(1e-3)
    assert lr_at(s, 76) == approx(5e-4)
    # global_step 100 >= decay_steps (total) -> lr_end 0.
    assert lr_at(s, 101) == 0.0


def test_mindformers_warmup_stable_decay() -> None:
    block = {
        "type": "WarmUpStableDecayLR",
        "learning_rate": 1e-3,
        "lr_end": 0.0,
        "warmup_steps": 10,
        "decay_start_ratio": 0.8,
    }
    s = mindformers_schedule(block, 100)
    # Decay starts at int(100 * 0.8) = 80 and runs 20 steps. Update 91: 1e-3 * (1 - 10/20).
    assert lr_at(s, 80) == 1e-3
    assert lr_at(s, 91) == approx(5e-4)


def test_mindformers_total_steps_resolution() -> None:
    block = {"type": "cosine", "learning_rate": 1e-4, "warmup_steps": 10, "total_steps": -1}
    assert mindformers_schedule(block, 400).total_steps == 400
    with pytest.raises(ValueError, match="total_steps"):
        mindformers_schedule(block, None)
    # An explicit block total shapes the curve; a different training length is noted.
    fixed = mindformers_schedule({**block, "total_steps": 300}, 400)
    assert fixed.total_steps == 400
    assert lr_at(fixed, 301) == 0.0  # lr_end reached at 300, 100 steps before the end
    assert any("300" in note and "400" in note for note in fixed.notes)


def test_mindformers_rejects_unknown_type() -> None:
    with pytest.raises(ValueError, match="unsupported MindFormers lr schedule StepLR"):
        mindformers_schedule({"type": "StepLR", "learning_rate": 1e-4}, 100)


def test_mindformers_string_number_is_noted() -> None:
    # PyYAML reads `1e-4` as text; we still read the number but say MindFormers won't.
    block = {"type": "ConstantWarmUpLR", "learning_rate": "1e-4", "warmup_steps": 0}
    s = mindformers_schedule(block, 10)
    assert s.max_lr == 1e-4
    assert any("string" in note for note in s.notes)


# --------------------------------------------------------------------------- evaluation


@pytest.mark.parametrize(
    "schedule",
    [
        meg(lr=1e-3, min_lr=1e-5, lr_decay_style="cosine", train_iters=50, lr_warmup_iters=7),
        meg(
            lr=1e-3,
            lr_decay_style="WSD",
            train_samples=500,
            lr_warmup_samples=36,
            lr_wsd_decay_samples=100,
            gbs=9,
        ),
        mindformers_schedule({"type": "cosine", "learning_rate": 1e-3, "warmup_steps": 7}, 50),
        mindformers_schedule(
            {
                "type": "ConstantWithCoolDownLR",
                "learning_rate": 1e-3,
                "warmup_steps": 5,
                "keep_steps": 10,
                "decay_steps": 20,
                "final_steps": 5,
                "lr_end1": 1e-4,
                "lr_end2": 1e-5,
            },
            60,
        ),
    ],
)
def test_curve_matches_lr_at(schedule: Schedule) -> None:
    values = curve(schedule, 70)
    assert len(values) == 70
    assert values == [lr_at(schedule, step) for step in range(1, 71)]


def test_lr_at_is_one_based() -> None:
    s = meg(lr=1e-4, train_iters=10)
    with pytest.raises(ValueError):
        lr_at(s, 0)
    assert len(curve(s)) == 10


# --------------------------------------------------------------------------- compare


def test_compare_identical() -> None:
    s = meg(lr=1e-4, min_lr=1e-5, lr_decay_style="cosine", train_iters=300, lr_warmup_iters=30)
    diff = compare(s, s)
    assert diff.steps == 300
    assert diff.first_diverging_step is None
    assert diff.max_rel_gap == 0.0
    assert diff.max_gap_step == 0


def test_megatron_and_mindformers_cosine_align_exactly() -> None:
    # Same numbers on both sides. Both evaluate index i-1 at update i, so there is no
    # off-by-one: both waste update 1 at lr 0 and reach the peak at update 101.
    mg = meg(lr=1e-4, min_lr=1e-5, lr_decay_style="cosine", train_iters=1000, lr_warmup_iters=100)
    mf = mindformers_schedule(
        {
            "type": "CosineWithWarmUpLR",
            "learning_rate": 1e-4,
            "lr_end": 1e-5,
            "warmup_steps": 100,
            "total_steps": -1,
        },
        1000,
    )
    diff = compare(mg, mf)
    assert diff.first_diverging_step is None
    assert diff.max_rel_gap < 1e-12
    assert lr_at(mg, 1) == lr_at(mf, 1) == 0.0


def test_warmup_fraction_vs_ratio_differ_from_step_2() -> None:
    # Megatron: 0.0155 * 1000 = 15.5 warmup steps; MindFormers: int(15.5) = 15.
    # Update 2: 1e-4/15.5 = 6.4516e-6 vs 1e-4/15 = 6.6667e-6, a 3.2% gap (update 1 is 0 in both).
    mg = meg(lr=1e-4, lr_decay_style="cosine", train_iters=1000, lr_warmup_fraction=0.0155)
    mf = mindformers_schedule(
        {"type": "cosine", "learning_rate": 1e-4, "warmup_ratio": 0.0155}, 1000
    )
    diff = compare(mg, mf)
    assert diff.first_diverging_step == 2
    assert diff.a_at_first == approx(1e-4 / 15.5)
    assert diff.b_at_first == approx(1e-4 / 15)
    assert diff.max_rel_gap == approx(1 - 15 / 15.5)


def test_compare_warmup_mismatch_diverges_at_step_1() -> None:
    with_warmup = meg(lr=1e-4, lr_decay_style="cosine", train_iters=1000, lr_warmup_iters=100)
    without = mindformers_schedule(
        {"type": "CosineWithWarmUpLR", "learning_rate": 1e-4, "warmup_steps": 0}, 1000
    )
    diff = compare(with_warmup, without)
    # Update 1: 0.0 (warmup start) vs 1e-4 (no warmup) -> a 100% gap.
    assert diff.first_diverging_step == 1
    assert (diff.a_at_first, diff.b_at_first) == (0.0, 1e-4)
    assert (diff.max_rel_gap, diff.max_gap_step) == (1.0, 1)


def test_compare_min_lr_mismatch_diverges_late() -> None:
    mg = meg(lr=1e-4, min_lr=1e-6, lr_decay_style="cosine", train_iters=1000)
    mf = mindformers_schedule({"type": "CosineWithWarmUpLR", "learning_rate": 1e-4}, 1000)
    # With c = (1 + cos(pi r)) / 2 and r = (i-1)/1000 on both sides:
    #   a = 1e-6 + 9.9e-5 c, b = 1e-4 c, gap (a - b) / a = 1e-6 (1 - c) / a.
    # gap > 1%  <=>  c < 0.99/1.99  <=>  r > 0.5016  <=>  i - 1 >= 502.
    diff = compare(mg, mf)
    assert diff.first_diverging_step == 503
    # Largest at the last update, r = 0.999: c = sin(0.0005 pi)^2 = 2.4674e-6,
    # a = 1.000244e-6, b = 2.4674e-10 -> gap = 1 - b/a = 0.999753.
    c = math.sin(0.0005 * math.pi) ** 2
    a, b = 1e-6 + 9.9e-5 * c, 1e-4 * c
    assert diff.max_gap_step == 1000
    assert diff.max_rel_gap == pytest.approx(1 - b / a, rel=1e-9)
    assert diff.max_rel_gap == pytest.approx(0.999753, abs=1e-6)
    # One update more: Megatron holds min_lr 1e-6, MindFormers has hit lr_end 0 -> 100%.
    longer = compare(mg, mf, steps=1001)
    assert (longer.max_rel_gap, longer.max_gap_step) == (1.0, 1001)


def test_compare_500k_steps() -> None:
    mg = meg(
        lr=3e-4,
        min_lr=3e-5,
        lr_decay_style="cosine",
        train_iters=500_000,
        lr_warmup_iters=2000,
        gbs=1024,
    )
    mf = mindformers_schedule(
        {"type": "CosineWithWarmUpLR", "learning_rate": 3e-4, "lr_end": 0.0, "warmup_steps": 2000},
        500_000,
    )
    diff = compare(mg, mf)
    assert diff.steps == 500_000
    assert diff.first_diverging_step is not None


# --------------------------------------------------------------------------- plots


def test_plot_terminal() -> None:
    mg = meg(lr=1e-4, min_lr=1e-6, lr_decay_style="cosine", train_iters=1000)
    mf = mindformers_schedule({"type": "CosineWithWarmUpLR", "learning_rate": 1e-4}, 1000)
    text = plot_terminal(mg, mf, width=80, height=20)
    lines = text.splitlines()
    assert len(lines) == 20
    assert all(len(line) == 80 for line in lines[:-2])  # the legend may run longer
    assert "1.00e-04" in lines[0]
    assert "*" in text and "o" in text and "|" in text
    assert "first divergence at step 503" in text
    assert "megatron cosine" in text and "mindformers cosine" in text
    same = plot_terminal(mg, mg, width=60, height=12)
    assert "agree" in same


def test_plot_png_without_matplotlib(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # hide matplotlib and any submodule an earlier test may have imported
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    s = meg(lr=1e-4, train_iters=10)
    with pytest.raises(RuntimeError, match="pip install matplotlib"):
        write_png({"megatron": s}, "lr", str(tmp_path / "lr.png"))


def test_plot_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    s = meg(lr=1e-4, lr_decay_style="cosine", train_iters=100, lr_warmup_iters=10)
    t = mindformers_schedule({"type": "cosine", "learning_rate": 1e-4}, 100)
    out = tmp_path / "lr.png"
    write_png({"megatron": s, "mindformers": t}, "lr", str(out))
    assert out.read_bytes().startswith(b"\x89PNG")
