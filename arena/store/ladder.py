"""The ladder's rows: its tournament (format ``ladder``), settings, entrants, matches.

A ladder is stored as a tournament of format ``ladder`` (so its games,
ratings, live views, records and runner lease are a tournament's) with its
settings beside it (``ladders``, JSON the caller gives). Its entrants are not
stored: they are the latest version of every bot not withdrawn
(``bots.withdrawn_at``) that runs here (remote bots are left out: nobody
promises they are connected). Each ladder match is its own round (the
ladder's sequence number), stored when it is scheduled, so that the
matches in play are the unfinished ones and a restart resumes them. What the
pages and the runner read of its history (each version's matches, games,
matches in play, latest opponents) are running totals kept as each match and
game is stored (``arena.store.totals``, schema v9): one read at any age; so is
the runner time each version's games used (``arena.store.usage``), which the
scheduler shares out by owner. An owner who joins the ladder or comes back to it is
lifted to the least-used owner's time (``join_owners``, kept in ``ladder_owners``).

The store decides nothing here: the pairing is ``arena.tournament.pairing.ladder_schedule``'s.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from arena.quoting import quoted
from arena.referee.botdir import REMOTE_RUNTIME
from arena.referee.seeds import new_secret
from arena.store.db import NotFoundError, Store, StoreError, utc_now
from arena.store.models import MatchRow, TournamentConfig, TournamentFormat
from arena.store.totals import LadderTotals, count_match, read_ladder_totals, read_ladder_usage
from arena.store.tournaments import get_tournament, match_rows
from arena.store.usage import LadderUsage, add_charge, clock, decayed, joining_lifts

JsonSettings = dict[str, object]


@dataclass(frozen=True, slots=True)
class LadderEntrantRow:
    """An entrant of the ladder (the latest version of an active bot) and its ladder history."""

    version_id: int
    bot: str
    version: str
    owner: str | None
    mu: float
    sigma: float
    games: int  # every stored game of this version (tournaments too)
    ladder_games: int  # its stored games on this ladder
    matches: int  # its ladder matches, played or in play
    last_match: int | None  # the sequence number (round) of its latest ladder match
    in_play: int  # its unfinished ladder matches
    recent: tuple[int, ...]  # version ids of its latest ladder opponents, newest first
    bot_id: int = 0
    bot_matches: int = 0  # ladder matches of every version of its bot (its placement)
    wins: int = 0  # its stored games on this ladder won, drawn and lost
    draws: int = 0
    losses: int = 0
    # the latest ladder match of each of its owner's bots (every version, on the ladder or
    # off it), newest first; () for the admin's bots
    owner_turns: tuple[int, ...] = ()
    # the runner time its owner's bots used on the ladder (every version, on it or off it;
    # the admin's bots each alone), as of now (``owner_usage``)
    owner_used_ms: float = 0.0
    game_ms: float | None = None  # its mean charge per ladder game (None: no game yet)


@dataclass(frozen=True, slots=True)
class LadderHistory:
    """A version's ladder matches so far (played or in play), as the scheduler reads them."""

    matches: int = 0
    last_match: int | None = None  # the sequence number (round) of its latest ladder match
    recent: tuple[int, ...] = ()  # version ids of its latest ladder opponents, newest first


@dataclass(frozen=True, slots=True)
class LadderRating:
    """An entrant of the ladder now (the latest version of an active bot) and its rating."""

    version_id: int
    mu: float
    sigma: float
    bot_id: int = 0
    owner: str | None = None  # None: the admin's (house and sample bots)


def create_ladder(store: Store, name: str, config: TournamentConfig, settings: JsonSettings) -> int:
    """Store a new ladder called ``name``; its tournament id (StoreError if the name is taken)."""
    with store.transaction() as db:
        if db.execute("SELECT 1 FROM tournaments WHERE name = ?", (name,)).fetchone():
            raise StoreError(f"a tournament named {name!r} already exists")
        tournament_id = db.execute(
            "INSERT INTO tournaments (name, format, status, config, created_at, secret)"
            " VALUES (?, ?, 'created', ?, ?, ?)",
            (name, str(TournamentFormat.LADDER), json.dumps(config.to_json()), utc_now(),
             new_secret()),
        ).lastrowid  # fmt: skip
        assert tournament_id is not None
        db.execute(
            "INSERT INTO ladders (tournament_id, settings, updated_at) VALUES (?, ?, ?)",
            (tournament_id, json.dumps(settings, sort_keys=True), utc_now()),
        )
    return tournament_id


