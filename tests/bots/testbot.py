"""A bot for the referee tests, well-behaved or deliberately broken.

Run as ``python3 bot.py MARKER BEHAVIOUR [ARG ...]`` (MARKER: a unique word
that lets a test find every process the bot left) with ``KAHUNA_REFEREE`` and
``KAHUNA_TOKEN`` set; it speaks gRPC with the generated code directly (no
SDK) so that it can also send what no SDK would. Tests copy this file into
a temporary bot directory (see tests/referee/conftest.py). Behaviours that
probe the sandbox (``tcp``, ``write_outside``, ``read_other``) play well
unless the probe succeeds, in which case they send an illegal action so
that the test sees it.
"""

from __future__ import annotations

import collections
import contextlib
import mmap
import os
import queue
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import grpc
from kahuna.v1 import game_pb2, referee_pb2

PLAY_METHOD = "/kahuna.v1.RefereeService/Play"


class Bot:
    def __init__(self, behaviour: str, args: list[str]) -> None:
        self.behaviour = behaviour
        self.args = args
        self.outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.random = random.Random(7)
        self.requests_seen = 0
        self.last_request_id = 0
        self.regions: list[mmap.mmap] = []
        self.ponder_stop: threading.Event | None = None

    def send(self, message: referee_pb2.PlayRequest) -> None:
        self.outbox.put(message.SerializeToString())

    def reply(self, request_id: int, action: game_pb2.Action) -> None:
        reply = referee_pb2.ActionReply(request_id=request_id, action=action)
        self.send(referee_pb2.PlayRequest(action_reply=reply))

    def _requests(self) -> Iterator[bytes]:
        while True:
            item = self.outbox.get()
            if item is None:
                return
            yield item

    def run(self) -> None:
        channel = grpc.insecure_channel(os.environ["KAHUNA_REFEREE"])
        play = channel.stream_stream(
            PLAY_METHOD,
            request_serializer=lambda raw: raw,
            response_deserializer=referee_pb2.PlayResponse.FromString,
        )
        token = os.environ["KAHUNA_TOKEN"]
        if self.behaviour == "forged_token":
            token = "forged-" + token[::-1]
        if self.behaviour == "no_hello":
            time.sleep(3600)
        if self.behaviour == "slow_hello":  # takes ARG seconds to start, then plays at once
            time.sleep(float(self.args[0]))
        if self.behaviour == "spin_before_hello":  # a start-up that never ends, on the CPU
            while True:
                pass
        if self.behaviour == "exit_before_hello":
            raise SystemExit(3)
        if self.behaviour == "at_memory_limit":  # at its limit before it is ever asked
            self.regions = lazily_freed_regions()
            sweep_lazily_freed(self.regions)
        if self.behaviour == "malformed_bytes":
            self.outbox.put(b"\xff\xff\xff\xff\x0f garbage")
        hello = referee_pb2.Hello(
            token=token, bot_name="testbot", bot_version="1", protocol_version=1
        )
        self.send(referee_pb2.PlayRequest(hello=hello))
        for message in play(self._requests()):
            kind = message.WhichOneof("kind")
            told = kind in ("welcome", "game_start") and getattr(message, kind).opponent_name
            if self.behaviour == "crash_if_opponent_named" and told not in (False, "opponent"):
                raise SystemExit(4)  # told who it plays: a mule would throw the game now
            if kind == "welcome":
                self.on_welcome(channel)
            elif kind == "action_request":
                self.on_request(message.action_request)
            elif kind in ("match_over", "goodbye"):
                break
        self.outbox.put(None)
        channel.close()
        if self.behaviour == "linger":
            time.sleep(3600)  # never exits by itself after MatchOver

    def on_welcome(self, channel: grpc.Channel) -> None:
        action = ON_WELCOME.get(self.behaviour)
        if action is not None:
            action(self, channel)

    def on_request(self, request: referee_pb2.ActionRequest) -> None:
        self.requests_seen += 1
        handler = ON_REQUEST.get(self.behaviour, Bot.play_random)
        handler(self, request)
        self.last_request_id = request.request_id

    def play_random(self, request: referee_pb2.ActionRequest) -> None:
        self.reply(request.request_id, self.random.choice(list(request.legal_actions)))


# --------------------------------------------------------------- on welcome


def out_of_turn(bot: Bot, channel: grpc.Channel) -> None:
    bot.reply(99, game_pb2.Action(type=game_pb2.ACTION_TYPE_PASS))


