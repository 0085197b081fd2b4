"""`arena tournament`: create, play, resume and show tournaments on the data directory."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

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
from arena.commands.stats import ORDER
from arena.commands.storeargs import add_data_dir, console, fail, with_store
from arena.commands.tables import fit, fits
from arena.store import (
    INTERRUPTED,
    Store,
    TournamentConfig,
    TournamentFormat,
    TournamentRow,
    TournamentStatus,
    get_tournament,
    list_tournaments,
    rejected_games,
    revealed_secret,
)
from arena.store.play import PLAY_NOT_RESUMED
from arena.tournament.execution.executor import MatchExecutor
from arena.tournament.orchestration.base import Terminated, stop_reason, terminate_as_interrupt
from arena.tournament.orchestration.runner import ProgressEvent, TournamentRunner
from arena.tournament.policy.config import (
    DEFAULT_MAX_PAIRS,
    TournamentError,
    build_config,
    build_sprt,
)
from arena.tournament.policy.ladder_config import CONCURRENCY_RANGE
from arena.tournament.policy.results import (
    table_games,
    tournament_crosstable,
    tournament_intervals,
)
from arena.tournament.policy.rounds import (
    PLAY_PREFIX,
    check_format_settings,
    check_tournament_name,
    create_tournament,
)
from arena.tournament.policy.sprt_format import sprt_progress
from arena.tournament.statistics.gauntlet import gauntlet_rows
from arena.tournament.statistics.intervals import ScoreInterval, TableIntervals
from arena.tournament.statistics.sprt import PRESETS, EloModel
from arena.tournament.view.committed import committed_lines, shown_parameters
from arena.tournament.view.ladder_view import entrants_shown
from arena.tournament.view.table import tournament_table

DESCRIPTION = """\
`arena tournament create|run|resume|status|list`.

