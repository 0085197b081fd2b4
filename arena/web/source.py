"""The pages' data from ``arena.store``: the only web module that knows the store.

Every method answers one page with the store's public query functions
(``arena.store``) and turns their rows into the web's
models; ``None`` means the thing asked for is not stored.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict, defaultdict
from dataclasses import replace
from pathlib import Path

from arena import store as st
from arena.tournament.policy.bundle_digest import FinishedDigests
from arena.tournament.policy.results import (
    leaderboard_intervals,
    tournament_crosstable,
    version_key,
)
from arena.tournament.policy.sprt_format import sprt_progress
from arena.tournament.statistics.intervals import ScoreInterval
from arena.tournament.view.committed import shown_parameters
from arena.tournament.view.ladder_view import (
    LadderView,
    entrants_shown,
    ladder_view,
    public_leaderboard,
)
from arena.tournament.view.table import tournament_table
from arena.web.models import (
    NO_GAMES,
    BotDetail,
    BotVersion,
    GameDetail,
    GameSummary,
    HeadToHead,
    IntervalCells,
    LeaderboardRow,
    SprtView,
    StandingRow,
    TournamentDetail,
    TournamentSummary,
)
from arena.web.plots import RatingPoint


def sprt_view(store: st.Store, row: st.TournamentRow) -> SprtView:
    """What an SPRT test's page shows: hypotheses, decision, the LLR history."""
    progress = sprt_progress(store, row)
    p = progress.params
    return SprtView(
        hypotheses=f"{row.entrants[0]} (candidate) against {row.entrants[1]} (baseline);"
        f" H0: {p.model} Elo {p.elo0:g}, H1: {p.elo1:g} (alpha {p.alpha:g},"
        f" beta {p.beta:g}), at most {progress.max_pairs} pairs",
        sentence=progress.sentence(), verdict=progress.verdict,
        history=tuple(h.llr for h in progress.history), lower_bound=progress.lower_bound,
        upper_bound=progress.upper_bound, decided_at=progress.decided_at,
        detail=progress.to_json(),
    )  # fmt: skip

RECENT_GAMES = 20
TOURNAMENT_GAMES = 200
TOURNAMENT_CACHE_SIZE = 32


def open_store(data_dir: Path) -> st.Store:
    """Open the arena's data directory (created on first use, as every command does)."""
    return st.Store.open(data_dir)


def interval_cells(interval: ScoreInterval | None, apart: bool = False) -> IntervalCells:
    """A row's interval as the tables show it (``-`` before any game)."""
    if interval is None:
        return IntervalCells(separated_from_next=apart)
    return IntervalCells(
        score=interval.score_text(), elo=interval.elo_text(), pairs=interval.pairs_text(),
        detail=interval.to_json(), separated_from_next=apart,
    )  # fmt: skip


def leaderboard_row(
    rank: int, row: st.BotVersionRow, interval: IntervalCells = NO_GAMES
) -> LeaderboardRow:
    return LeaderboardRow(
        interval=interval,
        rank=rank,
        bot=row.bot,
        version=row.version,
        mu=row.mu,
        sigma=row.sigma,
        games=row.games,
        wins=row.wins,
        draws=row.draws,
        losses=row.losses,
        timeouts=row.timeouts,
        crashes=row.crashes,
        illegal_actions=row.illegal_actions,
    )


def game_summary(row: st.GameRow, points: tuple[int, int] | None = None) -> GameSummary:
    return GameSummary(
        id=row.id,
        bots=row.bots,
        finished=True,  # the store keeps finished games only
        winner_seat=row.winner_seat,
        reason=row.reason,
        points=points,
        tournament_id=row.tournament_id,
        tournament=row.tournament,
        match_id=row.match_id,
        versions=row.versions,
        statuses=row.statuses,
        actions=row.actions,
        time_ms=row.time_ms,
        played_at=row.finished_at[:19].replace("T", " "),
    )


