"""`arena bot check DIR`: play a bot through every situation the contract allows.

A scripted referee (the real transport, judge and sandbox; positions from the
real rules engine) plays the bot through each variant and handicap, a
reshuffle, a forced draw after a pass, a hand of five, the two final turns
(pass only), a low bank, requests it must answer fast, a forfeit before any
request, MatchOver and exit. It prints each scenario passed or failed with
what the bot did, then the bot's launch time and its per-decision latency and
CPU. Exit status 0 only if every scenario passed, 1 if one failed, 2 if the
bot could not be checked at all (no usable bot.toml, no sandbox).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from arena.commands.storeargs import fail
from arena.conformance import SCENARIOS, SUBMISSION_SCENARIOS, check_bot
from arena.referee import BotConfigError, load_bot
from arena.sandbox import SandboxUnavailableError

NOT_CHECKED = 2


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser(
        "check", help="play a bot through every situation of the contract (conformance)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    check.add_argument("directory", type=Path, help="bot directory with a bot.toml")
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
    check.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    try:
        spec = load_bot(args.directory)
    except BotConfigError as error:
        return fail(str(error), NOT_CHECKED)
    wanted = set(args.scenario or ())
    table = SUBMISSION_SCENARIOS if args.submission else SCENARIOS
    scenarios = [s for s in table if not wanted or s.name in wanted]
    if not args.json:
        print(f"checking {spec.name} ({len(scenarios)} scenarios) ...", flush=True)
    try:
        report = check_bot(spec, scenarios=scenarios, unsafe=args.unsafe_no_sandbox)
    except (ValueError, SandboxUnavailableError) as error:
        return fail(f"cannot check {spec.name}: {error}", NOT_CHECKED)
    print(json.dumps(report.to_json(), indent=2) if args.json else report.text())
    return 0 if report.passed else 1