def second_stream(bot: Bot, channel: grpc.Channel) -> None:
    """Open another stream, as if acting for the other seat, with a forged token."""
    other = grpc.insecure_channel(os.environ["KAHUNA_REFEREE"])
    play = other.stream_stream(
        PLAY_METHOD,
        request_serializer=lambda raw: raw,
        response_deserializer=referee_pb2.PlayResponse.FromString,
    )
    hello = referee_pb2.Hello(token="other-seat", bot_name="x", protocol_version=1)
    try:
        for _ in play(iter([referee_pb2.PlayRequest(hello=hello).SerializeToString()])):
            pass
    except grpc.RpcError:
        pass


def memory_hog(bot: Bot, channel: grpc.Channel) -> None:
    hoard = []
    while True:
        hoard.append(bytearray(16 * 1024 * 1024))
        hoard[-1][::4096] = b"x" * len(hoard[-1][::4096])


# The bomb runs in a process of its own, started without forking this one: a fork
# of a process with live gRPC threads can leave the parent's stream wedged (seen
# once in CI as a timeout), which would test gRPC's fork handling, not the sandbox.
FORK_BOMB = """
import os, time
while True:
    try:
        if os.fork() == 0:
            continue
    except OSError:
        time.sleep(0.05)
    time.sleep(3600)
"""


