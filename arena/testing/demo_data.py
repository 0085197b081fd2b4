"""Fill a store with a real tournament of engine-played games.

For the web tests, the README screenshots and the page benchmark: bots are
stored with ``arena.store.add_bot_version`` (real directories, real content
hashes), a round robin is created with ``create_tournament``, and every game
is a seeded ``arena.kahuna.play_random_game`` stored with ``store_game``, so
ratings, history and standings are computed by the store exactly as for a
tournament played by real bots. No bot processes run: this is about pages,
not matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from arena import store as st
from arena.kahuna import Record, play_random_game, record_of, record_to_json, replay
from arena.referee.botdir import load_bot
from arena.referee.results import FORFEIT
from arena.referee.seeds import deal_seed, match_seed_material
from arena.referee.types import BotStatus, GameReport
from arena.tournament.policy.config import match_identity
from arena.tournament.policy.results import store_game
from arena.tournament.policy.rounds import create_tournament

DEMO_BOTS: tuple[str, ...] = ("greedy_gecko", "random_reef", "tidal_tactician", "lagoon_lurker")


@dataclass(frozen=True)
class DemoTournament:
    tournament_id: int
    game_ids: tuple[int, ...]
    bots: tuple[str, ...]
    lease: st.TournamentLease | None = None  # held while the tournament stays running


def write_bot_dir(root: Path, name: str, revision: int = 0) -> Path:
    """A small bot directory (bot.toml + bot.py); ``revision`` changes its content hash."""
    directory = root / f"{name}-{revision}"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "bot.toml").write_text(
        f'name = "{name}"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'
        f'description = "demo bot {name}, revision {revision}"\n'
    )
    (directory / "bot.py").write_text(f"# {name} revision {revision}\nprint('demo')\n")
    return directory


def add_demo_bots(store: st.Store, work_dir: Path, names: Sequence[str], revision: int = 0) -> None:
    for name in names:
        st.add_bot_version(store, load_bot(write_bot_dir(work_dir, name, revision)))


def report_for(index: int, bots_by_seat: tuple[str, str], record: Record) -> GameReport:
    """The referee's report of a game that ``record`` describes, played to the end."""
    result = record.result
    assert result is not None, "play_random_game plays games to the end"
    winner = None if result.winner is None else bots_by_seat[result.winner]
    return GameReport(
        index=index,
        bots_by_seat=bots_by_seat,
        winner=winner,
        reason=str(result.termination),
        statuses={bot: BotStatus.OK for bot in bots_by_seat},
        actions=len(record.actions),
        time_ms={bot: 5.0 * len(record.actions) for bot in bots_by_seat},
        record=record_to_json(record),
    )


def forfeit_report(
    index: int, bots_by_seat: tuple[str, str], record: Record, at_action: int
) -> GameReport:
    """The report of ``record`` cut at ``at_action``: the seat to move then timed out.

    As the referee writes it: the record keeps the legal actions played, has no
    result (the rules did not finish the game) and describes the forfeit under
    ``extra["match"]``.
    """
    prefix = replay(replace(record, actions=record.actions[:at_action], result=None))
    state = prefix.state
    loser = state.to_move
    assert prefix.error is None and loser is not None, "cut where a seat is to move"
    winner = bots_by_seat[1 - loser]
    failure = {"seat": loser, "bot": bots_by_seat[loser], "status": "timeout",
               "detail": "no action within 2000 ms (time bank empty)"}  # fmt: skip
    metadata = {
        "bots": [{"seat": seat, "name": bots_by_seat[seat]} for seat in (0, 1)],
        "winner": winner,
        "reason": FORFEIT,
        "failures": [failure],
    }
    reached = record.reshuffles[: state.round - 1]
    cut = record_of(state, record.deal, reached, extra={"match": metadata})
    return GameReport(
        index=index,
        bots_by_seat=bots_by_seat,
        winner=winner,
        reason=FORFEIT,
        statuses={
            bots_by_seat[loser]: BotStatus.TIMEOUT,
            bots_by_seat[1 - loser]: BotStatus.OK,
        },
        actions=len(cut.actions),
        time_ms={bot: 5.0 * len(cut.actions) for bot in bots_by_seat},
        record=record_to_json(cut),
    )


