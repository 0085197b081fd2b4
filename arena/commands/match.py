"""`arena match`: play a match between two bot directories and print the result.

Exit statuses: 0 the match was played (whatever the bots did), 2 bad
arguments, a bot directory that cannot be used, or a host without the
sandbox (unless --unsafe-no-sandbox).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from arena.commands.bot_check import with_class_archive
from arena.commands.botref import find_bot
from arena.commands.outfile import write_whole
from arena.commands.pathargs import given, given_path
from arena.commands.playflags import add_play_flags, game_seed, time_control, variant, whole
from arena.commands.storeargs import add_data_dir
from arena.kahuna import HandicapBridge
from arena.logs import configure
from arena.quoting import visible
from arena.referee import (
    BotConfigError,
    BotSpec,
    BotStatus,
    GameReport,
    MatchConfig,
    MatchReport,
    display_names,
    unbuilt,
)
from arena.referee.halves import run_halves
from arena.referee.handicap import FORMAT as HANDICAP_FORMAT
from arena.referee.handicap import parse_handicap
from arena.referee.prestart import decide_prestart
from arena.referee.seeds import STANDALONE, match_seed_material, new_secret, secret_from_seed
from arena.referee.timings import decision_stats, seat_walls
from arena.sandbox import SandboxConfigError, SandboxUnavailableError
from arena.store import SchemaError, StoreError
from arena.tournament.execution.cpu_placement import usable_cpus
from arena.tournament.statistics.intervals import ScoreInterval, TableGame, field_intervals
from arena.tournament.statistics.stats import MIN_PAIRS

EXIT_OK = 0
EXIT_USAGE = 2


def _handicap(text: str) -> tuple[HandicapBridge, ...]:
    try:
        return parse_handicap(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "match",
        help="play a match between two bots through the sandboxed referee",
        description=(
            "Play GAMES games between two bots (directories with a bot.toml, stored bots or"
            " sample bots, by name): seats swap "
            "every game and each deal is played from both sides: games 2k and 2k+1 share a deal,"
            " played by separate bot processes (one half for the even games, one for the odd,"
            " at once where a CPU is spare). Prints each game, in order, and the score."
        ),
    )
    parser.add_argument("bot_a", metavar="BOT", type=given,
                        help="first bot: a directory, a stored bot's name (its latest version)"
                        " or a sample bot's (e.g. python_random)")  # fmt: skip
    parser.add_argument("bot_b", metavar="BOT", type=given, help="second bot, the same way")
    parser.add_argument("--games", type=whole(1, 10_000), default=2, help="games (default 2)")
    parser.add_argument(
        "--seed", type=game_seed, default=None,
        help="replay the same deals: derive the match's secret from SEED (never sent to the"
        " bots, but a bot that guesses SEED can compute every deal: leave it out for a match"
        " that matters; default: a fresh random secret)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--records", type=given_path, metavar="DIR",
                        help="write each game's record")  # fmt: skip
    add_play_flags(parser)
    parser.add_argument(
        "--max-restarts", type=whole(0, 1000), default=MatchConfig.max_restarts,
        help=f"restarts per bot after a crash (default {MatchConfig.max_restarts})",
    )
    parser.add_argument(
        "--handicap", type=_handicap, default=(), metavar="SEAT:LINE[,LINE...]",
        help=f"R2h: 1-3 bridges for one seat in every game, {HANDICAP_FORMAT};"
        " seats swap every game, so each bot gets it in half the games",
    )
    parser.add_argument(
        "--ponder", action="store_true",
        help="let the bot that is not to move run (by default it is frozen); fair only"
        " where each bot has its own CPUs",
    )
    parser.add_argument(
        "--unsafe-no-sandbox", action="store_true",
        help="run bots even where the host cannot sandbox them (trusted bots only)",
    )
    parser.add_argument(
        "--no-class-archive", action="store_true",
        help="Java bots: launch without the arena's class-data archive (neither built nor used)",
    )
    add_data_dir(parser)
    parser.set_defaults(func=run)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _fail(message: str) -> int:
    print(f"arena match: {visible(message)}", file=sys.stderr)
    return EXIT_USAGE


def run(args: argparse.Namespace) -> int:
    configure(level="WARNING")
    try:
        bots = find_bot(args.bot_a, args.data_dir), find_bot(args.bot_b, args.data_dir)
    except (BotConfigError, StoreError, SchemaError) as error:
        return _fail(str(error))
    for bot in bots:
        if (not_built := unbuilt(bot)) is not None:
            return _fail(f"{bot.directory}: {not_built}")
    if not args.no_class_archive and not args.unsafe_no_sandbox:  # Java: as a tournament would
        say = None if args.json else _say
        bots = (with_class_archive(bots[0], args.data_dir, say=say),
                with_class_archive(bots[1], args.data_dir, say=say))  # fmt: skip
    records_dir: Path | None = args.records
    if records_dir is not None:
        try:
            records_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            return _fail(f"--records {records_dir}: {error.strerror or error}")
    config = MatchConfig(
        games=args.games,
        secret=match_seed_material(
            new_secret() if args.seed is None else secret_from_seed(args.seed), STANDALONE
        ),
        variant=variant(args),
        time_control=time_control(args),
        max_restarts=args.max_restarts,
        handicap=args.handicap,
        unsafe=args.unsafe_no_sandbox,
        ponder=args.ponder,
    )
    on_game = None if records_dir is None else _record_writer(records_dir)
    try:
        prestart = decide_prestart(cpus=len(usable_cpus()), bots=bots)
        report = run_halves(config, *bots, prestart=prestart, on_game=on_game)
    except SandboxUnavailableError as error:
        return _fail(f"{error} (pass --unsafe-no-sandbox to run trusted bots without it)")
    except (SandboxConfigError, OSError) as error:
        return _fail(str(error))
    except ValueError as error:  # a remote bot: it plays only through `arena serve`
        return _fail(str(error))
    except RecordsError as error:  # the match stops: its games would go unrecorded
        return _fail(str(error))
    if args.json:
        print(json.dumps(match_json(report, bots, config, args.seed)))
    else:
        _print_table(report, bots, config)
    return EXIT_OK


def match_intervals(
    report: MatchReport, names: tuple[str, str], config: MatchConfig
) -> dict[str, ScoreInterval | None]:
    """Each bot's score with its 95% interval over the match's deal pairs (games 2k and
    2k+1 share deal k; a match that is not paired, or a pair cut short, is counted by
    single games and says so), None for a match without games."""
    games = []
    for game in report.games:
        seats = (game.bots_by_seat[0], game.bots_by_seat[1])
        winner = None if game.winner is None else seats.index(game.winner)
        statuses = tuple(game.statuses.get(bot, BotStatus.OK).value for bot in seats)
        games.append(TableGame(config.deal_index(game.index), seats, winner,
                               (statuses[0], statuses[1])))  # fmt: skip
    return field_intervals(games, names)


def summary_line(name: str, interval: ScoreInterval) -> str:
    """``name``'s score over every game with its Elo, and its 95% interval over the full
    deal pairs, or why there is none; games outside a full pair are named as such."""
    pairs = f"{interval.pairs} deal pair{'s' * (interval.pairs != 1)}"
    unpaired = interval.unpaired
    if unpaired:
        pairs += f" + {unpaired} unpaired game{'s' * (unpaired != 1)}"
    games = f"{interval.games} game{'s' * (interval.games != 1)}"
    score = f"{100 * interval.score:.1f}%"
    if interval.too_few_pairs:
        return (f"{name}: {score} over {games} ({pairs}), Elo {interval.elo_text()};"
                f" too few pairs for a 95% interval (it needs {MIN_PAIRS})")  # fmt: skip
    return (f"{name}: {score} over {games} ({pairs}); 95% interval over the pairs"
            f" [{100 * interval.low:.1f}, {100 * interval.high:.1f}], Elo {interval.elo_text()},"
            f" LOS {interval.los_text()}")  # fmt: skip


class RecordsError(Exception):
    """A game record that could not be written to ``--records``; the message says which."""


def _record_writer(directory: Path) -> Callable[[GameReport], None]:
    def write(game: GameReport) -> None:
        path = directory / f"game-{game.index:03d}.json"
        try:
            write_whole(path, json.dumps(game.record, indent=1) + "\n")  # never truncated
        except OSError as error:
            raise RecordsError(
                f"--records {directory}: cannot write {path.name}: {error.strerror or error}"
            ) from None

    return write


def _failures(game: GameReport) -> str:
    failed = [f"{name}: {status.value}" for name, status in game.statuses.items()
              if status is not BotStatus.OK]
    return ", ".join(failed) or "-"


def _failure_lines(game: GameReport) -> list[str]:
    """Each failure of ``game`` in words: the bot, its status and what it did (the
    action and the rule it breaks, the limit it ran into, ...)."""
    details = _failure_details(game)
    lines = []
    for failure in details if isinstance(details, list) else []:
        if isinstance(failure, dict) and failure.get("detail"):
            lines.append(f"{failure.get('bot')} {failure.get('status')}: {failure['detail']}")
    return lines


def _failure_details(game: GameReport) -> object:
    metadata = game.record.get("match")
    return metadata.get("failures", []) if isinstance(metadata, dict) else []


def match_json(report: MatchReport, bots: tuple[BotSpec, BotSpec],
               config: MatchConfig, seed: int | None = None) -> dict[str, object]:
    names = display_names(*bots)
    return {
        "bots": {
            name: {"version": spec.version, "directory": str(spec.directory)}
            for name, spec in zip(names, bots, strict=True)
        },
        "seed": seed,
        "handicap": [{"seat": bridge.seat, "line": bridge.line} for bridge in config.handicap],
        "time_control": {
            "action_ms": config.time_control.action_ms,
            "bank_ms": config.time_control.bank_ms,
        },
        "games": [
            {
                "index": game.index,
                "seats": list(game.bots_by_seat),
                "winner": game.winner,
                "reason": game.reason,
                "status": {name: status.value for name, status in game.statuses.items()},
                "actions": game.actions,
                "time_ms": dict(game.time_ms),
                "failures": _failure_details(game),
                "stderr": dict(game.stderr),
            }
            for game in report.games
        ],
        "score": dict(report.score),
        "intervals": {
            name: None if interval is None else interval.to_json()
            for name, interval in match_intervals(report, names, config).items()
        },
        "decision_timings": decision_timings(report, names),
    }


def decision_timings(report: MatchReport, names: tuple[str, str]) -> dict[str, object]:
    """Per bot over the whole match: its decisions' wall times and its CPU time
    (``arena.referee.timings``; CPU only if every game measured it)."""
    walls: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, float | None] = dict.fromkeys(names, 0.0)
    for game in report.games:
        metadata = game.record.get("match")
        if not isinstance(metadata, dict):
            continue
        timings = metadata.get("timings")
        cpu_by_seat = metadata.get("cpu_ms")
        for seat, name in enumerate(game.bots_by_seat):
            walls[name] += seat_walls(timings if isinstance(timings, list) else [], seat)
            seat_cpu = cpu_by_seat[seat] if isinstance(cpu_by_seat, list) else None
            known = cpu[name]
            cpu[name] = None if known is None or seat_cpu is None else known + float(seat_cpu)
    return {name: decision_stats(walls[name], cpu[name]) for name in names}


def _print_table(
    report: MatchReport, bots: tuple[BotSpec, BotSpec], config: MatchConfig
) -> None:
    names = display_names(*bots)
    header = ["game", "seat 0", "seat 1", "winner", "reason", "actions",
              f"ms {names[0]}", f"ms {names[1]}", "failures"]
    rows = [header]
    for game in report.games:
        rows.append([
            str(game.index),
            game.bots_by_seat[0],
            game.bots_by_seat[1],
            game.winner or "-",
            game.reason,
            str(game.actions),
            f"{game.time_ms[names[0]]:.0f}",
            f"{game.time_ms[names[1]]:.0f}",
            _failures(game),
        ])
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    for row in rows:
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        print("  ".join(cells).rstrip())
    score = " - ".join(f"{name} {report.score[name]:g}" for name in names)
    print(f"score: {score}")
    interval = match_intervals(report, names, config)[names[0]]
    if interval is not None:
        print(summary_line(names[0], interval))
    for game in report.games:  # the operator runs both bots: their stderr is theirs to see
        for line in _failure_lines(game):
            print(f"game {game.index}: {line}")
        for name, tail in game.stderr.items():
            print(f"game {game.index}: {name}'s stderr (first and last lines):")
            print("\n".join(f"  {line}" for line in tail.splitlines()))
