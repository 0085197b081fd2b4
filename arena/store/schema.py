"""The database schema and its migrations (``PRAGMA user_version``).

``MIGRATIONS[k]`` takes a database from version ``k`` to ``k + 1``; version 0
is an empty file. Each step runs in one transaction together with the new
``user_version``, so a crash mid-migration leaves the previous version intact.
Never edit a released step: add a new one.

History:
  v1  bots, bot versions with rating and counters, tournaments, entrants,
      matches, byes, games with records, rating history.
  v2  bot owners (``bots.owner``) and API tokens (``tokens``) for `arena serve`.
  v3  remote bots: seat offers (``seat_offers``, the seat token's hash only);
      live games for the admin's live view (``live_games``, ``live_actions``).
  v4  the end of a failed bot's stderr, private to its owner and the admin
      (``game_stderr``, by game and seat), out of the public game record:
      the "; stderr ends: ..." that older arenas appended to a failure's
      detail in stored records moves there.
  v5  ``tournaments.secret``: 32 bytes that key the tournament's deals, never
      shown to a bot. Tournaments from before v5 get a random secret
      (``randomblob``): their unplayed games get new deals, and a pair half
      played before the upgrade is not replayed with its old deal.
  v6  the ladder (``arena serve --ladder``): a tournament of format ``ladder``
      (the ``tournaments`` table is rebuilt with the wider CHECK, every row and
      id kept; migrations run with foreign keys off, and every step ends with
      ``PRAGMA foreign_key_check``: the CHECK also names ``sprt``
      and ``gauntlet``); its settings (``ladders``);
      bots withdrawn from it (``bots.withdrawn_at``).
  v7  ``tournaments.commitment``: the SHA-256 commitment to the deal secret and
      the tournament's parameters, published at creation
      (``arena.referee.seeds.seed_commitment``); the secret itself is revealed
      only once the tournament is finished. Tournaments from before v7 keep
      NULL: they published no commitment, and `arena audit` says so.
  v8  ``tournaments.interrupted_reason``: why a tournament's runner stopped
      before the end, one line with host paths as ``<path>`` (NULL: it did
      not, or could not say; a full disk leaves it in the lease file instead).
  v9  running totals, kept by the writes that store matches and games (in their
      transaction), so that a page reads them instead of every match and game:
      ``tournaments.games_played`` and ``games_scheduled``; ``tournament_games``
      (a tournament's games by id: its latest read in order); ``ladder_totals``, a
      ladder version's matches, its latest (``last_match``, a round), those
      unfinished (``in_play``), its games and its latest opponents (``recent``,
      JSON, newest first, at most ``RECENT_KEPT``). Filled from the history; a
      step written in Python (the opponents in round order).
  v10 token expiry and revocation; per-user limits the admin sets
      (``user_limits``); the bytes of a version's stored files (``bot_versions.bytes``).
  v11 when each game began and each of its actions was applied (``games.started_at``,
      ``action_ms``): what the spectator delay shows a game by.
  v12 ``rejected_games``: games a Ray node reported that the driver refused (a
      record not of its match as dealt), with the node that sent each and why;
      the games themselves are never stored.
  v13 ``ladder_totals.wins``, ``draws`` and ``losses``: a ladder version's games
      won, drawn and lost on the ladder, filled from its games.
  v14 games people play at /play (``play_games``: the one-game tournament of each,
      its person, bot, seat, whether it is rated in the people's pool and why not)
      and that pool (``play_people`` by user, ``play_bots`` by bot version).
      Play tournaments stored before are found by their entrant ``human-USER``
      and name ``play-USER-...``: unrated.
  v15 who withdrew a bot from the ladder (``bots.withdrawn_by``).
  v16 ``ladder_totals.used_ms``, ``used_at``, ``charged_ms``: the runner time a
      ladder version's games used (``arena.store.usage``), what the ladder's fair
      share of time reads; filled from the stored games (a step in Python).
  v17 ``games.startup0_ms``, ``startup1_ms``: each seat's launch-to-Hello time the game
      carries (``GameReport.startup_ms``), charged to it on a ladder; 0 for games stored
      before (their start-up was charged to nobody).
  v18 ``ladder_owners``: each ladder owner (``owner_key``: ``user:NAME``, or ``bot:ID`` for
      one of the admin's bots) the runner saw with an entrant at its last look (``active``),
      and the time it was lifted by on joining or coming back (``lift_ms`` as of the
      ladder's clock ``lift_at``: ``arena.store.usage.joining_lifts``). Empty at first:
      the owners on the ladder at the runner's first look are lifted by nothing.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from arena.store.usage import add_charge, game_charges

V1 = """
CREATE TABLE bots (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);
CREATE TABLE bot_versions (
    id              INTEGER PRIMARY KEY,
    bot_id          INTEGER NOT NULL REFERENCES bots(id),
    version         TEXT NOT NULL,
    directory       TEXT NOT NULL,
    command         TEXT NOT NULL,
    runtime         TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    mu              REAL NOT NULL,
    sigma           REAL NOT NULL,
    games           INTEGER NOT NULL DEFAULT 0,
    wins            INTEGER NOT NULL DEFAULT 0,
    draws           INTEGER NOT NULL DEFAULT 0,
    losses          INTEGER NOT NULL DEFAULT 0,
    timeouts        INTEGER NOT NULL DEFAULT 0,
    crashes         INTEGER NOT NULL DEFAULT 0,
    illegal_actions INTEGER NOT NULL DEFAULT 0,
    UNIQUE (bot_id, version)
);
CREATE TABLE tournaments (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    format      TEXT NOT NULL CHECK (format IN ('round_robin', 'swiss')),
    status      TEXT NOT NULL CHECK (status IN ('created', 'running', 'finished')),
    config      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    finished_at TEXT
);
CREATE TABLE entrants (
    tournament_id  INTEGER NOT NULL REFERENCES tournaments(id),
    bot_version_id INTEGER NOT NULL REFERENCES bot_versions(id),
    seed_rank      INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, bot_version_id)
);
CREATE TABLE matches (
    id             INTEGER PRIMARY KEY,
    tournament_id  INTEGER NOT NULL REFERENCES tournaments(id),
    round          INTEGER NOT NULL,
    first_id       INTEGER NOT NULL REFERENCES bot_versions(id),
    second_id      INTEGER NOT NULL REFERENCES bot_versions(id),
    games          INTEGER NOT NULL,
    seed           INTEGER NOT NULL,
    finished_at    TEXT,
    UNIQUE (tournament_id, round, first_id),
    UNIQUE (tournament_id, round, second_id)
);
CREATE TABLE byes (
    tournament_id  INTEGER NOT NULL REFERENCES tournaments(id),
    round          INTEGER NOT NULL,
    bot_version_id INTEGER NOT NULL REFERENCES bot_versions(id),
    PRIMARY KEY (tournament_id, round)
);
CREATE TABLE games (
    id          INTEGER PRIMARY KEY,
    match_id    INTEGER NOT NULL REFERENCES matches(id),
    game_index  INTEGER NOT NULL,
    seat0_id    INTEGER NOT NULL REFERENCES bot_versions(id),
    seat1_id    INTEGER NOT NULL REFERENCES bot_versions(id),
    winner_seat INTEGER CHECK (winner_seat IN (0, 1)),
    reason      TEXT NOT NULL,
    status0     TEXT NOT NULL,
    status1     TEXT NOT NULL,
    actions     INTEGER NOT NULL,
    time0_ms    REAL NOT NULL,
    time1_ms    REAL NOT NULL,
    record      TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    UNIQUE (match_id, game_index)
);
CREATE TABLE rating_history (
    id             INTEGER PRIMARY KEY,
    game_id        INTEGER NOT NULL REFERENCES games(id),
    bot_version_id INTEGER NOT NULL REFERENCES bot_versions(id),
    mu             REAL NOT NULL,
    sigma          REAL NOT NULL,
    UNIQUE (game_id, bot_version_id)
);
CREATE INDEX games_by_seat0 ON games(seat0_id);
CREATE INDEX games_by_seat1 ON games(seat1_id);
CREATE INDEX history_by_version ON rating_history(bot_version_id);
"""

V2 = """
ALTER TABLE bots ADD COLUMN owner TEXT;
CREATE TABLE tokens (
    token_sha256 TEXT PRIMARY KEY,
    user         TEXT NOT NULL,
    role         TEXT NOT NULL CHECK (role IN ('admin', 'user')),
    created_at   TEXT NOT NULL
);
"""

V3 = """
CREATE TABLE seat_offers (
    id             INTEGER PRIMARY KEY,
    token_sha256   TEXT NOT NULL UNIQUE,
    bot_version_id INTEGER NOT NULL REFERENCES bot_versions(id),
    match_id       INTEGER REFERENCES matches(id),
    referee_match  TEXT NOT NULL,
    slot           INTEGER NOT NULL CHECK (slot IN (0, 1)),
    socket_path    TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    expires_at_ms  INTEGER NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('open', 'taken', 'closed')),
    taken_at       TEXT
);
CREATE INDEX seat_offers_by_version ON seat_offers(bot_version_id, state);
CREATE INDEX seat_offers_by_match ON seat_offers(match_id, state);
CREATE TABLE live_games (
    id          INTEGER PRIMARY KEY,
    match_id    INTEGER NOT NULL REFERENCES matches(id),
    game_index  INTEGER NOT NULL,
    head        TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    UNIQUE (match_id, game_index)
);
CREATE TABLE live_actions (
    live_game_id INTEGER NOT NULL REFERENCES live_games(id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    entry        TEXT NOT NULL,
    added_at     TEXT NOT NULL,
    PRIMARY KEY (live_game_id, seq)
);
"""

V4 = """
CREATE TABLE game_stderr (
    game_id        INTEGER NOT NULL REFERENCES games(id),
    seat           INTEGER NOT NULL CHECK (seat IN (0, 1)),
    bot_version_id INTEGER NOT NULL REFERENCES bot_versions(id),
    stderr         TEXT NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX game_stderr_by_version ON game_stderr(bot_version_id, game_id);
INSERT INTO game_stderr (game_id, seat, bot_version_id, stderr)
SELECT g.id, json_extract(f.value, '$.seat'),
       CASE json_extract(f.value, '$.seat') WHEN 0 THEN g.seat0_id ELSE g.seat1_id END,
       replace(substr(json_extract(f.value, '$.detail'),
                      instr(json_extract(f.value, '$.detail'), char(59) || ' stderr ends: ') + 15),
               ' | ', char(10))
FROM games g, json_each(g.record, '$.match.failures') f
WHERE instr(json_extract(f.value, '$.detail'), char(59) || ' stderr ends: ') > 0;
UPDATE games SET record = json_set(record, '$.match.failures[0].detail',
    substr(json_extract(record, '$.match.failures[0].detail'), 1,
           instr(json_extract(record, '$.match.failures[0].detail'),
                 char(59) || ' stderr ends: ') - 1))
WHERE instr(json_extract(record, '$.match.failures[0].detail'), char(59) || ' stderr ends: ') > 0;
UPDATE games SET record = json_set(record, '$.match.failures[1].detail',
    substr(json_extract(record, '$.match.failures[1].detail'), 1,
           instr(json_extract(record, '$.match.failures[1].detail'),
                 char(59) || ' stderr ends: ') - 1))
WHERE instr(json_extract(record, '$.match.failures[1].detail'), char(59) || ' stderr ends: ') > 0
"""

V5 = """
ALTER TABLE tournaments ADD COLUMN secret BLOB;
UPDATE tournaments SET secret = randomblob(32) WHERE secret IS NULL;
"""

V6 = """
CREATE TABLE tournaments_v6 (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    format      TEXT NOT NULL
                CHECK (format IN ('round_robin', 'swiss', 'sprt', 'gauntlet', 'ladder')),
    status      TEXT NOT NULL CHECK (status IN ('created', 'running', 'finished')),
    config      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    finished_at TEXT,
    secret      BLOB
);
INSERT INTO tournaments_v6 (id, name, format, status, config, created_at, finished_at, secret)
SELECT id, name, format, status, config, created_at, finished_at, secret FROM tournaments;
DROP TABLE tournaments;
ALTER TABLE tournaments_v6 RENAME TO tournaments;
CREATE TABLE ladders (
    tournament_id INTEGER PRIMARY KEY REFERENCES tournaments(id),
    settings      TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
ALTER TABLE bots ADD COLUMN withdrawn_at TEXT;
CREATE INDEX matches_by_tournament ON matches(tournament_id, finished_at)
"""

V7 = """
ALTER TABLE tournaments ADD COLUMN commitment TEXT
"""

# why a tournament's runner stopped before the end (NULL: it did not, or could not say)
V8 = """
ALTER TABLE tournaments ADD COLUMN interrupted_reason TEXT
"""

RECENT_KEPT = 100
"""How many latest opponents ``ladder_totals.recent`` keeps (max_repeat is at most this)."""

V9 = """
ALTER TABLE tournaments ADD COLUMN games_played INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tournaments ADD COLUMN games_scheduled INTEGER NOT NULL DEFAULT 0;
UPDATE tournaments SET
    games_played = (SELECT COUNT(*) FROM games g JOIN matches m ON m.id = g.match_id
                    WHERE m.tournament_id = tournaments.id),
    games_scheduled = (SELECT COALESCE(SUM(games), 0) FROM matches
                       WHERE tournament_id = tournaments.id);
CREATE TABLE tournament_games (
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    game_id       INTEGER NOT NULL REFERENCES games(id),
    PRIMARY KEY (tournament_id, game_id)
);
INSERT INTO tournament_games (tournament_id, game_id)
SELECT m.tournament_id, g.id FROM games g JOIN matches m ON m.id = g.match_id;
CREATE TABLE ladder_totals (
    tournament_id  INTEGER NOT NULL REFERENCES tournaments(id),
    bot_version_id INTEGER NOT NULL REFERENCES bot_versions(id),
    matches        INTEGER NOT NULL,
    last_match     INTEGER NOT NULL,
    in_play        INTEGER NOT NULL,
    games          INTEGER NOT NULL,
    recent         TEXT NOT NULL,
    PRIMARY KEY (tournament_id, bot_version_id)
);
INSERT INTO ladder_totals (tournament_id, bot_version_id, matches, last_match, in_play, games,
                           recent)
SELECT tournament_id, version_id, COUNT(*), MAX(round), SUM(finished_at IS NULL), 0, '[]' FROM (
    SELECT m.tournament_id, m.first_id AS version_id, m.round, m.finished_at FROM matches m
    JOIN tournaments t ON t.id = m.tournament_id WHERE t.format = 'ladder'
    UNION ALL SELECT m.tournament_id, m.second_id, m.round, m.finished_at FROM matches m
    JOIN tournaments t ON t.id = m.tournament_id WHERE t.format = 'ladder'
) GROUP BY tournament_id, version_id;
UPDATE ladder_totals SET games = counted.games FROM (
    SELECT tournament_id, version_id, COUNT(*) AS games FROM (
        SELECT m.tournament_id, g.seat0_id AS version_id FROM games g
        JOIN matches m ON m.id = g.match_id JOIN tournaments t ON t.id = m.tournament_id
        WHERE t.format = 'ladder'
        UNION ALL SELECT m.tournament_id, g.seat1_id FROM games g
        JOIN matches m ON m.id = g.match_id JOIN tournaments t ON t.id = m.tournament_id
        WHERE t.format = 'ladder'
    ) GROUP BY tournament_id, version_id
) AS counted
WHERE counted.tournament_id = ladder_totals.tournament_id
  AND counted.version_id = ladder_totals.bot_version_id
"""


def _v9(connection: sqlite3.Connection) -> None:
    """V9, then each ladder version's latest ``RECENT_KEPT`` opponents, newest first (in
    Python: SQLite before 3.44 promises no order inside an aggregate)."""
    _run_script(connection, V9)
    recent: dict[tuple[int, int], list[int]] = {}
    rows = connection.execute(
        "SELECT m.tournament_id, m.first_id, m.second_id FROM matches m"
        " JOIN tournaments t ON t.id = m.tournament_id WHERE t.format = 'ladder'"
        " ORDER BY m.tournament_id, m.round DESC, m.id DESC"
    )
    for tournament_id, first_id, second_id in rows:
        for version_id, opponent in ((first_id, second_id), (second_id, first_id)):
            kept = recent.setdefault((tournament_id, version_id), [])
            if len(kept) < RECENT_KEPT:
                kept.append(opponent)
    connection.executemany(
        "UPDATE ladder_totals SET recent = ? WHERE tournament_id = ? AND bot_version_id = ?",
        [(json.dumps(kept, separators=(",", ":")), t, v) for (t, v), kept in recent.items()],
    )


LIMITS_AND_TOKENS = """
ALTER TABLE tokens ADD COLUMN expires_at TEXT;
ALTER TABLE tokens ADD COLUMN revoked_at TEXT;
ALTER TABLE bot_versions ADD COLUMN bytes INTEGER;
CREATE TABLE user_limits (
    scope   TEXT NOT NULL,
    name    TEXT NOT NULL,
    value   INTEGER NOT NULL CHECK (value >= 0),
    set_at  TEXT NOT NULL,
    PRIMARY KEY (scope, name)
);
"""


def _limits_and_tokens(connection: sqlite3.Connection) -> None:
    """Token expiry and revocation (``tokens.expires_at``, ``revoked_at``: NULL for
    never); the bytes a version's stored files take (``bot_versions.bytes``, NULL for
    versions stored before: measured on disk when counted); per-user limits the admin
    set (``user_limits``: scope '' for every user, else one user's)."""
    _run_script(connection, LIMITS_AND_TOKENS)


def _public_timing(connection: sqlite3.Connection) -> None:
    """When each game began and each of its actions was applied (epoch ms, JSON), kept
    from its live view as it is stored: what the spectator delay shows a game by (its
    start, its actions, its end, each once the delay has passed). Games stored before
    have neither (NULL: shown as begun and played out when they ended)."""
    connection.execute("ALTER TABLE games ADD COLUMN started_at TEXT")
    connection.execute("ALTER TABLE games ADD COLUMN action_ms TEXT")
    connection.execute("CREATE INDEX games_by_finish ON games(finished_at)")


REJECTED_GAMES = """
CREATE TABLE rejected_games (
    id          INTEGER PRIMARY KEY,
    match_id    INTEGER NOT NULL REFERENCES matches(id),
    game_index  INTEGER NOT NULL,
    node_ip     TEXT NOT NULL,
    node_id     TEXT NOT NULL,
    problem     TEXT NOT NULL,
    rejected_at TEXT NOT NULL
);
CREATE INDEX rejected_games_match ON rejected_games (match_id)
"""
"""Games a Ray node reported that the driver's check refused (never stored as games):
the node that sent each and why (``arena.store.rejected``)."""


# each ladder version's games won, drawn and lost on the ladder, counted from its games
LADDER_RESULTS = """
ALTER TABLE ladder_totals ADD COLUMN wins INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ladder_totals ADD COLUMN draws INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ladder_totals ADD COLUMN losses INTEGER NOT NULL DEFAULT 0;
UPDATE ladder_totals SET wins = counted.wins, draws = counted.draws, losses = counted.losses
FROM (
    SELECT tournament_id, version_id, SUM(outcome = 'w') AS wins, SUM(outcome = 'd') AS draws,
           SUM(outcome = 'l') AS losses FROM (
        SELECT m.tournament_id, g.seat0_id AS version_id,
               CASE WHEN g.winner_seat IS NULL THEN 'd' WHEN g.winner_seat = 0 THEN 'w'
                    ELSE 'l' END AS outcome
        FROM games g JOIN matches m ON m.id = g.match_id
        JOIN tournaments t ON t.id = m.tournament_id WHERE t.format = 'ladder'
        UNION ALL SELECT m.tournament_id, g.seat1_id,
               CASE WHEN g.winner_seat IS NULL THEN 'd' WHEN g.winner_seat = 1 THEN 'w'
                    ELSE 'l' END
        FROM games g JOIN matches m ON m.id = g.match_id
        JOIN tournaments t ON t.id = m.tournament_id WHERE t.format = 'ladder'
    ) GROUP BY tournament_id, version_id
) AS counted
WHERE counted.tournament_id = ladder_totals.tournament_id
  AND counted.version_id = ladder_totals.bot_version_id
"""


PLAY_POOL = """
CREATE TABLE play_games (
    tournament_id  INTEGER PRIMARY KEY REFERENCES tournaments(id),
    user           TEXT NOT NULL,
    bot_version_id INTEGER NOT NULL REFERENCES bot_versions(id),
    seat           INTEGER NOT NULL CHECK (seat IN (0, 1)),
    rated          INTEGER NOT NULL CHECK (rated IN (0, 1)),
    unrated_reason TEXT,
    game_id        INTEGER UNIQUE REFERENCES games(id),
    person_before  TEXT,
    person_after   TEXT,
    bot_before     TEXT,
    bot_after      TEXT,
    created_at     TEXT NOT NULL,
    CHECK ((rated = 1) = (unrated_reason IS NULL))
);
CREATE INDEX play_games_by_user ON play_games(user, tournament_id);
CREATE TABLE play_people (
    user       TEXT PRIMARY KEY,
    mu         REAL NOT NULL,
    sigma      REAL NOT NULL,
    games      INTEGER NOT NULL DEFAULT 0,
    wins       INTEGER NOT NULL DEFAULT 0,
    draws      INTEGER NOT NULL DEFAULT 0,
    losses     INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
);
CREATE TABLE play_bots (
    bot_version_id INTEGER PRIMARY KEY REFERENCES bot_versions(id),
    mu             REAL NOT NULL,
    sigma          REAL NOT NULL,
    games          INTEGER NOT NULL DEFAULT 0,
    wins           INTEGER NOT NULL DEFAULT 0,
    draws          INTEGER NOT NULL DEFAULT 0,
    losses         INTEGER NOT NULL DEFAULT 0,
    updated_at     TEXT NOT NULL
);
INSERT OR IGNORE INTO play_games (tournament_id, user, bot_version_id, seat, rated,
                                  unrated_reason, game_id, created_at)
SELECT t.id, hb.owner, CASE WHEN m.first_id = hv.id THEN m.second_id ELSE m.first_id END,
       CASE WHEN m.first_id = hv.id THEN 0 ELSE 1 END, 0,
       'played before the people''s pool was kept', g.id, t.created_at
FROM tournaments t JOIN matches m ON m.tournament_id = t.id
JOIN bot_versions hv ON hv.id IN (m.first_id, m.second_id) AND hv.runtime = 'remote'
JOIN bots hb ON hb.id = hv.bot_id AND hb.owner IS NOT NULL AND hb.name = 'human-' || hb.owner
LEFT JOIN games g ON g.match_id = m.id
WHERE t.format = 'round_robin' AND m.games = 1
  AND (SELECT COUNT(*) FROM matches WHERE tournament_id = t.id) = 1
  AND substr(t.name, 1, length(hb.owner) + 6) = 'play-' || hb.owner || '-'
"""
"""People at /play (``arena.store.play``): each play game's one-game tournament (kept out
of the tournament lists), whether it is rated in the people's pool (decided when the
table opens; ``unrated_reason`` says why not; the ratings before and after as
``[mu, sigma]`` JSON), and the pool: people by user, bots by version, apart from the
bots' own ratings."""


WITHDRAWN_BY = """
ALTER TABLE bots ADD COLUMN withdrawn_by TEXT CHECK (withdrawn_by IN ('owner', 'admin', 'arena'));
UPDATE bots SET withdrawn_by = CASE WHEN owner IS NULL THEN 'admin' ELSE 'owner' END
WHERE withdrawn_at IS NOT NULL
"""
"""Who withdrew each withdrawn bot (``arena.store.ladder.set_withdrawn``): a withdrawal stored
before it was kept counts as its owner's (the admin's, for a bot without an owner)."""


def _ladder_usage(connection: sqlite3.Connection) -> None:
    """Each ladder version's runner time (``arena.store.usage.LadderUsage``), charged from its
    stored ladder games in the order they were stored, as the store charges each game."""
    for column in ("used_ms REAL", "used_at REAL", "charged_ms REAL"):
        connection.execute(f"ALTER TABLE ladder_totals ADD COLUMN {column} NOT NULL DEFAULT 0")
    used: dict[tuple[int, int], tuple[float, float, float]] = {}
    clocks: dict[int, float] = {}  # each ladder's charges so far
    rows = connection.execute(
        "SELECT m.tournament_id, g.seat0_id, g.seat1_id, g.time0_ms, g.time1_ms, g.started_at,"
        " g.finished_at FROM games g JOIN matches m ON m.id = g.match_id"
        " JOIN tournaments t ON t.id = m.tournament_id WHERE t.format = 'ladder' ORDER BY g.id"
    )
    for tournament_id, seat0, seat1, time0, time1, started_at, finished_at in rows:
        charges = game_charges((time0, time1), started_at, finished_at)
        now = clocks.get(tournament_id, 0.0)
        for version_id, charge in zip((seat0, seat1), charges, strict=True):
            kept, since, total = used.get((tournament_id, version_id), (0.0, 0.0, 0.0))
            kept, since = add_charge(kept, since, charge, now)
            used[tournament_id, version_id] = (kept, since, total + charge)
        clocks[tournament_id] = now + sum(charges)
    connection.executemany(
        "UPDATE ladder_totals SET used_ms = ?, used_at = ?, charged_ms = ?"
        " WHERE tournament_id = ? AND bot_version_id = ?",
        [(kept, since, total, t, v) for (t, v), (kept, since, total) in used.items()],
    )


GAME_STARTUP = """
ALTER TABLE games ADD COLUMN startup0_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE games ADD COLUMN startup1_ms REAL NOT NULL DEFAULT 0
"""
"""Each seat's start-up time a game carries (``arena.referee.types.GameReport.startup_ms``)."""


LADDER_OWNERS = """
CREATE TABLE ladder_owners (
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    owner_key     TEXT NOT NULL,
    active        INTEGER NOT NULL CHECK (active IN (0, 1)),
    lift_ms       REAL NOT NULL DEFAULT 0,
    lift_at       REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (tournament_id, owner_key)
)
"""
"""Who the ladder's runner saw on the ladder, and the time each owner was lifted by on
joining it (``arena.store.ladder.join_owners``)."""


Migration = str | Callable[[sqlite3.Connection], None]
"""A step: SQL statements separated by ``;`` (none inside them), or a function."""

MIGRATIONS: tuple[Migration, ...] = (
    V1, V2, V3, V4, V5, V6, V7, V8, _v9, _limits_and_tokens, _public_timing, REJECTED_GAMES,
    LADDER_RESULTS, PLAY_POOL, WITHDRAWN_BY, _ladder_usage, GAME_STARTUP, LADDER_OWNERS,
)
CURRENT_VERSION = len(MIGRATIONS)


class SchemaError(RuntimeError):
    """A database this code cannot use (newer than it knows, or not ours)."""


def check_usable(connection: sqlite3.Connection) -> int:
    """The schema version of ``connection``'s database; SchemaError if this code cannot use it.

    Reads only, so a refused file is left exactly as it was: call it before
    anything that writes (even ``PRAGMA journal_mode``).
    """
    if not connection.in_transaction:  # the version and the tables from one snapshot
        connection.execute("BEGIN")
        try:
            return check_usable(connection)
        finally:
            if connection.in_transaction:
                connection.execute("COMMIT")
    found = int(connection.execute("PRAGMA user_version").fetchone()[0])
    if found > CURRENT_VERSION:
        raise SchemaError(
            f"database schema v{found} is newer than this arena (v{CURRENT_VERSION}); upgrade arena"
        )
    if found == 0:
        foreign = [
            row[0]
            for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        if foreign:
            raise SchemaError(
                "not an arena database: an SQLite file without an arena schema version that"
                f" already holds {', '.join(foreign[:5])}{', ...' if len(foreign) > 5 else ''}"
            )
    return found


def migrate(connection: sqlite3.Connection) -> int:
    """Bring ``connection``'s database to ``CURRENT_VERSION``; return the version found.

    Each step re-reads the version inside its transaction: another process
    opening the same new data directory at the same moment migrates it once.
    """
    found = check_usable(connection)
    if found < CURRENT_VERSION:  # a current database is only read: no write lock taken
        while _apply_next(connection):
            pass
    return found


def _apply_next(connection: sqlite3.Connection) -> bool:
    """Apply the next migration step, if any is due; whether one was applied."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        version = check_usable(connection)
        if version < CURRENT_VERSION:
            run_step(connection, MIGRATIONS[version])
            broken = connection.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise SchemaError(
                    f"migration to v{version + 1} would leave {len(broken)} broken reference(s)"
                    f" (first in table {broken[0][0]}); the database is left at v{version}"
                )
            connection.execute(f"PRAGMA user_version = {version + 1:d}")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    return version < CURRENT_VERSION


def run_step(connection: sqlite3.Connection, step: Migration) -> None:
    """One step of ``MIGRATIONS`` in the open transaction: a script's statements, or a
    function (also how a test builds a store as an older arena left it)."""
    if isinstance(step, str):
        _run_script(connection, step)
    else:
        step(connection)


def _run_script(connection: sqlite3.Connection, script: str) -> None:
    """Each of ``script``'s statements (separated by ``;``), in the open transaction."""
    for statement in (s.strip() for s in script.split(";")):
        if statement:
            connection.execute(statement)