def find_ladder(store: Store, name: str) -> int | None:
    """The tournament id of the ladder ``name``; None when there is none.

    StoreError when ``name`` is a tournament that is not a ladder.
    """
    with store.reading() as db:
        row = db.execute("SELECT id, format FROM tournaments WHERE name = ?", (name,)).fetchone()
    if row is None:
        return None
    if row["format"] != TournamentFormat.LADDER:
        raise StoreError(f"{name!r} is a {row['format']} tournament, not a ladder")
    return int(row["id"])


def ladder_settings(store: Store, tournament_id: int) -> tuple[TournamentConfig, JsonSettings]:
    """A ladder's game configuration and its stored settings."""
    with store.reading() as db:
        row = db.execute(
            "SELECT t.config, l.settings FROM tournaments t JOIN ladders l"
            " ON l.tournament_id = t.id WHERE t.id = ?",
            (tournament_id,),
        ).fetchone()
    if row is None:
        raise NotFoundError(f"no ladder with id {tournament_id}")
    settings: JsonSettings = json.loads(row["settings"])
    return TournamentConfig.from_json(json.loads(row["config"])), settings


def every_ladder_settings(store: Store) -> list[JsonSettings]:
    """The stored settings of every ladder, oldest first (whose bots wait off them)."""
    with store.reading() as db:
        rows = db.execute("SELECT settings FROM ladders ORDER BY tournament_id").fetchall()
    return [json.loads(row["settings"]) for row in rows]


def set_ladder_settings(
    store: Store, tournament_id: int, config: TournamentConfig, settings: JsonSettings
) -> None:
    """Store a ladder's new configuration and settings (the next matches use them)."""
    with store.transaction() as db:
        db.execute(
            "UPDATE tournaments SET config = ? WHERE id = ?",
            (json.dumps(config.to_json()), tournament_id),
        )
        db.execute(
            "UPDATE ladders SET settings = ?, updated_at = ? WHERE tournament_id = ?",
            (json.dumps(settings, sort_keys=True), utc_now(), tournament_id),
        )


_ENTRANTS = f"""
SELECT v.id, b.id AS bot_id, b.name AS bot, b.owner, v.version, v.mu, v.sigma, v.games
FROM bots b JOIN bot_versions v ON v.id = (SELECT MAX(id) FROM bot_versions WHERE bot_id = b.id)
WHERE b.withdrawn_at IS NULL AND v.runtime != '{REMOTE_RUNTIME}'
ORDER BY v.id
"""


def ladder_entrants(store: Store, tournament_id: int, *, recent: int = 2) -> list[LadderEntrantRow]:
    """The ladder's entrants now, oldest version first, each with its ladder history
    (``recent``: how many latest opponents each carries, at most ``RECENT_KEPT``).

    Two reads, of the bots and of the ladder's running totals (``arena.store.totals``),
    however long the ladder has run. An owner who joined since the runner's last look
    (``join_owners``) has the time the runner will lift it to.
    """
    with store.reading() as db:
        entrants = db.execute(_ENTRANTS).fetchall()
        totals = read_ladder_totals(db, tournament_id)
        bot_of = dict(db.execute("SELECT id, bot_id FROM bot_versions").fetchall())
        owner_of = dict(db.execute("SELECT id, owner FROM bots").fetchall())
        usage = read_ladder_usage(db, tournament_id)
        lifts, present = _read_owners(db, tournament_id)
    empty = LadderTotals()
    used = owner_usage(usage, bot_of, owner_of, lifts)
    active = {usage_key(r["bot_id"], r["owner"]) for r in entrants}
    for key, lift in joining_lifts(used, present, active).items():  # as the runner will
        used[key] = used.get(key, 0.0) + lift
    per_bot, last_of = bot_matches(totals, bot_of)
    turns = owner_turns(last_of, owner_of)
    return [
        LadderEntrantRow(
            version_id=r["id"],
            bot=r["bot"],
            version=r["version"],
            owner=r["owner"],
            mu=r["mu"],
            sigma=r["sigma"],
            games=r["games"],
            ladder_games=(kept := totals.get(r["id"], empty)).games,
            matches=kept.matches,
            last_match=kept.last_match,
            in_play=kept.in_play,
            recent=kept.recent[:recent],
            bot_id=r["bot_id"],
            bot_matches=per_bot.get(r["bot_id"], 0),
            wins=kept.wins,
            draws=kept.draws,
            losses=kept.losses,
            owner_turns=() if r["owner"] is None else turns.get(r["owner"], ()),
            owner_used_ms=used.get(usage_key(r["bot_id"], r["owner"]), 0.0),
            game_ms=usage.get(r["id"], LadderUsage()).game_ms,
        )
        for r in entrants
    ]


