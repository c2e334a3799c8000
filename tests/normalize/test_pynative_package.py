"""data/mindformers_pynative.yaml is what the extractor reads from each release's wheel today
(slow: downloads the wheels from the package index; skips where it cannot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfglint.load.datacache import load_data
from cfglint.normalize.mindformers.defaults import DATA
from conftest import mindformers_wheel


@pytest.mark.slow
@pytest.mark.parametrize("release", ["v1.8.0", "v1.9.0", "v2.0.0", "v2.1.0"])
def test_the_pynative_tables_are_what_the_wheel_gives(release: str, tmp_path: Path) -> None:
    x, wheel = mindformers_wheel(release, tmp_path)
    data = load_data(DATA / "mindformers_pynative.yaml")
    assert data["sources"][release]["sha256"] == wheel.provenance()["sha256"]
    assert x.pynative_tables(wheel) == data["releases"][release]


def test_the_pynative_tables_record_the_trainers_own_defaults() -> None:
    # a table that lost its classes would leave every pynative default unknown
    rels = load_data(DATA / "mindformers_pynative.yaml")["releases"]
    assert not rels["v1.8.0"]["present"]
    got = rels["v2.1.0"]["classes"]
    assert got["OptimizerConfig"]["fields"]["betas"] == [0.9, 0.95]
    assert got["TrainingConfig"]["fields"]["seed"] == 42
    assert got["TrainConfig"]["fields"]["training"] == "<TrainingConfig>"
    assert got["ParallelismConfig"]["allow_extra"] is False
    assert got["LrSchedulerConfig"]["allow_extra"] is True
