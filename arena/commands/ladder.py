"""The ladder's flags for `arena serve --ladder`, and `arena ladder withdraw|return BOT`.

`arena serve --ladder` runs the ladder (``arena.tournament.orchestration.ladder``) beside
the API: its settings are the flags given, else the stored ones, else the
defaults; the ones it runs with are stored (a flag given once is kept).
`arena ladder withdraw BOT` takes a bot off the ladder (its matches in play
finish); `arena ladder return BOT`, or a new version of it, brings it back.
`arena ladder collusion` lists the pairs of bots whose results against each
other depart from what their results against everyone else predict
(``arena.tournament.policy.collusion``; docs/guide/fair-play.md).
"""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Callable

from arena.commands.storeargs import add_data_dir, with_store
from arena.logs import get_logger
from arena.quoting import quoted
from arena.store import (
    DamagedDatabaseError,
    LeaseHeldError,
    Store,
    create_ladder,
    find_ladder,
    game_results,
    get_tournament,
    ladder_settings,
    set_ladder_settings,
    set_withdrawn,
)
from arena.tournament.execution.executor import MatchExecutor
from arena.tournament.orchestration.ladder import LadderRunner
from arena.tournament.policy.collusion import ALPHA, MIN_GAMES, collusion_report, report_lines
from arena.tournament.policy.config import NAME_PATTERN, TournamentError
from arena.tournament.policy.ladder_config import DEFAULT_NAME, LadderSettings, merge

_GIVEN = (
    # (flag, key, help)
    ("--ladder-games-per-match", "games_per_match", "games per ladder match, even (default 2)"),
    ("--ladder-seed", "seed", "the ladder's deal seed (default 0)"),
    ("--ladder-action-ms", "action_ms", "per-action time limit, ms"),
    ("--ladder-bank-ms", "bank_ms", "time bank per game, ms"),
    ("--ladder-placement-matches", "placement_matches",
     "a new bot's placement burst, at its owner's turns (4)"),
    ("--ladder-placement-in-play", "placement_in_play", "its placement matches at once (2)"),
    ("--ladder-max-repeat", "max_repeat", "the same pairing at most N times in a row (1)"),
    ("--ladder-entrants-per-user", "entrants_per_user",
     "each user's N latest-submitted bots play the ladder, 0: all (1)"),
)


def add_ladder_flags(parser: argparse.ArgumentParser) -> None:
    """`arena serve`'s ladder flags (every setting is stored; a flag left out keeps it)."""
    parser.add_argument(
        "--ladder", action="store_true",
        help="run the ladder: the latest version of every active bot, rated games without end",
    )  # fmt: skip
    parser.add_argument(
        "--ladder-name", default=DEFAULT_NAME, metavar="NAME",
        help=f"the ladder's name (default {DEFAULT_NAME!r})",
    )  # fmt: skip
    for flag, key, text in _GIVEN:
        parser.add_argument(flag, type=int, metavar="N", dest=f"ladder_{key}", help=text)


def _given(args: argparse.Namespace) -> dict[str, object | None]:
    """The ladder's settings the flags give (None: not given), its name checked
    (TournamentError naming it)."""
    name = args.ladder_name
    if not NAME_PATTERN.fullmatch(name):
        raise TournamentError(f"--ladder-name {quoted(name)}: use 1-60 letters, digits, - _ .")
    given: dict[str, object | None] = {
        key: getattr(args, f"ladder_{key}", None) for _, key, _ in _GIVEN  # absent: not given
    }
    given["concurrency"] = args.concurrency
    return given


def ladder_flags_problem(args: argparse.Namespace) -> str | None:
    """What ``prepare_ladder`` would refuse in the flags whatever is stored, in words
    (None: nothing): each setting is checked on its own, none depends on another."""
    try:
        merge(None, _given(args))
    except TournamentError as error:
        return str(error)
    return None


def prepare_ladder(store: Store, args: argparse.Namespace) -> int:
    """Create the ladder or update its stored settings from the flags; its tournament id.

    TournamentError naming a setting out of range (nothing is stored then).
    """
    name = args.ladder_name
    given = _given(args)
    tournament_id = find_ladder(store, name)
    if tournament_id is None:
        config, settings = merge(None, given)
        return create_ladder(store, name, config, settings.to_json())
    config, stored = ladder_settings(store, tournament_id)
    config, settings = merge((config, LadderSettings.from_json(stored)), given)
    set_ladder_settings(store, tournament_id, config, settings.to_json())
    return tournament_id


