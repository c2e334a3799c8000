"""Named checks for rule rows that one comparison cannot express.

A rule of kind ``builtin`` names one of these. Each takes the rule and the context and
returns findings; the wording still comes from the rule (title, rationale, fix), the
check supplies the facts. Heavy modules are imported inside the checks that need them.
"""

from __future__ import annotations

from collections.abc import Callable

from cfglint.engine import Context
from cfglint.findings import Finding
from cfglint.rulebook import Rule

Check = Callable[[Rule, Context], list[Finding]]
BUILTINS: dict[str, Check] = {}


def builtin(name: str) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        BUILTINS[name] = fn
        return fn

    return register


def not_checked(ctx: Context, rule: Rule, why: str) -> list[Finding]:
    ctx.not_checked.append((rule.row, f"{rule.id}: {why}"))
    return []