UsageKey = str | int
"""Whose runner time it is: a user's name, or the id of one of the admin's bots (each its own
owner)."""


def usage_key(bot_id: int, owner: str | None) -> UsageKey:
    return bot_id if owner is None else owner


Lift = tuple[float, float]
"""What an owner was lifted by on joining the ladder: ms, as of the ladder's clock (it is
halved with the owner's charges, ``arena.store.usage.decayed``)."""


def owner_usage(
    usage: Mapping[int, LadderUsage],
    bot_of: Mapping[int, int],
    owner_of: Mapping[int, str | None],
    lifts: Mapping[UsageKey, Lift] | None = None,
) -> dict[UsageKey, float]:
    """Each owner's runner time on the ladder now (``usage``: version id: its time, every
    version's; ``bot_of``: version id: bot id; ``owner_of``: bot id: owner), keyed by
    ``usage_key``: a user's bots together, every version, on the ladder or off it, with
    what it was lifted by on joining (``lifts``, ``join_owners``)."""
    now = clock(usage.values())
    used: dict[UsageKey, float] = {}
    for version_id, kept in usage.items():
        bot_id = bot_of.get(version_id)
        if bot_id is not None:
            key = usage_key(bot_id, owner_of.get(bot_id))
            used[key] = used.get(key, 0.0) + kept.at(now)
    for key, (lift_ms, lift_at) in (lifts or {}).items():
        used[key] = used.get(key, 0.0) + decayed(lift_ms, lift_at, now)
    return used


def _owner_column(key: UsageKey) -> str:
    """``ladder_owners.owner_key``: ``user:NAME``, or ``bot:ID`` for one of the admin's bots."""
    return f"bot:{key}" if isinstance(key, int) else f"user:{key}"


def _read_owners(
    db: sqlite3.Connection, tournament_id: int
) -> tuple[dict[UsageKey, Lift], set[UsageKey]]:
    """Each owner's lift, and the owners active at the runner's last look."""
    lifts: dict[UsageKey, Lift] = {}
    present: set[UsageKey] = set()
    rows = db.execute(
        "SELECT owner_key, active, lift_ms, lift_at FROM ladder_owners WHERE tournament_id = ?",
        (tournament_id,),
    )
    for column, active, lift_ms, lift_at in rows:
        kind, _, name = str(column).partition(":")
        key: UsageKey = int(name) if kind == "bot" else name
        lifts[key] = (float(lift_ms), float(lift_at))
        if active:
            present.add(key)
    return lifts, present


