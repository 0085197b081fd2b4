"""The transport's floor for a referee: what serving two bots costs with no referee logic.

    python3 benchmarks/transport_floor.py [--games N] [--rounds N] [--only NAME ...]
                                          [--threads] [--extra LABEL SHAPE VAR=VALUE]

A referee serves two bot streams and the turn moves between them. This script
replays the ActionRequest bytes of a real referee match (both seats, in the
order the referee wrote them, captured with its wire tap) to the same two
sandboxed test bots that ``benchmarks/referee.py`` uses, through each
candidate transport shape, with no judging at all. Each candidate runs in a
fresh process (gRPC reads its environment once, at import) that serves both
bots; the figures are that process's wall and CPU time per decision, from the
first request written to the last reply read. Candidates:

``raw-sync``
    ``referee.py``'s raw ping-pong: one stream (seat 0's requests only) on a
    synchronous gRPC server, the reference every ratio is taken to.
``raw-aio``
    the same one stream on grpc.aio, one coroutine writing each request and
    reading its reply (``referee.py --raw-aio``).
``raw-sync-after``
    ``raw-sync`` in a process that has just played a two-game referee match,
    where ``referee.py`` measures its raw figure.
``sync-2``
    both streams on one synchronous server; while the turn stays with a bot
    the thread that read its reply writes its next request; when the turn
    changes it hands over to the other stream's thread (a queue).
``sync-2-game``
    the same server with the game in a thread of its own: every request goes
    to its stream's thread through a queue and every reply comes back through
    another (a referee whose game does not run in the streams' threads).
``aio-2``
    both streams on grpc.aio, the shape of ``arena.referee.endpoint``: per
    stream a reader task that settles each reply at once in the loop thread
    (queueing the next request) and a writer, the handler, that parks on a
    bare future until its outbox has a frame.
``aio-2-thread``
    ``aio-2`` with its event loop in a thread of its own while the main thread
    waits for it, as in the referee.
``aio-2-options``
    ``aio-2`` with the referee's server settings: at most 4 calls, 2 streams
    per connection, 8 MiB messages.
``aio-2-direct``
    grpc.aio with one coroutine per stream that writes its bot's request and
    reads the reply itself, and wakes the other stream's coroutine when the
    turn changes (``sync-2``'s shape on the event loop).
``aio-2-listener`` / ``sync-2-listener``
    ``aio-2`` / ``sync-2`` with gRPC's ``event_engine_listener`` experiment on
    (grpcio's default; arena processes switch it off, ``arena._grpc_env``).
``aio-2-poll``
    ``aio-2`` with ``GRPC_POLL_STRATEGY=poll`` instead of ``epoll1``.

``aio-2-turn``
    ``aio-2`` spinning 45 us (``FLOOR_TURN_US``) between each reply and the next
    request, as long as the referee's turn takes in a warm loop
    (``referee_turn.py``): does work between a read and the next write make
    gRPC's own calls dearer?

``rust-1``
    ``raw-sync``'s one stream on a compiled transport (``benchmarks/rust_transport``,
    built by its ``build.sh``: tonic and h2 on a tokio runtime of one thread, loaded
    into this process with pyo3): every reply goes to a Python callback, with the GIL
    taken, that gives the next request's bytes; the main thread waits without the GIL.
``rust-2``
    both streams on the compiled transport, the replay of ``aio-2``: the callback gives
    the next request to whichever seat is to move.
``rust-2-turn``
    ``rust-2`` spinning ``FLOOR_TURN_US`` (45 us) in the callback, as ``aio-2-turn``;
    with ``FLOOR_WORK`` (``_fixed_work``) a fixed piece of Python work instead, timed
    beside the bots and warm. ``FLOOR_PIN`` set, every rust candidate has the transport's
    thread on CPU 0 and the bots on CPU 1; so has ``referee_probe`` (every thread of the
    referee's process on CPU 0).
``rust-2-referee``
    the compiled transport with the referee's own turn as the callback: the turn loop
    settles each reply (``TurnLoop._settle_echo``: the judgement of its bytes, the
    decision, the rules, the clock) and the game writes the next request through a
    stand-in endpoint; the captured match's deals played afresh, the heap frozen per
    game. Left out: the deadline timer, the freezer, the work between games. With
    ``FLOOR_TIME_TURN`` set the part of the transport thread's CPU in the turn
    (``_settle_echo``) is ``turn (of rust-transport)``; with ``FLOOR_TIME_PARTS`` set
    each part of the turn is timed as well (``_turn_parts``, games 2.. only); with
    ``FLOOR_CUT`` some parts are made free (``_cut_from_turn``).

``referee`` / ``referee-ponder``
    for scale, the referee itself in the same rounds: ``referee.py``'s figure
    (a match of the same games and seed, games 2.. timed, the freezer on / off).
``probe`` / ``probe-PIECE`` / ``probe-turn``
    the referee in this script's serving process (freezer off, games 2.. timed,
    its loop thread ``referee-grpc``; ``probe-turn`` also times its turn in
    that thread, ``FLOOR_TIME_TURN``), whole or with one piece taken out
    (``PROBES``: its server settings, the deadline timer, the garbage
    collector, the clock at the wire, the observation's encoding; or with the
    freezer on): which of the referee's pieces cost what beside ``aio-2``.

``--extra LABEL SHAPE VAR=VALUE`` adds a candidate: one of the shapes above
(``raw_sync``, ``raw_aio``, ``raw_sync_after_referee``, ``sync_two``,
``sync_game_thread``, ``aio_two``, ``aio_two_thread``, ``aio_two_options``,
``aio_direct``, ``referee_probe``, ``rust_one``, ``rust_two``, ``rust_referee``) with
one more environment variable for its process, or several in one argument
(``"FLOOR_PIN=1 FLOOR_WORK=observe"``; ``FLOOR_PROBE=timer,gc`` takes
several pieces out; ``FLOOR_TIME_TURN=1`` also times the referee's turn in its loop
thread).

Rounds alternate the candidates, the order rotated each round; printed are the
medians over rounds and each candidate's ratio to ``raw-sync``: the ratio of
the medians and the median of the per-round ratios; with ``--threads`` also
where each transport's CPU goes, per thread (``referee.py --threads`` gives the
referee's).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import importlib.machinery
import importlib.util
import itertools
import json
import os
import queue
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

import grpc
from _alternate import load_text, rotated, spread
from referee import (
    SERVICE,
    _binds,
    _env,
    _referee_in,
    _thread_cpu_s,
    make_testbot,
    referee_per_decision,
)  # fmt: skip

from arena.logs import configure
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee import (
    BotSpec,
    GameReport,
    MatchConfig,
    TimeControl,
    endpoint,
    load_bot,
    run_match,
)
from arena.sandbox import BotProcess, SandboxLimits, launch_bot

Sequence = list[tuple[int, bytes]]
"""The ActionRequests of a match, in the order written: (seat, bytes)."""

MATCH_OVER = referee_pb2.PlayResponse(match_over=referee_pb2.MatchOver()).SerializeToString()
TOKENS = ("seat-0", "seat-1")
WAIT_S = 120.0
HELLO_WAIT_S = 30.0
ROOT = Path(__file__).resolve().parent.parent


REFEREE, REFEREE_PONDER = "referee", "referee_ponder"


@dataclass(frozen=True)
class Candidate:
    name: str
    serve: str  # the function of ``SERVERS`` that serves it
    env: tuple[tuple[str, str], ...] = ()


PROBES = ("options", "timer", "gc", "on-wire", "observation", "freezer")
"""What ``referee_probe`` can take out of the referee (``FLOOR_PROBE``, comma-separated):

