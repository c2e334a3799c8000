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


@pytest.mark.parametrize(
    ("folder_name", "script"),
    [
        ("issue31_mae", "main_pretrain.py"),  # a loss scaler whose __call__ steps
        ("issue31_ms", "train_d.py"),  # a TrainOneStepCell-style cell called in the loop
        ("issue31_deit", "main.py"),  # timm's NativeScaler: a library class, from data
    ],
)
def test_calling_an_object_follows_its_call_or_construct(folder_name: str, script: str) -> None:
    """The object is made by the script and called (there or where it is handed): its
    ``__call__`` / ``construct`` runs the backward pass and the update."""
    res = scan_paths([str(FIX.parent / folder_name)], use_cache=False)
    assert script in entries(res)
    [entry] = [e for e in res.entries if e.path.endswith(script)]
    assert entry.trains


def test_a_script_without_a_main_block_that_calls_its_own_train() -> None:
    """A module whose top level calls its own function is started like a main block:
    it is an entry point when that call reaches an update, and not otherwise."""
    res = scan_paths([str(FIX.parent / "issue31_toplevel")], use_cache=False)
    assert entries(res) == {"run_train.py"}


def test_an_own_optimizer_decays_what_its_step_decays() -> None:
    """moco-v3's LARS (a torch.optim.Optimizer subclass) decays only `p.ndim > 1`
    parameters: read from its step(), never assumed to be torch's decay-everything."""
    res = scan_paths([str(FIX.parent / "issue31_moco")], use_cache=False)
    by_opt = {d.site.optimizer.rsplit(".", 1)[-1]: d.site for d in res.decays}
    assert by_opt["LARS"].policy == "exclude_1d"
    assert "p.ndim > 1" in by_opt["LARS"].detail
    assert by_opt["AdamW"].policy == "decay_all"  # torch's own: every parameter
    # an own optimizer whose step() shows no policy: not decided, and the reason says why
    assert by_opt["Lamb"].policy is None
    assert "not decided" in by_opt["Lamb"].params_text


def test_a_helper_that_rebinds_its_parameter_list_is_not_decay_all() -> None:
    """mindface's create_optimizer replaces the list it is given by name-filtered groups
    (`params = init_group_params(params, wd)` when filtering): handing it every parameter
    does not make every parameter decayed."""
    res = scan_paths([str(FIX.parent / "issue31_mindface")], use_cache=False)
    assert res.decays
    assert all(d.site.policy != "decay_all" for d in res.decays), [
        (d.site.optimizer, d.site.policy, d.site.params_text) for d in res.decays
    ]


def test_concatenated_parameter_lists_are_every_parameter() -> None:
    """`list(a.parameters()) + list(b.parameters())` (in either branch) and
    itertools.chain of them hand every parameter of those modules to the optimizer."""
    res = scan_paths([str(FIX.parent / "issue31_concat")], use_cache=False)
    got = {d.site.function: d.site.policy for d in res.decays}
    assert got == {"build_optimizer": "decay_all", "build_chained": "decay_all"}


def test_a_seed_read_from_the_callers_config_dict_is_compared() -> None:
    """`seed = int(config["seed"])` with `config = {"seed": 42, ...}` built by the caller
    (accelerate's cv_example.py): 42, where the dict is written, against the other side."""
    from test_scan import config, lint

    script = str(FIX / "accelerate_cv.py")
    res = scan_paths([script], use_cache=False)
    [seeded] = [e for e in res.entries[0].effects if e.kind == "torch"]
    assert seeded.seed_value == 42
    assert seeded.seed_loc is not None and seeded.seed_loc.line == 31
    mf = config("mindformers", path="mf.yaml", determinism__seed=(1234, 6))
    [f] = lint(res, mf=mf, only="DET020")[0]
    assert f.values == {"megatron": 42, "mindformers": 1234}
    same = config("mindformers", path="mf.yaml", determinism__seed=(42, 6))
    assert lint(res, mf=same, only="DET020")[0] == []


def test_the_scan_cache_follows_the_library_data(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A new library entry changes what a file's summary says (which calls train):
    summaries cached under the old data must not be served."""
    from cfglint.evidence.scan import runner

    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(tmp_path))
    script = str(FIX / "ds_train_bert.py")
    scan_paths([script])
    assert scan_paths([script]).stats.cached == 1
    monkeypatch.setattr(runner, "DATA_KEY", "other library data")
    assert scan_paths([script]).stats.cached == 0


_ENGINE_CASES = {
    # an optimizer handed through accelerate's prepare comes back an optimizer
    "prepare": (
        "acc = Accelerator()\n"
        "g_opt = torch.optim.Adam(g.parameters())\n"
        "g, g_opt = acc.prepare(g, g_opt)\n"
        "g_opt.step()\n",
        True,
    ),
    # Fabric.setup(module, optimizer) returns them in the same order
    "fabric": (
        "fabric = L.Fabric()\n"
        "model, d_opt = fabric.setup(model, torch.optim.SGD(model.parameters(), lr=0.1))\n"
        "d_opt.step()\n",
        True,
    ),
    # the model handed through prepare is not an optimizer: its step() is not an update
    "prepared_model": (
        "acc = Accelerator()\nnet, sched = acc.prepare(net, sched)\nnet.step()\n",
        False,
    ),
    # a tensor's backward has no step(); a scheduler's step() has no backward(loss)
    "tensor": ("loss.backward()\nsched.step()\n", False),
}


@pytest.mark.parametrize("case", sorted(_ENGINE_CASES))
def test_engine_values_through_wrapping_factories(case: str) -> None:
    import ast

    from cfglint.evidence.scan.engines import Engines

    text, trains = _ENGINE_CASES[case]
    qualified = {
        "acc.prepare": "accelerate.Accelerator.prepare",
        "fabric.setup": "lightning.Fabric.setup",
    }
    eng = Engines()
    found = False
    for stmt in ast.parse(text).body:
        if isinstance(stmt, ast.Assign):
            eng.assign(stmt.targets[0], stmt.value, qualified.get)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            found = eng.call(stmt.value) or found
    assert found is trains
