"""Issue 32: the probe's shapes are bounded by the probe, not by the config (an FFN of 1e8
or 1e12 never allocates a large model), and a config the framework itself would refuse, or
that no machine could hold, is said to be refused in one line instead of being probed at
the probe's shapes as if it ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfglint.check.pipeline import Options, lint
from cfglint.evidence.probe.moe import MAX_FFN_RATIO
from cfglint.evidence.probe.runner import check_startable, probe
from cfglint.evidence.probe.spec import HIDDEN, pair_specs
from cfglint.model.errors import InputError
from conftest import FIXTURES

EXAMPLE = FIXTURES / "examples" / "llama2_7b"
MG = EXAMPLE / "pretrain_llama2_7b.sh"


def _ctx(tmp_path: Path, old: str, new: str):  # type: ignore[no-untyped-def]
    text = MG.read_text()
    assert old in text
    mg = tmp_path / "launch.sh"
    mg.write_text(text.replace(old, new))
    _report, ctx = lint(
        Options(mindformers=[str(EXAMPLE / "pretrain_llama2_7b.yaml")], megatron=str(mg))
    )
    return ctx


@pytest.mark.parametrize("ffn", [10**8, 10**12, 10**400])
def test_a_huge_ffn_keeps_the_probe_small(ffn: int, tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, "--num-layers 32", f"--num-layers 32 --ffn-hidden-size {ffn}")
    pair = pair_specs(ctx.mf, ctx.mg)
    assert pair.megatron.ffn == pair.mindformers.ffn == MAX_FFN_RATIO * HIDDEN
    assert any(f"more than {MAX_FFN_RATIO}x the hidden size" in n for n in pair.notes)


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("--num-attention-heads 32", "--num-attention-heads 0", "num_heads is 0"),
        ("--seq-length 4096", "--seq-length 0", "seq_length is 0"),
        ("--hidden-size 4096", "--hidden-size 1000000", "parameters"),
        ("--num-attention-heads 32", "--num-attention-heads 30", "not a multiple"),
    ],
)
def test_a_config_that_cannot_start_is_refused_in_one_line(
    old: str, new: str, said: str, tmp_path: Path
) -> None:
    ctx = _ctx(tmp_path, old, new)
    with pytest.raises(InputError) as info:
        check_startable(ctx.mg)
    line = info.value.one_line()
    assert "\n" not in line and said in line and "the probe does not run" in line, line
    # probe() says it before any framework process starts
    with pytest.raises(InputError, match=said):
        probe(ctx.mf, ctx.mg, [], steps=3, device="cpu", frameworks={"torch": True})


def test_the_example_pair_starts(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, "--num-layers 32", "--num-layers 32")
    check_startable(ctx.mf)
    check_startable(ctx.mg)