``options``
    the endpoints' server settings (``maximum_concurrent_rpcs``, streams per
    connection, message size): a plain ``grpc.aio.server``.
``timer``
    the deadline timer the game's task arms per request (``TurnLoop._arm``).
``gc``
    Python's cyclic garbage collector (off for the match).
``on-wire``
    the clock's restart as the request goes on the wire (``Clock.sent``).
``observation``
    the request's observation (an empty one: the test bot never reads it), to
    tell the turn's encoding from the rest.
``freezer``
    nothing taken out: the freezer on (the other probes run with ``ponder``).
"""


CANDIDATES = (
    Candidate("raw-sync", "raw_sync"),
    Candidate("raw-aio", "raw_aio"),
    Candidate("raw-sync-after", "raw_sync_after_referee"),
    Candidate("sync-2", "sync_two"),
    Candidate("sync-2-game", "sync_game_thread"),
    Candidate("aio-2", "aio_two"),
    Candidate("aio-2-thread", "aio_two_thread"),
    Candidate("aio-2-options", "aio_two_options"),
    Candidate("aio-2-direct", "aio_direct"),
    Candidate("aio-2-listener", "aio_two", (("GRPC_EXPERIMENTS", "event_engine_listener"),)),
    Candidate("sync-2-listener", "sync_two", (("GRPC_EXPERIMENTS", "event_engine_listener"),)),
    Candidate("aio-2-poll", "aio_two", (("GRPC_POLL_STRATEGY", "poll"),)),
    Candidate("aio-2-turn", "aio_two", (("FLOOR_TURN_US", "45"),)),
    Candidate("rust-1", "rust_one"),
    Candidate("rust-2", "rust_two"),
    Candidate("rust-2-turn", "rust_two", (("FLOOR_TURN_US", "45"),)),
    Candidate("rust-2-referee", "rust_referee"),
    Candidate("probe", "referee_probe"),
    Candidate("probe-turn", "referee_probe", (("FLOOR_TIME_TURN", "1"),)),
    *(Candidate(f"probe-{probe}", "referee_probe", (("FLOOR_PROBE", probe),)) for probe in PROBES),
    Candidate("referee", REFEREE),
    Candidate("referee-ponder", REFEREE_PONDER),
)


# ---------------------------------------------------------------- the match to replay


def capture(bots: tuple[BotSpec, BotSpec], games: int) -> Sequence:
    """Both seats' ActionRequests of a referee match of ``games`` games, in order."""
    written: Sequence = []

    def tap(slot: int, raw: bytes) -> None:
        written.append((slot, raw))  # decoded after the match: the tap must cost nothing

    config = MatchConfig(games=games, seed=1, time_control=TimeControl(5000, 30000), ponder=True)
    run_match(config, *bots, wire_tap=tap)
    return [
        (slot, raw) for slot, raw in written
        if referee_pb2.PlayResponse.FromString(raw).WhichOneof("kind") == "action_request"
    ]  # fmt: skip


def turn_changes(sequence: Sequence) -> int:
    """How often the seat to move changes along ``sequence`` (turns - 1)."""
    return sum(1 for (a, _), (b, _) in itertools.pairwise(sequence) if a != b)


# ---------------------------------------------------------------- the serving process


class Clock:
    """Wall and this process's CPU from the first request written to the last reply read,
    in all and per thread (by name; ``referee._thread_cpu_s``)."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0
        self.threads: dict[str, float] = {}
        self.done = threading.Event()

    def start(self) -> None:
        self.threads = _thread_cpu_s()
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def stop(self) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        before, self.threads = self.threads, {}
        for name, cpu_s in _thread_cpu_s().items():
            family = _family(name)
            self.threads[family] = self.threads.get(family, 0.0) + cpu_s - before.get(name, 0.0)
        self.done.set()


def _family(thread: str) -> str:
    """A thread's name without its serial numbers (the pool's workers are one family)."""
    return re.sub(r"[-_]?[0-9]+", "", thread)


def _seat(hello: bytes) -> int:
    """The seat a stream plays, from its Hello's token."""
    return TOKENS.index(referee_pb2.PlayRequest.FromString(hello).hello.token)


def _sync_server(work: Path, handler: grpc.RpcMethodHandler[bytes, bytes],
                 seats: int) -> tuple[grpc.Server, list[Path]]:  # fmt: skip
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=4),
        handlers=[grpc.method_handlers_generic_handler(SERVICE, {"Play": handler})],
    )
    paths = [work / f"floor-{seat}.sock" for seat in range(seats)]
    for path in paths:
        server.add_insecure_port(f"unix://{path}")
    return server, paths


