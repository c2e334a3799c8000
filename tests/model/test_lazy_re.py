"""compile_on_use (cfglint.model.lazy_re): a module-level pattern that behaves as the
compiled one and is compiled once, on its first use, not at import."""

from __future__ import annotations

import copy
import re
import re._compiler as sre_compiler

import pytest

from cfglint.model.lazy_re import compile_on_use


def test_compiled_on_first_use_then_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    real = sre_compiler.compile

    def counting(p: object, flags: int = 0) -> re.Pattern[str]:
        calls.append(p)
        return real(p, flags)

    monkeypatch.setattr(sre_compiler, "compile", counting)
    source = r"(?P<k>[a-z]+)=(\d+)  # a never-seen pattern: re's own cache has no copy"
    p = compile_on_use(source, re.X | re.I)
    assert calls == [] and p.pattern == source
    assert p.fullmatch("Ab=12").group("k") == "Ab"  # type: ignore[union-attr]
    assert calls == [source]
    assert p.sub(r"\2", "a=1 b=2") == "1 2" and [m.group(1) for m in p.finditer("x=3")] == ["x"]
    assert p.search("--") is None and p.findall("q=5") == [("q", "5")]
    assert p.split("a=1,b=2") == ["", "a", "1", ",", "b", "2", ""]
    assert calls == [source]


def test_bytes_and_flags_as_re_compile() -> None:
    lazy = compile_on_use(rb"^\s*shopt\b", re.M)
    assert lazy.search(b"x\n  shopt -s") is not None
    assert lazy.search(b"x  shopt") is None
    assert compile_on_use("a.b", re.S).match("a\nb") is not None


def test_a_copy_still_works() -> None:
    p = compile_on_use(r"\d+")
    q = copy.deepcopy(p)
    assert q.findall("a1b22") == ["1", "22"] and p.findall("3") == ["3"]
