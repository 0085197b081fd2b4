"""A tournament's audit bundle: everything public that an audit needs, as one JSON object.

The arena publishes it (``GetTournamentAudit``; `arena remote audit` fetches it)
and `arena audit` builds it from the store; both check it with
``arena.tournament.policy.audit.audit_bundle``, and docs/reference/VERIFY.md describes it field
by field so that anyone can write their own checker. Before the tournament is
finished it holds the commitment and the parameters only: the secret, and the
matches with their records, come once it is finished (a record of a deal whose
second game is still to be played must not reach anyone: docs/reference/PROTOCOL.md).
Nothing the arena derives from the secret (seed material, deal seeds) is in it.
Each match names its bots' owners: a game between two bots of one user moves no
rating (``arena.store.same_owner``), and the audit checks it so.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from arena.store import (
    Store,
    get_tournament,
    revealed_secret,
    tournament_byes,
    tournament_parameters,
)
from arena.store.models import INITIAL_MU, INITIAL_SIGMA
from arena.store.play import is_play_tournament

BUNDLE_FORMAT = "kahuna-arena/audit/1"


def tournament_bundle(store: Store, ref: int | str) -> dict[str, Any]:
    """The audit bundle of tournament ``ref`` (id or name); NotFoundError when there is none."""
    tournament = get_tournament(store, ref)
    secret = revealed_secret(store, tournament.id)
    parameters = tournament_parameters(store, tournament.id).decode()
    matches, byes = [], []
    if secret is not None:  # finished: every game is played, every record public
        with store.reading() as db:
            matches = _matches(db, tournament.id)
        byes = [[n, bot] for n, bot in sorted(tournament_byes(store, tournament.id).items())]
    return {
        "format": BUNDLE_FORMAT,
        "tournament": tournament.name,
        "status": str(tournament.status),
        "commitment": tournament.commitment,
        "parameters": parameters,
        "secret": None if secret is None else secret.hex(),
        "initial_rating": [INITIAL_MU, INITIAL_SIGMA],
        "bots_rated": not is_play_tournament(store, tournament.id),
        "byes": byes,
        "matches": matches,
    }


def _matches(db: sqlite3.Connection, tournament_id: int) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT m.id, m.round, bf.name, vf.version, bs.name, vs.version, m.games,"
        " m.first_id, m.second_id, bf.owner, bs.owner FROM matches m"
        " JOIN bot_versions vf ON vf.id = m.first_id JOIN bots bf ON bf.id = vf.bot_id"
        " JOIN bot_versions vs ON vs.id = m.second_id JOIN bots bs ON bs.id = vs.bot_id"
        " WHERE m.tournament_id = ? ORDER BY m.round, m.id",
        (tournament_id,),
    ).fetchall()
    out = []
    for r in rows:
        versions = {r[7]: (r[2], r[3]), r[8]: (r[4], r[5])}
        out.append({
            "match_id": r[0], "round": r[1], "first": [r[2], r[3]], "second": [r[4], r[5]],
            "owners": [r[9], r[10]], "games": r[6], "played": _games(db, r[0], versions),
        })  # fmt: skip
    return out


def _games(
    db: sqlite3.Connection, match_id: int, versions: dict[int, tuple[str, str]]
) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT id, game_index, seat0_id, seat1_id, winner_seat, status0, status1, record"
        " FROM games WHERE match_id = ? ORDER BY game_index",
        (match_id,),
    ).fetchall()
    games = []
    for r in rows:
        before, after, source = [], [], []
        for version_id in (r[2], r[3]):
            now = db.execute(
                "SELECT mu, sigma FROM rating_history WHERE game_id = ? AND bot_version_id = ?",
                (r[0], version_id),
            ).fetchone()
            prior = db.execute(
                "SELECT game_id, mu, sigma FROM rating_history WHERE bot_version_id = ?"
                " AND game_id < ? ORDER BY game_id DESC LIMIT 1",
                (version_id, r[0]),
            ).fetchone()
            after.append(None if now is None else [float(now[0]), float(now[1])])
            before.append([INITIAL_MU, INITIAL_SIGMA] if prior is None
                          else [float(prior[1]), float(prior[2])])  # fmt: skip
            source.append(None if prior is None else int(prior[0]))
        seats = [list(versions.get(r[2], ("?", "?"))), list(versions.get(r[3], ("?", "?")))]
        games.append({
            "game_id": r[0], "game_index": r[1], "seats": seats, "winner_seat": r[4],
            "statuses": [r[5], r[6]], "record": r[7],
            "rating": {"before": before, "before_from": source, "after": after},
        })  # fmt: skip
    return games
