"""The `arena` command: one argparse tree, one sub-command module per job.

Each module listed in COMMAND_MODULES exposes ``register(subparsers)``, which
adds its sub-command(s) and sets ``func`` on the parser to a callable taking
the parsed namespace and returning the process exit status.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import re
import shlex
import signal
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

from arena import __version__, caused_by_ctrl_c
from arena._grpc_env import tune_this_process
from arena._loading import quit_now, quit_while_exiting, quit_while_loading
from arena.commands.pathargs import ANY_BYTES
from arena.quoting import clipped, quoted, visible

COMMANDS: dict[str, str] = {
    "replay": "arena.commands.replay",
    "play-random": "arena.commands.replay",
    "bot": "arena.commands.bot",
    "tournament": "arena.commands.tournament",
    "audit": "arena.commands.audit",
    "leaderboard": "arena.commands.leaderboard",
    "serve": "arena.commands.serve",
    "token": "arena.commands.serve",
    "limits": "arena.commands.serve",
    "ladder": "arena.commands.ladder",
    "match": "arena.commands.match",
    "demo": "arena.commands.demo",
    "stats": "arena.commands.stats",
    "export": "arena.commands.export",
    "backup": "arena.commands.backup",
    "restore": "arena.commands.backup",
    "remote": "arena.commands.remote",
    "sandbox-check": "arena.commands.sandbox_check",
    "ray-worker": "arena.commands.ray_worker",
    "ray-head": "arena.commands.ray_head",
    "ray-token": "arena.commands.ray_token",
}
"""Each top-level command and the module that registers it. `arena NAME ...` imports
only NAME's module (a command's start-up is then its own imports, not every command's:
tests and record checkers run thousands of them); anything else (`arena --help`, a
mistyped command) loads them all, so help and suggestions see every command."""

COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(COMMANDS.values()))
"""Every command module, in the order ``arena --help`` lists their commands."""

Handler = Callable[[argparse.Namespace], int]


def _suggestion(word: str, known: Iterable[str]) -> str:
    """The words " (did you mean X?)", X the closest of ``known`` to ``word``; or ""."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _not_utf8(text: str) -> str | None:
    """Why ``text``, a word of the command line, is not UTF-8 text (None: it is). Python
    holds each byte that is not UTF-8 of a word as a lone surrogate, U+DC80 to U+DCFF."""
    at = next((i for i, char in enumerate(text) if "\udc80" <= char <= "\udcff"), None)
    if at is None:
        return None
    return f"byte 0x{ord(text[at]) - 0xDC00:02x} (at character {at + 1}) is not UTF-8: give text"


class Parser(argparse.ArgumentParser):
    """argparse with "did you mean" for a mistyped command, choice or flag
    (sub-command parsers are of this class too: argparse makes them so)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A word starting "-" and a digit is a value, as "-1" is: "--expires-in -1d" is
        # then refused as no duration, not as "expected one argument" (no flag of ours
        # starts with a digit).
        self._negative_number_matcher = re.compile(r"^-\d")

    def _check_value(self, action: argparse.Action, value: object) -> None:
        choices = action.choices
        if choices is not None and value not in choices:
            names = [str(choice) for choice in choices]
            raise argparse.ArgumentError(
                action, f"invalid choice: {quoted(value)}{_suggestion(str(value), names)};"
                f" choose from {', '.join(names)}",
            )  # fmt: skip

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        """argparse's, with a long value quoted shortened in its "invalid value" error,
        and bytes that are not UTF-8 refused in any value but a path's (a name, a
        number or an address with them could be neither stored nor matched)."""
        if (
            not isinstance(action, argparse._SubParsersAction)  # its parser checks its words
            and action.type not in ANY_BYTES
            and (bad := _not_utf8(arg_string)) is not None
        ):
            raise argparse.ArgumentError(action, bad)
        try:
            return super()._get_value(action, arg_string)
        except argparse.ArgumentError as error:
            shown = str(error.message).replace(repr(arg_string), quoted(arg_string))
            raise argparse.ArgumentError(action, shown) from None

    def error(self, message: str) -> NoReturn:
        """One line on standard error, exit status 2, naming the argument and what is
        wrong (argparse's usage lines before it would bury it; ``--help`` shows them)."""
        self.exit(2, f"{self.prog}: error: {visible(message)}\n")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            parser = self._chosen(parsed)
            flags = [flag for action in parser._actions for flag in action.option_strings]
            words = [clipped(word) + _suggestion(word.split("=")[0], flags)
                     if word.startswith("-") else clipped(word) for word in extras]  # fmt: skip
            parser.error(f"unrecognized arguments: {' '.join(words)}")
        return parsed

    def _chosen(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The (sub-)command parser that ``parsed`` went down to."""
        parser: argparse.ArgumentParser = self
        while True:
            action = next((a for a in parser._actions
                           if isinstance(a, argparse._SubParsersAction)), None)  # fmt: skip
            chosen = getattr(parsed, action.dest, None) if action is not None else None
            if action is None or chosen not in action.choices:
                return parser
            parser = action.choices[chosen]


OWN_FLAGS = ("-h", "--help", "--version")
"""The only options `arena` itself takes before a command."""


def options_before_command(words: Sequence[str]) -> str | None:
    """Why ``words`` cannot be parsed when a command's option comes before the command
    (`arena --data-dir D demo`), with the options moved to the end, where every command
    takes them; None when they start well.

    argparse would read the option's value as the command and answer "invalid choice: D",
    which names the wrong word."""
    if not words or not words[0].startswith("-") or words[0].split("=")[0] in OWN_FLAGS:
        return None
    flag = clipped(words[0].split("=")[0])
    at = next((i for i, word in enumerate(words) if word in COMMANDS), None)
    if at is None:
        return (f"{flag} is an option of a command, not of arena itself: put it after"
                f" the command (arena COMMAND {flag} ...); `arena --help` lists them")  # fmt: skip
    order = ["arena", *words[at:], *words[:at]]
    return f"{flag} goes after the command: {shlex.join(clipped(word) for word in order)}"


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = Parser(
        prog="arena",
        description="Kahuna Arena: referee, tournaments and ratings for Kahuna bots.",
    )
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module_name in modules:
        module = importlib.import_module(module_name)
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        loaded = quit_while_loading()
        try:
            tune_this_process()  # before a command imports grpc
            words = list(sys.argv[1:] if argv is None else argv)
            misplaced = options_before_command(words)
            if misplaced is not None:
                print(f"arena: error: {misplaced}", file=sys.stderr)
                return 2
            module = COMMANDS.get(words[0]) if words else None
            parser = build_parser((module,) if module else COMMAND_MODULES)
            args = parser.parse_args(words)
        finally:
            loaded()  # the command's own Ctrl-C is a KeyboardInterrupt: it may clean up
        handler: Handler = args.func
        return handler(args)
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`arena replay ... | head`): not an error of ours.
        # Point stdout at devnull so the interpreter's final flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as error:
        if not caused_by_ctrl_c(error):
            raise
        print("arena: interrupted", file=sys.stderr)
        return 130


def run() -> NoReturn:
    """The ``arena`` command as a process: ``main``, then an exit that a Ctrl-C ends with
    one line, never a traceback from the interpreter's shutdown."""
    try:
        code = main()
        quit_while_exiting()
    except KeyboardInterrupt:  # between main's return and the handler
        quit_now(signal.SIGINT, None)
    sys.exit(code)


if __name__ == "__main__":
    run()