def play_demo_tournament(
    store: st.Store,
    work_dir: Path,
    *,
    name: str = "demo-round-robin",
    bots: Sequence[str] = DEMO_BOTS,
    games_per_match: int = 2,
    seed: int = 7,
    finish: bool = True,
    forfeits: int = 0,
    max_games: int | None = None,
) -> DemoTournament:
    """Add ``bots`` (if new), create a round robin and store its games.

    The last game of each of the first ``forfeits`` matches is lost on time.
    With ``max_games`` only that many are stored and the tournament stays
    running (``play_games`` stores the rest): the caller then holds its runner
    lease (``DemoTournament.lease``), as a runner would; once released, the
    tournament reads as interrupted unless set finished.
    """
    existing = {summary.name for summary in st.list_bots(store)}
    add_demo_bots(store, work_dir, [b for b in bots if b not in existing])
    config = st.TournamentConfig(games_per_match=games_per_match, seed=seed)
    tournament = create_tournament(store, name, st.TournamentFormat.ROUND_ROBIN, list(bots), config)
    lease = st.acquire_lease(store, tournament.id, name=name)
    st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
    game_ids = play_games(store, tournament.id, forfeits=forfeits, max_games=max_games)
    if finish and max_games is None:
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        lease.release()
        return DemoTournament(tournament.id, game_ids, tuple(bots))
    return DemoTournament(tournament.id, game_ids, tuple(bots), lease)


def play_games(
    store: st.Store, tournament_id: int, *, forfeits: int = 0, max_games: int | None = None
) -> tuple[int, ...]:
    """Store the tournament's games not stored yet (at most ``max_games``); their ids."""
    game_ids: list[int] = []
    for number, match in enumerate(st.list_matches(store, tournament_id)):
        for index in range(match.games):
            if index in match.games_played:
                continue
            if max_games is not None and len(game_ids) >= max_games:
                return tuple(game_ids)
            seats = (match.first, match.second) if index % 2 == 0 else (match.second, match.first)
            record = play_random_game(match.seed + index)
            if number < forfeits and index == match.games - 1:
                report = forfeit_report(index, seats, record, len(record.actions) // 3)
            else:
                report = report_for(index, seats, record)
            game_id = store_game(store, match.id, report)
            if game_id is not None:
                game_ids.append(game_id)
    return tuple(game_ids)


def play_committed_games(store: st.Store, tournament_id: int) -> tuple[int, ...]:
    """Store every game of the tournament's matches on the deals a runner plays (its
    secret and each match's identity, ``arena.referee.seeds``; paired deals or fresh ones
    as the tournament committed, a fresh deal's record saying so), so that it passes an audit
    once finished; the actions are random, chosen by the match id and game index."""
    secret = st.tournament_secret(store, tournament_id)
    config = st.get_tournament(store, tournament_id).config
    game_ids = []
    for match in st.list_matches(store, tournament_id):
        material = match_seed_material(secret, match_identity(match))
        paired = config.deals_paired(match.first, match.second) is not False
        for index in range(match.games):
            seats = (match.first, match.second) if index % 2 == 0 else (match.second, match.first)
            deal = index // 2 if paired else index
            record = play_random_game(deal_seed(material, deal),
                                      choices=match.id * 1000 + index)  # fmt: skip
            report = report_for(index, seats, record)
            if not paired:  # as the referee's records say (a paired record may say nothing)
                report.record["match"] = {"paired": False, "deal_index": deal}
            game_id = store_game(store, match.id, report)
            if game_id is not None:
                game_ids.append(game_id)
    return tuple(game_ids)


def finished_round_robin(
    store: st.Store, work_dir: Path, name: str, bots: Sequence[str], config: st.TournamentConfig
) -> st.TournamentRow:
    """A finished round robin of demo bots (stored under ``work_dir``), every game played on
    its committed deals (``play_committed_games``): a tournament that passes an audit."""
    add_demo_bots(store, work_dir, bots)
    tournament = create_tournament(store, name, "round_robin", list(bots), config)
    st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
    play_committed_games(store, tournament.id)
    st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
    return st.get_tournament(store, tournament.id)
