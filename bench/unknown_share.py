"""Share of "unknown" normalized values over a tree of MindFormers configs (issue 10).

    .venv/bin/python bench/unknown_share.py /tmp/mf_head /tmp/mf_v150 /tmp/mf_v132 [--all]

Each argument is a folder holding MindFormers YAML files (for instance a release extracted
with ``git archive v1.5.0 | tar -x -C /tmp/mf_v150``; never inside the project). By default
only training and fine-tuning configs count: a file whose ``run_mode`` is train / finetune, or
that has no ``run_mode`` but a ``train_dataset`` section. ``--all`` counts every YAML that
loads. Prints the number of files, values, unknown values, their share and the counts by
reason (the reason with file-specific parts replaced, so that equal causes group together).

Files under a ``tests`` folder of a root (MindFormers' own test fixtures, such as
tests/st/test_build.yaml with its TestModelConfig registered by the test code) are not user
training configs and are left out unless ``--with-tests`` is given; the count left out is
printed.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

import yaml


def _is_training(path: Path) -> bool:
    try:
        data = yaml.safe_load(path.read_text(errors="replace"))
    except yaml.YAMLError:
        return False
    if not isinstance(data, dict):
        return False
    mode = data.get("run_mode")
    if isinstance(mode, str):
        return mode in ("train", "finetune")
    return "train_dataset" in data or "training_args" in data


skipped: Counter[str] = Counter()
test_fixtures: list[Path] = []


def _is_test_fixture(root: Path, path: Path) -> bool:
    return "tests" in path.relative_to(root).parts[:-1]


def _model_type(path: Path) -> str:
    try:
        data = yaml.safe_load(path.read_text(errors="replace"))
        return str(data["model"]["model_config"]["type"])
    except (yaml.YAMLError, KeyError, TypeError):
        return "?"


def _reason(detail: str) -> str:
    """Group reasons: drop paths, numbers and quoted values."""
    r = re.sub(r"\S+\.(ya?ml|json):\d+", "FILE:LINE", detail)
    r = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", r)
    r = re.sub(r"\b\d+(\.\d+)?\b", "N", r)
    r = re.sub(r"\(pretrained_model_dir, [^)]*\)", "(pretrained_model_dir)", r)
    r = re.sub(r"from \S+/config\.json", "from DIR/config.json", r)
    return r[:160]


def measure(
    roots: list[Path], every: bool, known_only: bool = False, with_tests: bool = False
) -> tuple[int, int, Counter[str], Counter[str], int]:
    from cfglint.model.errors import InputError
    from cfglint.normalize.mindformers.build import load_mindformers

    files = values = 0
    reasons: Counter[str] = Counter()
    fields: Counter[str] = Counter()
    failed = 0
    skipped.clear()
    test_fixtures.clear()
    for root in roots:
        for path in sorted(root.rglob("*.yaml")):
            if not every and not _is_training(path):
                continue
            if not with_tests and _is_test_fixture(root, path):
                test_fixtures.append(path)
                continue
            try:
                cfg = load_mindformers(str(path))
            except (InputError, RecursionError, ValueError, TypeError, KeyError):
                failed += 1
                continue
            if known_only and not cfg.model_class:
                # a model class cfglint has no tables for (CLIP, BERT, ViT, T5, Whisper,
                # multimodal and test models): out of the LLM migration scope
                reasons[f"(skipped file) model class {_model_type(path)}"] += 0
                skipped[_model_type(path)] += 1
                continue
            files += 1
            for section in ("structure", "moe", "optimizer", "weight", "precision", "parallel"):
                for name, v in getattr(cfg, section).items():
                    values += 1
                    if not v.known:
                        reasons[_reason(v.detail)] += 1
                        fields[f"{section}.{name}"] += 1
            for section in ("other", "determinism"):
                for name, v in getattr(cfg, section).items():
                    values += 1
                    if not v.known:
                        reasons[_reason(v.detail)] += 1
                        fields[f"{section}.{name}"] += 1
    return files, values, reasons, fields, failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("roots", nargs="+", type=Path)
    ap.add_argument("--all", action="store_true", help="every YAML, not only training ones")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument(
        "--known-classes",
        action="store_true",
        help="only configs of model classes cfglint has default tables for",
    )
    ap.add_argument(
        "--with-tests",
        action="store_true",
        help="also count the YAML fixtures under tests/ folders (MindFormers' own test files)",
    )
    args = ap.parse_args(argv)
    files, values, reasons, fields, failed = measure(
        args.roots, args.all, args.known_classes, args.with_tests
    )
    unknown = sum(reasons.values())
    share = 100.0 * unknown / values if values else 0.0
    print(
        f"files {files} (not loadable: {failed}), values {values}, unknown {unknown} ({share:.1f}%)"
    )
    if test_fixtures:
        print(
            f"left out: {len(test_fixtures)} test fixture(s) under tests/"
            " (--with-tests counts them)"
        )
    if skipped:
        print(
            "skipped (no tables for the model class): "
            + ", ".join(f"{k} {n}" for k, n in skipped.most_common())
        )
    print("\nby reason:")
    for r, n in reasons.most_common(args.top):
        if not n:
            continue
        print(f"{n:6d}  {r}")
    print("\nby field:")
    for f, n in fields.most_common(args.top):
        print(f"{n:6d}  {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
