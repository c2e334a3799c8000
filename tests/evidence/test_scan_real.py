"""Source scanner on code written the way real training repositories write it (issue 9).

Every fixture under fixtures/sources/{seed_helpers,entry_repo,conditions,neox_like,
decay_styles,backward_helpers,locations} is our own code in the style of the project it
names (Accelerate, Lightning, transformers, timm, DeepSpeed, MindSpore, nanoGPT, minGPT,
gpt-neox, Megatron-LM); none is copied.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_scan import config, lint

from cfglint.evidence.scan import scan_paths
from cfglint.evidence.scan.model import EntryReport, ScanResult

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "sources"


def fx(*parts: str) -> str:
    return str(FIX.joinpath(*parts))


def line_of(path: str, text: str) -> int:
    for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if text in line:
            return i
    raise AssertionError(f"{text!r} not in {path}")


def one_entry(*parts: str) -> tuple[ScanResult, EntryReport]:
    """The script named explicitly, with its folder for the code it reaches."""
    res = scan_paths([fx(*parts), fx(*parts[:-1])])
    assert len(res.entries) == 1, [e.path for e in res.entries]
    return res, res.entries[0]


def rules_of(res: ScanResult, **kw) -> set[str]:
    findings, _ = lint(res, **kw)
    return {f.rule for f in findings}


# -- 1. library seeding helpers -------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "call", "seeded", "deterministic"),
    [
        ("accelerate_nlp.py", "set_seed(1234", {"random", "numpy", "torch", "cuda"}, True),
        ("lightning_fit.py", "L.seed_everything(42)", {"random", "numpy", "torch"}, True),
        ("fabric_loop.py", "fabric.seed_everything", {"random", "numpy", "torch"}, False),
        (
            "hf_run_clm.py",
            "set_seed(training_args.seed)",
            {"random", "numpy", "torch", "cuda"},
            False,
        ),
        (
            "hf_full_determinism.py",
            "enable_full_determinism(2024)",
            {"random", "numpy", "torch"},
            True,
        ),
        ("timm_train.py", "utils.random_seed(", {"random", "numpy", "torch"}, False),
        ("deepspeed_train.py", "set_random_seed(31)", {"random", "numpy", "torch"}, False),
        ("deepspeed_train.py", "model_parallel_cuda_manual_seed(31)", {"cuda"}, False),
        ("mindspore_train.py", "ms.set_seed(5)", {"mindspore", "numpy", "random"}, False),
        ("lightning_cli.py", "LightningCLI(", {"random", "numpy", "torch"}, False),
    ],
)
def test_library_seeding_helpers_are_modelled_at_the_callers_line(
    script: str, call: str, seeded: set[str], deterministic: bool
) -> None:
    res, entry = one_entry("seed_helpers", script)
    path = fx("seed_helpers", script)
    at = line_of(path, call)
    mine = [e for e in entry.effects if e.loc.path == path and e.loc.line == at]
    assert seeded <= {e.kind for e in mine}, [(e.kind, e.loc) for e in entry.effects]
    assert all(not e.conditional for e in mine)
    on = [e for e in entry.of("torch_deterministic") if e.enabled and not e.conditional]
    assert bool(on) is deterministic
    # nothing here is reported as unseeded
    unseeded = {"DET012", "DET013"} | ({"DET010"} if "random" in seeded else set())
    assert not rules_of(res) & unseeded


def test_trl_trainers_seed_as_the_transformers_trainer_they_subclass() -> None:
    """TRL's trainers derive from transformers.Trainer (data/library_models.yaml,
    subclasses): constructing one seeds from TrainingArguments.seed, and determinism is
    the Trainer's full_determinism switch, off by default: decided, not "unknown"."""
    res, entry = one_entry("issue31", "trl_sft_tpu.py")
    assert not entry.of("seed_helper")
    trainer = [e for e in entry.effects if e.api == "trl.SFTTrainer"]
    assert {e.kind for e in trainer} >= {"random", "numpy", "torch"}
    findings, ctx = lint(res)
    rules = {f.rule for f in findings}
    assert not rules & {"DET010", "DET012", "DET013"}
    assert "DET014" in rules
    assert not any("trl.SFTTrainer" in r for _, r in ctx.not_checked)


def test_mindspore_set_seed_seeds_python_random_too() -> None:
    """mindspore.set_seed calls mindspore.dataset.config.set_seed, which calls
    random.seed (mindface recognition/train.py excerpt): no DET010."""
    res, entry = one_entry("issue31", "mindface_train.py")
    assert entry.side == "mindformers"
    assert {"random", "numpy", "mindspore"} <= {e.kind for e in entry.effects}
    assert not rules_of(res) & {"DET010", "DET012", "DET013"}


