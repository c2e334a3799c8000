"""Source scanner: seeding, determinism, dropout, weight-decay grouping, custom backward."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cfglint.check import rulebook
from cfglint.check.engine import Context, run_rules
from cfglint.check.rule import Rule
from cfglint.check.schema import RuleFile
from cfglint.evidence.scan import scan_paths
from cfglint.evidence.scan.link import MAX_DEPTH
from cfglint.evidence.scan.model import ScanResult
from cfglint.load.datacache import load_data
from cfglint.model.config import Config
from cfglint.model.findings import Finding
from cfglint.model.values import Loc, Value

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "sources"
RULE_FILES = (ROOT / "rules" / "determinism.yaml", ROOT / "rules" / "source.yaml")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(tmp_path / "cache"))


def fx(*parts: str) -> str:
    return str(FIX.joinpath(*parts))


def scan(*parts: str, hints: list[str] | None = None, **kw) -> ScanResult:
    return scan_paths([fx(*parts)], entry_hints=hints, **kw)


def _mine(r: Rule) -> bool:
    return r.id.startswith("SRC") or (r.id.startswith("DET") and 10 <= int(r.id[3:]) <= 29)


def rules() -> tuple[Rule, ...]:
    """The source-scan rules (the determinism file also holds the config rules)."""
    out = []
    for f in RULE_FILES:
        out.extend(r for r in RuleFile.model_validate(load_data(f)).rules if _mine(r))
    return rulebook.as_records(out)


def lint(
    res: ScanResult | None,
    mf: Config | None = None,
    mg: Config | None = None,
    only: str | None = None,
) -> tuple[list[Finding], Context]:
    ctx = Context(mf=mf, mg=mg, sources=res)
    chosen = tuple(r for r in rules() if only is None or r.id == only)
    return run_rules(chosen, ctx), ctx


def config(side: str, path: str = "cfg/run.yaml", kind: str | None = None, **fields) -> Config:
    cfg = Config(
        side=side,
        path=path,
        kind=kind or ("mindformers-legacy" if side == "mindformers" else "megatron-script"),
    )
    for dotted, (value, line) in fields.items():
        section, name = dotted.split("__")
        cfg.set(f"{section}.{name}", Value.written(value, name, Loc(path=path, line=line)))
    return cfg


def kinds(res: ScanResult, entry: str) -> list[str]:
    e = res.entry(entry)
    assert e is not None, [x.path for x in res.entries]
    return [x.kind for x in e.effects]


def comparable(res: ScanResult) -> dict:
    """Everything but timing and cache statistics, for comparing two runs."""
    return res.model_dump(exclude={"stats"})


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")


# -- seeding: entry points and call following -----------------------------------------------


def test_megatron_like_seeds_inside_initialize_in_another_module() -> None:
    res = scan("megatron_like", hints=["pretrain_gpt.py"])
    [entry] = res.entries
    assert entry.path.endswith("megatron_like/pretrain_gpt.py")
    assert entry.side == "megatron"
    assert entry.anchor.line == 27 and entry.has_main
    init = fx("megatron_like", "megatron_init", "initialize.py")
    got = {(e.kind, e.loc.path, e.loc.line) for e in entry.effects}
    assert got == {
        ("random", init, 28),
        ("numpy", init, 29),
        ("torch", init, 30),
        ("cuda", init, 32),
    }
    torch_seed = entry.of("torch")[0]
    # seed = seed_ + 100 * rank, seed_ bound to args.seed: the configured seed
    assert torch_seed.seed_from_config and torch_seed.seed_text == "args.seed"
    assert torch_seed.via[0].startswith("main() at ")
    assert any(v.startswith("_set_random_seed() at ") for v in torch_seed.via)


def test_megatron_like_findings_point_at_the_main_block() -> None:
    res = scan("megatron_like", hints=["pretrain_gpt.py"])
    findings, _ = lint(res)
    by_rule = {f.rule: f for f in findings if f.row.startswith("determinism")}
    assert set(by_rule) == {"DET011", "DET014"}  # random/numpy/torch are seeded
    loc = by_rule["DET014"].locations[0]
    assert (loc.path, loc.line, loc.side) == (fx("megatron_like", "pretrain_gpt.py"), 27, "source")
    assert "torch.use_deterministic_algorithms(True)" in by_rule["DET014"].message


def test_seed_all_pytorch_variant_from_the_guide() -> None:
    res = scan("seed_all_pt")
    assert kinds(res, "seed_all_pt/pretrain_gpt.py")[:9] == [
        "random",
        "pythonhashseed",
        "numpy",
        "torch",
        "torch_deterministic",
        "cuda",
        "cuda",
        "cudnn_deterministic",
        "cudnn_benchmark",
    ]
    entry = res.entries[0]
    assert {
        e.seed_value for e in entry.of("random", "numpy", "torch", "cuda") if not e.seed_from_config
    } == {42}
    assert entry.of("cudnn_benchmark")[0].enabled is False
    # pretrain() from megatron.training is modelled: random, numpy, torch, cuda from --seed
    pretrain = [e for e in entry.effects if e.api == "megatron.training.pretrain"]
    assert {e.kind for e in pretrain} == {
        "random",
        "numpy",
        "torch",
        "cuda",
        "torch_deterministic",
    }
    assert all(e.seed_text == "--seed" for e in pretrain if e.kind != "torch_deterministic")
    findings, _ = lint(res)
    assert [f.rule for f in findings if f.row.startswith("determinism")] == []


def test_seed_all_npu_variant() -> None:
    res = scan("seed_all_npu")
    entry = res.entries[0]
    npu = entry.of("npu")
    assert [(e.api, e.loc.line, e.seed_value) for e in npu] == [
        ("torch_npu.npu.manual_seed_all", 18, 42),
        ("torch_npu.npu.manual_seed", 19, 42),
    ]
    assert any(e.api == "mindspeed_llm.training.pretrain" for e in entry.effects)


def test_seed_all_mindspore_variant() -> None:
    res = scan("seed_all_ms")
    entry = res.entries[0]
    assert entry.side == "mindformers"
    det = entry.of("mindspore_deterministic")
    assert (det[0].api, det[0].loc.line, det[0].enabled) == (
        "mindspore.context.set_context",
        19,
        True,
    )
    assert det[1].config_field == "determinism.deterministic"  # build_context
    assert [e.seed_value for e in entry.of("random", "numpy") if e.seed_value] == [42, 42]
    ms = entry.of("mindspore")[0]
    assert ms.api == "mindformers.trainer.Trainer" and ms.seed_from_config and ms.conditional
    findings, _ = lint(res)
    assert [f.rule for f in findings if f.row.startswith("determinism")] == []


def test_mindformers_entry_without_seed_all() -> None:
    res = scan("mindformers_like", hints=["run_mindformer.py"])
    findings, _ = lint(res)
    rows = sorted(f.rule for f in findings if f.row.startswith("determinism"))
    assert rows == ["DET010", "DET011", "DET014"]
    det010 = next(f for f in findings if f.rule == "DET010")
    assert det010.locations[0].line == 17
    assert "seeds numpy and MindSpore from the config's seed" in det010.message
    assert det010.values == {"mindformers": "not seeded"}


def test_mindformers_trainer_does_not_seed_for_seed_zero() -> None:
    res = scan("mindformers_like", hints=["run_mindformer.py"])
    mf = config("mindformers", determinism__seed=(0, 4))
    findings, _ = lint(res, mf=mf)
    rules_hit = {f.rule for f in findings}
    assert {"DET012", "DET013"} <= rules_hit
    det013 = next(f for f in findings if f.rule == "DET013")
    assert "non-zero" in det013.message
    # the loader's verdict for semi-auto parallel runs counts the same way
    skipped = config("mindformers", determinism__seed=(42, 4), determinism__seed_applied=(False, 4))
    assert {"DET012", "DET013"} <= {f.rule for f in lint(res, mf=skipped)[0]}
    applied = config("mindformers", determinism__seed=(42, 4))
    assert not {"DET012", "DET013"} & {f.rule for f in lint(res, mf=applied)[0]}


def test_mindformers_deterministic_from_config() -> None:
    res = scan("mindformers_like", hints=["run_mindformer.py"])
    on = config("mindformers", determinism__deterministic=(True, 9))
    assert [f for f in lint(res, mf=on, only="DET014")[0]] == []
    off = config("mindformers", determinism__deterministic=(False, 9))
    [f] = lint(res, mf=off, only="DET014")[0]
    assert "train_precision_sync" in f.message


def test_megatron_deterministic_mode_from_config(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pretrain_gpt.py": """
        import torch
        from megatron.training import pretrain

        if __name__ == "__main__":
            pretrain(None, None, None, None)
    """
        },
    )
    res = scan_paths([str(tmp_path)])
    mg = config("megatron", determinism__deterministic=(True, 3))
    assert lint(res, mg=mg, only="DET014")[0] == []
    [f] = lint(res, mg=config("megatron"), only="DET014")[0]
    assert "only with --deterministic-mode (not set in run.yaml)" in f.message
    [f] = lint(res, mg=config("megatron", determinism__deterministic=(False, 3)), only="DET014")[0]
    assert "deterministic is false at cfg/run.yaml:3" in f.message
    # Megatron's initialize seeds random, numpy, torch: those rows stay quiet
    assert lint(res, only="DET010")[0] == [] and lint(res, only="DET013")[0] == []


def test_pythonhashseed_exported_by_launch_script() -> None:
    res = scan("megatron_like", hints=["pretrain_gpt.py"])
    mg = config("megatron", path="run.sh")
    mg.env["PYTHONHASHSEED"] = Value.written("0", "PYTHONHASHSEED", Loc(path="run.sh", line=2))
    assert lint(res, mg=mg, only="DET011")[0] == []
    [f] = lint(res, mg=config("megatron", path="run.sh"), only="DET011")[0]
    assert "run.sh" in f.message


def test_device_only_seed_is_not_a_framework_seed(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "train.py": """
        import torch

        if __name__ == "__main__":
            torch.cuda.manual_seed_all(1)
    """
        },
    )
    [f] = lint(scan_paths([str(tmp_path / "train.py")]), only="DET013")[0]
    assert "only the device generator" in f.message


def test_relative_imports_reexports_and_module_constants() -> None:
    # named explicitly: neither script trains, so neither would be picked from the folder
    entries = [fx("relative_pkg", "launch_train.py"), fx("relative_pkg", "trainer", "main.py")]
    res = scan_paths([*entries, fx("relative_pkg")])
    launch = res.entry("relative_pkg/launch_train.py")
    assert launch is not None
    # `import trainer; trainer.seed_all()` goes through trainer/__init__.py's re-export
    assert [(e.kind, e.seed_value) for e in launch.effects] == [
        ("random", 2024),
        ("pythonhashseed", 2024),
        ("numpy", 2024),
        ("torch", 2024),
        ("torch_deterministic", None),
    ]
    main = res.entry("trainer/main.py")
    assert main is not None
    assert {e.seed_value for e in main.of("random", "numpy", "torch")} == {7}
    assert main.of("torch")[0].loc.path == fx("relative_pkg", "trainer", "seeding.py")


def test_cycles_terminate(tmp_path: Path) -> None:
    res = scan("cycle", hints=["ping.py"])
    [entry] = res.entries
    assert [(e.kind, e.seed_value) for e in entry.effects] == [("numpy", 5)]


def test_depth_cap(tmp_path: Path) -> None:
    n = MAX_DEPTH + 3
    files = {}
    for i in range(n):
        body = f"from m{i + 1} import f{i + 1}\n\ndef f{i}():\n    f{i + 1}()\n"
        files[f"m{i}.py"] = body
    files[f"m{n}.py"] = f"import random\n\ndef f{n}():\n    random.seed(1)\n"
    files["train_deep.py"] = "from m0 import f0\n\nif __name__ == '__main__':\n    f0()\n"
    files["train_shallow.py"] = (
        f"from m{n - 3} import f{n - 3}\n\nif __name__ == '__main__':\n    f{n - 3}()\n"
    )
    write(tmp_path, files)
    res = scan_paths(
        [str(tmp_path / "train_deep.py"), str(tmp_path / "train_shallow.py"), str(tmp_path)]
    )
    assert kinds(res, "train_shallow.py") == ["random"]
    assert kinds(res, "train_deep.py") == []
    # the walk says where it stopped, and the finding says a seed beyond it is not seen
    deep = res.entry("train_deep.py")
    assert deep is not None and any(f"{MAX_DEPTH} calls deep" in s for s in deep.not_followed)
    findings, _ = lint(res, only="DET010")
    [det] = [f for f in findings if "train_deep.py" in f.message]
    assert "not followed: f" in det.message


def test_entry_hints_pick_the_launched_script() -> None:
    res = scan("nanogpt_like", hints=["nanogpt_like/train.py"])
    [entry] = res.entries
    assert not entry.has_main and entry.anchor.line == 1
    torch_seed = entry.of("torch")[0]
    # 1337 + seed_offset: the base is compared, the offset shown as written
    assert (torch_seed.seed_value, torch_seed.seed_offset) == (1337, "seed_offset")
    # without a hint, a folder with no main block has no entry point
    assert scan("nanogpt_like").entries == []


# -- seed values ----------------------------------------------------------------------------


def test_seed_mismatch_between_source_sides(tmp_path: Path) -> None:
    entries = [fx("plain_decay", "train_plain.py"), fx("seed_all_ms", "run_mindformer.py")]
    res = scan_paths([*entries, fx("plain_decay"), fx("seed_all_ms")])
    mf = config("mindformers", path="mf.yaml", determinism__seed=(42, 6))
    [f] = lint(res, mf=mf, only="DET020")[0]
    assert f.values == {"megatron": 1234, "mindformers": 42}
    paths = [(loc.path, loc.line, loc.side) for loc in f.locations]
    # the caller's literal (seed_everything(1234) in the script), not the helper's body
    assert (fx("plain_decay", "train_plain.py"), 14, "source") in paths
    assert ("mf.yaml", 6, "mindformers") in paths
    same = config("mindformers", path="mf.yaml", determinism__seed=(1234, 6))
    assert lint(res, mf=same, only="DET020")[0] == []


def test_source_seed_against_own_config() -> None:
    res = scan("seed_all_pt")
    mg = config("megatron", path="args.sh", determinism__seed=(1234, 10))
    [f] = lint(res, mg=mg, only="DET021")[0]
    assert f.values == {"source": 42, "megatron": 1234}
    assert "re-seeds from the config later" in f.message
    assert [(loc.path, loc.line) for loc in f.locations] == [
        (fx("seed_all_pt", "pretrain_gpt.py"), 14),
        ("args.sh", 10),
    ]
    assert lint(res, mg=config("megatron", determinism__seed=(42, 1)), only="DET021")[0] == []


# -- weight decay ---------------------------------------------------------------------------


def decay(res: ScanResult, suffix: str):  # type: ignore[no-untyped-def]
    found = [d for d in res.decays if d.path.endswith(suffix)]
    assert len(found) == 1, [d.path for d in res.decays]
    return found[0]


def test_decay_policies_are_classified() -> None:
    res = scan_paths([str(FIX)])
    nano = decay(res, "nanogpt_like/model.py")
    assert (nano.site.policy, nano.site.loc.line) == ("exclude_1d", 44)
    assert [(e.loc.line, e.text) for e in nano.site.evidence] == [
        (36, "p.dim() >= 2"),
        (37, "p.dim() < 2"),
    ]
    hf = decay(res, "hf_like/finetune.py")
    assert hf.site.policy == "exclude_by_name"
    assert hf.site.names == ["LayerNorm.weight", "bias"]
    assert hf.policy_path == fx("hf_like", "finetune.py") and hf.site.evidence[0].loc.line == 10
    plain = decay(res, "plain_decay/train_plain.py")
    assert (plain.site.policy, plain.site.loc.line, plain.site.weight_decay.value) == (
        "decay_all",
        9,
        0.1,
    )
    rel = decay(res, "trainer/optim.py")
    assert rel.site.policy == "exclude_1d" and rel.site.names == [".bias"]
    ms = decay(res, "mindformers_like/ms_optim.py")
    assert (ms.side, ms.site.policy, ms.site.names) == (
        "mindformers",
        "exclude_by_name",
        ["beta", "gamma"],
    )


def test_decay_all_against_mindformers_default() -> None:
    res = scan("plain_decay")
    mf = config("mindformers", path="llama.yaml", optimizer__weight_decay=(0.1, 31))
    [f] = lint(res, mf=mf, only="SRC002")[0]
    assert f.severity == "error"
    assert f.values == {"megatron": "decay_all", "mindformers": "default"}
    assert "MindFormers default policy" in f.message and "every parameter" in f.message
    assert [(loc.path, loc.line, loc.side) for loc in f.locations] == [
        (fx("plain_decay", "train_plain.py"), 9, "source"),
        ("llama.yaml", 31, "mindformers"),
    ]
    # weight decay 0 on the MindFormers side: grouping is moot (a value rule's business)
    zero = config("mindformers", path="llama.yaml", optimizer__weight_decay=(0.0, 31))
    assert lint(res, mf=zero, only="SRC002")[0] == []


def test_matching_and_unclear_policies() -> None:
    mf = config("mindformers", optimizer__weight_decay=(0.1, 3))
    assert lint(scan("nanogpt_like"), mf=mf, only="SRC002")[0] == []
    assert lint(scan("nanogpt_like"), mf=mf, only="SRC003")[0] == []
    [note] = lint(scan("hf_like"), mf=mf, only="SRC003")[0]
    assert note.severity == "note" and "'LayerNorm.weight', 'bias'" in note.message


def test_mindspore_source_against_megatron_default() -> None:
    res = scan("mindformers_like")
    mg = config("megatron", path="args.sh", optimizer__weight_decay=(0.1, 20))
    [f] = lint(res, mg=mg, only="SRC003")[0]
    assert "Megatron default policy" in f.message
    assert f.locations[-1].path == "args.sh" and f.locations[-1].side == "megatron"


# -- dropout and custom backward ------------------------------------------------------------


def test_dropout_in_code() -> None:
    res = scan("dropout_cases")
    got = sorted(
        (os.path.basename(d.path), d.site.loc.line, d.site.p, d.site.how) for d in res.dropouts
    )
    assert got == [
        ("layers_ms.py", 8, 0.1, "keep_prob"),  # keep_prob=0.9
        ("layers_ms.py", 9, 0.2, "keep_prob"),  # positional is keep_prob in MindSpore
        ("layers_ms.py", 10, 0.1, "p"),
        ("layers_ms.py", 11, 0.5, "default"),
        ("layers_ms.py", 14, 0.15, "p"),
        ("layers_ms.py", 17, 0.1, "p"),
        ("layers_ms.py", 18, 0.2, "p"),
        ("layers_pt.py", 9, 0.5, "default"),
        ("layers_pt.py", 10, 0.1, "p"),
        ("layers_pt.py", 11, 0.2, "p"),
        ("layers_pt.py", 16, 0.1, "p"),
        ("layers_pt.py", 18, 0.05, "p"),
        ("layers_pt.py", 20, 0.25, "p"),  # call spread over lines: the call's first line
    ]
    findings, _ = lint(res, only="SRC001")
    assert len(findings) == len(got)
    first = next(
        f for f in findings if f.locations[0].line == 9 and "layers_pt" in f.locations[0].path
    )
    assert "default 0.5" in first.message and first.values == {"megatron": 0.5}


def test_noncontiguous_transpose_in_custom_backward() -> None:
    res = scan("glm4_backward")
    got = sorted(
        (os.path.basename(b.path), b.site.loc.line, b.site.function, b.site.transposed)
        for b in res.backwards
    )
    assert got == [
        ("ms_layers.py", 16, "ColumnParallelMatmul.bprop", "ops.transpose(dout, (1, 0))"),
        ("pt_layers.py", 17, "ColumnParallelMatmul.backward", "out_t"),
    ]
    findings, _ = lint(res, only="SRC004")
    assert {f.severity for f in findings} == {"note"} and len(findings) == 2
    megatron_style = scan("megatron_like")
    assert [b.site.matmul for b in megatron_style.backwards] == [
        "grad_output.t().matmul(total_input)",
    ]


# -- robustness -----------------------------------------------------------------------------


def test_syntax_error_is_one_input_error_and_the_rest_is_scanned() -> None:
    res = scan("broken", hints=["good.py"])
    [err] = res.errors
    assert err.path == fx("broken", "bad_syntax.py") and err.line == 4
    assert "invalid Python syntax" in err.message and "\n" not in err.message
    assert [d.site.loc.line for d in res.dropouts] == [8]
    assert kinds(res, "good.py") == ["torch"]


def test_unreadable_inputs(tmp_path: Path) -> None:
    (tmp_path / "latin1.py").write_bytes(b"x = '\xe9'\n")
    (tmp_path / "blob.py").write_bytes(b"\x00\x01\x02")
    (tmp_path / "run.sh").write_text("python train.py\n")
    res = scan_paths([str(tmp_path), str(tmp_path / "run.sh"), str(tmp_path / "missing")])
    msgs = {os.path.basename(e.path): (e.level, e.message) for e in res.errors}
    assert msgs["latin1.py"][0] == "error" and "UTF-8" in msgs["latin1.py"][1]
    assert "binary" in msgs["blob.py"][1]
    assert msgs["run.sh"][0] == "warning"
    assert msgs["missing"] == ("error", "no such file or directory")


def test_scanned_code_is_never_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(FIX / "canary", tmp_path / "canary")
    monkeypatch.chdir(tmp_path)
    res = scan_paths([str(tmp_path / "canary" / "evil_train.py")])
    assert res.entries[0].of("random")  # the main block was analysed...
    assert not (tmp_path / "CANARY").exists()  # ...but neither imported nor run
    assert not (tmp_path / "canary" / "CANARY").exists()


def test_plain_lint_does_not_import_libcst(tmp_path: Path) -> None:
    code = (
        "import sys, cfglint.check.builtins.lr, cfglint.evidence.scan\n"
        "import cfglint.check.builtins.source\n"
        "assert 'libcst' not in sys.modules\n"
        "from cfglint.evidence.scan import scan_paths\n"
        f"r = scan_paths([{fx('seed_all_pt')!r}])\n"
        "print('libcst' in sys.modules, r.stats.parsed)\n"
    )
    env = {**os.environ, "CFGLINT_CACHE_DIR": str(tmp_path / "c")}
    run = [sys.executable, "-c", code]
    cold = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    warm = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    # the scan reads CPython's ast: libcst is never loaded, cold (parsing) or warm (cache)
    assert cold.stdout.split() == ["False", "1"]
    assert warm.stdout.split() == ["False", "0"]


def test_checks_without_sources_report_not_checked() -> None:
    findings, ctx = lint(None)
    assert findings == []
    reasons = {reason for _, reason in ctx.not_checked}
    assert all(r.endswith("no training sources given (--source)") for r in reasons)
    assert {row for row, _ in ctx.not_checked} >= {
        "determinism.python_seed",
        "determinism.numpy_seed",
        "determinism.framework_seed",
        "determinism.deterministic_algorithms",
        "determinism.same_seed",
        "source.dropout_in_code",
        "source.weight_decay_grouping",
        "source.noncontiguous_grad",
    }


# -- cache and parallel parsing -------------------------------------------------------------


def test_cold_and_warm_results_are_identical() -> None:
    cold = scan_paths([str(FIX)])
    warm = scan_paths([str(FIX)])
    assert cold.stats.parsed == cold.stats.files and cold.stats.cached == 0
    assert warm.stats.parsed == 0 and warm.stats.cached == cold.stats.files
    assert comparable(cold) == comparable(warm)
    assert comparable(scan_paths([str(FIX)], use_cache=False)) == comparable(cold)


def test_one_changed_file_is_parsed_again(tmp_path: Path) -> None:
    shutil.copytree(FIX / "plain_decay", tmp_path / "proj")
    first = scan_paths([str(tmp_path / "proj")])
    assert first.stats.parsed == 2
    target = tmp_path / "proj" / "train_plain.py"
    target.write_text(target.read_text().replace("weight_decay=0.1", "weight_decay=0.05"))
    second = scan_paths([str(tmp_path / "proj")])
    assert second.stats.parsed_paths == [str(target)]
    assert second.stats.cached == 1
    assert decay(second, "train_plain.py").site.weight_decay.value == 0.05


def test_parallel_and_sequential_parsing_agree(tmp_path: Path) -> None:
    files = {"train_main.py": "from pkg0.mod0 import f0\n\nif __name__ == '__main__':\n    f0(3)\n"}
    for i in range(60):
        nxt = f"from pkg{i + 1}.mod{i + 1} import f{i + 1}\n" if i < 59 else "import numpy as np\n"
        call = f"    f{i + 1}(seed)\n" if i < 59 else "    np.random.seed(seed)\n"
        files[f"pkg{i}/mod{i}.py"] = f"{nxt}\n\ndef f{i}(seed):\n{call}"
        files[f"pkg{i}/__init__.py"] = ""
    write(tmp_path, files)
    given = [str(tmp_path / "train_main.py"), str(tmp_path)]
    seq = scan_paths(given, jobs=1, use_cache=False)
    par = scan_paths(given, jobs=2, use_cache=False)
    assert par.stats.workers == 2 and seq.stats.workers == 1
    assert comparable(par) == comparable(seq)
    # files deep is past the depth cap: nothing reached, but no blow-up either
    assert kinds(par, "train_main.py") == []


# -- rules ----------------------------------------------------------------------------------


def test_rule_files_cover_the_rows() -> None:
    loaded = rules()
    rows = {r.row for r in loaded}
    assert rows == {
        "determinism.python_seed",
        "determinism.numpy_seed",
        "determinism.framework_seed",
        "determinism.deterministic_algorithms",
        "determinism.same_seed",
        "source.dropout_in_code",
        "source.weight_decay_grouping",
        "source.noncontiguous_grad",
    }
    assert all(r.kind == "builtin" for r in loaded)
    text = RULE_FILES[0].read_text()
    assert "# DET001-DET009: config and environment rules" in text


def test_line_numbers_match_libcst_positions() -> None:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from cfglint.evidence.scan.scanner import summarize

    for path in sorted(FIX.rglob("*.py")):
        text = path.read_text()
        s = summarize(text)
        if s.error:
            continue
        wrapper = MetadataWrapper(cst.parse_module(text))
        pos = wrapper.resolve(PositionProvider)
        call_lines = {p.start.line for n, p in pos.items() if isinstance(n, cst.Call)}
        def_lines = {p.start.line for n, p in pos.items() if isinstance(n, cst.Name)}
        for fn in s.functions.values():
            assert fn.loc.line in def_lines, (path, fn.qualname)
            for c in fn.calls:
                assert c.loc.line in call_lines, (path, c.target, c.loc.line)
            for e in fn.effects:
                assert e.loc.line in call_lines | _assign_lines(pos), (path, e)
        for d in s.dropouts:
            assert d.loc.line in call_lines, (path, d)


def _assign_lines(pos) -> set[int]:  # type: ignore[no-untyped-def]
    import libcst as cst

    return {p.start.line for n, p in pos.items() if isinstance(n, cst.Assign)}


# -- more edges --------------------------------------------------------------------------------


def test_a_script_named_alone_reads_its_siblings() -> None:
    # `python pretrain_gpt.py` finds megatron_init/ through sys.path[0]: so does the scan
    res = scan_paths([fx("megatron_like", "pretrain_gpt.py")])  # helpers not given
    [entry] = res.entries
    assert entry.effects and entry.unscanned == []
    assert any("megatron_init" in f for f in res.files)


def test_calls_into_unscanned_modules_are_named(tmp_path: Path) -> None:
    # a folder without __init__.py next to the script: not read (a namespace package
    # may span several folders), and named as not scanned
    write(
        tmp_path,
        {
            "helpers/seeding.py": "import random\n\ndef seed_all(s):\n    random.seed(s)\n",
            "train.py": "from helpers.seeding import seed_all\n\nif __name__ == '__main__':\n"
            "    seed_all(1)\n",
        },
    )
    res = scan_paths([str(tmp_path / "train.py")])
    [entry] = res.entries
    assert entry.effects == [] and entry.unscanned == ["helpers.seeding"]
    findings, _ = lint(res, only="DET010")
    assert "not scanned (helpers.seeding)" in findings[0].message


def test_test_suites_are_not_training_code(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "tests/test_layers.py": "from torch import nn\n\nDROP = nn.Dropout(0.1)\n",
            "model.py": "from torch import nn\n\nDROP = nn.Dropout(0.1)\n",
        },
    )
    res = scan_paths([str(tmp_path)])
    assert [os.path.basename(d.path) for d in res.dropouts] == ["model.py"]
    explicit = scan_paths([str(tmp_path / "tests" / "test_layers.py")])
    assert len(explicit.dropouts) == 1  # named on the command line: scanned as asked


def test_mint_optimizer_decays_everything(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "opt.py": """
        from mindspore import mint, nn

        def build(net):
            a = mint.optim.AdamW(net.get_parameters(), weight_decay=0.1)
            b = nn.AdamWeightDecay(net.trainable_params(), weight_decay=0.1)
            return a, b
    """
        },
    )
    res = scan_paths([str(tmp_path)])
    assert [(d.site.policy, d.site.names) for d in res.decays] == [
        ("decay_all", []),
        ("exclude_by_name", ["beta", "gamma"]),
    ]


def test_unclear_policy_is_not_compared_with_a_guess() -> None:
    # only PyTorch code, no MindFormers side at all: a name list against an assumed
    # default is too speculative for a note; decay-everything against it is still an error
    assert lint(scan("hf_like"), only="SRC003")[0] == []
    [f] = lint(scan("plain_decay"), only="SRC002")[0]
    assert "assumed" in f.message


def test_strings_that_cannot_be_stored_are_ignored(tmp_path: Path) -> None:
    write(tmp_path, {"odd.py": 'X = "\\ud800"\nNO_DECAY = ["\\udcff"]\nimport torch\n'})
    res = scan_paths([str(tmp_path)], jobs=1)
    assert res.errors == [] and res.files
    assert scan_paths([str(tmp_path)]).stats.cached == 1  # and the summary was cached


def test_odd_layout_lines() -> None:
    res = scan("layout", "odd_layout.py")
    assert [(d.site.loc.line, d.site.p) for d in res.dropouts] == [
        (43, 0.3),
        (45, 0.2),
        (49, 0.4),
        (54, 0.1),
    ]
    assert [(e.kind, e.loc.line) for e in res.entries[0].effects] == [("torch", 35)]


SPELLINGS = """
import os
import random as rnd
import numpy
import numpy as np
import torch
import torch_npu
import mindspore
import mindspore as ms
from mindspore import set_seed, context
from mindspore.common import set_seed as common_set_seed
from torch.backends import cudnn
from megatron.training.initialize import _set_random_seed, initialize_megatron


