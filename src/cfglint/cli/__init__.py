"""Command line: argument parsing and the subcommands."""

import gc

# Importing the command line imports the whole lint path (pydantic, its models, ~110 of our
# modules): hundreds of thousands of objects that live until the process ends. The cyclic
# collector would walk them again and again while they are created (~19 M instructions of
# a ~1,100 M pair lint, issue 29), and finds nothing to free: it is paused for the import and
# restored as it was, so a program that imports this package keeps its own setting.
_COLLECTING = gc.isenabled()
gc.disable()
try:
    from cfglint.cli.app import main
finally:
    if _COLLECTING:
        gc.enable()

__all__ = ["main"]
