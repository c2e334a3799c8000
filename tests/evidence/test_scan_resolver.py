"""The scanner follows calls the way Python binds them (issue 19).

Each fixture under fixtures/sources/resolver/ is our own code reproducing a pattern that
made the scanner say "not seeded" of a seeded run (or miss a training entry) in a real
repository: a Fabric handed to main() (TinyLlama), Fabric.launch (litgpt), a trainer
subclass calling super().__init__ across files (nanotron), a trainer class handed over as a
value, star re-exports (mindcv), a CLI table of commands (litgpt's __main__), a serving
engine's step() (a vLLM generation script), a sibling script imported by name (OLMo's
ladder.py), a factory-built trainer declared by annotation (torchtitan), an optimizer helper
given model.parameters() (litgpt's instantiate_torch_optimizer).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_scan import config, lint

from cfglint.evidence.scan import scan_paths
from cfglint.evidence.scan.model import EntryReport, ScanResult

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "sources" / "resolver"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(tmp_path / "cache"))


def scan(case: str, **kw) -> ScanResult:
    return scan_paths([str(FIX / case)], **kw)


def only_entry(res: ScanResult) -> EntryReport:
    assert len(res.entries) == 1, [(e.path, e.command) for e in res.entries]
    return res.entries[0]


def seeded(entry: EntryReport) -> set[str]:
    return {e.kind for e in entry.effects if not e.condition}


def fired(res: ScanResult) -> set[str]:
    findings, _ = lint(res)
    return {f.rule for f in findings}


def test_fabric_handed_to_main_as_an_argument_seeds() -> None:
    res = scan("fabric_param")
    entry = only_entry(res)
    assert {"random", "numpy", "torch"} <= seeded(entry)
    [torch_seed] = entry.of("torch")
    assert (torch_seed.api, torch_seed.seed_value) == ("lightning.Fabric.seed_everything", 3407)
    assert not {"DET010", "DET012", "DET013"} & fired(res)


def test_fabric_launch_runs_main_with_the_fabric_and_a_rank_offset_seed() -> None:
    res = scan("fabric_launch")
    [seed] = only_entry(res).of("torch")
    assert (seed.seed_value, seed.seed_offset) == (1337, "fabric.global_rank")
    assert "DET013" not in fired(res)


def test_subclass_constructor_reaches_the_base_seeding_through_super() -> None:
    res = scan("hierarchy")
    entry = only_entry(res)
    assert entry.path.endswith("train_custom.py")
    assert {"random", "numpy", "torch"} <= seeded(entry)
    [seed] = entry.of("torch")
    assert seed.seed_text == "config.seed + config.tp_rank"
    assert any("super().__init__()" in step for step in seed.via)


def test_class_handed_over_as_a_value_is_built_with_its_inherited_constructor() -> None:
    entry = only_entry(scan("cls_arg"))
    assert "torch" in seeded(entry) and entry.trains


def test_star_reexported_helper_is_own_code_not_a_library() -> None:
    res = scan("star_reexport")
    entry = only_entry(res)
    assert not entry.of("seed_helper")
    assert {"random", "numpy", "mindspore"} <= seeded(entry)
    assert not {"DET010", "DET012", "DET013"} & fired(res)


def test_cli_table_makes_each_training_command_an_entry_and_skips_inference() -> None:
    res = scan("cli_dispatch")
    entry = only_entry(res)
    assert (Path(entry.path).name, entry.command) == ("__main__.py", "pretrain")
    assert {"random", "numpy", "torch"} <= seeded(entry)
    findings, _ = lint(res)
    det14 = [f for f in findings if f.rule == "DET014"]
    assert len(det14) == 1 and "__main__.py pretrain" in det14[0].message
    assert "`pretrain` command" in det14[0].message


def test_serving_engine_step_is_not_training() -> None:
    res = scan("serving")
    assert res.entries == []
    _, ctx = lint(res)
    reasons = " ".join(why for _, why in ctx.not_checked)
    assert "can be started (" in reasons and "none reaches an optimizer step" in reasons


def test_sibling_script_imported_by_name_resolves_like_sys_path() -> None:
    res = scan("sibling")
    by_name = {Path(e.path).name: e for e in res.entries}
    assert {"random", "numpy", "torch"} <= seeded(by_name["sweep.py"])


def test_declared_factory_builds_the_class_and_early_return_makes_the_rest_conditional() -> None:
    res = scan("declared_factory")
    entry = only_entry(res)
    conditions = {e.condition for e in entry.of("torch")}
    assert conditions == {"config.seed is not None", "not (config.world_size == 1)"}
    _, ctx = lint(res)
    assert any("seeded only when" in why for _, why in ctx.not_checked)


def test_optimizer_helper_given_every_parameter_decays_everything() -> None:
    res = scan("optimizer_helper")
    [decay] = res.decays
    assert Path(decay.path).name == "train.py" and decay.site.policy == "decay_all"
    assert "make_optimizer" in decay.site.detail
    assert decay.site.weight_decay is None  # the class is picked at run time: default unknown
    # against a MindFormers config that decays: unclear (the default is unknown), not "differ"
    findings, _ = lint(res, mf=config("mindformers", optimizer__weight_decay=(0.1, 5)))
    assert {f.rule for f in findings} & {"SRC002", "SRC003"} == {"SRC003"}


def test_addmm_with_transposed_operands_in_a_custom_backward() -> None:
    res = scan("addmm_backward")
    [site] = [b.site for b in res.backwards]
    assert site.function == "LinearFn.backward" and site.transposed == "dy.t()"


def test_members_are_entry_points_only_when_they_train() -> None:
    files = [str(FIX / "members" / n) for n in ("prepare_data.py", "train_step.py")]
    res = scan_paths([], members=files)
    assert [Path(e.path).name for e in res.entries] == ["train_step.py"]
    named = scan_paths(files[:1])
    assert [Path(e.path).name for e in named.entries] == ["prepare_data.py"]


def test_mindspore_functional_training_is_training() -> None:
    entry = only_entry(scan("ms_functional"))
    assert entry.side == "mindformers" and "mindspore" in seeded(entry)


def test_one_policy_in_several_branches_is_one_finding() -> None:
    res = scan("same_policy")
    assert len(res.decays) == 3
    findings, _ = lint(res)
    [src002] = [f for f in findings if f.rule == "SRC002"]
    assert len(src002.locations) == 3 and "the same policy at 2 other places" in src002.message


def test_file_named_alone_reads_its_siblings_like_sys_path() -> None:
    res = scan_paths([str(FIX / "sibling" / "scripts" / "sweep.py")])
    entry = only_entry(res)
    assert {"random", "numpy", "torch"} <= seeded(entry)
    assert any(p.endswith("train.py") for p in res.files)
    assert not entry.unscanned


def test_registry_dict_of_classes_is_followed_per_key() -> None:
    entry = only_entry(scan("registry"))
    # both table values are followed (SFTTrainer through its base's constructor, walked
    # once with the same arguments): seeded under the registry key, not unresolved
    assert {e.condition for e in entry.of("torch")} <= {"key 'pretrain'", "key 'sft'"}
    assert entry.of("torch") and not {"PreTrainer", "SFTTrainer"} & set(entry.unresolved)


def test_cyclic_bases_and_self_imports_end(tmp_path: Path) -> None:
    # bad code must not loop: A(B) and B(A) across files, a module star-importing itself
    (tmp_path / "a.py").write_text("from b import B\n\nclass A(B):\n    pass\n")
    (tmp_path / "b.py").write_text("from a import A\nfrom b import *\n\nclass B(A):\n    pass\n")
    (tmp_path / "train.py").write_text(
        "import torch\nfrom a import A\n\nif __name__ == '__main__':\n"
        "    A().fit()\n    super().run()\n    opt = torch.optim.SGD([], lr=1)\n    opt.step()\n"
    )
    res = scan_paths([str(tmp_path / "train.py")])
    entry = only_entry(res)
    assert entry.trains and entry.effects == []