def join_owners(
    store: Store, tournament_id: int
) -> tuple[dict[UsageKey, Lift], frozenset[UsageKey]]:
    """Note who is on the ladder now, lifting each owner who joined since the last look
    (``joining_lifts``: a new owner, or one back after having no entrant, to the least-used
    time among the owners that stayed); every owner's lift and the owners on it now.

    An owner is on the ladder while one of its bots is an entrant (not withdrawn, not
    remote), whether it plays or waits behind its newer bot (``entrants_per_user``): moving
    between one's own bots is no joining. The runner calls it when the owners it sees
    change; what it stores keeps across a restart, and the ladder's first look (nobody
    seen before) lifts nobody.
    """
    with store.transaction() as db:
        active = frozenset(usage_key(r["bot_id"], r["owner"]) for r in db.execute(_ENTRANTS))
        usage = read_ladder_usage(db, tournament_id)
        bot_of = dict(db.execute("SELECT id, bot_id FROM bot_versions").fetchall())
        owner_of = dict(db.execute("SELECT id, owner FROM bots").fetchall())
        lifts, present = _read_owners(db, tournament_id)
        now = clock(usage.values())
        used = owner_usage(usage, bot_of, owner_of, lifts)
        for key, lift in joining_lifts(used, present, active).items():
            lifts[key] = add_charge(*lifts.get(key, (0.0, 0.0)), lift, now)
        db.executemany(
            "INSERT INTO ladder_owners (tournament_id, owner_key, active, lift_ms, lift_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (tournament_id, owner_key) DO UPDATE SET"
            " active = excluded.active, lift_ms = excluded.lift_ms, lift_at = excluded.lift_at",
            [
                (tournament_id, _owner_column(key), int(key in active), *lifts.get(key, (0.0, 0.0)))
                for key in active | present | lifts.keys()
            ],
        )
    return lifts, active


def ladder_usage(store: Store, tournament_id: int) -> dict[int, LadderUsage]:
    """Every version's runner time on the ladder (one read of the running totals)."""
    with store.reading() as db:
        return read_ladder_usage(db, tournament_id)


class _Played(Protocol):
    @property
    def matches(self) -> int: ...

    @property
    def last_match(self) -> int | None: ...


def bot_matches(
    history: Mapping[int, _Played], bot_of: Mapping[int, int]
) -> tuple[dict[int, int], dict[int, int]]:
    """Each bot's ladder matches and its latest one, over all its versions (``history``:
    version id: its matches, ``LadderTotals`` or ``LadderHistory``; ``bot_of``: version id:
    bot id): what its placement burst and its owner's turn are counted from."""
    matches: dict[int, int] = {}
    last_of: dict[int, int] = {}
    for version_id, kept in history.items():
        bot_id = bot_of.get(version_id)
        if bot_id is not None:
            matches[bot_id] = matches.get(bot_id, 0) + kept.matches
            if kept.last_match is not None:
                last_of[bot_id] = max(last_of.get(bot_id, 0), kept.last_match)
    return matches, last_of


def owner_turns(
    last_of: Mapping[int, int], owner_of: Mapping[int, str | None]
) -> dict[str, tuple[int, ...]]:
    """Each owner's bots' latest ladder matches, newest first (``last_of``: bot id: its latest
    match; ``owner_of``: bot id: its owner); the admin's bots (owner None) are left out."""
    turns: dict[str, list[int]] = {}
    for bot_id, last in last_of.items():
        owner = owner_of.get(bot_id)
        if owner is not None:
            turns.setdefault(owner, []).append(last)
    return {owner: tuple(sorted(kept, reverse=True)) for owner, kept in turns.items()}


def bot_owners(store: Store) -> dict[int, str | None]:
    """Every bot id's owner (None: the admin's)."""
    with store.reading() as db:
        return {int(b): o for b, o in db.execute("SELECT id, owner FROM bots")}


def version_bots(store: Store) -> dict[int, int]:
    """Every version id's bot id (a bot's versions share its placement burst)."""
    with store.reading() as db:
        return {int(v): int(b) for v, b in db.execute("SELECT id, bot_id FROM bot_versions")}


def ladder_history(store: Store, tournament_id: int, *, recent: int) -> dict[int, LadderHistory]:
    """Every version's ladder history (withdrawn and superseded ones too): what
    ``ladder_entrants`` gives each entrant, with its ``recent`` latest opponents. One read of
    the ladder's running totals: a runner reads it once and then keeps it itself
    (``arena.tournament.orchestration.ladder``)."""
    with store.reading() as db:
        totals = read_ladder_totals(db, tournament_id)
    return {
        version_id: LadderHistory(
            matches=kept.matches, last_match=kept.last_match, recent=kept.recent[:recent]
        )
        for version_id, kept in totals.items()
    }