class LadderThread:
    """The ladder runner on a thread of `arena serve`; ``stop`` ends it and waits."""

    def __init__(self, runner: LadderRunner) -> None:
        self.runner = runner
        self.thread = threading.Thread(target=self._run, name="ladder", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        try:
            self.runner.run(self.lease)
        except DamagedDatabaseError as error:  # met before the run's loop: nothing to retry
            get_logger().error(
                "ladder_stopped", tournament_id=self.runner.tournament_id,
                reason=error.stopped("the ladder"),
            )  # fmt: skip
        except Exception:
            get_logger().exception("ladder_crashed", tournament_id=self.runner.tournament_id)

    def take_lease(self) -> None:
        """Before serving: LeaseHeldError when another process runs this ladder."""
        try:
            self.lease = self.runner.take_lease()
        except LeaseHeldError as held:  # a ladder is never resumed: its server runs it
            raise LeaseHeldError(
                held.tournament, held.pid, kind="ladder",
                then="one server runs a ladder; stop that one to run it here with"
                " `arena serve --ladder`",
            ) from None  # fmt: skip

    def stop(self, reason: str = "the server was stopped", timeout_s: float = 30.0) -> None:
        """End the ladder, recording ``reason`` (it reads interrupted until started again)."""
        self.runner.stop(reason)
        self.thread.join(timeout_s)


def start_ladder(
    store: Store, args: argparse.Namespace,
    new_executor: Callable[[], MatchExecutor] | None = None,
) -> LadderThread:  # fmt: skip
    """The ladder of the flags, its lease taken, started (TournamentError, LeaseHeldError);
    its matches on ``new_executor()`` (`arena serve --ray`), else on the local executor."""
    tournament_id = prepare_ladder(store, args)
    runner = LadderRunner(
        store, tournament_id, concurrency=args.concurrency, unsafe=args.unsafe_no_sandbox,
        pin_cpus=args.pin_cpus, executor=None if new_executor is None else new_executor(),
    )  # fmt: skip
    ladder = LadderThread(runner)
    ladder.take_lease()
    ladder.start()
    return ladder


__all__ = ["LadderThread", "LeaseHeldError", "add_ladder_flags", "start_ladder"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ladder = subparsers.add_parser(
        "ladder", help="take a bot off the ladder or bring it back; the collusion report"
    )
    commands = ladder.add_subparsers(dest="ladder_command", metavar="SUBCOMMAND")
    commands.required = True
    for name, withdrawn, text in (
        ("withdraw", True, "take BOT off the ladder (its matches in play or queued finish)"),
        ("return", False, "bring BOT back onto the ladder"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("bot")
        add_data_dir(command)
        command.set_defaults(
            func=with_store(_withdraw_or_return, existing=True), withdrawn=withdrawn
        )
    report = commands.add_parser(
        "collusion",
        help="pairs whose results against each other depart from their ratings against"
        " everyone else (method: docs/guide/fair-play.md)",
    )
    report.add_argument(
        "--tournament", metavar="NAME", help="only this tournament's games (default: every game)"
    )
    report.add_argument(
        "--min-games", type=_positive, default=MIN_GAMES, metavar="N",
        help=f"pairs with at least N games together (default {MIN_GAMES})",
    )  # fmt: skip
    report.add_argument(
        "--alpha", type=_level, default=ALPHA, metavar="P",
        help=f"flag pairs whose p-value is under P (default {ALPHA:g})",
    )  # fmt: skip
    report.add_argument("--all", action="store_true", help="every pair tested, not the flagged")
    report.add_argument("--json", action="store_true", help="JSON (every pair tested)")
    add_data_dir(report)
    report.set_defaults(func=with_store(_collusion, existing=True))


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number of games, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1 game, got {value}")
    return value


def _level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a probability, not {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"a probability between 0 and 1, got {value}")
    return value


def _collusion(store: Store, args: argparse.Namespace) -> int:
    tournament_id = None
    if args.tournament is not None:
        tournament_id = get_tournament(store, args.tournament).id
    report = collusion_report(
        game_results(store, tournament_id=tournament_id), min_games=args.min_games,
        alpha=args.alpha,
    )  # fmt: skip
    if args.json:
        print(json.dumps([e.to_json() for e in report], indent=2))
    else:
        print("\n".join(report_lines(report, everything=args.all)))
    return 0


def _withdraw_or_return(store: Store, args: argparse.Namespace) -> int:
    set_withdrawn(store, args.bot, args.withdrawn)
    print(f"{args.bot}: {'withdrawn from' if args.withdrawn else 'back on'} the ladder")
    return 0