def test_transformers_trainer_seeds_from_training_arguments() -> None:
    _, entry = one_entry("seed_helpers", "hf_run_clm.py")
    trainer = [e for e in entry.effects if e.api == "transformers.Trainer"]
    seeds = [e for e in trainer if e.kind != "torch_deterministic"]
    assert {e.kind for e in seeds} >= {"torch", "numpy", "random"}
    assert all(e.seed_from_config for e in seeds)
    # full_determinism is a TrainingArguments switch: read, never taken for "on"
    [det] = [e for e in trainer if e.kind == "torch_deterministic"]
    assert det.enabled is not True


def test_lightning_trainer_deterministic_switch_is_read() -> None:
    _, entry = one_entry("seed_helpers", "lightning_fit.py")
    [det] = entry.of("torch_deterministic")
    assert det.api == "lightning.Trainer" and det.enabled is True


def test_mindspore_set_seed_also_seeds_numpy() -> None:
    res, entry = one_entry("seed_helpers", "mindspore_train.py")
    assert entry.side == "mindformers"
    assert "DET012" not in rules_of(res)


def test_unknown_library_helper_is_unknown_not_unseeded() -> None:
    res, entry = one_entry("seed_helpers", "fsdp_unknown.py")
    [helper] = entry.of("seed_helper")
    assert helper.api == "turbo_fsdp.utils.random.set_seed"
    findings, ctx = lint(res)
    assert not {f.rule for f in findings} & {"DET010", "DET012", "DET013"}
    reasons = " ".join(r for _, r in ctx.not_checked)
    assert "turbo_fsdp.utils.random.set_seed" in reasons


# -- 2. entry points --------------------------------------------------------------------------


def test_only_the_script_that_trains_is_an_entry_point() -> None:
    res = scan_paths([fx("entry_repo")])
    assert [e.path for e in res.entries] == [fx("entry_repo", "train.py")]
    entry = res.entries[0]
    assert not entry.has_main and entry.anchor.line == 1
    [torch_seed] = entry.of("torch")
    assert torch_seed.loc.line == line_of(fx("entry_repo", "train.py"), "torch.manual_seed(")
    rules = rules_of(res)
    assert "DET013" not in rules and {"DET010", "DET012"} <= rules


def test_a_file_named_explicitly_is_the_entry_and_the_folder_only_holds_code() -> None:
    script = fx("entry_repo", "sample.py")
    res = scan_paths([script, fx("entry_repo")])
    assert [e.path for e in res.entries] == [script]
    assert fx("entry_repo", "model.py") in res.entries[0].files_reached


def test_a_trainer_chosen_at_run_time_still_trains(tmp_path: Path) -> None:
    # MindSpeed-LLM style: AutoTrainer picks the trainer class from the arguments
    (tmp_path / "launcher.py").write_text(
        "from registry import get_trainer\n\n\nclass AutoTrainer:\n"
        "    def __init__(self, stage):\n        self.trainer = get_trainer(stage)\n\n"
        "    def train(self):\n        self.trainer.train()\n"
    )
    (tmp_path / "posttrain.py").write_text(
        "from launcher import AutoTrainer\n\n\ndef launch():\n"
        "    trainer = AutoTrainer('sft')\n    trainer.train()\n\n\n"
        "if __name__ == '__main__':\n    launch()\n"
    )
    res = scan_paths([str(tmp_path)])
    assert [e.path for e in res.entries] == [str(tmp_path / "posttrain.py")]


def test_converters_preprocessors_and_tokenizer_trainers_are_not_entries() -> None:
    res = scan_paths([fx("entry_repo")])
    paths = {e.path for e in res.entries}
    for tool in (
        "data/webtext/prepare.py",
        "tools/train_tokenizer.py",
        "tools/convert_train_ckpt.py",
    ):
        assert fx("entry_repo", *tool.split("/")) not in paths


def test_nanogpt_style_grouping_is_read_from_the_model() -> None:
    res = scan_paths([fx("entry_repo")])
    [decay] = res.decays
    assert decay.site.policy == "exclude_1d"
    assert decay.policy_path == fx("entry_repo", "model.py") or decay.path == fx(
        "entry_repo", "model.py"
    )


# -- 3. conditions ------------------------------------------------------------------------------


