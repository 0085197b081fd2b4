"""`arena tournament create|run|resume|status|list`.

`run` creates a tournament and plays it; `resume` finishes one that was
interrupted (even by kill -9) without losing or double-counting a game. One
process runs a tournament at a time: a second `run`/`resume` of it exits 1
naming the running process. `status` and `list` show a tournament whose
runner died as `interrupted`.
Matches run concurrently (default: one per core), each in its own process.
"""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.commands.leaderboard import interval_cells
from arena.commands.playflags import add_play_flags
from arena.commands.rayflags import (
    RayUnavailableError,
    add_ray_flags,
    ray_executor,
    ray_flags_problem,
)
from arena.commands.storeargs import add_data_dir, console, fail, with_store
from arena.store import (
    INTERRUPTED,
    Store,
    TournamentConfig,
    TournamentFormat,
    TournamentRow,
    TournamentStatus,
    get_tournament,
    list_tournaments,
)
from arena.tournament.config import build_config
from arena.tournament.executor import MatchExecutor
from arena.tournament.intervals import ScoreInterval
from arena.tournament.results import (
    tournament_crosstable,
    tournament_intervals,
    tournament_standings,
)
from arena.tournament.rounds import create_tournament
from arena.tournament.runner import ProgressEvent, TournamentRunner

FORMATS = {
    "round-robin": TournamentFormat.ROUND_ROBIN,
    **{str(kind): kind for kind in TournamentFormat},
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("tournament", help="create, run and inspect tournaments",
                                   description=__doc__)  # fmt: skip
    commands = parser.add_subparsers(dest="tournament_command", metavar="SUBCOMMAND")
    commands.required = True

    create = commands.add_parser("create", help="create a tournament (play it with resume)")
    _add_definition(create)
    add_data_dir(create)
    create.set_defaults(func=with_store(run_create))

    run = commands.add_parser("run", help="create a tournament and play it")
    _add_definition(run)
    _add_run_options(run)
    add_data_dir(run)
    run.set_defaults(func=with_store(run_run))

    resume = commands.add_parser("resume", help="play the unplayed games of a tournament")
    resume.add_argument("name", help="tournament name")
    _add_run_options(resume)
    add_data_dir(resume)
    resume.set_defaults(func=with_store(run_resume))

    status = commands.add_parser("status", help="progress, standings and crosstable")
    status.add_argument("name", help="tournament name")
    status.add_argument("--json", action="store_true", help="print JSON")
    add_data_dir(status)
    status.set_defaults(func=with_store(run_status))

    listing = commands.add_parser("list", help="every tournament")
    add_data_dir(listing)
    listing.set_defaults(func=with_store(run_list))


def _add_definition(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="tournament name (letters, digits, - _ .)")
    parser.add_argument("bots", nargs="+", metavar="BOT", help="stored bots (latest versions)")
    parser.add_argument("--format", choices=sorted(FORMATS), default="round-robin")
    parser.add_argument(
        "--games", type=int, default=TournamentConfig.games_per_match,
        help=f"games per match (default {TournamentConfig.games_per_match})",
    )  # fmt: skip
    parser.add_argument("--rounds", type=int, help="Swiss rounds (default ceil(log2 n) + 1)")
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="tournament seed: tells its matches apart; the deals are keyed by a random secret"
        " stored with the tournament, never by the seed alone",
    )
    add_play_flags(parser)


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--concurrency", type=int, help="matches at once (default: cores)")
    add_cpu_pinning(parser)
    parser.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="run bots even where the host cannot sandbox them (trusted bots only)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_ray_flags(parser)


def add_cpu_pinning(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-cpu-pinning", dest="pin_cpus", action="store_false",
        help="let matches float between CPUs (default: each concurrent match on its own CPUs)",
    )  # fmt: skip


def _create(store: Store, args: argparse.Namespace) -> TournamentRow:
    config = build_config(
        games_per_match=args.games, rounds=args.rounds, seed=args.seed,
        action_ms=args.action_ms, bank_ms=args.bank_ms,
        strategic=args.strategic, tactical=args.tactical,
    )  # fmt: skip
    return create_tournament(store, args.name, FORMATS[args.format], args.bots, config)


