"""cfglint: find the configuration causes of loss-curve mismatches between
Megatron-LM / MindSpeed-LLM and MindFormers training jobs."""

__version__ = "0.1.0"

# The distribution name on the package index ("cfglint" there is an unrelated project); the
# command stays `cfglint`. Every install instruction installs this repository by URL.
DISTRIBUTION = "cfglint-align"
# Must equal [project.urls] Homepage in pyproject.toml (tests check it, and that the docs
# names the same repository): SARIF helpUri and every install hint derive from it.
HOMEPAGE = "https://github.com/cfglint/cfglint"


def install_hint(extra: str) -> str:
    """How to install this project with one of its extras (probe, logs, server)."""
    return (
        f"pip install '{DISTRIBUTION}[{extra}] @ git+{HOMEPAGE}' "
        f"(in a checkout: pip install -e '.[{extra}]')"
    )


INSTALL_PROBE = install_hint("probe")
# the runtime probe's --device choices, here so that the lint's parser names them without
# importing the probe (evidence/probe/devices.py decides what each one runs on)
PROBE_DEVICES = ("auto", "cpu", "cuda", "npu")