def test_flagged_seed_and_switch_are_conditional_on_their_flags() -> None:
    res, entry = one_entry("conditions", "flag_seed.py")
    [seed] = entry.of("torch")
    assert seed.conditional and seed.condition == "args.seed is not None"
    [det] = entry.of("torch_deterministic")
    assert det.conditional and det.condition == "args.deterministic"
    findings, ctx = lint(res)
    rules = {f.rule: f for f in findings}
    assert "DET013" not in rules  # seeded when --seed is given: not "not seeded"
    assert any("args.seed is not None" in r for _, r in ctx.not_checked)
    assert "only when args.deterministic" in rules["DET014"].message


def test_rebinding_pretrain_keeps_the_switch_config_driven() -> None:
    res = scan_paths([fx("conditions", "pretrain_gpt.py"), fx("conditions")])
    [entry] = res.entries
    assert not [e for e in entry.of("torch_deterministic") if e.enabled and not e.conditional]
    findings, _ = lint(res)
    [det] = [f for f in findings if f.rule == "DET014"]
    assert "--deterministic-mode" in det.message


# -- 6. a package that only shares Megatron's name -------------------------------------------


def test_own_megatron_package_is_followed_not_modelled() -> None:
    res, entry = one_entry("neox_like", "train.py")
    training = fx("neox_like", "megatron", "training.py")
    assert {e.kind for e in entry.effects} == {"random", "torch"}
    assert all(e.loc.path == training for e in entry.effects)
    # `if seed > 0: ... else: raise` is a check: the seeding is not conditional
    assert not any(e.conditional for e in entry.effects)
    findings, _ = lint(res)
    assert "DET012" in {f.rule for f in findings}  # numpy is not seeded there
    assert not any("--deterministic-mode" in f.message for f in findings)


# -- 4. weight-decay grouping ---------------------------------------------------------------------


def _decays(*parts: str):
    return scan_paths([fx(*parts)]).decays


def test_optimizers_that_decay_nothing_by_default_are_not_reported() -> None:
    res = scan_paths([fx("decay_styles", "adadelta_mnist.py")])
    [d] = res.decays
    assert d.site.weight_decay is not None and d.site.weight_decay.value == 0
    assert not rules_of(res) & {"SRC002", "SRC003"}


def test_adamw_default_decay_on_a_plain_list_is_reported() -> None:
    res = scan_paths([fx("decay_styles", "adamw_plain.py")])
    [d] = res.decays
    assert d.site.policy == "decay_all" and d.site.weight_decay.value == 0.01
    findings, _ = lint(res)
    [f] = [f for f in findings if f.rule == "SRC002"]
    assert f.locations[0].line == line_of(fx("decay_styles", "adamw_plain.py"), "AdamW(")


def test_unknown_weight_decay_default_is_unclear_not_decay_all() -> None:
    res = scan_paths([fx("decay_styles", "unknown_default.py")])
    [d] = res.decays
    assert d.site.policy == "decay_all" and d.site.weight_decay is None
    assert "SRC002" not in rules_of(res)  # against the assumed default: not even a note
    findings, _ = lint(res, mf=config("mindformers", optimizer__weight_decay=(0.1, 3)))
    rules = {f.rule: f for f in findings}
    assert "SRC002" not in rules
    assert "default unknown" in rules["SRC003"].message


def test_optimizer_class_held_in_a_variable() -> None:
    [d] = _decays("decay_styles", "hf_optimizer_cls.py")
    assert d.site.optimizer == "torch.optim.AdamW"
    assert d.site.policy == "exclude_by_name"
    assert set(d.site.names) == {"bias", "LayerNorm.weight"}


def test_params_assigned_in_branches_is_the_union_of_policies() -> None:
    ds = _decays("decay_styles", "branch_params.py")
    assert {d.site.policy for d in ds} == {"exclude_1d", "decay_all"}
    assert any("group_by_shape" in d.site.detail for d in ds)


def test_generators_and_filter_over_named_parameters() -> None:
    [d] = _decays("decay_styles", "generator_filter.py")
    assert d.site.policy == "exclude_1d"


def test_grouping_by_module_type_is_classified_and_compared() -> None:
    res = scan_paths([fx("decay_styles", "mingpt_modules.py")])
    [d] = res.decays
    assert d.site.policy == "exclude_module_types"
    assert set(d.site.names) >= {"LayerNorm", "Embedding"}
    assert "weight" not in d.site.names  # endswith("weight") leads to the decayed set
    findings, _ = lint(res, mf=config("mindformers", optimizer__weight_decay=(0.1, 3)))
    [f] = [f for f in findings if f.rule == "SRC002"]
    assert "Embedding" in f.message