def fork_bomb(bot: Bot, channel: grpc.Channel) -> None:
    """Fill the bot's pids limit with a chain of forks that never exit."""
    subprocess.Popen(
        [sys.executable, "-c", FORK_BOMB],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip


def daemon(bot: Bot, channel: grpc.Channel) -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.closerange(0, 1024)
            time.sleep(3600)
        os._exit(0)


def spinner(bot: Bot, channel: grpc.Channel) -> None:
    """Six children that spin and stream through memory for the whole match, to
    slow down whatever shares the CPUs, the caches and the memory bus. They run at
    nice 19, so that within the bot's own CPU quota its main process still wins."""
    for _ in range(6):
        if os.fork() == 0:
            os.nice(19)
            block = bytearray(8 * 1024 * 1024)
            while True:
                block[::64] = bytes(len(block[::64]))


def cpu_spinner(bot: Bot, channel: grpc.Channel) -> None:
    """Six children that spin without touching memory for the whole match: a hog of
    CPU alone (``spinner`` also sweeps the shared caches), at nice 19 as there."""
    for _ in range(6):
        if os.fork() == 0:
            os.nice(19)
            while True:
                pass


# Opens connections to the referee's socket from ARG processes (default 8), each until
# it reaches its open-file limit, and holds them; says "full" on stdout once all have.
CONNECTION_HOARD = """
import os, socket, sys, time
path, processes = sys.argv[1], int(sys.argv[2])
done_read, done_write = os.pipe()
children = 0
while children < processes - 1 and os.fork() != 0:
    children += 1
child = children < processes - 1
held = []
while True:
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        break
    try:
        client.connect(path)
    except OSError:
        client.close()
        break
    held.append(client)
if child:
    os.write(done_write, b"x")
else:
    for _ in range(children):
        os.read(done_read, 1)
    print("full", flush=True)
time.sleep(3600)
"""


def connection_hoard(bot: Bot, channel: grpc.Channel) -> None:
    """Hold as many connections to the referee's socket as the sandbox lets it open,
    then play: each connection the referee accepts is a descriptor of its process."""
    path = os.environ["KAHUNA_REFEREE"].removeprefix("unix://")
    processes = bot.args[0] if bot.args else "8"
    hoard = subprocess.Popen(
        [sys.executable, "-c", CONNECTION_HOARD, path, processes],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    assert hoard.stdout is not None
    hoard.stdout.readline()


UNKNOWN_METHOD = "/kahuna.v1.RefereeService/Peek"
IN_FLIGHT = 32


def unknown_method_flood(bot: Bot, channel: grpc.Channel) -> None:
    """Call a method the referee does not serve, on the bot's own socket, from a thread
    of its own while playing well (making the referee work for it must not slow its
    opponent). With no ARG as fast as it can, 32 calls in flight; with ARGs PER_SECOND
    [AT_ONCE], AT_ONCE calls back to back (default 0) and then PER_SECOND a second."""
    per_second = float(bot.args[0]) if bot.args else 0.0
    at_once = int(bot.args[1]) if len(bot.args) > 1 else 0
    peek = channel.unary_unary(
        UNKNOWN_METHOD, request_serializer=lambda raw: raw, response_deserializer=bytes
    )

    def settle(call: grpc.Future) -> None:
        with contextlib.suppress(grpc.FutureCancelledError):
            call.exception()

    def flood() -> None:
        in_flight: collections.deque[grpc.Future] = collections.deque()
        while True:
            in_flight.append(peek.future(b"\x08\x01"))
            if len(in_flight) >= IN_FLIGHT:
                settle(in_flight.popleft())

    def paced() -> None:
        for _ in range(at_once):
            settle(peek.future(b"\x08\x01"))
        while True:
            time.sleep(1 / per_second)
            settle(peek.future(b"\x08\x01"))

    threading.Thread(target=paced if per_second > 0 else flood, daemon=True).start()


ON_WELCOME: dict[str, Callable[[Bot, grpc.Channel], None]] = {
    "connection_hoard": connection_hoard,
    "out_of_turn": out_of_turn,
    "second_stream": second_stream,
    "memory_hog": memory_hog,
    "fork_bomb": fork_bomb,
    "daemon": daemon,
    "spinner": spinner,
    "cpu_spinner": cpu_spinner,
    "spinner_crash": spinner,
    "spinner_exit_after_turn": spinner,
    "unknown_method_flood": unknown_method_flood,
}


# --------------------------------------------------------------- on request


def sleep_forever(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    time.sleep(3600)


def at_memory_limit(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    """Keep the sandbox at its memory limit without being killed, and never answer."""
    while True:
        sweep_lazily_freed(bot.regions)
        time.sleep(0.01)


def sweep_lazily_freed(regions: list[mmap.mmap]) -> None:
    """Write every page of ``regions`` and give each region back with MADV_FREE: its
    pages stay charged until the kernel reclaims them, which it can do without swap,
    and writing a region again charges it again. One sweep over more than the limit
    brings the group to its limit."""
    for region in regions:
        region[::4096] = b"x" * (len(region) // 4096)
        region.madvise(mmap.MADV_FREE)


def lazily_freed_regions() -> list[mmap.mmap]:
    """Twenty 16 MiB private regions: more than any memory limit the tests set."""
    private = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
    return [mmap.mmap(-1, 16 * 1024 * 1024, flags=private) for _ in range(20)]


def late_once(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    """Answer the first request too late, every later one at once."""
    if bot.requests_seen == 1:
        time.sleep(float(bot.args[0]))
    bot.play_random(request)


def paced(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    """Sleep ARG milliseconds before every reply (with a second ARG N, before its first N
    replies only): as slow as a busy bot, using nothing."""
    if len(bot.args) < 2 or bot.requests_seen <= int(bot.args[1]):
        time.sleep(float(bot.args[0]) / 1000)
    bot.play_random(request)


def exit_midgame(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    if bot.requests_seen > 5:
        os._exit(3)
    bot.play_random(request)


def raise_error(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    raise RuntimeError("the bot's own bug")


def leak_and_crash(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    """Play a few actions, print ARG (a secret) to stderr, then exit with status 1."""
    if bot.requests_seen > 3:
        print(f"my plans: {bot.args[0]}", file=sys.stderr, flush=True)
        os._exit(1)
    bot.play_random(request)


def garbage_stdout(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    sys.stdout.write("\x00\xffnot a protocol message\n" * 50)
    sys.stdout.flush()
    bot.play_random(request)


def oversized(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    action = game_pb2.Action(type=game_pb2.ACTION_TYPE_PASS, card="X" * 100_000)
    bot.reply(request.request_id, action)


def stale_id(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    if bot.requests_seen == 1:
        bot.play_random(request)
    else:
        bot.reply(bot.last_request_id, bot.random.choice(list(request.legal_actions)))


def flood(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    for _ in range(2000):
        bot.play_random(request)


def illegal(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    # A well-formed action that is never legal: drawing a card with a full hand
    # is not checked here; placing on a line with a card of neither island is.
    bot.reply(
        request.request_id,
        game_pb2.Action(type=game_pb2.ACTION_TYPE_PLACE, card="LALE", line="ALOA-BARI"),
    )


def malformed_action(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    bot.reply(
        request.request_id, game_pb2.Action(type=game_pb2.ACTION_TYPE_DISCARD, card="ATLANTIS")
    )


def tcp(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    if bot.requests_seen == 1:
        try:
            with socket.create_connection(("127.0.0.1", int(bot.args[0])), timeout=1):
                illegal(bot, request)
                return
        except OSError:
            pass
    bot.play_random(request)


def write_outside(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    if bot.requests_seen == 1:
        for path in [*bot.args, "/bot/escaped.txt", "/etc/escaped.txt", "/usr/escaped.txt"]:
            try:
                with open(path, "w") as stream:
                    stream.write("escaped")
                illegal(bot, request)
                return
            except OSError:
                pass
    bot.play_random(request)


def read_other(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    if bot.requests_seen == 1:
        for path in bot.args:
            try:
                with open(path) as stream:
                    stream.read()
                illegal(bot, request)
                return
            except OSError:
                pass
    bot.play_random(request)


def exit_after_turn(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    """From its fourth request on: the first reply that ends its turn (a draw or a
    pass: the opponent moves next), then exit with status 3 as soon as the reply is
    handed to gRPC (the referee may be freezing the bot by then)."""
    action = bot.random.choice(list(request.legal_actions))
    bot.reply(request.request_id, action)
    ends_turn = action.type in (game_pb2.ACTION_TYPE_DRAW, game_pb2.ACTION_TYPE_PASS)
    if bot.requests_seen > 3 and ends_turn:
        while not bot.outbox.empty():  # taken by gRPC's sender: on its way
            time.sleep(0.0001)
        os._exit(3)


def spinner_crash(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    """A spinner that dies in every game, on its fourth request."""
    if bot.requests_seen % 4 == 0:
        os._exit(3)
    bot.play_random(request)


def panic(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    """Dies as a Go program does: the cause on the first line, then a long trace."""
    lines = ["panic: runtime error: index out of range [5] with length 5", "",
             "goroutine 1 [running]:"]  # fmt: skip
    for depth in range(120):
        lines += [f"main.frame{depth}(...)", f"\t/bot/main.go:{depth + 10} +0x{depth:x}"]
    lines.append("exit status 2")
    print("\n".join(lines), file=sys.stderr, flush=True)
    os._exit(2)


def no_final_pass(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    """Ends every turn with a deck draw, the final turns (where only pass is legal) too."""
    if request.observation.final_turns:
        bot.reply(request.request_id, game_pb2.Action(type=game_pb2.ACTION_TYPE_DRAW))
        return
    bot.play_random(request)


def ponder(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    """Think on the opponent's time in bursts: once a reply is on its way, spin (in a
    thread, the GIL handed over every 0.1 ms, so that the next request is read at
    once) for ARG ms of CPU or until that request arrives, whichever is first; with a
    second ARG N, only after every Nth reply."""
    if bot.ponder_stop is not None:
        bot.ponder_stop.set()  # the request is here: stop thinking on the other's time
    sys.setswitchinterval(0.0001)
    bot.play_random(request)
    every = int(bot.args[1]) if len(bot.args) > 1 else 1
    if bot.requests_seen % every:
        bot.ponder_stop = None
        return
    stop = bot.ponder_stop = threading.Event()
    budget_s = float(bot.args[0]) / 1000

    def think() -> None:
        while not bot.outbox.empty():  # the reply is not yet taken by gRPC's sender
            time.sleep(0.0001)
        start = time.thread_time()
        while not stop.is_set() and time.thread_time() - start < budget_s:
            pass

    threading.Thread(target=think, daemon=True).start()


def four_card_hand(bot: Bot, request: referee_pb2.ActionRequest) -> None:
    """Keeps its hand in a fixed array of four: a hand of five is an IndexError."""
    slots = [""] * 4
    for index, card in enumerate(request.observation.hand):
        slots[index] = card
    bot.play_random(request)


ON_REQUEST: dict[str, Callable[[Bot, referee_pb2.ActionRequest], None]] = {
    "sleep_forever": sleep_forever,
    "at_memory_limit": at_memory_limit,
    "late_once": late_once,
    "paced": paced,
    "exit_midgame": exit_midgame,
    "raise_error": raise_error,
    "leak_and_crash": leak_and_crash,
    "garbage_stdout": garbage_stdout,
    "oversized": oversized,
    "stale_id": stale_id,
    "flood": flood,
    "illegal": illegal,
    "malformed_action": malformed_action,
    "tcp": tcp,
    "write_outside": write_outside,
    "read_other": read_other,
    "spinner_crash": spinner_crash,
    "exit_after_turn": exit_after_turn,
    "spinner_exit_after_turn": exit_after_turn,
    "no_final_pass": no_final_pass,
    "panic": panic,
    "four_card_hand": four_card_hand,
    "ponder": ponder,
}


if __name__ == "__main__":
    Bot(sys.argv[2], sys.argv[3:]).run()
