"""Named checks: data files, tokenizer ids, loss logs against the migration standard,
installed versions, and the published architecture a config names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cfglint.cli import main
from cfglint.load.indexed_dataset import DatasetError, open_indexed, write_indexed
from conftest import CORPUS, FIXTURES

DENSE = FIXTURES / "pairs" / "llama2_dense"
MF, MG = str(DENSE / "llama2_7b_align.yaml"), str(DENSE / "pretrain_llama2_align.sh")
LOGS = FIXTURES / "logs"


def lint(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--format", "json", "--verbose"])
    return code, json.loads(capsys.readouterr().out)


def rules_of(data: dict) -> set[str]:
    return {f["rule"] for f in data["findings"]}


def test_indexed_dataset_roundtrip_and_damage(tmp_path: Path) -> None:
    prefix = str(tmp_path / "ds")
    write_indexed(prefix, [[1, 5, 9, 2], [1, 7, 2]])
    ds = open_indexed(prefix)
    assert (ds.sequences, ds.tokens, ds.max_token()) == (2, 7, (9, 7))
    with open(prefix + ".bin", "ab") as fh:
        fh.write(b"\0\0")
    with pytest.raises(DatasetError, match="describes 7 tokens"):
        open_indexed(prefix)
    Path(prefix + ".idx").write_bytes(b"not an index")
    with pytest.raises(DatasetError, match="bad magic"):
        open_indexed(prefix)


def test_data_rows_with_a_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prefix = str(tmp_path / "wiki")
    write_indexed(prefix, [[1, 10, 31999, 2], [1, 32005, 2]])  # 32005 >= vocab 32000
    code, data = lint(capsys, MF, "--megatron", MG, "--data", prefix)
    bad = [f for f in data["findings"] if f["rule"] == "OTH004"]
    assert code == 1 and len(bad) == 2  # both embeddings have 32000 rows
    assert "32005" in bad[0]["message"]
    write_indexed(prefix, [[1, 10, 31999, 2]])
    code, data = lint(capsys, MF, "--megatron", MG, "--data", prefix)
    assert code == 0 and not data["findings"]
    assert any("OTH002" in r["reason"] and "consistent" in r["reason"] for r in data["not_checked"])


def test_data_rows_without_data_say_so(capsys: pytest.CaptureFixture[str]) -> None:
    _, data = lint(capsys, MF, "--megatron", MG)
    reasons = {r["row"]: r["reason"] for r in data["not_checked"]}
    assert "no data given" in reasons["other.input_ids_range"]
    assert "no tokenizer given" in reasons["other.special_tokens"]


def test_special_tokens_against_tokenizer_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tok = tmp_path / "tok"
    tok.mkdir()
    (tok / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "bos_token": "<s>",
                "eos_token": "</s>",
                "pad_token": "<unk>",
                "added_tokens_decoder": {
                    "0": {"content": "<unk>"},
                    "1": {"content": "<s>"},
                    "2": {"content": "</s>"},
                },
            }
        )
    )
    code, data = lint(capsys, MF, "--megatron", MG, "--tokenizer", str(tok))
    assert code == 0, data["findings"]
    (tok / "config.json").write_text(json.dumps({"bos_token_id": 1, "eos_token_id": 3}))
    code, data = lint(capsys, MF, "--megatron", MG, "--tokenizer", str(tok))
    found = [f for f in data["findings"] if f["rule"] == "OTH003"]
    assert code == 1 and found
    assert "eos" in found[0]["message"] and "3" in found[0]["message"]


def test_migration_standard_from_logs(capsys: pytest.CaptureFixture[str]) -> None:
    mf_log, mg_log = str(LOGS / "mindformers_train.log"), str(LOGS / "megatron_train.log")
    code, data = lint(
        capsys,
        MF,
        "--megatron",
        MG,
        "--loss-log",
        mf_log,
        "--loss-log",
        mg_log,
        "--select",
        "standard",
    )
    assert code == 1
    got = {f["rule"]: f for f in data["findings"]}
    # the logs agree to 0.1% for 10 steps, then drift by 2%: first loss passes, mean fails
    assert "STD001" not in got
    assert "STD002" in got and "mean relative error" in got["STD002"]["message"]
    assert "STD003" in got  # the MindFormers global norm is 30% higher throughout
    sides = {loc["side"] for loc in got["STD002"]["locations"]}
    assert sides == {"mindformers", "megatron"}
    reasons = {r["row"]: r["reason"] for r in data["not_checked"]}
    assert "runtime probe" in reasons["standard.local_norm"]


def test_megatron_log_doubles_as_loss_log(capsys: pytest.CaptureFixture[str]) -> None:
    mg_log = str(LOGS / "megatron_train.log")
    _, data = lint(
        capsys,
        MF,
        "--megatron",
        mg_log,
        "--loss-log",
        str(LOGS / "mindformers_train.log"),
        "--select",
        "standard.mean_loss",
    )
    assert rules_of(data) == {"STD002"}


def test_open_source_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "llama2_7b_custom.yaml"
    p.write_text(
        Path(MF).read_text().replace("intermediate_size: 11008", "intermediate_size: 11264")
    )
    # a comparison with a published model is advice: --profile align on a single side
    _, data = lint(capsys, str(p), "--profile", "align")
    f = next(f for f in data["findings"] if f["rule"] == "OTH010")
    assert "llama2-7b" in f["message"] and "11264" in f["message"] and "11008" in f["message"]


def test_version_check_without_mindspore(capsys: pytest.CaptureFixture[str]) -> None:
    _, data = lint(capsys, MF)
    reasons = {r["row"]: r["reason"] for r in data["not_checked"]}
    assert "not installed" in reasons["other.version_check"]


def test_installed_versions_come_from_package_metadata() -> None:
    from importlib import metadata

    from cfglint.evidence.versions import installed

    assert installed("pydantic") == metadata.version("pydantic")  # read from its dist-info
    assert installed("no_such_package_cfglint") is None


def test_installed_version_from_the_dist_info_name_or_metadata(tmp_path: Path) -> None:
    """A wheel's NAME-VERSION.dist-info names the version; two of them (a broken upgrade) or
    none (an egg or a source tree) fall back to package metadata, which knows nothing here."""
    import sys

    from cfglint.evidence.versions import installed

    site = tmp_path / "site"
    (site / "fakefw_cfg").mkdir(parents=True)
    (site / "fakefw_cfg" / "__init__.py").write_text("")
    sys.path.insert(0, str(site))
    try:
        assert installed("fakefw_cfg") is None  # no dist-info: metadata has none either
        info = site / "fakefw_cfg-2.10.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Name: fakefw_cfg\nVersion: 2.10.0\n")
        assert installed("fakefw_cfg") == "2.10.0"
        other = site / "fakefw_cfg-2.9.0.dist-info"
        other.mkdir()
        (other / "METADATA").write_text("Name: fakefw_cfg\nVersion: 2.9.0\n")
        assert installed("fakefw_cfg") in ("2.10.0", "2.9.0")  # metadata picks one
    finally:
        sys.path.remove(str(site))


def test_version_table_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    from cfglint.evidence import versions

    fake = {"mindspore": "2.4.10", "mindformers": "1.5.0"}
    monkeypatch.setattr(versions, "installed", lambda d: fake.get(d))
    monkeypatch.setattr(versions, "cann_version", lambda: None)
    problem, _ = versions.check_installed()
    assert problem is not None and "2.6.0" in problem  # 1.5.0 goes with MindSpore 2.6.0
    fake["mindspore"] = "2.6.0rc1"
    assert versions.check_installed()[0] is None


def test_every_corpus_config_lints_alone(capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(CORPUS.glob("*.yaml")) if CORPUS.exists() else []
    if not files:
        pytest.skip("../shared corpus not available")
    for f in files:
        code = main([str(f), "--format", "json"])
        out = json.loads(capsys.readouterr().out)
        assert code in (0, 1) and not out["errors"], f