def summary_of(row: st.TournamentRow) -> TournamentSummary:
    return TournamentSummary(
        id=row.id,
        name=row.name,
        format=row.format.replace("_", " "),
        status=row.status,
        created_at=row.created_at[:19].replace("T", " "),
        bots=len(row.entrants),
        games_played=row.games_played,
        games_scheduled=row.games_scheduled if row.games_scheduled else None,
        commitment=row.commitment,
    )


def result_points(record: dict[str, object]) -> tuple[int, int] | None:
    result = record.get("result")
    if isinstance(result, dict):
        points = result.get("points")
        if isinstance(points, list) and len(points) == 2:
            first, second = points
            if isinstance(first, int) and isinstance(second, int):
                return (first, second)
    return None


BoardKey = tuple[tuple[tuple[str, str], ...], int]
"""The board's versions, in order, and their games in all."""


class StoreSource:
    """``WebSource`` over an open ``arena.store.Store``."""

    def __init__(self, store: st.Store) -> None:
        self.store = store
        self.digests = FinishedDigests()  # each finished tournament's bundle's, once
        # Standings and crosstable read every game of a tournament; they change
        # only when a game is stored or a round paired (byes): kept per
        # (id, status, games played, games scheduled).
        self._tournaments: OrderedDict[tuple[int, str, int, int], TournamentDetail] = (
            OrderedDict()
        )
        self._lock = threading.Lock()
        # The leaderboard's intervals read every rated game: kept until a game is rated or
        # the board's versions change (a bot withdrawn, returned or given a new version).
        self._leaderboard: tuple[BoardKey, list[LeaderboardRow]] | None = None

    # --- accounts (arena.web.submit.AccountSource) -------------------------------

    def principal(self, token: str) -> st.Principal | None:
        """Who ``token`` is; TokenRefusedError names why a revoked or expired one is refused."""
        return st.authenticate(self.store, token)

    def owned_bots(self, user: str) -> list[str]:
        return [bot.name for bot in st.list_bots(self.store) if bot.owner == user]

    # --- live games (arena.web.live.LiveSource) ---------------------------------

    def match_games(self, match_id: int) -> int | None:
        return st.match_game_count(self.store, match_id)

    def live_game(self, match_id: int, game_index: int) -> st.LiveGameRow | None:
        try:
            return st.get_live_game(self.store, match_id, game_index)
        except st.NotFoundError:
            return None

    def live_entries(self, live_id: int, after_seq: int) -> list[st.LiveEntry]:
        return st.live_entries(self.store, live_id, after_seq=after_seq)

    def stored_game(self, match_id: int, game_index: int) -> tuple[int, str] | None:
        game = st.find_game(self.store, match_id, game_index)
        return None if game is None else (game.id, game.finished_at)

    def live_games(self) -> list[st.LiveGameRow]:
        return st.list_live_games(self.store)

    # --- the spectator delay (arena.web.live.PublicTimeline) ---------------------

    def first_event_after(self, cut: str) -> str | None:
        return st.first_event_after(self.store, cut)

    def in_play_at(self, cut: str, tournament_id: int | None) -> list[st.InPlay]:
        return st.in_play_at(self.store, cut, tournament_id=tournament_id)

    def stored_timing(self, match_id: int, game_index: int) -> st.StoredTiming | None:
        return st.stored_timing(self.store, match_id, game_index)

    def game_finished_at(self, game_id: int) -> str | None:
        return st.game_finished_at(self.store, game_id)

    def ladder(self, name: str) -> LadderView | None:
        """The ladder ``name`` (arena.web.ladder), None when there is none."""
        try:
            return ladder_view(self.store, name)
        except st.NotFoundError:
            return None
        except st.StoreError:  # a tournament of that name that is not a ladder
            return None

    def leaderboard(self) -> list[LeaderboardRow]:
        """The public board: each bot's latest version, withdrawn bots left out (older
        versions and withdrawn bots keep their rows and history on the bot's page, off the
        board: nobody keeps a lucky old peak there)."""
        rows = public_leaderboard(self.store)
        key = (tuple((row.entry.bot, row.entry.version) for row in rows),
               sum(row.entry.games for row in rows))  # fmt: skip
        with self._lock:
            cached = self._leaderboard
        if cached is not None and cached[0] == key:
            return cached[1]
        intervals = leaderboard_intervals(self.store, rows)
        keys = [version_key(row.entry.bot, row.entry.version) for row in rows]
        shown = [
            leaderboard_row(row.rank, row.entry, interval_cells(intervals.field.get(k), apart))
            for row, k, apart in zip(rows, keys, intervals.separated_from_next(keys), strict=True)
        ]
        with self._lock:
            self._leaderboard = (key, shown)
        return shown

    def tournaments(self) -> list[TournamentSummary]:
        """Every tournament's summary, as its own page gives it (with the audit digest of
        those finished: ``FinishedDigests`` waits for them at most its ``WAIT_S`` in all)."""
        summaries = [self._summary(row) for row in st.list_tournaments(self.store)]
        finished = [s.id for s in summaries if s.revealed_secret is not None]
        digests = self.digests.of_many(self.store, finished) if finished else {}
        return [replace(s, audit_digest=digests[s.id]) if s.id in digests else s
                for s in summaries]  # fmt: skip

    def _summary(self, row: st.TournamentRow) -> TournamentSummary:
        """``summary_of`` the row with its revealed secret once finished (the list and the
        detail say the same); a ladder's bots are its standings' (its entrants come and go,
        none stored with it) and its games have no total."""
        summary = summary_of(row)
        if row.status == st.TournamentStatus.FINISHED:
            secret = st.revealed_secret(self.store, row.id)
            summary = replace(summary, revealed_secret=None if secret is None else secret.hex())
        if row.format is not st.TournamentFormat.LADDER:
            return summary
        return replace(summary, bots=len(entrants_shown(self.store, row)), games_scheduled=None)

    def tournament(self, tournament_id: int) -> TournamentDetail | None:
        try:
            row = st.get_tournament(self.store, tournament_id)
        except st.NotFoundError:
            return None
        if row.format is st.TournamentFormat.LADDER:  # read from its ratings: milliseconds; its
            return self._tournament_detail(row)  # rows change without a game (bots withdrawn)
        key = (row.id, row.status, row.games_played, row.games_scheduled)
        with self._lock:
            detail = self._tournaments.get(key)
        if detail is None:
            detail = self._tournament_detail(row)
            with self._lock:
                self._tournaments[key] = detail
                while len(self._tournaments) > TOURNAMENT_CACHE_SIZE:
                    self._tournaments.popitem(last=False)
        return self._with_digest(detail)

    def _with_digest(self, detail: TournamentDetail) -> TournamentDetail:
        """``detail`` with its audit bundle's digest once finished, asked for at each view and
        never cached with the detail: a digest still being computed shows once it is done."""
        summary = detail.summary
        if summary.revealed_secret is None:
            return detail
        digest = self.digests.of(self.store, summary.id)
        return replace(detail, summary=replace(summary, audit_digest=digest))

    def _tournament_detail(self, row: st.TournamentRow) -> TournamentDetail:
        tournament_id = row.id
        ranked, intervals = tournament_table(self.store, row)  # a ladder's: no game read
        order = [s.bot for s in ranked]
        apart = dict(zip(order, intervals.separated_from_next(order), strict=True))
        standings = tuple(
            StandingRow(
                rank=s.rank,
                bot=s.bot,
                score=s.points,
                played=s.games,
                wins=s.wins,
                draws=s.draws,
                losses=s.losses,
                byes=s.byes,
                buchholz=s.buchholz,
                sonneborn_berger=s.sonneborn_berger,
                interval=interval_cells(intervals.field.get(s.bot), apart[s.bot]),
            )
            for s in ranked
        )
        crosstable = {} if row.format is st.TournamentFormat.LADDER else self._crosstable(row.id)
        games = st.list_games(self.store, tournament_id=tournament_id, limit=TOURNAMENT_GAMES)
        owners = {bot.name: bot.owner for bot in st.list_bots(self.store)}
        shown = [(game_summary(g), st.same_owner((owners.get(g.bots[0]), owners.get(g.bots[1]))))
                 for g in games]  # fmt: skip
        return TournamentDetail(
            summary=self._summary(row),
            standings=standings,
            crosstable=crosstable,
            games=tuple(g for g, one_owner in shown if not one_owner),
            unrated_games=tuple(g for g, one_owner in shown if one_owner),
            separation_notes=tuple(intervals.notes(order)),
            sprt=sprt_view(self.store, row) if row.format is st.TournamentFormat.SPRT else None,
            parameters=shown_parameters(self.store, row),
        )

    def _crosstable(self, tournament_id: int) -> dict[tuple[str, str], tuple[float, int]]:
        """Each pair's (score, games) from every match and game: a ladder has none (its
        history grows without end; its pairs' games are read with list_games)."""
        games_between: dict[tuple[str, str], int] = defaultdict(int)
        for match in st.list_matches(self.store, tournament_id):
            games_between[match.first, match.second] += len(match.games_played)
            games_between[match.second, match.first] += len(match.games_played)
        scores = tournament_crosstable(self.store, tournament_id)
        return {
            pair: (scores.get(pair, 0.0), played)
            for pair, played in games_between.items()
            if played
        }

    def bot(self, name: str) -> BotDetail | None:
        try:
            detail = st.get_bot(self.store, name)
        except st.NotFoundError:
            return None
        ranks = {  # the public board's rank: older versions are off it (no rank shown)
            row.entry.version: row.rank
            for row in public_leaderboard(self.store)
            if row.entry.bot == name
        }
        history: dict[str, list[RatingPoint]] = defaultdict(list)
        for point in detail.history:
            history[point.version].append(
                RatingPoint(point.mu, point.sigma, label=f"game {point.game_id}")
            )
        versions = tuple(
            BotVersion(
                rating=leaderboard_row(ranks.get(v.version, 0), v),
                created_at=v.created_at[:19].replace("T", " "),
                history=tuple(history.get(v.version, ())),
            )
            for v in reversed(detail.versions)
        )
        recent = st.list_games(self.store, bot=name, limit=RECENT_GAMES)
        return BotDetail(
            name=detail.name,
            owner=detail.owner,
            created_at=detail.created_at[:19].replace("T", " "),
            versions=versions,
            recent_games=tuple(game_summary(g) for g in recent),
        )

    def bot_names(self) -> list[str]:
        return sorted(b.name for b in st.list_bots(self.store))

    def head_to_head(self, bot: str, opponent: str, limit: int) -> HeadToHead | None:
        """None when either bot is not stored."""
        for name in (bot, opponent):
            try:
                st.get_bot(self.store, name)
            except st.NotFoundError:
                return None
        wins, draws, losses = st.head_to_head(self.store, bot, opponent)
        games = st.list_games(self.store, bot=bot, opponent=opponent, limit=limit)
        return HeadToHead(bot, opponent, wins, draws, losses, tuple(game_summary(g) for g in games))

    def recent_games(self, limit: int) -> list[GameSummary]:
        """The latest finished games of every tournament, newest first."""
        return [game_summary(g) for g in st.list_games(self.store, limit=limit)]

    def game(self, game_id: int) -> GameDetail | None:
        try:
            row = st.get_game(self.store, game_id)
            record = st.game_record(self.store, game_id)
            withheld = st.record_withheld(self.store, game_id)
        except st.NotFoundError:
            return None
        return GameDetail(
            summary=game_summary(row, result_points(record)),
            record_json=json.dumps(record, separators=(",", ":")),
            withheld=None if withheld is None else withheld.message(),
        )