def ladder_ratings(store: Store) -> list[LadderRating]:
    """The ladder's entrants now (as ``ladder_entrants``, oldest version first) with their
    ratings only: one read of the bots, however long the ladder has run."""
    with store.reading() as db:
        return [
            LadderRating(
                version_id=r["id"], mu=r["mu"], sigma=r["sigma"], bot_id=r["bot_id"],
                owner=r["owner"],
            )
            for r in db.execute(_ENTRANTS)
        ]


def add_ladder_match(
    store: Store, tournament_id: int, first_id: int, second_id: int, *, games: int, seed: int
) -> int:
    """Store the ladder's next match (its round: the next sequence number); its match id."""
    with store.transaction() as db:
        round_no = _next_round(db, tournament_id)
        match_id = db.execute(
            "INSERT INTO matches (tournament_id, round, first_id, second_id, games, seed)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (tournament_id, round_no, first_id, second_id, games, seed),
        ).lastrowid
        count_match(db, tournament_id, round_no, (first_id, second_id), games, ladder=True)
    assert match_id is not None
    return match_id


def next_ladder_round(store: Store, tournament_id: int) -> int:
    """The sequence number the ladder's next match gets."""
    with store.reading() as db:
        return _next_round(db, tournament_id)


def _next_round(db: sqlite3.Connection, tournament_id: int) -> int:
    row = db.execute(
        "SELECT COALESCE(MAX(round), 0) FROM matches WHERE tournament_id = ?", (tournament_id,)
    ).fetchone()
    return int(row[0]) + 1


def unfinished_matches(store: Store, tournament_id: int) -> list[MatchRow]:
    """The ladder's matches in play (unfinished), oldest first, with their stored games."""
    with store.reading() as db:
        return match_rows(db, tournament_id, order="m.id", unfinished_only=True)


def match_version_ids(store: Store, match_id: int) -> tuple[int, int]:
    """The version ids of a match's first and second bot."""
    with store.reading() as db:
        row = db.execute(
            "SELECT first_id, second_id FROM matches WHERE id = ?", (match_id,)
        ).fetchone()
    if row is None:
        raise NotFoundError(f"no match {match_id}")
    return int(row[0]), int(row[1])


WithdrawnBy = Literal["owner", "admin", "arena"]
"""Who took a bot off the ladder: its owner, the arena's admin, or the arena itself (its
stored copy gone or changed; a house bot stored for /play). Only the admin brings back
what the admin withdrew."""


class AdminWithdrawnError(StoreError, PermissionError):
    """The bot's owner asked to bring back a bot the admin withdrew."""

    def __init__(self, bot: str) -> None:
        super().__init__(
            f"bot {quoted(bot)} was withdrawn from the ladder by the arena's admin: only the"
            " admin can bring it back (a new version does not)"
        )


def set_withdrawn(store: Store, bot: str, withdrawn: bool, by: WithdrawnBy = "admin") -> None:
    """Withdraw ``bot`` from the ladder (or bring it back); NotFoundError for an unknown bot.

    A withdrawal by the admin stands until the admin brings the bot back: its owner
    can neither bring it back (AdminWithdrawnError) nor turn it into their own
    withdrawal, and a new version of theirs does not bring it back either. A new version
    of a bot its owner or the ladder withdrew, or of the admin's own, brings it back
    (``add_bot_version``).
    """
    with store.transaction() as db:
        row = db.execute("SELECT withdrawn_by FROM bots WHERE name = ?", (bot,)).fetchone()
        if row is None:
            raise NotFoundError(f"no bot {quoted(bot)} in the store")
        if row[0] == "admin" and by != "admin":
            if not withdrawn:
                raise AdminWithdrawnError(bot)
            return  # withdrawn already, and the admin's withdrawal stands
        db.execute(
            "UPDATE bots SET withdrawn_at = ?, withdrawn_by = ? WHERE name = ?",
            (utc_now(), by, bot) if withdrawn else (None, None, bot),
        )


def is_withdrawn(store: Store, bot: str) -> bool:
    with store.reading() as db:
        row = db.execute("SELECT withdrawn_at FROM bots WHERE name = ?", (bot,)).fetchone()
    if row is None:
        raise NotFoundError(f"no bot {quoted(bot)} in the store")
    return row[0] is not None


def ladder_name(store: Store, tournament_id: int) -> str:
    return get_tournament(store, tournament_id).name
