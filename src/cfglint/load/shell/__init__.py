"""Launch-script parser: Megatron-LM / MindSpeed-LLM / MindFormers launch scripts.

Scripts are parsed with the real bash grammar (tree-sitter-bash) and *interpreted*
statically: nothing is ever run. Variables, arrays, ``${VAR:-default}``, ``$((...))``
on known integers and word splitting follow bash closely enough to recover the
argument list of the training command together with where each token was typed.
Whatever cannot be known without running something (``$1``, ``$(date)``, unset
variables, globs, ``$RANDOM``) becomes an *unknown* word carrying the reason; it is
never guessed.

Locations: a word's ``loc`` is where its text was typed, so it points at the line a
user must edit; ``via`` lists the use sites and variable definitions the text passed
through, innermost first. A variable whose value is a single token (``TP=1``) is
reported at its use site, with its definition in ``via``; a multi-token value (a
``GPT_ARGS="..."`` block, an array) keeps the locations inside the definition, with
the use site in ``via``.

Branches: every branch of an ``if``/``case``/loop/``||`` is taken and what it produces
is marked conditional. When sibling branches give a variable different values, the
later one is used (a warning names both lines), except that a non-empty value wins
over an empty one: ``EXTRA="--use-flash-attn"`` / ``EXTRA=""`` keeps the flag visible.

The modules follow the interpreter's seams: ``words`` (results), ``pieces`` (internal
values and limits), ``base`` (grammar, positions, budget), ``statements``, ``variables``,
``expansions``, ``arithmetic``, ``launcher`` (finding and splitting the training command),
``syntax`` (errors), ``argsfile`` (plain argument files) and ``parse`` (entry points).
"""

from cfglint.load.shell.argsfile import parse_args_file
from cfglint.load.shell.launcher import main_invocation
from cfglint.load.shell.parse import parse_script, parse_script_text
from cfglint.load.shell.words import Invocation, ShellScript, Word, from_the_caller

__all__ = [
    "Invocation",
    "ShellScript",
    "Word",
    "from_the_caller",
    "main_invocation",
    "parse_args_file",
    "parse_script",
    "parse_script_text",
]