def _launch(bots: tuple[BotSpec, BotSpec], paths: list[Path], work: Path) -> list[BotProcess]:
    return [
        launch_bot(
            bot_dir=spec.directory, command=spec.command, runtime=spec.runtime,
            env=_env(TOKENS[seat]), socket_path=path, limits=SandboxLimits(),
            extra_ro_binds=_binds(), stderr_path=work / f"floor-{seat}.stderr",
        )
        for seat, (spec, path) in enumerate(zip(bots, paths, strict=False))
    ]  # fmt: skip


def _wait(processes: list[BotProcess]) -> None:
    try:
        for process in processes:
            process.wait(WAIT_S)
    finally:
        for process in processes:
            process.kill()


def raw_sync(bots: tuple[BotSpec, BotSpec], sequence: Sequence, work: Path, clock: Clock) -> int:
    """One stream, seat 0's requests, on a synchronous server (``referee.py``'s raw)."""
    requests = [raw for seat, raw in sequence if seat == 0]

    def play(request_iterator: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
        next(request_iterator)  # Hello
        clock.start()
        for raw in requests:
            yield raw
            next(request_iterator)
        clock.stop()
        yield MATCH_OVER

    server, paths = _sync_server(work, grpc.stream_stream_rpc_method_handler(play), 1)
    server.start()
    try:
        _wait(_launch(bots, paths, work))
    finally:
        server.stop(None)
    return len(requests)


def raw_aio(bots: tuple[BotSpec, BotSpec], sequence: Sequence, work: Path, clock: Clock) -> int:
    """One stream, seat 0's requests, on grpc.aio (``referee.py --raw-aio``)."""
    requests = [raw for seat, raw in sequence if seat == 0]

    async def play(_: object, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        await context.read()  # Hello
        clock.start()
        for raw in requests:
            await context.write(raw)
            await context.read()
        clock.stop()
        await context.write(MATCH_OVER)

    async def serve() -> None:
        handler = grpc.stream_stream_rpc_method_handler(play)
        server = grpc.aio.server(
            handlers=[grpc.method_handlers_generic_handler(SERVICE, {"Play": handler})]
        )
        path = work / "floor-0.sock"
        server.add_insecure_port(f"unix://{path}")
        await server.start()
        try:
            await asyncio.to_thread(_wait, _launch(bots, [path], work))
        finally:
            await server.stop(None)

    asyncio.run(serve())
    return len(requests)


def raw_sync_after_referee(
    bots: tuple[BotSpec, BotSpec], sequence: Sequence, work: Path, clock: Clock
) -> int:
    """``raw_sync`` in a process that has just played a referee match (as ``referee.py``
    measures its raw figure: the referee's endpoints' loop and gRPC's poller still live)."""
    referee_per_decision(bots, 2, ponder=True)
    return raw_sync(bots, sequence, work, clock)


class _SyncTurns:
    """Whose turn it is, shared by the two streams' threads of ``sync_two``."""

    def __init__(self, sequence: Sequence) -> None:
        self.sequence = sequence
        self.index = 0
        self.go: tuple[queue.SimpleQueue[bool], ...] = (queue.SimpleQueue(), queue.SimpleQueue())
        self.ready: queue.SimpleQueue[int] = queue.SimpleQueue()


def sync_two(bots: tuple[BotSpec, BotSpec], sequence: Sequence, work: Path, clock: Clock) -> int:
    """Two streams on one synchronous server; the reading thread writes the next request
    while the turn stays, the other stream's thread is woken when it changes."""
    turns = _SyncTurns(sequence)

    def play(request_iterator: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
        seat = _seat(next(request_iterator))
        turns.ready.put(seat)
        while turns.go[seat].get():
            while (index := turns.index) < len(sequence):
                to_move, raw = sequence[index]
                if to_move != seat:
                    turns.go[to_move].put(True)
                    break
                yield raw
                next(request_iterator)
                turns.index = index + 1
            else:
                clock.stop()
                turns.go[1 - seat].put(False)
                break
        yield MATCH_OVER

    server, paths = _sync_server(work, grpc.stream_stream_rpc_method_handler(play), 2)
    server.start()
    try:
        processes = _launch(bots, paths, work)
        turns.ready.get(timeout=HELLO_WAIT_S)
        turns.ready.get(timeout=HELLO_WAIT_S)
        clock.start()
        turns.go[sequence[0][0]].put(True)
        _wait(processes)
    finally:
        server.stop(None)
    return len(sequence)


def sync_game_thread(
    bots: tuple[BotSpec, BotSpec], sequence: Sequence, work: Path, clock: Clock
) -> int:
    """Two streams on one synchronous server, the game in this (the main) thread: each
    request goes to its stream's thread through a queue, each reply comes back in one."""
    outboxes: tuple[queue.SimpleQueue[bytes | None], ...] = (
        queue.SimpleQueue(), queue.SimpleQueue()
    )  # fmt: skip
    replies: queue.SimpleQueue[int] = queue.SimpleQueue()

    def play(request_iterator: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
        seat = _seat(next(request_iterator))
        replies.put(seat)
        while (raw := outboxes[seat].get()) is not None:
            yield raw
            next(request_iterator)
            replies.put(seat)
        yield MATCH_OVER

    server, paths = _sync_server(work, grpc.stream_stream_rpc_method_handler(play), 2)
    server.start()
    try:
        processes = _launch(bots, paths, work)
        replies.get(timeout=HELLO_WAIT_S)
        replies.get(timeout=HELLO_WAIT_S)
        clock.start()
        for seat, raw in sequence:
            outboxes[seat].put(raw)
            replies.get(timeout=WAIT_S)
        clock.stop()
        for outbox in outboxes:
            outbox.put(None)
        _wait(processes)
    finally:
        server.stop(None)
    return len(sequence)


TURN_NS = int(float(os.environ.get("FLOOR_TURN_US", "0")) * 1000)
"""The referee's turn stood in for: ``aio_two`` spins this long between a reply and the
next request (``aio-2-turn``)."""


def _spin(duration_ns: int) -> None:
    end = time.perf_counter_ns() + duration_ns
    while time.perf_counter_ns() < end:
        pass


class _Outbox:
    """A stream's frames to write, in the loop thread; the writer parks on a bare future
    (as ``arena.referee.endpoint``'s outbox does)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.items: collections.deque[bytes | None] = collections.deque()
        self.loop = loop
        self.waiter: asyncio.Future[None] | None = None

    def put(self, item: bytes | None) -> None:
        self.items.append(item)
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def take(self) -> bytes | None:
        while not self.items:
            waiter = self.waiter = self.loop.create_future()
            try:
                await waiter
            finally:
                self.waiter = None
        return self.items.popleft()


@dataclass
class _AioServerSettings:
    """What the candidates' grpc.aio servers are made with (``aio_two_options``: the
    referee's own, ``arena.referee.endpoint``)."""

    maximum_concurrent_rpcs: int | None = None
    options: list[tuple[str, int]] = field(default_factory=list)


_AIO_SERVER = _AioServerSettings()


async def _serve_aio(bots: tuple[BotSpec, BotSpec], work: Path,
                     handler: grpc.RpcMethodHandler[bytes, bytes], started: asyncio.Event,
                     begin: asyncio.Future[None]) -> None:  # fmt: skip
    """One grpc.aio server per bot (as the referee has), the bots launched and awaited;
    ``begin`` is resolved once both streams have said Hello."""
    servers, paths = [], []
    for seat in range(2):
        server = grpc.aio.server(
            handlers=[grpc.method_handlers_generic_handler(SERVICE, {"Play": handler})],
            maximum_concurrent_rpcs=_AIO_SERVER.maximum_concurrent_rpcs,
            options=_AIO_SERVER.options,
        )
        paths.append(work / f"floor-{seat}.sock")
        server.add_insecure_port(f"unix://{paths[-1]}")
        await server.start()
        servers.append(server)
    try:
        processes = _launch(bots, paths, work)
        await asyncio.wait_for(started.wait(), HELLO_WAIT_S)
        begin.set_result(None)
        await asyncio.to_thread(_wait, processes)
    finally:
        for server in servers:
            await server.stop(None)


def aio_two(bots: tuple[BotSpec, BotSpec], sequence: Sequence, work: Path, clock: Clock) -> int:
    """grpc.aio in the referee's shape: a reader task per stream settles each reply in the
    loop thread, queueing the next request on its stream's outbox; the handler writes."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        outboxes = (_Outbox(loop), _Outbox(loop))
        hellos: list[int] = []
        started, begin = asyncio.Event(), loop.create_future()
        index = 0

        def settle() -> None:
            nonlocal index
            if TURN_NS:
                _spin(TURN_NS)
            index += 1
            if index == len(sequence):
                clock.stop()
                for outbox in outboxes:
                    outbox.put(None)
            else:
                seat, raw = sequence[index]
                outboxes[seat].put(raw)

        async def read(context: grpc.aio.ServicerContext[bytes, bytes], seat: int) -> None:
            while isinstance(await context.read(), bytes):
                settle()

        async def play(_: object, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
            hello = await context.read()
            assert isinstance(hello, bytes)
            seat = _seat(hello)
            reader = loop.create_task(read(context, seat))
            hellos.append(seat)
            if len(hellos) == 2:
                started.set()
            try:
                while (raw := await outboxes[seat].take()) is not None:
                    await context.write(raw)
                await context.write(MATCH_OVER)
            finally:
                reader.cancel()

        async def kick_off() -> None:
            await begin
            clock.start()
            outboxes[sequence[0][0]].put(sequence[0][1])

        kicker = loop.create_task(kick_off())
        await _serve_aio(bots, work, grpc.stream_stream_rpc_method_handler(play), started, begin)
        await kicker

    asyncio.run(main())
    return len(sequence)


def aio_two_options(
    bots: tuple[BotSpec, BotSpec], sequence: Sequence, work: Path, clock: Clock
) -> int:
    """``aio_two`` with the referee's server settings (its limits on calls, streams and
    message size)."""
    _AIO_SERVER.maximum_concurrent_rpcs = endpoint.MAX_STREAMS_PER_ENDPOINT
    _AIO_SERVER.options = [
        ("grpc.max_receive_message_length", endpoint.TRANSPORT_MAX_BYTES),
        ("grpc.max_concurrent_streams", endpoint.STREAMS_PER_CONNECTION),
    ]
    return aio_two(bots, sequence, work, clock)


def aio_two_thread(
    bots: tuple[BotSpec, BotSpec], sequence: Sequence, work: Path, clock: Clock
) -> int:
    """``aio_two`` with its event loop in a thread of its own while the main thread waits
    (as the referee's endpoints' loop runs beside the thread that starts its games)."""
    decisions: list[int] = []
    thread = threading.Thread(
        target=lambda: decisions.append(aio_two(bots, sequence, work, clock)), name="loop"
    )
    thread.start()
    thread.join()
    return decisions[0]


def aio_direct(bots: tuple[BotSpec, BotSpec], sequence: Sequence, work: Path,
               clock: Clock) -> int:  # fmt: skip
    """grpc.aio, one coroutine per stream writing and reading its bot's turns itself; the
    other stream's coroutine is woken (a future) when the turn changes."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        go: list[asyncio.Future[bool]] = [loop.create_future(), loop.create_future()]
        hellos: list[int] = []
        started, begin = asyncio.Event(), loop.create_future()
        index = 0

        def wake(seat: int, more: bool) -> None:
            go[seat].set_result(more)

        async def play(_: object, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
            nonlocal index
            hello = await context.read()
            assert isinstance(hello, bytes)
            seat = _seat(hello)
            hellos.append(seat)
            if len(hellos) == 2:
                started.set()
            while await go[seat]:
                go[seat] = loop.create_future()
                while index < len(sequence):
                    to_move, raw = sequence[index]
                    if to_move != seat:
                        wake(to_move, True)
                        break
                    await context.write(raw)
                    await context.read()
                    index += 1
                else:
                    clock.stop()
                    wake(1 - seat, False)
                    break
            await context.write(MATCH_OVER)

        async def kick_off() -> None:
            await begin
            clock.start()
            wake(sequence[0][0], True)

        kicker = loop.create_task(kick_off())
        await _serve_aio(bots, work, grpc.stream_stream_rpc_method_handler(play), started, begin)
        await kicker

    asyncio.run(main())
    return len(sequence)


# ---------------------------------------------------------------- the compiled transport

RUST_CRATE = ROOT / "benchmarks" / "rust_transport"
RUST_LIBRARY = RUST_CRATE / "target" / "release" / "libkahuna_transport.so"
RUST_BUILD = "benchmarks/rust_transport/build.sh"


def rust_transport() -> Any:
    """The compiled transport's module (``benchmarks/rust_transport``), loaded from its
    build; a missing build is a one-line error naming the command that makes it."""
    if not RUST_LIBRARY.exists():
        raise RuntimeError(f"no build of benchmarks/rust_transport: run {RUST_BUILD}")
    loader = importlib.machinery.ExtensionFileLoader("kahuna_transport", str(RUST_LIBRARY))
    spec = importlib.util.spec_from_file_location("kahuna_transport", RUST_LIBRARY, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _rust_paths(work: Path, seats: int) -> list[Path]:
    paths = [work / f"floor-{seat}.sock" for seat in range(seats)]
    for path in paths:
        path.unlink(missing_ok=True)  # a socket an earlier candidate left (gRPC's are unlinked)
    return paths


def _serve_rust(bots: tuple[BotSpec, BotSpec], work: Path, seats: int, clock: Clock,
                begin: Any, on_reply: Any) -> None:  # fmt: skip
    """The compiled transport serving ``seats`` bots, one socket each: once every stream
    has said Hello the clock starts, ``begin()`` gives the first (seat, request) and
    ``on_reply(seat, bytes)`` is called in the transport's thread for every reply after
    it, returning what to write next (``benchmarks/rust_transport/src/lib.rs``)."""
    paths = _rust_paths(work, seats)
    pinned = bool(os.environ.get("FLOOR_PIN"))  # the transport's thread on CPU 0, the bots on 1
    if pinned:
        os.sched_setaffinity(0, {0})
    transport = rust_transport().Transport([str(path) for path in paths], _seat, MATCH_OVER)
    try:
        if pinned:
            os.sched_setaffinity(0, {1})
        processes = _launch(bots, paths, work)
        try:
            transport.wait_hellos(seats, HELLO_WAIT_S)
            clock.start()
            seat, first = begin(transport)
            transport.run(seat, first, on_reply, WAIT_S)
        finally:
            _wait(processes)
    finally:
        transport.close()


def rust_one(bots: tuple[BotSpec, BotSpec], sequence: Sequence, work: Path, clock: Clock) -> int:
    """``raw_sync``'s one stream (seat 0's requests) on the compiled transport, the next
    request written from the Python callback of each reply."""
    requests = [raw for seat, raw in sequence if seat == 0]
    index = 0

    def on_reply(seat: int, raw: bytes) -> tuple[int, bytes] | None:
        nonlocal index
        index += 1
        if index == len(requests):
            clock.stop()
            return None
        return 0, requests[index]

    _serve_rust(bots, work, 1, clock, lambda transport: (0, requests[0]), on_reply)
    return len(requests)


def rust_two(bots: tuple[BotSpec, BotSpec], sequence: Sequence, work_dir: Path,
             clock: Clock) -> int:  # fmt: skip
    """Both streams on the compiled transport: each reply's Python callback gives the next
    request of the sequence, to whichever seat is to move (``aio_two``'s replay; with
    ``FLOOR_TURN_US`` it spins that long first; with ``FLOOR_WORK`` it does a fixed piece
    of Python work, timed in situ and, before serving, warm: ``_fixed_work``; with
    ``FLOOR_WORK_AGAIN`` as well the same work once more at once, timed apart)."""
    index = 0
    work, work_ns, again_ns = _fixed_work(), [0], [0]
    again = bool(os.environ.get("FLOOR_WORK_AGAIN"))  # then once more at once, timed apart

    def on_reply(seat: int, raw: bytes) -> tuple[int, bytes] | None:
        nonlocal index
        if TURN_NS:
            _spin(TURN_NS)
        if work is not None:
            started = time.thread_time_ns()
            work()
            work_ns[0] += time.thread_time_ns() - started
            if again:
                started = time.thread_time_ns()
                work()
                again_ns[0] += time.thread_time_ns() - started
        index += 1
        if index == len(sequence):
            clock.stop()
            return None
        return sequence[index]

    warm_us = 0.0
    if work is not None:  # the same work back to back first: its cost with warm caches
        times = []
        for _ in range(400):
            started = time.thread_time_ns()
            work()
            times.append(time.thread_time_ns() - started)
        warm_us = statistics.median(times[100:]) / 1000
    _serve_rust(bots, work_dir, 2, clock, lambda transport: sequence[0], on_reply)
    if work is not None:  # as seconds over all decisions, as the threads' figures are
        clock.threads["work (of rust-transport)"] = work_ns[0] / 1e9
        clock.threads["work, warm"] = warm_us * len(sequence) / 1e6
        if again:
            clock.threads["work again (of rust-transport)"] = again_ns[0] / 1e9
    return len(sequence)


def _fixed_work() -> Any:
    """``FLOOR_WORK``: a fixed piece of Python work for each reply (``small``: arithmetic
    in a loop, a working set of a few cache lines; ``large``: a read of the same 1,500
    tuples scattered over the heap each time, about the turn's number of objects;
    ``chase``: the same number read one after another; ``observe``: the turn's legal set
    and observation of one position, the same each time), to
    tell a turn that costs more beside the bots because its memory is cold from one
    whose every instruction is slower there."""
    kind = os.environ.get("FLOOR_WORK")
    if kind is None:
        return None
    if kind == "small":

        def small() -> int:
            x = 0
            for i in range(1300):
                x = (x * 31 + i) & 0xFFFF
            return x

        return small
    if kind == "observe":  # the turn's own code on one position, its data the same each time
        from arena.kahuna import apply, deal_from_seed, legal_actions, new_game
        from arena.kahuna.legal import _generate
        from arena.protocol.wire import legal_set, observation_bytes

        state = new_game(deal_from_seed(7))
        for _ in range(12):
            state = apply(state, legal_actions(state)[0])

        def observe() -> int:
            legal = legal_set(_generate(state))
            return len(observation_bytes(state, state._mover, (), 0)) + len(legal.fields)

        return observe
    if kind not in ("large", "chase"):
        raise ValueError(f"FLOOR_WORK: small, large, chase or observe, not {kind!r}")
    spread_out: list[Any] = []
    chosen = []
    for i in range(1500):
        spread_out.append([bytes(200) for _ in range(8)])  # the tuples 2 KiB apart
        chosen.append((i, str(i)))
    objects = tuple(chosen)
    if kind == "chase":  # each read's address from the last: the misses one after another
        order = list(range(1500))
        random.Random(1).shuffle(order)
        nodes: list[list[Any]] = [[None, i] for i in range(1500)]
        for before, after in itertools.pairwise(order):
            nodes[before][0] = nodes[after]
        spread_out.append(nodes)
        head = nodes[order[0]]

        def chase() -> int:
            total, node = 0, head
            while node is not None:
                total += node[1]
                node = node[0]
            return total

        chase.keep = spread_out  # type: ignore[attr-defined]
        return chase

    def large() -> int:
        total = 0
        for item in objects:
            total += item[0]
        return total

    large.keep = spread_out  # type: ignore[attr-defined]
    return large


class _RustEndpoint:
    """What the referee's game sees of a bot's endpoint (``BotEndpoint``'s ``send`` and
    the attributes the turn reads), writing to the compiled transport's stream."""

    def __init__(self, slot: int) -> None:
        self.slot = slot
        self.generation = 0
        self.take_raw: Any = None
        self.deliver: Any = None
        self.transport: Any = None
        self.held: list[tuple[int, bytes]] = []  # before the transport runs: its first frame

    @property
    def connected(self) -> bool:
        return True

    def send(self, frame: bytes, on_wire: Any = None) -> bool:
        if on_wire is not None:
            on_wire(time.monotonic_ns(), 0)  # as the endpoint's writer does, before the write
        if self.transport is None:
            self.held.append((self.slot, frame))
        else:
            self.transport.send(self.slot, frame)
        return True


def rust_referee(bots: tuple[BotSpec, BotSpec], sequence: Sequence, work: Path,
                 clock: Clock) -> int:  # fmt: skip
    """The compiled transport with the referee's own turn as its Python callback: each
    reply is settled by the turn loop (``TurnLoop._settle_echo``: the judgement of its
    bytes, the decision, the rules, the clock) and the game writes the next request
    (``GameDriver``), through a stand-in endpoint, to the compiled transport; the games
    of the captured match (its seeds and seats), the heap frozen per game as the referee
    does. Not in it: the deadline timer, the freezer, what the referee does between
    games (the captured requests are not used)."""
    from _turn_setup import game_of, ready_slots

    from arena.referee.heap import frozen_for_game
    from arena.referee.match import _deal_seed
    from arena.referee.play import GameDriver
    from arena.referee.turn_loop import ArrivalQueue, TurnLoop

    games = int(os.environ.get("FLOOR_GAMES", "12"))
    config = MatchConfig(games=games, seed=1, time_control=TimeControl(5000, 30000))
    control = config.time_control  # as ``capture``'s
    endpoints = (_RustEndpoint(0), _RustEndpoint(1))
    slots = ready_slots(bots, endpoints, work)
    turns = TurnLoop(ArrivalQueue(), slots)
    frozen = contextlib.ExitStack()
    decisions = turn_ns = 0
    time_turn = bool(os.environ.get("FLOOR_TIME_TURN"))
    _cut_from_turn(os.environ.get("FLOOR_CUT", ""))
    parts = None
    if os.environ.get("FLOOR_TIME_PARTS"):
        import _turn_parts

        parts = _turn_parts.install()

    def start_game(index: int) -> GameDriver:
        game = game_of(slots, index, _deal_seed(config, index), control.action_ms,
                       control.bank_ms)  # fmt: skip
        frozen.enter_context(frozen_for_game())
        turns.game = game
        game.advance()
        return game

    game = start_game(0)

    def begin(transport: Any) -> tuple[int, bytes]:
        for endpoint_ in endpoints:
            endpoint_.transport = transport
        (held,) = endpoints[0].held + endpoints[1].held
        return held

    def on_reply(seat: int, raw: bytes) -> list[tuple[int, bytes]] | None:
        nonlocal game, decisions, turn_ns
        started = time.thread_time_ns() if time_turn else 0
        if not turns._settle_echo(game, seat, 0, raw, time.monotonic_ns()):
            raise RuntimeError(f"slot {seat}: a reply that is not a legal, timely echo")
        if time_turn:
            turn_ns += time.thread_time_ns() - started
        decisions += 1
        if game.waiting:
            return []
        if game.failures:
            raise RuntimeError(f"game {game.index}: {game.failures}")
        turns.game = None
        frozen.close()
        if game.index + 1 == games:
            clock.stop()
            return None
        game = start_game(game.index + 1)
        if parts is not None and game.index == 1:  # games 1.. timed by part
            parts.reset()
            timed_from[0] = decisions
        return []

    timed_from = [0]

    try:
        _serve_rust(bots, work, 2, clock, begin, on_reply)
    finally:
        frozen.close()
    if time_turn:
        clock.threads["turn (of rust-transport)"] = turn_ns / 1e9
    if parts is not None:  # as seconds over all decisions, as the threads' figures are
        parts.uninstall()
        share = decisions / (decisions - timed_from[0])
        for part, us in parts.per_decision_us(decisions).items():
            clock.threads[f"turn: {part}"] = us * share * decisions / 1e6
    return decisions


CUTS = ("observation", "sort", "answered", "legal")


def _cut_from_turn(cuts: str) -> None:
    """``FLOOR_CUT``: parts of ``rust_referee``'s turn made free (comma-separated ``CUTS``:
    an empty observation, the legal set unsorted, no timing record, the legal set of a
    position's first action only), what the requests then say no longer the referee's:
    how much of the turn's cost beside the bots each part is at most."""
    from arena.protocol import wire
    from arena.referee import game

    chosen = {cut for cut in cuts.split(",") if cut}
    if chosen - set(CUTS):
        raise ValueError(f"FLOOR_CUT: unknown {sorted(chosen - set(CUTS))}; known: {CUTS}")
    if "observation" in chosen:
        game.observation_bytes = lambda *args: b""  # type: ignore[attr-defined]
    if "answered" in chosen:
        game.GameTiming.answered = lambda self, seat, elapsed_ms: None  # type: ignore[method-assign]
    if "sort" in chosen or "legal" in chosen:
        get, piece = wire._PIECES.get, wire._piece
        first_only = "legal" in chosen

        def unsorted(self: wire.LegalActions, actions: Any) -> None:
            pieces = [get(action.code) or piece(action) for action in actions]
            if first_only:
                pieces = pieces[:1]
            self.sorted = tuple([found[3] for found in pieces])
            self.fields = b"".join([found[1] for found in pieces])
            self.by_bytes = {found[2]: found[3] for found in pieces}

        wire.LegalActions.__init__ = unsorted  # type: ignore[method-assign]


def referee_probe(bots: tuple[BotSpec, BotSpec], sequence: Sequence, work: Path,
                  clock: Clock) -> int:  # fmt: skip
    """The referee itself in this process (the same match the sequence was captured from,
    games 1.. timed as ``referee.py`` does), with the pieces named in ``FLOOR_PROBE``
    taken out (``PROBES``); its loop thread's CPU is ``referee-grpc``, and with
    ``FLOOR_TIME_TURN`` set the part of it in the turn (``TurnLoop._take_raw``: the
    judgement, the rules, the next request's bytes) is ``turn (of referee-grpc)``."""
    import gc

    from arena.referee import game as game_module
    from arena.referee import turn_loop

    probes = {probe for probe in os.environ.get("FLOOR_PROBE", "").split(",") if probe}
    unknown = probes - set(PROBES)
    if unknown:
        raise ValueError(f"FLOOR_PROBE: unknown {sorted(unknown)}; known: {PROBES}")
    if "options" in probes:

        async def plain_server(self: endpoint.BotEndpoint) -> grpc.aio.Server:
            server = grpc.aio.server(handlers=[endpoint._Methods(self)])
            server.add_insecure_port(f"unix://{self.socket_path}")
            return server

        endpoint.BotEndpoint._make_server = plain_server  # type: ignore[method-assign]
    if "timer" in probes:
        turn_loop.TurnLoop._arm = lambda self, game: None  # type: ignore[method-assign]
    if "on-wire" in probes:
        game_module.Clock.sent = lambda self, wire_ns, free_ns: None  # type: ignore[method-assign]
    if "observation" in probes:
        game_module.observation_bytes = lambda *args: b""  # type: ignore[assignment]
    turn_ns = [0]
    if os.environ.get("FLOOR_TIME_TURN"):
        take_raw = turn_loop.TurnLoop._take_raw

        def timed(self: turn_loop.TurnLoop, *args: Any) -> bool:
            started = time.thread_time_ns()
            try:
                return take_raw(self, *args)
            finally:
                turn_ns[0] += time.thread_time_ns() - started

        turn_loop.TurnLoop._take_raw = timed  # type: ignore[method-assign]
    if os.environ.get("FLOOR_PIN"):  # the referee's threads on CPU 0, the bots on CPU 1
        from arena.sandbox import process as sandbox_process

        for task in os.listdir("/proc/self/task"):  # those started later inherit it
            os.sched_setaffinity(int(task), {0})
        sandbox_process.pin_to_quota = (  # type: ignore[attr-defined]
            lambda pid, cpu_cores: os.sched_setaffinity(pid, {1})
        )
    games = int(os.environ.get("FLOOR_GAMES", "12"))
    decisions: list[int] = []

    def on_game(report: GameReport) -> None:
        decisions.append(report.actions)
        if len(decisions) == 1:
            if "gc" in probes:
                gc.disable()
            clock.start()
            turn_ns.append(turn_ns[0])
        elif len(decisions) == games:
            clock.stop()
            if len(turn_ns) == 2 and os.environ.get("FLOOR_TIME_TURN"):
                clock.threads["turn (of referee-grpc)"] = (turn_ns[0] - turn_ns[1]) / 1e9

    config = MatchConfig(games=games, seed=1, time_control=TimeControl(5000, 30000),
                         ponder="freezer" not in probes)  # fmt: skip
    run_match(config, *bots, on_game=on_game)
    gc.enable()
    return sum(decisions[1:])


SERVERS = {
    "raw_sync": raw_sync, "raw_aio": raw_aio, "raw_sync_after_referee": raw_sync_after_referee,
    "sync_two": sync_two,
    "sync_game_thread": sync_game_thread, "aio_two": aio_two,
    "aio_two_thread": aio_two_thread, "aio_two_options": aio_two_options,
    "aio_direct": aio_direct, "referee_probe": referee_probe,
    "rust_one": rust_one, "rust_two": rust_two, "rust_referee": rust_referee,
}  # fmt: skip


def _serve_once(serve: str, sequence_file: Path, directories: list[str], work: Path) -> int:
    """One candidate in this process: prints JSON (wall and CPU ms per decision)."""
    configure(level="ERROR")
    sequence: Sequence = [
        (int(seat), bytes.fromhex(raw)) for seat, raw in json.loads(sequence_file.read_text())
    ]  # fmt: skip
    bots = load_bot(Path(directories[0])), load_bot(Path(directories[1]))
    clock = Clock()
    decisions = SERVERS[serve](bots, sequence, work, clock)
    if not clock.done.is_set():
        raise RuntimeError(f"{serve}: the replay did not finish")
    threads = {name: cpu_s * 1e6 / decisions for name, cpu_s in clock.threads.items()}
    print(json.dumps({
        "wall_ms": clock.wall * 1000 / decisions, "cpu_ms": clock.cpu * 1000 / decisions,
        "decisions": decisions, "threads_us": threads,
    }))  # fmt: skip
    return 0


# ---------------------------------------------------------------- the alternating rounds


def run_candidate(candidate: Candidate, sequence_file: Path, bots: tuple[BotSpec, BotSpec],
                  work: Path, games: int) -> tuple[float, float, dict[str, float]]:  # fmt: skip
    """Wall and CPU ms per decision of ``candidate`` in a fresh process, and its CPU us per
    decision by thread (none for the referee)."""
    if candidate.serve in (REFEREE, REFEREE_PONDER):
        try:
            return *_referee_in(ROOT, bots, games, candidate.serve == REFEREE_PONDER), {}
        except subprocess.CalledProcessError as error:
            failure = f"{candidate.name} failed: exit status {error.returncode}"
            raise RuntimeError(failure) from error
    command = [sys.executable, __file__, "_serve", candidate.serve, str(sequence_file),
               str(work), str(bots[0].directory), str(bots[1].directory)]  # fmt: skip
    env = {**os.environ, "FLOOR_GAMES": str(games), **dict(candidate.env)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise RuntimeError(f"{candidate.name} failed: {last[0]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["wall_ms"]), float(result["cpu_ms"]), dict(result["threads_us"])


def _by_thread(rounds: list[dict[str, float]]) -> str:
    """The median over rounds of each thread's CPU us per decision (0 in a round without
    it), the busiest first."""
    names = {name for found in rounds for name in found}
    medians = {name: statistics.median(found.get(name, 0.0) for found in rounds) for name in names}
    shown = sorted(
        ((us, name) for name, us in medians.items() if us >= 0.5 and not name.startswith("turn:")),
        reverse=True,
    )
    text = ", ".join(f"{name} {us:.0f}" for us, name in shown) or "none measured"
    parts = [name for name in sorted(names) if name.startswith("turn:")]  # FLOOR_TIME_PARTS
    if parts:
        text += "; " + ", ".join(f"{name[6:]} {medians[name]:.1f}" for name in parts)
    return text


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_serve":
        serve, sequence_arg, work_arg, *directories = sys.argv[2:]
        return _serve_once(serve, Path(sequence_arg), directories, Path(work_arg))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=12, help="games of the replayed match")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds")
    parser.add_argument("--only", nargs="+", choices=[c.name for c in CANDIDATES],
                        help="these candidates (raw-sync is always run)")  # fmt: skip
    parser.add_argument("--threads", action="store_true",
                        help="also each candidate's CPU by thread (us per decision)")  # fmt: skip
    parser.add_argument("--extra", nargs=3, action="append", default=[],
                        metavar=("LABEL", "SHAPE", "VAR=VALUE"),
                        help="one more candidate: a shape and an environment variable"
                             " (several: 'A=1 B=2')")  # fmt: skip
    args = parser.parse_args()
    configure(level="ERROR")
    candidates = [c for c in CANDIDATES if not args.only or c.name in args.only
                  or c.name == "raw-sync"]  # fmt: skip
    for label, shape, settings in args.extra:
        given = [setting.partition("=") for setting in settings.split()]  # "A=1 B=2": both
        if shape not in SERVERS or not given or not all(equals for _, equals, _ in given):
            parser.error(f"--extra {label}: SHAPE is one of {sorted(SERVERS)}, then VAR=VALUE")
        candidates.append(Candidate(label, shape, tuple((name, value) for name, _, value in given)))
    if any(c.serve.startswith("rust_") for c in candidates) and not RUST_LIBRARY.exists():
        print(f"no build of benchmarks/rust_transport: run {RUST_BUILD}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kfloor-", dir="/tmp") as work_dir:
        work = Path(work_dir)
        work.chmod(0o755)
        bots = make_testbot(work, "a"), make_testbot(work, "b")
        sequence = capture(bots, args.games)
        sequence_file = work / "sequence.json"
        sequence_file.write_text(json.dumps([(seat, raw.hex()) for seat, raw in sequence]))
        turns = turn_changes(sequence) + 1
        print(f"replayed: {len(sequence)} requests of a {args.games}-game referee match, "
              f"{turns} turns, {len(sequence) / turns:.2f} decisions per turn")  # fmt: skip
        print(load_text())
        wall: dict[str, list[float]] = {c.name: [] for c in candidates}
        cpu: dict[str, list[float]] = {c.name: [] for c in candidates}
        threads: dict[str, list[dict[str, float]]] = {c.name: [] for c in candidates}
        failed: dict[str, str] = {}
        for round_index in range(args.rounds):
            for candidate in rotated(candidates, round_index):
                if candidate.name in failed:
                    continue
                try:
                    wall_ms, cpu_ms, by_thread = run_candidate(
                        candidate, sequence_file, bots, work, args.games
                    )
                except RuntimeError as error:
                    if candidate.name == "raw-sync":
                        raise
                    failed[candidate.name] = str(error)
                    print(f"  {error} (dropped)", flush=True)
                    continue
                wall[candidate.name].append(wall_ms)
                cpu[candidate.name].append(cpu_ms)
                threads[candidate.name].append(by_thread)
            print(f"  round {round_index + 1}: {load_text()}", flush=True)
        candidates = [c for c in candidates if c.name not in failed]
    raw_wall, raw_cpu = statistics.median(wall["raw-sync"]), statistics.median(cpu["raw-sync"])
    print(f"medians of {args.rounds} rounds; x: ratio of medians to raw-sync; "
          "per-round: the per-round ratios' median [quartiles] (min-max)")  # fmt: skip
    for candidate in candidates:
        name = candidate.name
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"{name:16s} wall {w:.3f} ms ({w / raw_wall:.2f}x)  "
              f"CPU {c:.3f} ms ({c / raw_cpu:.2f}x) per decision")  # fmt: skip
        if name != "raw-sync":
            pairs = zip(wall[name], wall["raw-sync"], strict=True)
            print(f"{'':16s} per-round wall {spread([a / b for a, b in pairs])}")
            pairs = zip(cpu[name], cpu["raw-sync"], strict=True)
            print(f"{'':16s} per-round CPU  {spread([a / b for a, b in pairs])}")
        if args.threads and threads[name] and threads[name][0]:
            print(f"{'':16s} CPU by thread: {_by_thread(threads[name])}")
            turn = [f"{value:.0f}" for found in threads[name] for thread, value in found.items()
                    if thread.startswith("turn (")]  # fmt: skip
            if turn:  # to pair with another candidate's same round
                print(f"{'':16s} turn by round: {' '.join(turn)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
