"""Creating a tournament and pairing its rounds: what the store is given to write.

A round robin is scheduled whole when it is created (``round_robin``); Swiss
rounds are paired one at a time as play goes (``next_swiss_round``), from the
standings so far, with no randomness: seed order and results decide them. A match's
deals come from the tournament's secret and who meets whom in which round
(``arena.referee.seeds``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from arena.quoting import quoted
from arena.referee.botdir import REMOTE_RUNTIME
from arena.referee.seeds import secret_from_seed
from arena.store import (
    MatchRow,
    Store,
    TournamentConfig,
    TournamentRow,
    get_tournament,
    list_matches,
    tournament_byes,
)
from arena.store.bots import bot_spec
from arena.store.models import PlannedMatch, PlannedRound, TournamentFormat
from arena.store.tournaments import entrant_version_ids, insert_tournament, latest_version_ids
from arena.tournament.pairing.schedule import Pairing, round_robin
from arena.tournament.pairing.swiss import SwissEntrant, SwissRound, pair_swiss_round
from arena.tournament.policy.config import (
    NAME_PATTERN,
    TournamentError,
    match_seed,
    max_swiss_rounds,
    parse_format,
    validate_config,
)
from arena.tournament.policy.results import tournament_standings
from arena.tournament.policy.sprt_format import GAMES_PER_PAIR, next_pairs

PLAY_PREFIX = "play-"
"""The names of a person's games at /play; nobody else may create one."""


def check_tournament_name(name: object) -> None:
    """Refuse (TournamentError) a name no tournament may have: one that is not 1-60
    letters, digits, - _ . or one of the /play page's games."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise TournamentError(f"tournament name {quoted(name)}: use 1-60 letters, digits, - _ .")
    if name.startswith(PLAY_PREFIX):
        raise TournamentError(
            f"tournament name {name!r}: names starting {PLAY_PREFIX!r} are the /play page's games"
        )


def create_tournament(
    store: Store, name: str, format: str, bots: Sequence[str], config: TournamentConfig,
    *, seeded: bool = False, paired_remote: bool = False,
) -> TournamentRow:
    """A new tournament of the latest version of each of ``bots`` (seed order as given).

    Whose matches pair their deals is fixed here and committed with the parameters
    (``TournamentConfig.fresh_deals``): a remote bot's matches deal afresh every game
    (its owner can link what its processes see of both games of a deal), unless
    ``paired_remote``; every other match pairs them.

    Its deal secret is fresh and random, or with ``seeded`` ``secret_from_seed`` of
    ``config.seed``: the same games in any data directory, but deals that anyone who
    knows the (published) seed can compute. TournamentError naming what cannot be
    played; NotFoundError for an unknown bot; AlreadyExistsError for a name taken.
    Nothing is stored then.
    """
    check_tournament_name(name)
    kind = parse_format(format)
    if kind is TournamentFormat.LADDER:
        raise TournamentError("a ladder is not created as a tournament: run arena serve --ladder")
    if len(set(bots)) != len(bots) or len(bots) < 2:
        raise TournamentError("a tournament needs at least two distinct bots")
    validate_config(config)
    check_format_settings(kind, bots, config)
    if config.rounds is not None:
        if kind is not TournamentFormat.SWISS:
            raise TournamentError(f"rounds is for Swiss tournaments only (a {kind} plays them all)")
        if config.rounds > max_swiss_rounds(len(bots)):
            raise TournamentError(
                f"rounds: a Swiss tournament of {len(bots)} bots has at most"
                f" {max_swiss_rounds(len(bots))} round(s), as many as a round robin of them,"
                f" got {config.rounds}"
            )
    version_ids = latest_version_ids(store, bots)
    config = replace(config, fresh_deals=() if paired_remote else tuple(
        bot for bot in bots if bot_spec(store, bot).runtime == REMOTE_RUNTIME))  # fmt: skip
    rounds: list[PlannedRound] = []
    if kind is TournamentFormat.ROUND_ROBIN:
        for rnd in round_robin(list(bots)):
            rounds.append(_planned(config, rnd.number, rnd.pairings, rnd.bye, version_ids))
    elif kind is TournamentFormat.GAUNTLET:
        candidate = bots[0]
        for number, opponent in enumerate(bots[1:], start=1):
            rounds.append(
                _planned(config, number, [Pairing(candidate, opponent)], None, version_ids)
            )
    secret = secret_from_seed(config.seed) if seeded else None
    return insert_tournament(store, name, kind, version_ids, config, rounds, secret=secret)


def check_format_settings(
    kind: TournamentFormat, bots: Sequence[str], config: TournamentConfig
) -> None:
    """What each format asks of its bots and settings (TournamentError naming it)."""
    if kind is TournamentFormat.SPRT:
        if len(bots) != 2:
            raise TournamentError(
                f"an sprt test is between two bots, CANDIDATE BASELINE; got {len(bots)}"
            )
        if config.sprt is None:
            raise TournamentError("an sprt test needs elo0 and elo1, or a preset (nonreg, gain)")
        if config.games_per_match != GAMES_PER_PAIR:
            raise TournamentError(
                f"games: an sprt test plays one deal pair ({GAMES_PER_PAIR} games) per match,"
                f" got {config.games_per_match}"
            )
    elif config.sprt is not None:
        raise TournamentError(f"the sprt settings are for sprt tests only, not a {kind}")
    if kind is TournamentFormat.GAUNTLET and config.games_per_match % 2:
        raise TournamentError(
            "games: a gauntlet plays paired deals, so an even number of games per match,"
            f" got {config.games_per_match}"
        )


def next_rounds(store: Store, tournament_id: int, *, batch: int) -> list[PlannedRound]:
    """What to pair next once every stored match is played: a Swiss round, an SPRT
    test's next batch of at most ``batch`` pairs, or nothing (the tournament is over)."""
    tournament = get_tournament(store, tournament_id)
    if tournament.format is TournamentFormat.SPRT:
        return next_pairs(store, tournament, entrant_version_ids(store, tournament_id), batch)
    planned = next_swiss_round(store, tournament_id)
    return [] if planned is None else [planned]


