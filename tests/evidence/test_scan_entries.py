"""Entry points by what runs (issue 31): the training step is found wherever the code puts
it. Each fixture under fixtures/sources/issue31/ is an excerpt of the real file it cites."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfglint.evidence.scan import scan_paths
from cfglint.evidence.scan.model import ScanResult

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "sources" / "issue31"


@pytest.fixture(scope="module")
def folder() -> ScanResult:
    """The folder scanned with nothing named: entry points are what trains."""
    return scan_paths([str(FIX)], use_cache=False)


def entries(res: ScanResult) -> set[str]:
    return {Path(e.path).name for e in res.entries}


def test_an_engine_is_known_by_the_value_that_made_it(folder: ScanResult) -> None:
    """`model, _, _, _ = deepspeed.initialize(...)`; `model.backward(loss); model.step()`
    (DeepSpeedExamples HelloDeepSpeed/train_bert_ds.py): an update though no name says so."""
    assert "ds_train_bert.py" in entries(folder)


def test_a_pipeline_engine_trains_through_train_batch(folder: ScanResult) -> None:
    """`engine, _, _, _ = deepspeed.initialize(...)`; `engine.train_batch()`
    (DeepSpeedExamples pipeline_parallelism/train.py): the factory's value, no backward."""
    assert "ds_pipe_train.py" in entries(folder)


def test_an_engine_whose_step_never_runs_is_not_training(folder: ScanResult) -> None:
    assert "ds_backward_only.py" not in entries(folder)
