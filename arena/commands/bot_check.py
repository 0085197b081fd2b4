"""`arena bot check DIR`: play a bot through every situation the contract allows."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from arena.bots.archive import ArchiveError, check_bot_directory
from arena.commands.pathargs import given_path
from arena.commands.storeargs import add_data_dir, fail
from arena.conformance import (
    SCENARIOS,
    SUBMISSION_SCENARIOS,
    ScenarioResult,
    check_bot,
    needs_class_archive,
    train_class_archive,
)
from arena.conformance.report import checks_text
from arena.referee import BotConfigError, BotSpec, load_bot, unbuilt
from arena.sandbox import SandboxUnavailableError
from arena.sandbox.javacds import shelf_dir
from arena.store import resolve_data_dir

DESCRIPTION = """\
`arena bot check DIR`: play a bot through every situation the contract allows.

A scripted referee (the real transport, judge and sandbox; positions from the
real rules engine) plays the bot through each variant and handicap, a
reshuffle, a forced draw after a pass, a hand of five, the two final turns
(pass only), a low bank, requests it must answer fast, a forfeit before any
request, MatchOver and exit. It prints each scenario passed or failed with
what the bot did, then the bot's launch time and its per-decision latency and
CPU. Exit status 0 only if every scenario passed, 1 if one failed, 2 if the
bot could not be checked at all (no usable bot.toml, no sandbox) or its
directory holds what `arena bot add` and an upload refuse (anything but
regular files, directories and links that stay inside it), said before
anything is played.

A Java bot is launched as the arena launches it in matches: with the
class-data archive the arena builds for each version on its own JDK
(docs/design/SANDBOX.md, "Java class-data archives"), kept in the data directory's
java-cds/; the first check of a version on this JDK builds it first (one
training launch, said so). --no-class-archive checks it without.
"""


NOT_CHECKED = 2


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser(
        "check", help="play a bot through every situation of the contract (conformance)",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    check.add_argument("directory", type=given_path, help="bot directory with a bot.toml")
    check.add_argument("--json", action="store_true", help="print the findings as JSON")
    check.add_argument(
        "--scenario", action="append", metavar="NAME", choices=[s.name for s in SCENARIOS],
        help="play only this scenario (repeatable; default: all of them)",
    )  # fmt: skip
    check.add_argument(
        "--submission", action="store_true",
        help="play only the scenarios `arena bot add` and SubmitBot play",
    )  # fmt: skip
    check.add_argument(
        "--unsafe-no-sandbox", action="store_true",
        help="run the bot even where the host cannot sandbox it (trusted bots only)",
    )  # fmt: skip
    check.add_argument(
        "--no-class-archive", action="store_true",
        help="Java bots: launch without the arena's class-data archive (neither built nor used)",
    )  # fmt: skip
    add_data_dir(check)
    check.set_defaults(func=run_check)


def with_class_archive(
    spec: BotSpec, data_dir: str | None, *, say: Callable[[str], None] | None
) -> BotSpec:
    """A Java bot directory with its shelf of class-data archives in the data directory
    (the same as its stored version's), its archive for this JDK built first if there
    is none (``say`` tells so); any other bot as it is."""
    if spec.runtime != "java":
        return spec
    shelf = shelf_dir(resolve_data_dir(data_dir), spec.name, spec.version)
    spec = dataclasses.replace(spec, class_archives=shelf)
    if needs_class_archive(spec):
        if say is not None:
            say(f"{spec.name}: building its class-data archive for this JDK (once per version)")
        training = train_class_archive(spec)
        if say is not None:
            say(f"{spec.name}: {training.text()}")
    return spec


@contextmanager
def scenario_progress(
    total: int, *, enabled: bool
) -> Iterator[Callable[[ScenarioResult], None]]:
    """A progress bar on the terminal (standard error) while ``total`` scenarios play,
    gone when they are done; nothing where standard error is not a terminal."""
    out = Console(stderr=True)
    with Progress(
        SpinnerColumn(), TextColumn("scenarios"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TextColumn("{task.fields[last]}"),
        console=out, transient=True, disable=not (enabled and out.is_terminal),
    ) as progress:  # fmt: skip
        task = progress.add_task("check", total=total, last="")

        def heard(result: ScenarioResult) -> None:
            mark = "pass" if result.passed else "FAIL"
            progress.update(task, advance=1, last=f"{mark} {result.name}")

        yield heard


def run_check(args: argparse.Namespace) -> int:
    try:
        spec = load_bot(args.directory)
    except BotConfigError as error:
        return fail(str(error), NOT_CHECKED)
    if (not_built := unbuilt(spec)) is not None:
        return fail(f"{spec.directory}: {not_built}", NOT_CHECKED)
    try:
        check_bot_directory(spec.directory)  # what `arena bot add` and an upload refuse
    except (ArchiveError, OSError) as error:
        return fail(f"{spec.directory}: the arena would refuse this bot: {error}", NOT_CHECKED)
    wanted = set(args.scenario or ())
    table = SUBMISSION_SCENARIOS if args.submission else SCENARIOS
    scenarios = [s for s in table if not wanted or s.name in wanted]
    if not args.no_class_archive and not args.unsafe_no_sandbox:
        spec = with_class_archive(spec, args.data_dir, say=None if args.json else print)
    if not args.json:
        print(f"checking {spec.name}: {checks_text(len(scenarios))}"
              f" ({len(scenarios) + 2} checks) ...", flush=True)  # fmt: skip
    try:
        with scenario_progress(len(scenarios), enabled=not args.json) as heard:
            report = check_bot(spec, scenarios=scenarios, unsafe=args.unsafe_no_sandbox,
                               on_result=heard)  # fmt: skip
    except (ValueError, SandboxUnavailableError) as error:
        return fail(f"cannot check {spec.name}: {error}", NOT_CHECKED)
    print(json.dumps(report.to_json(), indent=2) if args.json else report.text())
    return 0 if report.passed else 1
