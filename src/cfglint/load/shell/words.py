"""What the shell loader produces: words with the position they were typed at, the
training invocation, and the parsed script.
"""

from __future__ import annotations

from typing import Any

from cfglint.model.record import Frozen, Record
from cfglint.model.values import Loc


class Word(Frozen):
    """One argument word after expansion and splitting."""

    __slots__ = (
        "alternatives",
        "choice",
        "conditional",
        "head",
        "loc",
        "tail",
        "template",
        "text",
        "unknown",
        "via",
    )

    text: str | None  # None when unknown
    loc: Loc  # where the text was typed: the line to edit
    via: tuple[Loc, ...]  # use sites and variable definitions it passed through
    unknown: str  # why text is None
    conditional: bool  # from an if/case/loop branch, or a variable set in one
    # Built from a variable that sibling branches of an undecided if/case set differently:
    # the script runs one of them, cfglint cannot tell which.
    choice: bool
    alternatives: tuple[tuple[str, Loc], ...]  # every branch's text, when each is known
    # The known text after the last unknown part (``${dir}/../../pretrain_gpt.py`` with
    # ``dir=`pwd` `` ends in ``/../../pretrain_gpt.py``): enough to name an entry script.
    tail: str
    # The known text before the first unknown part (``--nproc_per_node=$1`` begins with
    # ``--nproc_per_node=``): enough to tell a launcher's option from its entry script.
    head: str
    # The whole text with each unknown part as UNKNOWN_MARK (``python -u \0/pretrain_gpt.py``
    # for ``"python -u ${DIR}/pretrain_gpt.py"``): what eval / ``sh -c`` parse a second time
    template: str

    def __init__(
        self,
        text: str | None,
        loc: Loc,
        via: tuple[Loc, ...] = (),
        unknown: str = "",
        conditional: bool = False,
        choice: bool = False,
        alternatives: tuple[tuple[str, Loc], ...] = (),
        tail: str = "",
        head: str = "",
        template: str = "",
    ) -> None:
        self.text = text
        self.loc = loc
        self.via = via
        self.unknown = unknown
        self.conditional = conditional
        self.choice = choice
        self.alternatives = alternatives
        self.tail = tail
        self.head = head
        self.template = template


class Invocation(Record):
    """A launcher or python command, split into launcher options, script and arguments."""

    __slots__ = ("args", "conditional", "cwd", "launcher", "launcher_args", "loc", "script")

    launcher: str  # "torchrun", "python -m torch.distributed.run", "msrun", "python", ...
    launcher_args: list[Word]
    script: Word | None
    args: list[Word]
    loc: Loc
    conditional: bool
    # the folder the last `cd`/`pushd` before it moved to (the entry path is relative to it)
    cwd: Word | None

    def __init__(
        self,
        launcher: str,
        launcher_args: list[Word],
        script: Word | None,
        args: list[Word],
        loc: Loc,
        conditional: bool = False,
        cwd: Word | None = None,
    ) -> None:
        self.launcher = launcher
        self.launcher_args = launcher_args
        self.script = script
        self.args = args
        self.loc = loc
        self.conditional = conditional
        self.cwd = cwd


class ShellScript(Record):
    __slots__ = (
        "detections",
        "env",
        "invocations",
        "path",
        "text",
        "unfollowed",
        "variables",
        "warnings",
    )

    path: str
    invocations: list[Invocation]  # in order of appearance
    env: dict[str, Word]  # exported variables, and `VAR=val` prefixes of launch commands
    variables: dict[str, Word]  # final values; arrays joined with blanks
    warnings: list[str]  # "line N: ..."
    text: str
    # `source` / eval lines that were not read: what they export or set is not known
    unfollowed: list[str]

    def __init__(
        self,
        path: str,
        invocations: list[Invocation],
        env: dict[str, Word],
        variables: dict[str, Word],
        warnings: list[str],
        text: str,
        unfollowed: list[str] | None = None,
    ) -> None:
        self.path = path
        self.invocations = invocations
        self.env = env
        self.variables = variables
        self.warnings = warnings
        self.text = text
        self.unfollowed = [] if unfollowed is None else unfollowed
        # not a field: the Megatron dialects detected from this parse (load/dialects.py
        # detect_dialect's memo), handed with it from the input classifier to the loader
        self.detections: dict[Any, Any] = {}


Pos = tuple[int, int]  # (line, column), both 1-based

UNKNOWN_MARK = "\x00"  # an unknown part of a word's text, for its second parse


def never_set(name: str, unfollowed: list[str]) -> str:
    """Why variable ``name`` has no value here. Only the caller's environment can give it
    one, unless a sourced file or eval the script runs was not read: that may set it."""
    if unfollowed:
        return f"variable {name} is not set here; {unfollowed[0]}, not followed, may set it"
    return f"variable {name} is never set"


def from_the_caller(reason: str) -> bool:
    """A word unknown only because it is the caller's input: a variable nothing in the
    script sets (an environment hook such as ``$EXTRA_ARGS``) or a positional parameter
    (``"$@"`` forwarding the caller's arguments). Both are empty unless the caller gives
    them; a script run as written gets nothing there."""
    env_hook = reason.startswith("variable ") and reason.endswith(" is never set")
    return env_hook or reason.endswith(" is a positional parameter")