def main():
    rnd.seed(1)                                     # random
    os.environ["PYTHONHASHSEED"] = "2"              # pythonhashseed
    os.environ.setdefault("PYTHONHASHSEED", "3")    # pythonhashseed
    os.putenv("PYTHONHASHSEED", "4")                # pythonhashseed
    np.random.seed(5)                               # numpy
    numpy.random.seed(6)                            # numpy
    torch.manual_seed(7)                            # torch
    torch.cuda.manual_seed(8)                       # cuda
    torch.cuda.manual_seed_all(9)                   # cuda
    torch_npu.npu.manual_seed(10)                   # npu
    torch_npu.npu.manual_seed_all(11)               # npu
    torch.use_deterministic_algorithms(True)        # torch_deterministic
    cudnn.deterministic = True                      # cudnn_deterministic
    cudnn.benchmark = False                         # cudnn_benchmark
    mindspore.set_seed(12)                          # mindspore
    ms.set_seed(13)                                 # mindspore
    set_seed(14)                                    # mindspore
    common_set_seed(15)                             # mindspore
    mindspore.common.set_seed(16)                   # mindspore
    ms.set_context(deterministic="ON")              # mindspore_deterministic
    context.set_context(deterministic="OFF")        # mindspore_deterministic
    mindspore.context.set_context(mode=0)           # (not a determinism switch)
    ms.set_deterministic(True)                      # mindspore_deterministic
    _set_random_seed(17)                            # random, numpy, torch, cuda
    initialize_megatron()                           # same, from --seed; + config switch


