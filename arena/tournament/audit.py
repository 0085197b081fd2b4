"""Auditing a finished tournament from its revealed seed and its stored records alone.

At creation a tournament publishes ``commitment`` = SHA-256 of its deal secret
and its parameters (``arena.referee.seeds.seed_commitment``); once it is
finished the secret is revealed. ``audit_tournament`` then checks, in order,
and stops at the first difference:

1. the revealed secret and the stored parameters hash to the commitment;
2. every stored game's deal is the one the secret derives for its match and
   deal index (``deal_seed``), and so is every reshuffle in its record;
3. every record replays legally with the engine, and the result it reaches
   (or, for a game cut short, the forfeit it records) is the stored result;
4. every stored rating update is the TrueSkill update of the record's result
   applied to the ratings the two versions had before that game.

Standings and crosstables are computed from the stored results at every read
(``arena.tournament.results``), so once (3) holds they are the records' own.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from arena.kahuna import MalformedRecordError, deal_from_seed, parse_record, replay
from arena.kahuna.rng import reshuffle_from_seed
from arena.referee.seeds import deal_seed, seed_commitment
from arena.store import (
    Store,
    TournamentStatus,
    get_tournament,
    revealed_secret,
    tournament_parameters,
)
from arena.store.models import INITIAL_MU, INITIAL_SIGMA
from arena.tournament.results import rate

RATING_TOLERANCE = 1e-9


@dataclass(frozen=True)
class AuditReport:
    """``ok`` with what was checked, or the first difference found (``problem``)."""

    tournament: str
    ok: bool
    games: int  # games checked before the verdict
    commitment: str | None
    revealed_secret: str | None  # hex; None while the tournament is not finished
    problem: str | None = None

    def text(self) -> str:
        if self.ok:
            return (
                f"audit of {self.tournament}: pass: the revealed seed matches the commitment"
                f" {self.commitment}, and all {self.games} stored games have the deals and"
                " reshuffles it derives, replay to their stored results and rated as stored"
            )
        return f"audit of {self.tournament}: FAIL: {self.problem}"

    def to_json(self) -> dict[str, object]:
        return {
            "tournament": self.tournament, "ok": self.ok, "games": self.games,
            "commitment": self.commitment, "revealed_seed": self.revealed_secret,
            "problem": self.problem,
        }  # fmt: skip


class _Mismatch(Exception):
    pass


def audit_tournament(store: Store, ref: int | str) -> AuditReport:
    """Audit tournament ``ref`` (id or name); NotFoundError when there is none."""
    tournament = get_tournament(store, ref)
    secret = revealed_secret(store, tournament.id)
    checked = 0

    def report(problem: str | None) -> AuditReport:
        return AuditReport(
            tournament.name, problem is None, checked, tournament.commitment,
            None if secret is None else secret.hex(), problem,
        )  # fmt: skip

    if tournament.status is not TournamentStatus.FINISHED or secret is None:
        return report(
            f"the tournament is {tournament.status}: its seed is revealed only once it is"
            " finished, so it cannot be audited yet"
        )
    if tournament.commitment is None:
        return report(
            "the tournament published no seed commitment (it was created before the arena"
            " stored commitments), so its deals cannot be shown to be fixed in advance"
        )
    expected = seed_commitment(secret, tournament_parameters(store, tournament.id))
    if expected != tournament.commitment:
        return report(
            f"the revealed seed and the stored parameters hash to {expected}, not to the"
            f" published commitment {tournament.commitment}"
        )
    try:
        for game in _stored_games(store, tournament.id):
            _check_game(secret, game)
            checked += 1
    except _Mismatch as exc:
        return report(str(exc))
    return report(None)


@dataclass(frozen=True)
class _StoredGame:
    id: int
    match_id: int
    match_seed: int
    game_index: int
    winner_seat: int | None
    statuses: tuple[str, str]
    record: str
    ratings_after: tuple[tuple[float, float], tuple[float, float]] | None
    ratings_before: tuple[tuple[float, float], tuple[float, float]]


def _stored_games(store: Store, tournament_id: int) -> list[_StoredGame]:
    with store.reading() as db:
        rows = db.execute(
            "SELECT g.id, g.match_id, m.seed, g.game_index, g.winner_seat, g.status0,"
            " g.status1, g.record, g.seat0_id, g.seat1_id FROM games g"
            " JOIN matches m ON m.id = g.match_id WHERE m.tournament_id = ?"
            " ORDER BY m.id, g.game_index",
            (tournament_id,),
        ).fetchall()
        games = []
        for r in rows:
            after, before = [], []
            for version_id in (r[8], r[9]):
                now = db.execute(
                    "SELECT mu, sigma FROM rating_history WHERE game_id = ? AND bot_version_id = ?",
                    (r[0], version_id),
                ).fetchone()
                prior = db.execute(
                    "SELECT mu, sigma FROM rating_history WHERE bot_version_id = ? AND game_id < ?"
                    " ORDER BY game_id DESC LIMIT 1",
                    (version_id, r[0]),
                ).fetchone()
                after.append(None if now is None else (float(now[0]), float(now[1])))
                before.append(
                    (INITIAL_MU, INITIAL_SIGMA)
                    if prior is None
                    else (float(prior[0]), float(prior[1]))
                )
            stored_after = None if None in after else (after[0], after[1])
            games.append(
                _StoredGame(
                    id=r[0],
                    match_id=r[1],
                    match_seed=r[2],
                    game_index=r[3],
                    winner_seat=r[4],
                    statuses=(r[5], r[6]),
                    record=r[7],
                    ratings_after=stored_after,  # type: ignore[arg-type]
                    ratings_before=(before[0], before[1]),
                )
            )
    return games


def _check_game(secret: bytes, game: _StoredGame) -> None:
    where = f"game {game.id} (match {game.match_id}, game index {game.game_index})"
    try:
        record = parse_record(game.record)
    except MalformedRecordError as exc:
        raise _Mismatch(f"{where}: the stored record is malformed: {exc}") from None
    meta = record.extra.get("match")
    meta = meta if isinstance(meta, dict) else {}
    paired = meta.get("paired", True) is not False
    deal_index = game.game_index // 2 if paired else game.game_index
    if meta.get("deal_index", deal_index) != deal_index:
        raise _Mismatch(
            f"{where}: the record says deal index {meta.get('deal_index')!r}, but a"
            f" {'paired' if paired else 'unpaired'} match plays deal {deal_index} there"
        )
    seed = deal_seed(secret, game.match_seed, deal_index)
    if record.deal != deal_from_seed(seed):
        raise _Mismatch(f"{where}: the deal differs from the one the revealed seed derives")
    for k, order in enumerate(record.reshuffles):
        if reshuffle_from_seed(seed, k + 2, order) != order:
            raise _Mismatch(
                f"{where}: the reshuffle of round {k + 2} differs from the one the seed derives"
            )
    try:
        replayed = replay(record)
    except MalformedRecordError as exc:
        raise _Mismatch(f"{where}: the record does not replay: {exc}") from None
    if replayed.error is not None:
        raise _Mismatch(f"{where}: the record does not replay: {replayed.error.message()}")
    state = replayed.state
    if state.is_finished:
        outcome = state.outcome
        assert outcome is not None
        winner = outcome.winner
    else:  # cut short: a forfeit, which the stored statuses and record must both say
        if all(s == "ok" for s in game.statuses):
            raise _Mismatch(
                f"{where}: the record stops before the game ends, but no bot failed in it"
            )
        winner = _forfeit_winner(meta, game)
    if winner != game.winner_seat:
        shown = {None: "a draw", 0: "seat 0 won", 1: "seat 1 won"}
        raise _Mismatch(
            f"{where}: the record gives {shown[winner]}, the stored result is"
            f" {shown[game.winner_seat]}"
        )
    if game.ratings_after is None:
        raise _Mismatch(f"{where}: no stored rating update")
    expected = rate(game.ratings_before[0], game.ratings_before[1], winner)
    for seat in (0, 1):
        if not all(
            math.isclose(a, b, rel_tol=0, abs_tol=RATING_TOLERANCE)
            for a, b in zip(expected[seat], game.ratings_after[seat], strict=True)
        ):
            raise _Mismatch(
                f"{where}: seat {seat}'s stored rating after the game {game.ratings_after[seat]}"
                f" is not the TrueSkill update of the record's result {expected[seat]}"
            )


def _forfeit_winner(meta: dict[object, object], game: _StoredGame) -> int | None:
    failures = meta.get("failures")
    if not isinstance(failures, list) or not failures:
        raise _Mismatch(
            f"game {game.id}: the record stops before the game ends and names no failure"
        )
    seats = {f.get("seat") for f in failures if isinstance(f, dict)}
    if seats == {0}:
        return 1
    if seats == {1}:
        return 0
    if seats == {0, 1}:  # both failed: the referee's order of failures decides, as stored
        return game.winner_seat
    raise _Mismatch(f"game {game.id}: the record's failures are unreadable: "
                    f"{json.dumps(failures)[:80]}")  # fmt: skip