def test_timm_optimizer_factory_and_param_groups() -> None:
    ds = _decays("decay_styles", "timm_factory.py")
    got = sorted((d.site.optimizer.rsplit(".", 1)[-1], d.site.policy) for d in ds)
    assert got == [
        ("AdamW", "exclude_1d"),
        ("create_optimizer_v2", "decay_all"),
        ("create_optimizer_v2", "exclude_1d"),
    ]


# transformers.Trainer / TRL trainers group the parameters themselves
# (data/library_models.yaml optimizer_groups, read from transformers 5.23.0 trainer.py)

MINT_DECAY_ALL = """
from mindspore import mint


def build(net):
    return mint.optim.AdamW(net.get_parameters(), weight_decay=0.1)
"""


def _with_mint(tmp_path: Path, script: str) -> ScanResult:
    """The torch script against MindSpore code that decays every parameter."""
    (tmp_path / "ms_opt.py").write_text(MINT_DECAY_ALL, encoding="utf-8")
    return scan_paths([fx("hf_trainers", script), str(tmp_path / "ms_opt.py")])


def test_trainer_groups_bias_and_norm_weights_out_at_its_weight_decay(tmp_path: Path) -> None:
    [d] = _decays("hf_trainers", "hf_trainer_wd.py")
    assert (d.site.optimizer, d.site.policy) == ("transformers.Trainer", "exclude_module_types")
    assert d.site.names == ["bias", "LayerNorm"] and d.site.weight_decay.value == 0.01
    res = _with_mint(tmp_path, "hf_trainer_wd.py")
    [f] = lint(res, only="SRC002")[0]
    assert f.severity == "error" and f.values["megatron"] == "exclude_module_types"
    assert "transformers.Trainer" in f.message and "weight_decay 0.01" in f.message
    # the same grouping as the MindFormers default: nothing to report
    mf = config("mindformers", optimizer__weight_decay=(0.1, 3))
    res = scan_paths([fx("hf_trainers", "hf_trainer_wd.py")])
    assert lint(res, mf=mf, only="SRC002")[0] == lint(res, mf=mf, only="SRC003")[0] == []


def test_trl_trainer_without_config_decays_nothing(tmp_path: Path) -> None:
    [d] = _decays("hf_trainers", "trl_sft_baseline.py")
    assert d.site.optimizer == "trl.SFTTrainer" and d.site.policy == "exclude_module_types"
    assert (d.site.weight_decay.kind, d.site.weight_decay.value) == ("default", 0.0)
    # weight_decay 0.0: no grouping to compare against the MindSpore side, and no Megatron
    # default assumed for a side whose optimizer code was read
    res = _with_mint(tmp_path, "trl_sft_baseline.py")
    assert lint(res, only="SRC002")[0] == lint(res, only="SRC003")[0] == []


def test_trainer_config_not_read_is_not_decided(tmp_path: Path) -> None:
    [d] = _decays("hf_trainers", "trl_config_param.py")
    assert d.site.weight_decay is None and "sft_config" in d.site.detail
    res = _with_mint(tmp_path, "trl_config_param.py")
    assert lint(res, only="SRC002")[0] == []  # it may decay nothing: never an error
    [f] = lint(res, only="SRC003")[0]
    assert f.severity == "note" and "weight_decay not decided" in f.message


# -- 5. non-contiguous gradients through helpers -----------------------------------------------


def test_transposed_matmul_in_a_helper_called_from_backward() -> None:
    res = scan_paths([fx("backward_helpers")])
    got = {(b.path.rsplit("/", 1)[-1], b.site.function) for b in res.backwards}
    assert ("tp_layers.py", "_weight_grad_gemm") in {(p, fn.split(" ")[0]) for p, fn in got}
    assert ("lora_ops.py", "lora_backward") in {(p, fn.split(" ")[0]) for p, fn in got}
    lora = [b for b in res.backwards if b.site.function.startswith("lora_backward")]
    assert [b.site.loc.line for b in lora] == [
        line_of(fx("backward_helpers", "lora_ops.py"), "transpose(-1, -2)")
    ]  # b.t().contiguous() is contiguous
    assert not any(b.site.function.startswith(("unrelated", "_input_grad")) for b in res.backwards)
    assert any("LoraLinear.backward" in b.site.function for b in lora)


# -- 6. locations ------------------------------------------------------------------------