Formats: round-robin, swiss, gauntlet (the first bot plays each of the others,
paired deals) and sprt (a sequential test of CANDIDATE against BASELINE, one
deal pair per match, until the LLR crosses a bound or --max-pairs is reached).
`run` creates a tournament and plays it; `resume` finishes one that was
interrupted (Ctrl-C, SIGTERM, even kill -9) without losing or double-counting
a game; Ctrl-C and SIGTERM record why (`status`). One
process runs a tournament at a time: a second `run`/`resume` of it exits 1
naming the running process. `status` and `list` show a tournament whose
runner died as `interrupted`.
Matches run concurrently (default: one per core), each in its own process.
"""


FORMATS = {
    "round-robin": TournamentFormat.ROUND_ROBIN,
    "swiss": TournamentFormat.SWISS,
    "gauntlet": TournamentFormat.GAUNTLET,
    "sprt": TournamentFormat.SPRT,
}
"""The formats ``--format`` takes, by the name every command shows (a ladder is no
format of these: it runs inside ``arena serve --ladder``)."""
FORMAT_ALIASES = {"round_robin": "round-robin"}
"""Also accepted: the stored name (``--json`` shows it)."""
EXIT_TERMINATED = 128 + 15
"""A run stopped by SIGTERM exits as a process that signal ended is reported (143)."""


def format_name(kind: TournamentFormat) -> str:
    """``kind`` as the commands show it: ``round-robin``, ``swiss``, ``ladder``..."""
    return str(kind).replace("_", "-")


def _format(text: str) -> str:
    name = FORMAT_ALIASES.get(text, text)
    if name in FORMATS:
        return name
    if name == str(TournamentFormat.LADDER):
        raise argparse.ArgumentTypeError(
            "a ladder is not played as a tournament: it runs inside the server"
            " (`arena serve --ladder`; see `arena ladder --help`)"
        )
    raise argparse.ArgumentTypeError(f"{text!r} is not a format: choose from {', '.join(FORMATS)}")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("tournament", help="create, run and inspect tournaments",
                                   description=DESCRIPTION)  # fmt: skip
    commands = parser.add_subparsers(dest="tournament_command", metavar="SUBCOMMAND")
    commands.required = True

    create = commands.add_parser("create", help="create a tournament (play it with resume)")
    _add_definition(create)
    add_data_dir(create)
    create.set_defaults(func=with_store(run_create, flags=definition_problem))

    run = commands.add_parser("run", help="create a tournament and play it")
    _add_definition(run)
    _add_run_options(run)
    add_data_dir(run)
    run.set_defaults(func=with_store(run_run, flags=run_flags_problem))

    resume = commands.add_parser("resume", help="play the unplayed games of a tournament")
    resume.add_argument("name", help="tournament name")
    _add_run_options(resume)
    add_data_dir(resume)
    resume.set_defaults(
        func=with_store(run_resume, existing=True, flags=run_options_problem)
    )

    status = commands.add_parser("status", help="progress, standings and crosstable")
    status.add_argument("name", help="tournament name")
    status.add_argument("--json", action="store_true", help="print JSON")
    add_data_dir(status)
    status.set_defaults(func=with_store(run_status, existing=True))

    listing = commands.add_parser("list", help="every tournament")
    add_data_dir(listing)
    listing.set_defaults(func=with_store(run_list, existing=True))


def _add_definition(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="tournament name (letters, digits, - _ .)")
    parser.add_argument("bots", nargs="+", metavar="BOT", help="stored bots (latest versions)")
    parser.add_argument(
        "--format", type=_format, choices=list(FORMATS), default="round-robin",
        help="how the bots are paired (default round-robin)",
    )  # fmt: skip
    parser.add_argument(
        "--games", type=int, default=TournamentConfig.games_per_match,
        help=f"games per match (default {TournamentConfig.games_per_match})",
    )  # fmt: skip
    parser.add_argument("--rounds", type=int, help="Swiss rounds (default ceil(log2 n) + 1)")
    _add_sprt_flags(parser)
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="make the deals reproducible: the same seed deals the same games in any data"
        " directory (docs/reference/VERIFY.md); the seed is published with the tournament,"
        " so anyone can compute its deals. Left out (the default), the deals are keyed by a fresh"
        " random secret, revealed once the tournament is finished",
    )
    parser.add_argument(
        "--paired-remote", action="store_true",
        help="pair deals (games 2k and 2k+1 share one) in matches with a remote bot too,"
        " committed with the tournament. Risk: a remote bot's owner can link its processes,"
        " so the bot plays the second game of a pair knowing the whole deal from the first;"
        " default: a fresh deal in every game of such a match (unpaired)",
    )  # fmt: skip
    add_play_flags(parser)


def _add_sprt_flags(parser: argparse.ArgumentParser) -> None:
    sprt = parser.add_argument_group(
        "sprt test (--format sprt CANDIDATE BASELINE)",
        "H0: the candidate is elo0 stronger, H1: elo1 stronger; a preset or both bounds",
    )
    sprt.add_argument("--sprt", choices=sorted(PRESETS), help="preset bounds: nonreg"
                      f" {_bounds('nonreg')}, gain {_bounds('gain')} (normalized Elo)")  # fmt: skip
    sprt.add_argument("--elo0", type=float, metavar="E0", help="Elo of H0")
    sprt.add_argument("--elo1", type=float, metavar="E1", help="Elo of H1")
    sprt.add_argument("--alpha", type=float, help="false-pass rate at elo0 (0.05)")
    sprt.add_argument("--beta", type=float, help="false-fail rate at elo1 (0.05)")
    sprt.add_argument("--model", choices=[str(m) for m in EloModel],
                      help="Elo model of the bounds (normalized)")  # fmt: skip
    sprt.add_argument(
        "--max-pairs", type=int, metavar="N",
        help=f"deal pairs at most; then inconclusive ({DEFAULT_MAX_PAIRS})",
    )  # fmt: skip


def _bounds(preset: str) -> str:
    return f"[{PRESETS[preset].elo0:g}, {PRESETS[preset].elo1:g}]"


STANDINGS_DROP_ORDER = ("S-B", "Buchholz", "byes", "pairs", "Elo (95%)", "score (95%)", "W/D/L")
"""The standings columns a narrow terminal loses, first to last."""
SPRT_FLAGS = ("sprt", "elo0", "elo1", "alpha", "beta", "model", "max_pairs")


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


def definition(args: argparse.Namespace) -> tuple[TournamentFormat, TournamentConfig]:
    """The format and checked config the flags ask for (TournamentError naming the flag)."""
    kind = FORMATS[args.format]
    check_tournament_name(args.name)
    if len(args.bots) < 2:  # the first word is the tournament's name, not a bot
        raise TournamentError(
            f"a tournament needs at least two bots after its name; got the name {args.name!r}"
            f" and {len(args.bots)} bot{'' if len(args.bots) == 1 else 's'}"
            f"{': ' + ', '.join(args.bots) if args.bots else ''}"
            f" (arena tournament {args.tournament_command} NAME BOT BOT ...)"
        )
    given = [flag for flag in SPRT_FLAGS if getattr(args, flag) is not None]
    sprt = None
    if kind is TournamentFormat.SPRT:
        sprt = build_sprt(
            preset=args.sprt, elo0=args.elo0, elo1=args.elo1, alpha=args.alpha,
            beta=args.beta, model=args.model, max_pairs=args.max_pairs,
        )  # fmt: skip
        if len(args.bots) != 2:
            raise TournamentError(
                f"an sprt test is between two bots, CANDIDATE BASELINE; got {len(args.bots)}"
            )
    elif given:
        flag = "--" + given[0].replace("_", "-")
        raise TournamentError(f"{flag} is for sprt tests only (--format sprt), not {args.format}")
    config = build_config(
        games_per_match=args.games, rounds=args.rounds, seed=args.seed,
        action_ms=args.action_ms, bank_ms=args.bank_ms,
        strategic=args.strategic, tactical=args.tactical, sprt=sprt,
    )  # fmt: skip
    check_format_settings(kind, args.bots, config)
    return kind, config


def definition_problem(args: argparse.Namespace) -> str | None:
    """What ``definition`` refuses in the flags, in words (None: nothing)."""
    try:
        definition(args)
    except TournamentError as error:
        return str(error)
    return None


def run_flags_problem(args: argparse.Namespace) -> str | None:
    """`tournament run`: what is wrong with its run options, else with its definition."""
    return run_options_problem(args) or definition_problem(args)


def _create(store: Store, args: argparse.Namespace) -> TournamentRow:
    """The new tournament of the flags (checked before the store was opened:
    ``definition_problem``)."""
    kind, config = definition(args)
    return create_tournament(store, args.name, kind, args.bots, config,
                             seeded=args.seed is not None, paired_remote=args.paired_remote)


def run_create(store: Store, args: argparse.Namespace) -> int:
    tournament = _create(store, args)
    print(f"created tournament {tournament.name} (id {tournament.id}, {tournament.format},"
          f" {len(tournament.entrants)} bots); play it with `arena tournament resume"
          f" {tournament.name}`")  # fmt: skip
    return 0


def run_run(store: Store, args: argparse.Namespace) -> int:
    try:
        executor = ray_executor(args)  # joins the cluster before anything is stored
    except RayUnavailableError as error:
        return fail(str(error))
    try:
        tournament = _create(store, args)
        return play_tournament(store, tournament, args, executor)
    finally:
        leave_cluster(executor)


def run_resume(store: Store, args: argparse.Namespace) -> int:
    tournament = get_tournament(store, args.name)
    if tournament.status is TournamentStatus.FINISHED:
        print(f"{tournament.name} is already finished: nothing left to play")
    try:
        executor = ray_executor(args)
    except RayUnavailableError as error:
        return fail(str(error))
    try:
        return play_tournament(store, tournament, args, executor)
    finally:
        leave_cluster(executor)


def leave_cluster(executor: MatchExecutor | None) -> None:
    """A Ray driver that is done leaves its cluster before the process ends (Ray's own
    leaving at exit takes about a second longer); the local executor has nothing to leave."""
    leave = getattr(executor, "leave_cluster", None)
    if leave is not None:
        leave()


def run_options_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the flags of playing a tournament, if anything."""
    return concurrency_problem(args.concurrency) or ray_flags_problem(args)


