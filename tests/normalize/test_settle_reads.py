"""release_fit.settle compares the candidates' readings field by field: each field of each
candidate is read once (the newest candidate's value is the one the comparison got, not
read again), and what it keeps is unchanged."""

from __future__ import annotations

import pytest

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.release_fit import settle


def test_each_field_of_each_candidate_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    cfgs = {r: Config.create(side="mindformers", path="x.yaml") for r in ("v2.1.0", "v2.0.0")}
    cfgs["v2.1.0"].set("optimizer.beta2", Value.default(0.95, "beta2", "MindFormers v2.1.0"))
    cfgs["v2.0.0"].set("optimizer.beta2", Value.default(0.999, "beta2", "MindFormers v2.0.0"))
    for cfg in cfgs.values():
        cfg.set("optimizer.beta1", Value.default(0.9, "beta1", "MindFormers"))
    reads: list[str] = []
    real = Config.get

    def counting(self: Config, dotted: str) -> Value | None:
        reads.append(dotted)
        return real(self, dotted)

    monkeypatch.setattr(Config, "get", counting)
    out = settle(dict(cfgs), [], "MindFormers", "named like x.yaml")
    monkeypatch.undo()
    assert len(reads) == 2 * len(Config.field_paths())
    beta2 = out.get("optimizer.beta2")
    assert beta2 is not None and not beta2.known
    assert "v2.1.0 and v2.0.0 disagree on it" in beta2.detail
    beta1 = out.get("optimizer.beta1")
    assert beta1 is not None and beta1.value == 0.9