def _planned(
    config: TournamentConfig,
    round_no: int,
    pairings: Sequence[Pairing],
    bye: str | None,
    version_ids: Mapping[str, int],
) -> PlannedRound:
    matches = tuple(
        PlannedMatch(
            p.first,
            p.second,
            config.games_per_match,
            match_seed(config.seed, round_no, version_ids[p.first], version_ids[p.second]),
        )
        for p in pairings
    )
    return PlannedRound(round_no, matches, bye)


def swiss_rounds(tournament: TournamentRow) -> int:
    """Rounds of a Swiss tournament: configured, else ceil(log2(bots)) + 1, within limits."""
    bots = len(tournament.entrants)
    wanted = tournament.config.rounds or math.ceil(math.log2(bots)) + 1
    return min(wanted, max_swiss_rounds(bots))


def swiss_entrants(
    tournament: TournamentRow,
    matches: Sequence[MatchRow],
    byes: Mapping[int, str],
    points: Mapping[str, float],
) -> list[SwissEntrant]:
    """The Swiss pairing input: entrants by points, then seed, with whom they met, byes had."""
    seed_rank = {bot: i for i, bot in enumerate(tournament.entrants)}
    opponents: dict[str, set[str]] = {bot: set() for bot in tournament.entrants}
    for m in matches:
        opponents[m.first].add(m.second)
        opponents[m.second].add(m.first)
    had_bye = set(byes.values())
    order = sorted(tournament.entrants, key=lambda b: (-points[b], seed_rank[b]))
    return [SwissEntrant(b, points[b], frozenset(opponents[b]), b in had_bye) for b in order]


def next_swiss_round(store: Store, tournament_id: int) -> PlannedRound | None:
    """The next Swiss round, paired but not stored; None when there is none to play."""
    tournament = get_tournament(store, tournament_id)
    if tournament.format is not TournamentFormat.SWISS:
        return None
    matches = list_matches(store, tournament_id)
    byes = tournament_byes(store, tournament_id)
    played_rounds = max([m.round for m in matches] + list(byes), default=0)
    if played_rounds >= swiss_rounds(tournament):
        return None
    points = {s.bot: s.points for s in tournament_standings(store, tournament_id)}
    paired: SwissRound = pair_swiss_round(swiss_entrants(tournament, matches, byes, points))
    return _planned(
        tournament.config, played_rounds + 1, paired.pairings, paired.bye,
        entrant_version_ids(store, tournament_id),
    )  # fmt: skip