def run_create(store: Store, args: argparse.Namespace) -> int:
    tournament = _create(store, args)
    print(f"created tournament {tournament.name} (id {tournament.id}, {tournament.format},"
          f" {len(tournament.entrants)} bots); play it with `arena tournament resume"
          f" {tournament.name}`")  # fmt: skip
    return 0


def run_run(store: Store, args: argparse.Namespace) -> int:
    problem = run_options_problem(args)  # before anything is stored
    if problem:
        return fail(problem)
    try:
        executor = ray_executor(args)  # joins the cluster before anything is stored
    except RayUnavailableError as error:
        return fail(str(error))
    return play_tournament(store, _create(store, args), args, executor)


def run_resume(store: Store, args: argparse.Namespace) -> int:
    problem = run_options_problem(args)
    if problem:
        return fail(problem)
    tournament = get_tournament(store, args.name)
    if tournament.status is TournamentStatus.FINISHED:
        print(f"{tournament.name} is already finished: nothing left to play")
    try:
        executor = ray_executor(args)
    except RayUnavailableError as error:
        return fail(str(error))
    return play_tournament(store, tournament, args, executor)


def run_options_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the flags of playing a tournament, if anything."""
    if args.concurrency is not None and args.concurrency < 1:
        return f"--concurrency must be at least 1, got {args.concurrency}"
    return ray_flags_problem(args)


def play_tournament(
    store: Store, tournament: TournamentRow, args: argparse.Namespace,
    executor: MatchExecutor | None = None,
) -> int:  # fmt: skip
    """Play ``tournament`` with the run options in ``args`` (checked by the caller:
    ``run_options_problem``, before anything is stored) on ``executor`` (None: the
    local one; ``--ray``: ``ray_executor``)."""
    out = console()
    runner = TournamentRunner(
        store, tournament.id, concurrency=args.concurrency, unsafe=args.unsafe_no_sandbox,
        pin_cpus=args.pin_cpus, executor=executor,
    )  # fmt: skip
    lease = runner.take_lease()  # another runner has it: exit 1 naming its pid, nothing stored
    with lease, Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TextColumn("{task.fields[last]}"),
        console=out, disable=args.no_progress, transient=False,
    ) as progress:  # fmt: skip
        task = progress.add_task(
            tournament.name, total=tournament.games_scheduled or None,
            completed=tournament.games_played, last="",
        )  # fmt: skip

        def show(event: ProgressEvent) -> None:
            progress.update(
                task, completed=event.games_played, total=event.games_scheduled or None,
                last=event.message,
            )  # fmt: skip

        runner.on_progress = show
        summary = runner.run(lease)
    print_results(out, store, summary.tournament)
    if summary.games_discarded:
        print(f"resumed: {summary.games_discarded} replayed game(s) already stored were discarded")
    if summary.stopped is not None:
        return fail(f"tournament {tournament.name} is interrupted: {summary.stopped}")
    if summary.failed_matches:
        for match_id, error in sorted(summary.failed_matches.items()):
            print(f"arena: match {match_id} failed: {error}")
        return fail(f"tournament {tournament.name} is unfinished: fix the cause, then resume it")
    return 0


def print_results(console: Console, store: Store, tournament: TournamentRow) -> None:
    standings = tournament_standings(store, tournament.id)
    intervals = tournament_intervals(store, tournament)
    table = Table(title=f"{tournament.name}: standings ({tournament.status},"
                  f" {tournament.games_played}/{tournament.games_scheduled} games)",
                  caption="score and Elo: against the field,"
                  " 95% interval over deal pairs")  # fmt: skip
    for header in ("#", "bot", "points", "games", "W/D/L", "byes", "Buchholz", "S-B",
                   "score (95%)", "Elo (95%)", "pairs"):  # fmt: skip
        table.add_column(header, justify="left" if header == "bot" else "right")
    for s in standings:
        table.add_row(
            str(s.rank), s.bot, f"{s.points:g}", str(s.games), f"{s.wins}/{s.draws}/{s.losses}",
            str(s.byes), f"{s.buchholz:g}", f"{s.sonneborn_berger:.2f}",
            *interval_cells(intervals.field.get(s.bot)),
        )  # fmt: skip
    console.print(table)
    order = [s.bot for s in standings]
    for note in intervals.notes(order):
        console.print(note, highlight=False, markup=False)
    cross = tournament_crosstable(store, tournament.id)
    grid = Table(title="crosstable (points scored by the row against the column;"
                 " score ± 95% half width over deal pairs)")  # fmt: skip
    grid.add_column("")
    for index, _ in enumerate(order):
        grid.add_column(str(index + 1), justify="right")
    for index, bot in enumerate(order):
        cells = ["x" if bot == other else _cross_cell(cross[(bot, other)],
                 intervals.h2h.get((bot, other))) if (bot, other) in cross
                 else "." for other in order]  # fmt: skip
        grid.add_row(f"{index + 1} {bot}", *cells)
    console.print(grid)
    if tournament.status == INTERRUPTED:
        console.print(resume_hint(tournament), highlight=False, markup=False, soft_wrap=True)


def _cross_cell(points: float, interval: ScoreInterval | None) -> str:
    return f"{points:g}" if interval is None else f"{points:g} ({interval.score_text()})"


def resume_hint(tournament: TournamentRow) -> str:
    return (
        f"{tournament.name} is interrupted: no process is running it"
        f" ({tournament.interrupted_reason or 'no reason recorded'});"
        f" resume it with `arena tournament resume {tournament.name}`"
    )


def status_to_json(store: Store, tournament: TournamentRow) -> dict[str, object]:
    cross = tournament_crosstable(store, tournament.id)
    intervals = tournament_intervals(store, tournament)
    standings = tournament_standings(store, tournament.id)
    order = [s.bot for s in standings]
    apart = dict(zip(order, intervals.separated_from_next(order), strict=True))
    return {
        "id": tournament.id, "name": tournament.name, "format": tournament.format,
        "status": tournament.status, "interrupted_reason": tournament.interrupted_reason,
        "games_played": tournament.games_played,
        "games_scheduled": tournament.games_scheduled, "entrants": list(tournament.entrants),
        "standings": [
            {"rank": s.rank, "bot": s.bot, "points": s.points, "games": s.games,
             "wins": s.wins, "draws": s.draws, "losses": s.losses, "byes": s.byes,
             "buchholz": s.buchholz, "sonneborn_berger": round(s.sonneborn_berger, 4),
             "interval": _interval_json(intervals.field.get(s.bot)),
             "separated_from_next": apart[s.bot]}
            for s in standings
        ],
        "crosstable": [
            {"bot": a, "opponent": b, "points": p,
             "interval": _interval_json(intervals.h2h.get((a, b)))}
            for (a, b), p in sorted(cross.items())
        ],
        "separation_notes": intervals.notes(order),
    }  # fmt: skip


def _interval_json(interval: ScoreInterval | None) -> dict[str, object] | None:
    return None if interval is None else interval.to_json()


def run_status(store: Store, args: argparse.Namespace) -> int:
    tournament = get_tournament(store, args.name)
    if args.json:
        print(json.dumps(status_to_json(store, tournament), indent=2))
        return 0
    print_results(console(), store, tournament)
    return 0


def run_list(store: Store, args: argparse.Namespace) -> int:
    table = Table(title="Tournaments")
    for header in ("id", "name", "format", "status", "bots", "games", "created"):
        table.add_column(header)
    tournaments = list_tournaments(store)
    for t in tournaments:
        table.add_row(str(t.id), t.name, t.format, t.status, str(len(t.entrants)),
                      f"{t.games_played}/{t.games_scheduled}", t.created_at[:19])  # fmt: skip
    out = console()
    out.print(table if tournaments else "No tournaments yet.")
    for t in tournaments:
        if t.status == INTERRUPTED:
            out.print(resume_hint(t), highlight=False, markup=False, soft_wrap=True)
    return 0