def concurrency_problem(concurrency: int | None) -> str | None:
    """``--concurrency`` out of the range a ladder takes too: each match in play is a worker
    process with its bots (an SPRT test schedules that many pairs at once)."""
    low, high = CONCURRENCY_RANGE
    if concurrency is not None and not low <= concurrency <= high:
        return f"--concurrency must be from {low} to {high}, got {concurrency}"
    return None


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
            last = event.message
            if tournament.format is TournamentFormat.SPRT:
                state = sprt_progress(store, get_tournament(store, tournament.id))
                last = f"{state.sentence()} | {last}"
            progress.update(
                task, completed=event.games_played, total=event.games_scheduled or None,
                last=last,
            )  # fmt: skip

        runner.on_progress = show
        try:
            with terminate_as_interrupt():  # a service manager's stop, recorded as a Ctrl-C is
                summary = runner.run(lease)
        except Terminated as stopped:
            return fail(f"tournament {tournament.name} is interrupted: {stop_reason(stopped)}",
                        EXIT_TERMINATED)  # fmt: skip
    print_results(out, store, summary.tournament)
    if summary.games_discarded:
        print(f"resumed: {summary.games_discarded} replayed game(s) already stored were discarded")
    if summary.stopped is not None:
        return fail(f"tournament {tournament.name} is interrupted: {summary.stopped}")
    if summary.failed_matches:
        for match_id, error in sorted(summary.failed_matches.items()):
            print(f"arena: match {match_id} failed: {error}", file=sys.stderr)
        return fail(f"tournament {tournament.name} is unfinished: fix the cause, then resume it")
    return 0


