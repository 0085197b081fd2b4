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
rating (``arena.store.same_owner``), and the audit checks it so; and whether it pairs
its deals, as the rule its tournament committed says (``TournamentConfig.fresh_deals``).
A match an arena of the earlier derivation dealt names the seed stored with it
(``earlier_seed``: ``arena.tournament.policy.earlier_deals``).

``bundle_parts`` gives the bundle one part at a time (the head, then each match followed
by its games), reading one match's games at a time: a long tournament's bundle is never
held whole, by the arena that serves it or the checker that reads it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any, Literal

from arena.referee.seeds import MatchIdentity
from arena.store import (
    Store,
    get_tournament,
    revealed_secret,
    tournament_byes,
    tournament_parameters,
)
from arena.store.models import INITIAL_MU, INITIAL_SIGMA, TournamentConfig
from arena.store.play import is_play_tournament
from arena.tournament.policy.earlier_deals import dealt_earlier

BUNDLE_FORMAT = "kahuna-arena/audit/3"
"""The format the arena writes: format 2 and each match's ``paired`` (whether the rule its
tournament committed pairs its deals; null: the tournament committed none)."""
FORMAT_WITHOUT_PAIRING = "kahuna-arena/audit/2"
"""Format 1 and each game's ``reason`` (why it ended so)."""
FORMAT_WITHOUT_REASONS = "kahuna-arena/audit/1"
READABLE_FORMATS = (BUNDLE_FORMAT, FORMAT_WITHOUT_PAIRING, FORMAT_WITHOUT_REASONS)

MAX_BUNDLE_MATCHES = 500_000
"""The most matches a bundle may hold: each is kept through the audit (the schedule is
checked once all are in)."""
MAX_BUNDLE_GAMES = 2_000_000
"""The most games a bundle may hold: each game's summary (seats, result, ratings; not its
record) is kept through the audit, the rating chain being checked in game id order."""
MAX_SUMMARY_BYTES = 4096
"""The most JSON a match without its games, or a game without its record, may take: the
part of each that the audit keeps."""

PartKind = Literal["head", "match", "game"]
BundlePart = tuple[PartKind, dict[str, Any]]
"""One part of a bundle: its head (the bundle without ``matches``), a match (without
``played``) or a game of the match given last."""


def tournament_bundle(store: Store, ref: int | str) -> dict[str, Any]:
    """The audit bundle of tournament ``ref`` (id or name), whole; NotFoundError when there
    is none. For a small bundle (tests, a short tournament): ``bundle_parts`` streams."""
    return whole_bundle(bundle_parts(store, ref))


def whole_bundle(parts: Iterator[BundlePart]) -> dict[str, Any]:
    """The bundle that ``parts`` (head first, each game after its match) make up."""
    bundle: dict[str, Any] = {}
    for kind, part in parts:
        if kind == "head":
            bundle = {**part, "matches": []}
        elif kind == "match":
            bundle["matches"].append({**part, "played": []})
        else:
            bundle["matches"][-1]["played"].append(part)
    return bundle


def bundle_parts(store: Store, ref: int | str) -> Iterator[BundlePart]:
    """The audit bundle of tournament ``ref`` part by part; NotFoundError (at once) when
    there is none. Each match's games are read when it comes, in a read of their own."""
    tournament = get_tournament(store, ref)
    secret = revealed_secret(store, tournament.id)
    parameters = tournament_parameters(store, tournament.id).decode()
    byes: list[list[object]] = []
    matches: list[tuple[Any, ...]] = []
    if secret is not None:  # finished: every game is played, every record public
        with store.reading() as db:
            matches = _matches(db, tournament.id)
        byes = [[n, bot] for n, bot in sorted(tournament_byes(store, tournament.id).items())]
    head = {
        "format": BUNDLE_FORMAT,
        "tournament": tournament.name,
        "status": str(tournament.status),
        "commitment": tournament.commitment,
        "parameters": parameters,
        "secret": None if secret is None else secret.hex(),
        "initial_rating": [INITIAL_MU, INITIAL_SIGMA],
        "bots_rated": not is_play_tournament(store, tournament.id),
        "byes": byes,
    }
    return _parts(store, head, matches, tournament.config, secret)


def _parts(store: Store, head: dict[str, Any], matches: list[tuple[Any, ...]],
           config: TournamentConfig, secret: bytes | None) -> Iterator[BundlePart]:  # fmt: skip
    yield "head", head
    for r in matches:
        versions = {r[7]: (r[2], r[3]), r[8]: (r[4], r[5])}
        with store.reading() as db:
            games = _games(db, r[0], versions)
        match = {
            "match_id": r[0], "round": r[1], "first": [r[2], r[3]], "second": [r[4], r[5]],
            "owners": [r[9], r[10]], "games": r[6], "paired": config.deals_paired(r[2], r[4]),
        }  # fmt: skip
        identity = MatchIdentity(int(r[1]), (r[2], r[3]), (r[4], r[5]))
        if (secret is not None and config.fresh_deals is None and games
                and dealt_earlier(secret, identity, int(r[11]), int(games[0]["game_index"]),
                                  str(games[0]["record"]))):  # fmt: skip
            match["earlier_seed"] = int(r[11])  # dealt by an arena of the earlier derivation
        yield "match", match
        for game in games:
            yield "game", game


def _matches(db: sqlite3.Connection, tournament_id: int) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in db.execute(
        "SELECT m.id, m.round, bf.name, vf.version, bs.name, vs.version, m.games,"
        " m.first_id, m.second_id, bf.owner, bs.owner, m.seed FROM matches m"
        " JOIN bot_versions vf ON vf.id = m.first_id JOIN bots bf ON bf.id = vf.bot_id"
        " JOIN bot_versions vs ON vs.id = m.second_id JOIN bots bs ON bs.id = vs.bot_id"
        " WHERE m.tournament_id = ? ORDER BY m.round, m.id",
        (tournament_id,),
    ).fetchall()]  # fmt: skip


def _games(
    db: sqlite3.Connection, match_id: int, versions: dict[int, tuple[str, str]]
) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT id, game_index, seat0_id, seat1_id, winner_seat, status0, status1, record,"
        " reason"
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
            "statuses": [r[5], r[6]], "reason": r[8], "record": r[7],
            "rating": {"before": before, "before_from": source, "after": after},
        })  # fmt: skip
    return games
