"""Command line: argument parsing and the subcommands."""

from cfglint.cli.app import main

__all__ = ["main"]