def test_seed_findings_point_at_the_callers_literal() -> None:
    res, entry = one_entry("locations", "train.py")
    train = fx("locations", "train.py")
    [torch_seed] = entry.of("torch")
    assert torch_seed.loc.path == fx("locations", "mylib", "seed.py")
    assert torch_seed.seed_value == 42
    assert torch_seed.seed_loc is not None
    assert (torch_seed.seed_loc.path, torch_seed.seed_loc.line) == (
        train,
        line_of(train, "seed_all(42)"),
    )
    mg = config("megatron", determinism__seed=(1234, 7))
    findings, _ = lint(res, mg=mg)
    [f] = [f for f in findings if f.rule == "DET021"]
    assert (f.locations[0].path, f.locations[0].line) == (train, line_of(train, "seed_all(42)"))


def test_dropout_in_code_no_entry_point_reaches_is_not_reported() -> None:
    res, _ = one_entry("locations", "train.py")
    res = scan_paths([fx("locations")])
    paths = {d.path for d in res.dropouts}
    assert paths == {fx("locations", "model.py")}


def test_pip_package_named_like_the_importing_file_is_not_unscanned() -> None:
    res, entry = one_entry("locations", "train.py")
    res = scan_paths([fx("locations")])
    [entry] = res.entries
    assert not any("fancy_optimizers" in u for u in entry.unscanned)


# -- 7. cache: --no-cache, cfglint cache clear, a size bound ---------------------------------


def test_no_cache_and_cache_clear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cfglint.cli.app import main

    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(tmp_path))
    main(["--source", fx("entry_repo"), "--no-cache", "--fail-on", "never"])
    assert not list(tmp_path.rglob("scan/*/*.json"))
    main(["--source", fx("entry_repo"), "--fail-on", "never"])
    assert len(list(tmp_path.rglob("scan/*/*.json"))) == 6
    assert main(["cache", "clear"]) == 0
    assert not list(tmp_path.rglob("scan/*/*.json"))


def test_cache_keeps_under_its_bound(tmp_path: Path) -> None:
    from cfglint.evidence.scan.model import FileSummary
    from cfglint.evidence.scan.runner import Cache

    cache = Cache(tmp_path, max_bytes=4000)
    big = FileSummary(classes=[f"C{i}" * 50 for i in range(5)])
    for i in range(20):
        cache.put(f"{i:02d}" + "0" * 62, big)
    assert cache.usage()[1] > 4000
    assert cache.prune() > 0
    n, size = cache.usage()
    assert 0 < n < 20 and size <= 4000
    assert cache.get("19" + "0" * 62) is not None  # the newest entries stay


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_ctrl_c_terminates_the_workers(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    body = "import torch\n\n\n" + "".join(
        f"def f{i}(x):\n    return torch.relu(x) + {i}\n\n\n" for i in range(400)
    )
    for i in range(300):
        (tmp_path / f"m{i}.py").write_text(body)
    env = {**__import__("os").environ, "CFGLINT_CACHE_DIR": str(tmp_path / "c")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cfglint", "--source", str(tmp_path), "--no-cache"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while proc.poll() is None and not workers and time.monotonic() < deadline:
        time.sleep(0.05)
        workers = _children(proc.pid)
    if not workers:
        proc.wait()
        pytest.skip("the scan finished before its workers could be interrupted")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    if proc.returncode == 0:
        # a loaded machine can let the last worker finish between seeing it and the signal
        pytest.skip("the scan finished before the interrupt reached it")
    assert proc.returncode == 130
    assert "Traceback" not in err  # one process answers, workers stay quiet
    for w in workers:
        assert not Path(f"/proc/{w}").exists() or "zombie" in Path(f"/proc/{w}/status").read_text()


def test_condition_is_kept_through_a_call_graph_only_file(tmp_path: Path) -> None:
    files = {
        "helpers.py": "import random\nimport torch\n\n\ndef seed_all(s):\n"
        "    random.seed(s)\n    torch.manual_seed(s)\n",
        # nothing here for the full pass: this file gets the ast call graph only
        "setup_run.py": "from helpers import seed_all\n\n\ndef setup(args):\n"
        "    if args.reproducible:\n        seed_all(args.seed)\n",
        "train.py": "from setup_run import setup\n\n\ndef main(args, loss):\n"
        "    setup(args)\n    loss.backward()\n\n\nif __name__ == '__main__':\n"
        "    main(None, None)\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    res = scan_paths([str(tmp_path / "train.py"), str(tmp_path)])
    assert [p for p in res.stats.parsed_paths if p.endswith("setup_run.py")]
    [entry] = res.entries
    [torch_seed] = entry.of("torch")
    assert torch_seed.conditional and torch_seed.condition == "args.reproducible"
    findings, ctx = lint(res)
    assert "DET013" not in {f.rule for f in findings}
    assert any("only when args.reproducible" in r for _, r in ctx.not_checked)