def print_results(console: Console, store: Store, tournament: TournamentRow) -> None:
    title = (f"{tournament.name} ({format_name(tournament.format)}, {tournament.status},"
             f" {tournament.games_played}/{tournament.games_scheduled} games)")  # fmt: skip
    if tournament.format is TournamentFormat.SPRT:
        print_sprt(console, store, tournament, title)
    elif tournament.format is TournamentFormat.GAUNTLET:
        print_gauntlet(console, store, tournament, title)
    else:
        print_standings(console, store, tournament)
    print_rejected(console, store, tournament)
    if tournament.status == INTERRUPTED:
        console.print(resume_hint(tournament), highlight=False, markup=False, soft_wrap=True)


def print_rejected(console: Console, store: Store, tournament: TournamentRow) -> None:
    """The games the driver refused from Ray nodes, each with the node that sent it."""
    refused = rejected_games(store, tournament.id)
    if not refused:
        return
    console.print(f"refused   {len(refused)} game(s) a Ray node sent that were not of their"
                  " match as dealt (never stored; played again on another node):",
                  highlight=False, markup=False, soft_wrap=True)  # fmt: skip
    for r in refused:
        console.print(f"  match {r.match_id} game {r.game_index} from node {r.node_ip}"
                      f" ({r.node_id}): {r.problem}", highlight=False, markup=False,
                      soft_wrap=True)  # fmt: skip


