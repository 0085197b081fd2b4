"""Every parser of an argparse tree, for the tests that read the command line's help."""

from __future__ import annotations

import argparse
from collections.abc import Iterator


def every_parser(
    parser: argparse.ArgumentParser, path: str = "arena"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and each (sub-)command's parser under it, with its words ("arena bot
    add"), in the order they were added; an alias's parser (the same one again) once."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if sub.prog.endswith(f" {name}"):  # an alias is the same parser again
                    yield from every_parser(sub, f"{path} {name}")