if __name__ == "__main__":
    main()
"""


def test_api_spellings(tmp_path: Path) -> None:
    text = SPELLINGS.lstrip("\n")
    write(tmp_path, {"train.py": text})
    lines = text.splitlines()

    def at(snippet: str) -> int:
        return next(i for i, line in enumerate(lines, 1) if snippet in line)

    [entry] = scan_paths([str(tmp_path / "train.py")]).entries
    got = [(e.loc.line, e.kind, e.seed_value, e.enabled) for e in entry.effects]
    expected = [
        ("rnd.seed(1)", "random", 1, True),
        ('os.environ["PYTHONHASHSEED"]', "pythonhashseed", 2, True),
        ("os.environ.setdefault", "pythonhashseed", 3, True),
        ("os.putenv", "pythonhashseed", 4, True),
        ("np.random.seed(5)", "numpy", 5, True),
        ("numpy.random.seed(6)", "numpy", 6, True),
        ("torch.manual_seed(7)", "torch", 7, True),
        ("cuda.manual_seed(8)", "cuda", 8, True),
        ("manual_seed_all(9)", "cuda", 9, True),
        ("npu.manual_seed(10)", "npu", 10, True),
        ("npu.manual_seed_all(11)", "npu", 11, True),
        ("use_deterministic_algorithms", "torch_deterministic", None, True),
        ("cudnn.deterministic", "cudnn_deterministic", None, True),
        ("cudnn.benchmark", "cudnn_benchmark", None, False),
        ("mindspore.set_seed(12)", "mindspore", 12, True),
        ("mindspore.set_seed(12)", "numpy", 12, True),  # mindspore.set_seed seeds numpy too
        ("mindspore.set_seed(12)", "random", 12, True),  # and random (dataset config)
        ("ms.set_seed(13)", "mindspore", 13, True),
        ("ms.set_seed(13)", "numpy", 13, True),  # mindspore.set_seed seeds numpy too
        ("ms.set_seed(13)", "random", 13, True),  # and random (dataset config)
        ("    set_seed(14)", "mindspore", 14, True),
        ("    set_seed(14)", "numpy", 14, True),  # mindspore.set_seed seeds numpy too
        ("    set_seed(14)", "random", 14, True),  # and random (dataset config)
        ("common_set_seed(15)", "mindspore", 15, True),
        ("common_set_seed(15)", "numpy", 15, True),  # mindspore.set_seed seeds numpy too
        ("common_set_seed(15)", "random", 15, True),  # and random (dataset config)
        ("mindspore.common.set_seed(16)", "mindspore", 16, True),
        ("mindspore.common.set_seed(16)", "numpy", 16, True),  # mindspore.set_seed seeds numpy too
        ("mindspore.common.set_seed(16)", "random", 16, True),  # and random (dataset config)
        ('ms.set_context(deterministic="ON")', "mindspore_deterministic", None, True),
        ('context.set_context(deterministic="OFF")', "mindspore_deterministic", None, False),
        ("ms.set_deterministic(True)", "mindspore_deterministic", None, True),
        ("_set_random_seed(17)", "random", 17, True),
    ]
    assert got[: len(expected)] == [(at(s), k, v, e) for s, k, v, e in expected]
    megatron = [
        (e.kind, e.seed_text) for e in entry.effects if e.loc.line == at("initialize_megatron()")
    ]
    assert megatron == [
        ("random", "--seed"),
        ("numpy", "--seed"),
        ("torch", "--seed"),
        ("cuda", "--seed"),
        ("torch_deterministic", ""),
    ]


def test_other_decay_policies(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "opt.py": """
        import torch

        def bias_only(model):
            groups = [
                {"params": [p for n, p in model.named_parameters() if "bias" not in n],
                 "weight_decay": 0.1},
                {"params": [p for n, p in model.named_parameters() if "bias" in n],
                 "weight_decay": 0.0},
            ]
            return torch.optim.AdamW(groups)

        def by_module(model):
            groups = [
                {"params": model.encoder.parameters(), "weight_decay": 0.1},
                {"params": model.head.parameters(), "weight_decay": 0.0},
            ]
            return torch.optim.AdamW(groups)

        def by_len_shape(model):
            decay = [p for p in model.parameters() if len(p.shape) > 1]
            rest = [p for p in model.parameters() if len(p.shape) == 1]
            return torch.optim.SGD([{"params": decay}, {"params": rest, "weight_decay": 0}])
    """
        },
    )
    res = scan_paths([str(tmp_path)])
    got = {d.site.function: (d.site.policy, d.site.detail) for d in res.decays}
    assert got["bias_only"] == ("exclude_bias", "biases skipped by name")
    assert got["by_module"] == ("explicit_groups", "hand-built groups, weight_decay 0.1, 0")
    assert got["by_len_shape"][0] == "exclude_1d"
    mf = config("mindformers", optimizer__weight_decay=(0.1, 3))
    mismatch = lint(res, mf=mf, only="SRC002")[0]
    assert [f.values["megatron"] for f in mismatch] == ["exclude_bias"]
    unclear = lint(res, mf=mf, only="SRC003")[0]
    assert [f.values["megatron"] for f in unclear] == ["explicit_groups"]


def test_huge_files_are_input_errors(tmp_path: Path) -> None:
    (tmp_path / "generated.py").write_text("X = 1\n" * 400_000)
    [err] = scan_paths([str(tmp_path)]).errors
    assert "larger than" in err.message


def test_functions_handed_to_a_launcher_are_followed(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "train_ddp.py": """
        import torch
        import torch.multiprocessing as mp


        def worker(rank, world_size, seed=3):
            torch.manual_seed(seed + rank)
            torch.use_deterministic_algorithms(True)


        if __name__ == "__main__":
            world_size = 8
            mp.spawn(worker, args=(world_size,), nprocs=world_size)
    """
        },
    )
    [entry] = scan_paths([str(tmp_path / "train_ddp.py")]).entries
    assert [e.kind for e in entry.effects] == ["torch", "torch_deterministic"]
    assert entry.effects[0].via[0].startswith("worker (passed to a call) at ")


# -- the full pass on ast: Python's own evaluation order --------------------------------------


def test_a_training_script_with_python312_fstrings_is_read(tmp_path: Path) -> None:
    # PEP 701 lets an f-string reuse its quotes; Python 3.11's parser rejects the whole
    # file, so the f-strings are blanked (found by libcst, loaded for this file only)
    write(
        tmp_path,
        {
            "train.py": """\
            import torch

            def main(cfg, loss, opt):
                print(f"run {cfg["name"]} at {cfg['lr']:.2e}")
                banner = f\"\"\"
                  {cfg["name"]}
                \"\"\"
                torch.manual_seed(cfg["seed"])
                loss.backward()
                opt.step()

            if __name__ == "__main__":
                main({"name": "x", "seed": 7}, None, None)
            """
        },
    )
    res = scan_paths([str(tmp_path / "train.py")], use_cache=False)
    assert res.errors == []
    [entry] = res.entries
    [torch_seed] = entry.of("torch")
    assert torch_seed.loc.line == 8  # positions survive the blanking


def test_python312_syntax_that_cannot_be_read_says_so(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text('x = f"{a["k"]}" +\n', encoding="utf-8")
    [err] = scan_paths([str(tmp_path / "bad.py")], use_cache=False).errors
    assert err.line == 1 and "\n" not in err.message
    if sys.version_info < (3, 12):
        assert "valid from Python 3.12 on" in err.message
    else:
        assert "invalid Python syntax" in err.message


def test_decorator_arguments_run_where_the_function_is_defined(tmp_path: Path) -> None:
    # `@autotune(configs=build_configs())` runs build_configs at import, whether or not
    # the decorated function is ever called (modded-nanogpt's triton kernels)
    write(
        tmp_path,
        {
            "train.py": """\
            import random
            import torch

            def registered(seed):
                random.seed(seed)
                return lambda f: f

            @registered(1234)
            def unused_kernel():
                pass

            def step(model, opt):
                model().backward()
                opt.step()

            step(None, None)
            """
        },
    )
    res = scan_paths([str(tmp_path / "train.py")], use_cache=False)
    [entry] = res.entries
    [seeded] = entry.of("random")
    assert seeded.seed_value == 1234
    assert not seeded.conditional


def test_an_elif_chain_ending_in_raise_keeps_the_negated_test(tmp_path: Path) -> None:
    # `if a: ... elif b: seed ... else: raise`: the seed runs only when `a` is false
    write(
        tmp_path,
        {
            "train.py": """\
            import torch

            def setup(cfg):
                if cfg.mode == "eval":
                    return None
                elif cfg.mode == "train":
                    torch.manual_seed(cfg.seed)
                else:
                    raise ValueError(cfg.mode)

            def main(cfg, loss, opt):
                setup(cfg)
                loss.backward()
                opt.step()

            if __name__ == "__main__":
                main(None, None, None)
            """
        },
    )
    res = scan_paths([str(tmp_path / "train.py")], use_cache=False)
    [entry] = res.entries
    [seed] = entry.of("torch")
    assert seed.conditional and seed.condition == 'not (cfg.mode == "eval")'


def test_constants_handed_to_a_call_are_not_functions() -> None:
    from cfglint.evidence.scan.scanner import summarize

    # (a star import keeps every bare name as a possible function of that module)
    s = summarize(
        "import torch\nfrom helpers import *\n\ndef f(m):\n    torch.manual_seed(0)\n"
        "    m.train(True)\n    m.fit(None, False)\n"
    )
    assert {c.target for c in s.functions["f"].calls}.isdisjoint({"True", "False", "None"})


def test_a_gradient_self_test_is_not_a_training_entry_point(tmp_path: Path) -> None:
    # a kernel module whose main block checks its backward against a reference (lingua's
    # index_matmul.py, causal_conv1d_compilable.py): gradients, but nothing is updated
    write(
        tmp_path,
        {
            "kernels/fused_gate.py": """\
            import torch

            def fused_gate(x, w):
                return torch.sigmoid(x @ w)

            if __name__ == "__main__":
                torch.manual_seed(0)
                x = torch.randn(4, 8, requires_grad=True)
                w = torch.randn(8, 8, requires_grad=True)
                fused_gate(x, w).sum().backward()
                ref = x.grad.clone()
                x.grad = None
                torch.sigmoid(x @ w).sum().backward()
                assert torch.allclose(ref, x.grad)
            """,
            "kernels/__init__.py": "",
            "sgd_by_hand.py": """\
            import torch
            from kernels.fused_gate import fused_gate

            w = torch.randn(8, 8, requires_grad=True)
            for step in range(100):
                loss = fused_gate(torch.randn(4, 8), w).sum()
                loss.backward()
                with torch.no_grad():
                    w -= 0.1 * w.grad
                    w.grad.zero_()
            """,
        },
    )
    res = scan_paths([str(tmp_path)], use_cache=False)
    assert [os.path.basename(e.path) for e in res.entries] == ["sgd_by_hand.py"]


def test_composer_seeding_is_modelled(tmp_path: Path) -> None:
    # llm-foundry: composer's reproducibility.seed_all, then Trainer(seed=...).fit()
    write(
        tmp_path,
        {
            "train.py": """\
            from composer import Trainer
            from composer.utils import reproducibility

            def train(cfg, model, loader):
                reproducibility.seed_all(cfg.seed)
                trainer = Trainer(model=model, train_dataloader=loader, seed=cfg.seed)
                trainer.fit()

            if __name__ == "__main__":
                train(None, None, None)
            """
        },
    )
    res = scan_paths([str(tmp_path / "train.py")], use_cache=False)
    [entry] = res.entries
    assert entry.of("seed_helper") == []  # no longer "a library helper with no model"
    assert {e.kind for e in entry.of("random", "numpy", "torch", "cuda")} == {
        "random",
        "numpy",
        "torch",
        "cuda",
    }
    rules_found = {f.rule for f in lint(res)[0]}
    assert "DET011" in rules_found  # PYTHONHASHSEED is still not set
    assert rules_found.isdisjoint({"DET010", "DET012", "DET013"})


def test_typer_commands_registered_by_decorator_are_entry_points(tmp_path: Path) -> None:
    # llm-foundry's `llmfoundry train`: `@app.command(name="train")` registers the command,
    # `app()` in the main block dispatches; only the commands that train are entry points
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/steps.py": """\
            import torch

            def fit(model, opt):
                torch.manual_seed(5)
                model().backward()
                opt.step()
            """,
            "pkg/cli.py": """\
            from typer import Typer
            from pkg.steps import fit

            app = Typer()

            @app.command(name="train")
            def train_cmd(path: str):
                fit(None, None)

            @app.command()
            def show_config(path: str):
                print(path)

            if __name__ == "__main__":
                app()
            """,
        },
    )
    res = scan_paths([str(tmp_path)], use_cache=False)
    assert [(os.path.basename(e.path), e.command) for e in res.entries] == [("cli.py", "train")]
    assert res.entries[0].of("torch")
