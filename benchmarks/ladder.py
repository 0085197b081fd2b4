"""Ladder benchmarks: the scheduler's pick time, and the ladder's games/s against a round robin.

    python3 benchmarks/ladder.py pick  [--entrants 10000] [--picks 50]
    python3 benchmarks/ladder.py reads [--entrants 20] [--matches 100000] [--games-per-match 2]
    python3 benchmarks/ladder.py view --before CHECKOUT [--entrants 20] [--matches 100000]
                                      [--games-per-match 2] [--rounds 3] [--repeat 5]
                                      [--record-bytes 0]
    python3 benchmarks/ladder.py games [--bots 20] [--concurrency 2] [--pairs 2] [--games N]
                                       [--before CHECKOUT]

`pick` times ``arena.tournament.pairing.ladder_schedule.pick`` on a simulated ladder
of --entrants (ratings, match counts, waits and recent opponents spread as on
a ladder that has run a while; a few placing); target: under 50 ms. It also
times reading the same entrants from a store: with their whole history
(``ladder_entrants``, the pages' read, which grows with the ladder's matches),
the history alone (``ladder_history``, once a run) and their ratings alone
(``ladder_ratings``, what the runner reads before each pick). `reads` times
the same reads on a small ladder that has run long (by default 20 entrants,
100,000 matches, 200,000 games: 11 hours of a 2-core ladder at 4.9 games/s),
built as a v8 store and migrated to v9 (the migration is timed too).

`view` times what people read on such a ladder (the last match in play): the
/ladder page, /api/ladder and GetLadder, each through a real server (web and
gRPC on 127.0.0.1, port 0), with CHECKOUT's ``arena`` package (another
worktree, e.g. of main) and with this one, alternating, each in a fresh
process on its own copy of the same v8 store (this checkout migrates its copy
first, timed). Each run answers every request once untimed, then --repeat
times; it prints the medians and whether both checkouts' answers are identical
(SHA-256 of the bodies; GetLadder's message serialized deterministically).
It times too the ladder's /api/tournaments/ID (each from a fresh web server,
so that no page cache answers it) and the first update of a WatchTournament
stream on it (each game's event costs one such update). Their answers may differ
between checkouts (how a checkout ranks a ladder's standings); it prints whether
each side answers alike run to run and ranks the ladder's bots as /api/ladder does.

`games` compares the ladder's games/s with a round robin of the same bots
(copies of python_random and python_greedy), same games per match, same
concurrency, in alternating runs (round robin, ladder, round robin, ...),
each in a fresh process as `arena tournament run` and `arena serve` are.
With --before CHECKOUT a third run in each round plays the ladder with
CHECKOUT's ``arena`` package (another worktree, e.g. of main).
The ladder is timed from its start to its Nth stored game, N being the round
robin's game count (or --games); target: at least 90% of the round robin's rate.
Beside each run: the load average, the runner process's own CPU, what was
played (pairings of random (r) and greedy (g) copies, actions and thinking per
game: the ladder pairs by rating, the round robin everyone), and for the
ladder how long the runner took from a match's end to handing over the next
(a worker idles that long when no match is queued for it).

Prints figures; asserts nothing. Timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

from tournament import _busy_cores, _copy_bot, _field, _timed_round_robin

from arena.tournament.execution.executor import JobDone, JobEvent, MatchExecutor, MatchJob
from arena.tournament.pairing.ladder_schedule import Contender, SchedulePolicy, pick

REPO = Path(__file__).resolve().parents[1]


def _contenders(count: int, rng: random.Random) -> tuple[list[Contender], int]:
    """A ladder of ``count`` entrants that has run for a while; its next match number."""
    next_match = 20 * count
    entrants = []
    for i in range(count):
        placing = rng.random() < 0.01
        matches = rng.randrange(4) if placing else rng.randrange(20, 60)
        entrants.append(
            Contender(
                id=i + 1,
                mu=rng.gauss(25, 6),
                sigma=8.3 if placing else rng.uniform(0.8, 3),
                matches=matches,
                last_match=None if matches == 0 else next_match - rng.randrange(1, 4 * count),
                in_play=1 if rng.random() < 0.001 else 0,
                recent=(rng.randrange(1, count + 1),) if matches else (),
            )
        )
    return entrants, next_match


def bench_pick(count: int, picks: int, seed: int) -> int:
    rng = random.Random(seed)
    entrants, next_match = _contenders(count, rng)
    policy = SchedulePolicy()
    for placing in (True, False):
        state = entrants if placing else [c for c in entrants if c.matches >= 4]
        times_ms = []
        for number in range(picks):
            started = time.perf_counter()
            pick(state, next_match + number, policy)
            times_ms.append(1000 * (time.perf_counter() - started))
        label = "with placing versions" if placing else "all placed"
        print(
            f"pick, {len(state)} entrants ({label}): median {statistics.median(times_ms):.1f} ms,"
            f" max {max(times_ms):.1f} ms over {picks} picks (target < 50 ms)"
        )
    bench_read(count, rng)
    return 0


def build_v8(
    data: Path,
    count: int,
    matches: int,
    games: int,
    rng: random.Random,
    *,
    finished: bool = True,
    record_bytes: int = 0,
) -> None:
    """A v8 data directory (schema as every arena before v9 made it; released migration steps
    never change) holding ``count`` entrants and a ladder of ``matches`` matches, each with
    ``games`` stored games (two seats, swapped in turn); with ``finished`` False the last
    one is in play. Each game's record is ``record_bytes`` of JSON (a real one is about
    9,000), or ``{}``. Rows are written in one transaction, as its writers stored them."""
    from arena.store.schema import MIGRATIONS

    data.mkdir(parents=True)
    (data / "bots").mkdir()
    db = sqlite3.connect(data / "arena.db", isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("BEGIN")
    for step in MIGRATIONS[:8]:
        assert isinstance(step, str)
        for statement in (s.strip() for s in step.split(";")):
            if statement:
                db.execute(statement)
    for i in range(count):
        db.execute("INSERT INTO bots (id, name, created_at) VALUES (?, ?, '')", (i + 1, f"b{i}"))
        db.execute(
            "INSERT INTO bot_versions (id, bot_id, version, directory, command, runtime,"
            " created_at, mu, sigma, games) VALUES (?, ?, 'v', 'd', '[]', 'python', '', ?, ?, ?)",
            (i + 1, i + 1, rng.gauss(25, 6), rng.uniform(0.8, 3), rng.randrange(10**5)),
        )  # fmt: skip
    db.execute(
        "INSERT INTO tournaments (id, name, format, status, config, created_at, secret)"
        " VALUES (1, 'ladder', 'ladder', 'running', '{}', '', x'00')"
    )
    db.execute("INSERT INTO ladders (tournament_id, settings, updated_at) VALUES (1, '{}', '')")
    record = json.dumps({"pad": "x" * max(0, record_bytes - 11)}) if record_bytes else "{}"
    for number in range(1, matches + 1):
        a, b = rng.sample(range(1, count + 1), 2)
        done = finished or number < matches
        match_id = db.execute(
            "INSERT INTO matches (tournament_id, round, first_id, second_id, games, seed,"
            " finished_at) VALUES (1, ?, ?, ?, ?, 0, ?)",
            (number, a, b, games, "x" if done else None),
        ).lastrowid  # fmt: skip
        db.executemany(
            "INSERT INTO games (match_id, game_index, seat0_id, seat1_id, winner_seat, reason,"
            " status0, status1, actions, time0_ms, time1_ms, record, finished_at)"
            " VALUES (?, ?, ?, ?, ?, 'points', 'ok', 'ok', 0, 0, 0, ?, ?)",
            [(match_id, i, (a, b)[i % 2], (b, a)[i % 2], rng.choice((0, 1, None)), record,
              f"2026-01-01T00:00:{number:09d}") for i in range(games if done else games // 2)],
        )  # fmt: skip
    db.execute("PRAGMA user_version = 8")
    db.execute("COMMIT")
    db.close()


def bench_read(count: int, rng: random.Random, matches: int | None = None, games: int = 0) -> None:
    """Read ``count`` entrants of a ladder of ``matches`` matches (10 per entrant by default),
    each with ``games`` stored games, as the pages and the runner do."""
    from arena.store import Store, ladder_entrants, ladder_history, ladder_ratings

    matches = 10 * count if matches is None else matches
    with tempfile.TemporaryDirectory(prefix="kahuna-bench-") as work:
        build_v8(Path(work) / "data", count, matches, games, rng)
        started = time.perf_counter()
        store = Store.open(Path(work) / "data")  # to v9: the totals, from the history
        print(f"migrating to v9: {time.perf_counter() - started:.2f} s")
        with store:
            reads = (
                ("ladder_entrants (the pages)", ladder_entrants),
                ("ladder_history (the runner, once a run)", ladder_history),
                ("ladder_ratings (the runner, each pick)", lambda s, _t, recent: ladder_ratings(s)),
            )
            for label, read in reads:
                times_ms = []
                for _ in range(5):
                    started = time.perf_counter()
                    read(store, 1, recent=1)
                    times_ms.append(1000 * (time.perf_counter() - started))
                print(
                    f"reading {count} entrants, {matches} ladder matches, {games * matches} games,"
                    f" {label}: median {statistics.median(times_ms):.2f} ms of 5"
                )


def bench_view(
    count: int,
    matches: int,
    games: int,
    rounds: int,
    repeat: int,
    before: Path,
    seed: int,
    record_bytes: int = 0,
) -> int:
    """The /ladder page, /api/ladder and GetLadder on a ladder of ``matches`` matches, this
    checkout against ``before``'s, alternating, each in a fresh process on its own copy of
    one v8 store (``before`` reads it as it is; this checkout migrates its copy first)."""
    with tempfile.TemporaryDirectory(prefix="kahuna-bench-") as work:
        root = Path(work)
        started = time.perf_counter()
        build_v8(
            root / "v8", count, matches, games, random.Random(seed), finished=False,
            record_bytes=record_bytes,
        )  # fmt: skip
        size = (root / "v8" / "arena.db").stat().st_size
        print(
            f"built a v8 store: {count} entrants, {matches} ladder matches,"
            f" {matches * games - games // 2} games in {time.perf_counter() - started:.1f} s"
            f" ({size / 2**20:.0f} MiB)"
        )
        for name in ("before", "after"):
            shutil.copytree(root / "v8", root / name)
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", "import sys; from arena.store import Store;"
             " Store.open(sys.argv[1]).close()", str(root / "after")],
            check=True, env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
        load = " ".join(f"{v:.1f}" for v in os.getloadavg())
        print(
            f"migrating the copy to v9 (a fresh process, this checkout):"
            f" {time.perf_counter() - started:.2f} s; load {load}"
        )
        figures: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        for number in range(rounds):
            for name in ("before", "after"):
                env = {**os.environ, "PYTHONPATH": str(before if name == "before" else REPO)}
                done = subprocess.run(
                    [sys.executable, __file__, "_view", "--data", str(root / name),
                     "--repeat", str(repeat)],
                    capture_output=True, text=True, check=True, env=env,
                )  # fmt: skip
                result = json.loads(done.stdout.strip().splitlines()[-1])
                figures[name].append(result)
                load = " ".join(f"{v:.1f}" for v in os.getloadavg())
                shown = ", ".join(
                    f"{what} {result[what]['median_ms']:.1f} ms"
                    f" (first {result[what]['first_ms']:.1f}, max {result[what]['max_ms']:.1f})"
                    for what in VIEWS
                )
                print(f"round {number + 1}, {name}: {shown}; load {load}")
        for what in VIEWS:
            medians = {
                name: statistics.median(r[what]["median_ms"] for r in runs)
                for name, runs in figures.items()
            }
            same = {r[what]["sha256"] for runs in figures.values() for r in runs}
            if what in CHANGED:  # each side's own answers must agree run to run
                steady = all(
                    len({r[what]["sha256"] for r in runs}) == 1 for runs in figures.values()
                )
                answers = f"each side's answers {'identical' if steady else 'DIFFER'}"
                answers += " (a ladder's standings now as /ladder ranks them)"
                same_order = {
                    n: all(r["ranked_as_ladder"] for r in runs) for n, runs in figures.items()
                }
                answers += (
                    f"; ranked as /api/ladder: before {same_order['before']},"
                    f" after {same_order['after']}"
                )
            else:
                answers = f"answers {'identical' if len(same) == 1 else 'DIFFER'}"
            print(
                f"{what}: before {medians['before']:.1f} ms, after {medians['after']:.1f} ms"
                f" (median of {rounds} runs' medians of {repeat}); {answers}"
            )
    return 0


VIEWS = (
    "GET /ladder", "GET /api/ladder", "GetLadder", "GET /api/tournaments/1", "WatchTournament",
)  # fmt: skip
# Views whose answer for a ladder changed (its standings as /ladder ranks them, from the
# stored ratings, not scored from its games): both sides' answers differ by design.
CHANGED = ("GET /api/tournaments/1", "WatchTournament")


def run_view(data: Path, repeat: int) -> int:
    """Serve ``data`` (the web pages and the API, 127.0.0.1, port 0) and time each of VIEWS
    ``repeat`` times in turn, after one untimed round; prints JSON."""
    import hashlib
    import urllib.request

    import grpc

    from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
    from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
    from arena.server.app import create_server
    from arena.store import Store, ensure_admin_token
    from arena.web.server import create_web_server

    with Store.open(data) as store:
        token = ensure_admin_token(store)
        api, api_port = create_server("127.0.0.1:0", store=store)
        api.start()
        web, web_port = create_web_server(store)
        channel = grpc.insecure_channel(f"127.0.0.1:{api_port}")
        stub = pb_grpc.ArenaServiceStub(channel)
        auth = (("authorization", f"Bearer {token}"),)

        def fetch(what: str) -> bytes:
            if what == "GetLadder":
                answer = stub.GetLadder(pb.GetLadderRequest(), metadata=auth, timeout=60)
                return bytes(answer.SerializeToString(deterministic=True))
            if what == "WatchTournament":  # its first update: what each game's event costs
                stream = stub.WatchTournament(
                    pb.WatchTournamentRequest(name="ladder"), metadata=auth, timeout=120
                )
                update = next(iter(stream))
                stream.cancel()  # type: ignore[no-untyped-call]
                return bytes(update.SerializeToString(deterministic=True))
            path = what.split()[1]
            with urllib.request.urlopen(f"http://127.0.0.1:{web_port}{path}", timeout=120) as r:
                return bytes(r.read())

        def fresh_web() -> int:
            """A new web server (so a new page cache): the time of a first answer, whatever a
            checkout caches (a live ladder stores a game every fraction of a second)."""
            nonlocal web
            web.stop()
            web, port = create_web_server(store)
            return port

        times: dict[str, list[float]] = {what: [] for what in VIEWS}
        bodies: dict[str, set[str]] = {what: set() for what in VIEWS}
        last: dict[str, bytes] = {}
        try:
            for turn in range(repeat + 1):
                for what in VIEWS:
                    if what.startswith("GET /api/tournaments/"):
                        web_port = fresh_web()
                    started = time.perf_counter()
                    body = fetch(what)
                    elapsed = 1000 * (time.perf_counter() - started)
                    bodies[what].add(hashlib.sha256(body).hexdigest())
                    last[what] = body
                    if turn:
                        times[what].append(elapsed)
                    else:
                        times[what + " first"] = [elapsed]
        finally:
            channel.close()
            web.stop()
            api.stop(grace=None)
    result: dict[str, Any] = {
        what: {
            "median_ms": statistics.median(times[what]),
            "max_ms": max(times[what]),
            "first_ms": times[what + " first"][0],
            "sha256": "/".join(sorted(bodies[what])),
        }
        for what in VIEWS
    }
    ranked = [
        [row["bot"] for row in json.loads(last[what])["standings"]]
        for what in ("GET /api/ladder", "GET /api/tournaments/1")
    ]
    result["ranked_as_ladder"] = ranked[0] == ranked[1]  # the tournament's rows, in order
    print(json.dumps(result))
    return 0


class _TimedExecutor:
    """The ladder's executor, timing the runner's turnaround: from the report that ends a
    match to the next match handed to the executor (a worker is idle for that long when
    nothing is queued for it)."""

    def __init__(self, inner: MatchExecutor) -> None:
        self.inner = inner
        self.open: dict[int, int] = {}  # match id: its jobs without a JobDone yet
        self.ended_at: float | None = None  # when the last match ended, if none was submitted since
        self.turnarounds_ms: list[float] = []

    def submit(self, jobs: Sequence[MatchJob]) -> None:
        if self.ended_at is not None:
            self.turnarounds_ms.append(1000 * (time.perf_counter() - self.ended_at))
            self.ended_at = None
        for job in jobs:
            self.open[job.match_id] = self.open.get(job.match_id, 0) + 1
        self.inner.submit(jobs)

    def next_event(self, timeout_s: float) -> JobEvent | None:
        event = self.inner.next_event(timeout_s)
        if isinstance(event, JobDone):
            self.open[event.match_id] -= 1
            if not self.open[event.match_id]:
                del self.open[event.match_id]
                if self.ended_at is None:
                    self.ended_at = time.perf_counter()
        return event

    def cancel(self) -> None:
        self.inner.cancel()

    def close(self) -> None:
        self.inner.close()


def run_ladder(data: Path, name: str, workers: int, games: int, per_match: int) -> int:
    """One ladder until its ``games``th stored game, timed in this (fresh) process; prints JSON."""
    from arena.store import Store, TournamentConfig, create_ladder
    from arena.tournament.execution.local_executor import LocalProcessExecutor
    from arena.tournament.orchestration.ladder import LadderRunner

    with Store.open(data) as store:
        ladder = create_ladder(store, name, TournamentConfig(games_per_match=per_match), {})
        executor = _TimedExecutor(LocalProcessExecutor(workers, pin_cpus=True))
        runner = LadderRunner(store, ladder, concurrency=workers, executor=executor)
        stored = 0
        ended: list[float] = []

        def on_game(game_id: int) -> None:
            nonlocal stored
            stored += 1
            if stored == games:
                ended.append(time.perf_counter())
                runner.stop()

        runner.on_game = on_game
        busy0, total0 = _busy_cores()
        cpu0 = time.process_time()
        started = time.perf_counter()
        summary = runner.run()
        cpu_s = time.process_time() - cpu0
        busy1, total1 = _busy_cores()
    elapsed_s = (ended[0] if ended else time.perf_counter()) - started
    busy = (busy1 - busy0) / (total1 - total0)
    failed = {str(k): v for k, v in summary.failed_matches.items()}
    turnarounds = executor.turnarounds_ms or [0.0]
    print(json.dumps({
        "games": stored, "seconds": elapsed_s, "busy": busy, "runner_cpu_s": cpu_s,
        "turnaround_ms": [statistics.median(turnarounds), max(turnarounds), sum(turnarounds)],
        "failed": failed,
    }))  # fmt: skip
    return 0


def _mix(data: Path, name: str) -> str:
    """What a run played: games per pairing kind (r random, g greedy), actions and the
    bots' thinking per game, and the matches' first game index on (a ladder stopped at its
    Nth game may leave a match half played)."""
    db = sqlite3.connect(data / "arena.db")
    try:
        rows = db.execute(
            "SELECT b0.name, b1.name, g.actions, g.time0_ms + g.time1_ms FROM games g"
            " JOIN matches m ON m.id = g.match_id JOIN tournaments t ON t.id = m.tournament_id"
            " JOIN bot_versions v0 ON v0.id = g.seat0_id JOIN bots b0 ON b0.id = v0.bot_id"
            " JOIN bot_versions v1 ON v1.id = g.seat1_id JOIN bots b1 ON b1.id = v1.bot_id"
            " WHERE t.name = ?",
            (name,),
        ).fetchall()  # fmt: skip
    finally:
        db.close()
    kinds: dict[str, int] = {}
    for first, second, _, _ in rows:
        kind = "".join(sorted(first[0] + second[0]))
        kinds[kind] = kinds.get(kind, 0) + 1
    shares = " ".join(f"{k} {100 * v / len(rows):.0f}%" for k, v in sorted(kinds.items()))
    actions = statistics.mean(r[2] for r in rows)
    thinking = statistics.mean(r[3] for r in rows)
    return f"pairings {shares}; {actions:.0f} actions and {thinking:.0f} ms thinking per game"


def _timed_ladder(
    data: Path, name: str, workers: int, games: int, per_match: int, arena: Path | None = None
) -> dict[str, Any]:
    """A ladder run in a fresh process; with ``arena``, that checkout's ``arena`` package."""
    command = [
        sys.executable, __file__, "_ladder", "--data", str(data), "--name", name,
        "--concurrency", str(workers), "--games", str(games), "--games-per-match", str(per_match),
    ]  # fmt: skip
    env = None if arena is None else {**os.environ, "PYTHONPATH": str(arena)}
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    for match, error in result.pop("failed").items():
        print(f"  match {match} failed: {error}")
    return result