def print_sprt(console: Console, store: Store, tournament: TournamentRow, title: str) -> None:
    """A test's hypotheses, its decision (or LLR so far) and the candidate's score."""
    progress = sprt_progress(store, tournament)
    candidate, baseline = tournament.entrants
    params = progress.params
    h2h = tournament_intervals(store, tournament).h2h.get((candidate, baseline))
    lines = [
        title,
        f"test      {candidate} (candidate) against {baseline} (baseline)",
        f"SPRT      H0: {params.model} Elo {params.elo0:g}, H1: {params.elo1:g}"
        f" (alpha {params.alpha:g}, beta {params.beta:g}), at most {progress.max_pairs} pairs",
        f"result    {progress.sentence()}",
        f"LLR       {progress.llr:.3f} over {len(progress.scores)} pairs,"
        f" bounds [{progress.lower_bound:.3f}, {progress.upper_bound:.3f}]",
        f"pairs     {progress.complete} played of {progress.scheduled} scheduled;"
        f" {ORDER} = {progress.pentanomial}",
    ]
    if h2h is not None:
        lines.append(f"score     {h2h.score_text()} (95%), Elo {h2h.elo_text()},"
                     f" LOS {h2h.los_text()}, {h2h.pairs_text()} pairs")  # fmt: skip
    for line in lines:
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def print_gauntlet(console: Console, store: Store, tournament: TournamentRow, title: str) -> None:
    """The candidate's result against each opponent and overall, with 95% intervals."""
    candidate, *opponents = tournament.entrants
    rows, overall = gauntlet_rows(table_games(store, tournament.id), candidate, opponents)
    table = Table(
        title=f"{title}: {candidate} against the field",
        caption="score and Elo: the candidate's, 95% interval over deal pairs",
    )
    for header in ("opponent", "games", "W/D/L", "score (95%)", "Elo (95%)", "pairs"):
        table.add_column(header, justify="left" if header == "opponent" else "right")
    for row in [*rows, overall]:
        table.add_row(
            row.opponent or "overall", str(row.games), f"{row.wins}/{row.draws}/{row.losses}",
            *interval_cells(row.interval),
        )  # fmt: skip
    console.print(fit(table, console, ("pairs", "Elo (95%)", "W/D/L")))
    for row in rows:
        if row.interval is not None and not row.interval.excludes_even():
            console.print(f"{candidate} and {row.opponent} are not separated at 95%",
                          highlight=False, markup=False)  # fmt: skip


def print_standings(console: Console, store: Store, tournament: TournamentRow) -> None:
    standings, intervals = tournament_table(store, tournament)  # a ladder's: no game read
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
    console.print(fit(table, console, STANDINGS_DROP_ORDER))
    order = [s.bot for s in standings]
    for note in intervals.notes(order):
        console.print(note, highlight=False, markup=False)
    cross = _crosstable(store, tournament)
    grid = _crosstable_grid(cross, intervals, order, with_intervals=True)
    if not fits(grid, console):
        grid = _crosstable_grid(cross, intervals, order, with_intervals=False)
    if fits(grid, console):
        console.print(grid)
    else:
        console.print(f"crosstable left out at this width ({len(order)} bots):"
                      f" `arena tournament status {tournament.name} --json` has it",
                      highlight=False, markup=False)  # fmt: skip


def _crosstable_grid(
    cross: dict[tuple[str, str], float], intervals: TableIntervals, order: list[str],
    *, with_intervals: bool,
) -> Table:  # fmt: skip
    """Points scored by each row's bot against each column's, with the 95% score
    interval where asked (a narrow terminal gets the points alone)."""
    title = "crosstable (points scored by the row against the column"
    grid = Table(title=f"{title}; score ± 95% half width over deal pairs)" if with_intervals
                 else f"{title})")  # fmt: skip
    grid.add_column("", no_wrap=True)
    for index, _ in enumerate(order):
        grid.add_column(str(index + 1), justify="right")
    for index, bot in enumerate(order):
        cells = ["x" if bot == other else _cross_cell(cross[(bot, other)],
                 intervals.h2h.get((bot, other)) if with_intervals else None)
                 if (bot, other) in cross else "." for other in order]  # fmt: skip
        grid.add_row(f"{index + 1} {bot}", *cells)
    return grid


def _cross_cell(points: float, interval: ScoreInterval | None) -> str:
    return f"{points:g}" if interval is None else f"{points:g} ({interval.score_text()})"


def resume_hint(tournament: TournamentRow) -> str:
    how = (
        f"start it again with `arena serve --ladder --ladder-name {tournament.name}`"
        if tournament.format is TournamentFormat.LADDER  # `tournament resume` refuses a ladder
        else PLAY_NOT_RESUMED if tournament.name.startswith(PLAY_PREFIX)  # and refuses these
        else f"resume it with `arena tournament resume {tournament.name}`"
    )
    return (
        f"{tournament.name} is interrupted: no process is running it"
        f" ({tournament.interrupted_reason or 'no reason recorded'}); {how}"
    )