def bench_games(
    bots: int, concurrency: int, pairs: int, per_match: int, games: int | None,
    before: Path | None = None, round_robin: bool = True,
) -> int:  # fmt: skip
    from arena.referee import load_bot
    from arena.store import Store, add_bot_version

    field = _field(bots)
    target = games or bots * (bots - 1) // 2 * per_match
    with tempfile.TemporaryDirectory(prefix="kahuna-bench-") as work:
        root = Path(work)
        data = root / "data"
        with Store.open(data) as store:
            for name, sample in field.items():
                add_bot_version(store, load_bot(_copy_bot(root, name, sample)))
        kinds = ("round robin", "ladder") if before is None else ("round robin", "before", "ladder")
        if not round_robin:  # before against after only: shorter runs, more of them
            kinds = ("before", "ladder")
        rates: dict[str, list[float]] = {kind: [] for kind in kinds}
        for pair in range(pairs):
            for kind in kinds:
                if kind == "ladder":
                    result = _timed_ladder(data, f"ladder{pair}", concurrency, target, per_match)
                elif kind == "before":
                    result = _timed_ladder(
                        data, f"before{pair}", concurrency, target, per_match, before
                    )
                else:
                    result = _timed_round_robin(
                        data, f"rr{pair}", concurrency, True, per_match, pair
                    )
                rate = result["games"] / result["seconds"]
                rates[kind].append(rate)
                load = " ".join(f"{v:.1f}" for v in os.getloadavg())
                print(
                    f"{kind}, {bots} bots, concurrency {concurrency}: {result['games']} games in"
                    f" {result['seconds']:.1f} s = {rate:.2f} games/s,"
                    f" machine busy {100 * result['busy']:.0f}%,"
                    f" runner CPU {result['runner_cpu_s']:.1f} s; load {load}"
                )
                name = {"ladder": "ladder", "before": "before"}.get(kind, "rr") + str(pair)
                print(f"  {_mix(data, name)}")
                if "turnaround_ms" in result:
                    median, worst, total = result["turnaround_ms"]
                    print(
                        f"  match ended -> next match submitted: median {median:.1f} ms,"
                        f" max {worst:.0f} ms, {total / 1000:.1f} s in all"
                    )
    if not round_robin:
        shares = [100 * a / b for a, b in zip(rates["ladder"], rates["before"], strict=True)]
        print(
            f"ladder {statistics.mean(rates['ladder']):.2f} games/s against"
            f" {statistics.mean(rates['before']):.2f} before; per pair:"
            f" {', '.join(f'{share:.0f}%' for share in shares)},"
            f" median {statistics.median(shares):.0f}%"
        )
        return 0
    robin = statistics.mean(rates["round robin"])
    for kind in kinds[1:]:
        rate = statistics.mean(rates[kind])
        shares = [100 * a / b for a, b in zip(rates[kind], rates["round robin"], strict=True)]
        label = "ladder" if kind == "ladder" else f"ladder before ({before})"
        print(
            f"{label} {rate:.2f} games/s = {100 * rate / robin:.0f}% of the round robin's"
            f" {robin:.2f} (target >= 90%); per pair:"
            f" {', '.join(f'{share:.0f}%' for share in shares)}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    picking = commands.add_parser("pick")
    picking.add_argument("--entrants", type=int, default=10_000)
    picking.add_argument("--picks", type=int, default=50)
    picking.add_argument("--seed", type=int, default=1)
    reading = commands.add_parser("reads")
    reading.add_argument("--entrants", type=int, default=20)
    reading.add_argument("--matches", type=int, default=100_000)
    reading.add_argument("--games-per-match", type=int, default=2)
    reading.add_argument("--seed", type=int, default=1)
    viewing = commands.add_parser("view")
    viewing.add_argument("--entrants", type=int, default=20)
    viewing.add_argument("--matches", type=int, default=100_000)
    viewing.add_argument("--games-per-match", type=int, default=2)
    viewing.add_argument("--rounds", type=int, default=3)
    viewing.add_argument("--repeat", type=int, default=5)
    viewing.add_argument("--seed", type=int, default=1)
    viewing.add_argument(
        "--record-bytes", type=int, default=0,
        help="each game's record, in bytes of JSON (a real one: about 9000; default {})",
    )  # fmt: skip
    viewing.add_argument("--before", type=Path, metavar="CHECKOUT", required=True)
    view_inner = commands.add_parser("_view")
    view_inner.add_argument("--data", type=Path, required=True)
    view_inner.add_argument("--repeat", type=int, required=True)
    games = commands.add_parser("games")
    games.add_argument("--bots", type=int, default=20)
    games.add_argument("--concurrency", type=int, default=2)
    games.add_argument("--pairs", type=int, default=2)
    games.add_argument("--games-per-match", type=int, default=2)
    games.add_argument(
        "--games", type=int, help="ladder games per run (default: the round robin's)"
    )
    games.add_argument(
        "--before", type=Path, metavar="CHECKOUT",
        help="also run the ladder with CHECKOUT's arena package, alternating (before/after)",
    )  # fmt: skip
    games.add_argument(
        "--no-round-robin", dest="round_robin", action="store_false",
        help="with --before: only the two ladders (set --games: the default is a round robin's)",
    )  # fmt: skip
    inner = commands.add_parser("_ladder")
    inner.add_argument("--data", type=Path, required=True)
    inner.add_argument("--name", required=True)
    inner.add_argument("--concurrency", type=int, required=True)
    inner.add_argument("--games", type=int, required=True)
    inner.add_argument("--games-per-match", type=int, required=True)
    args = parser.parse_args(argv)
    if args.command == "pick":
        return bench_pick(args.entrants, args.picks, args.seed)
    if args.command == "reads":
        bench_read(args.entrants, random.Random(args.seed), args.matches, args.games_per_match)
        return 0
    if args.command == "view":
        return bench_view(
            args.entrants, args.matches, args.games_per_match, args.rounds, args.repeat,
            args.before, args.seed, args.record_bytes,
        )  # fmt: skip
    if args.command == "_view":
        return run_view(args.data, args.repeat)
    if args.command == "games":
        return bench_games(
            args.bots, args.concurrency, args.pairs, args.games_per_match, args.games,
            args.before, args.round_robin,
        )  # fmt: skip
    return run_ladder(args.data, args.name, args.concurrency, args.games, args.games_per_match)


if __name__ == "__main__":
    sys.exit(main())