def _crosstable(store: Store, tournament: TournamentRow) -> dict[tuple[str, str], float]:
    """Each pair's points from every game: none for a ladder (its history grows without end)."""
    if tournament.format is TournamentFormat.LADDER:
        return {}
    return tournament_crosstable(store, tournament.id)


def status_to_json(store: Store, tournament: TournamentRow) -> dict[str, object]:
    cross = _crosstable(store, tournament)
    standings, intervals = tournament_table(store, tournament)
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
        "rejected_games": [dataclasses.asdict(r) for r in rejected_games(store, tournament.id)],
        **_format_json(store, tournament),
        **_committed_json(store, tournament),
    }  # fmt: skip


def _committed_json(store: Store, tournament: TournamentRow) -> dict[str, object]:
    """The seed commitment, the exact parameters text it binds, and the secret once
    finished (None before: it stays unknown until the end)."""
    secret = revealed_secret(store, tournament.id)
    return {"commitment": tournament.commitment,
            "parameters": shown_parameters(store, tournament),
            "revealed_secret": None if secret is None else secret.hex()}  # fmt: skip


def print_committed(console: Console, store: Store, tournament: TournamentRow) -> None:
    """What the seed commitment binds, field by field and as the exact text hashed, so an
    entrant can question it before play (docs/reference/VERIFY.md)."""
    committed = _committed_json(store, tournament)
    parameters = committed["parameters"]
    if tournament.commitment is None or not isinstance(parameters, str):
        return
    secret = committed["revealed_secret"]
    lines = committed_lines(
        tournament.commitment, parameters, None if secret is None else str(secret),
        console.width, f"`arena tournament status {tournament.name} --json` has it",
    )  # fmt: skip
    for line in lines:
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def _format_json(store: Store, tournament: TournamentRow) -> dict[str, object]:
    """What a test or a gauntlet adds to its status: the SPRT, the per-opponent rows."""
    if tournament.format is TournamentFormat.SPRT:
        return {"sprt": sprt_progress(store, tournament).to_json()}
    if tournament.format is TournamentFormat.GAUNTLET:
        candidate, *opponents = tournament.entrants
        rows, overall = gauntlet_rows(table_games(store, tournament.id), candidate, opponents)
        return {"gauntlet": {"candidate": candidate, "opponents": [r.to_json() for r in rows],
                             "overall": overall.to_json()}}  # fmt: skip
    return {}


def _interval_json(interval: ScoreInterval | None) -> dict[str, object] | None:
    return None if interval is None else interval.to_json()


def run_status(store: Store, args: argparse.Namespace) -> int:
    tournament = get_tournament(store, args.name)
    if args.json:
        print(json.dumps(status_to_json(store, tournament), indent=2))
        return 0
    out = console()
    print_results(out, store, tournament)
    print_committed(out, store, tournament)
    return 0


def _test_cell(store: Store, tournament: TournamentRow) -> str:
    """An SPRT test's verdict and LLR in a list row ("" for other formats)."""
    if tournament.format is not TournamentFormat.SPRT:
        return ""
    progress = sprt_progress(store, tournament)
    return f"{progress.verdict}, LLR {progress.llr:.2f} ({len(progress.scores)} pairs)"


def run_list(store: Store, args: argparse.Namespace) -> int:
    table = Table(title="Tournaments")
    for header in ("id", "name", "format", "status", "bots", "games", "test", "created"):
        table.add_column(header)
    tournaments = list_tournaments(store)
    for t in tournaments:
        table.add_row(str(t.id), t.name, format_name(t.format), t.status,
                      str(len(entrants_shown(store, t))),
                      f"{t.games_played}/{t.games_scheduled}", _test_cell(store, t),
                      t.created_at[:19])  # fmt: skip
    out = console()
    out.print(fit(table, out, ("created", "test", "bots", "format")) if tournaments
              else "No tournaments yet.")  # fmt: skip
    for t in tournaments:
        if t.status == INTERRUPTED:
            out.print(resume_hint(t), highlight=False, markup=False, soft_wrap=True)
    return 0
