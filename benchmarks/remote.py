"""Remote bots: what the `arena serve` gateway adds to each decision.

    python3 benchmarks/remote.py [--games 4] [--tls]

A real `arena serve` (port 0, temporary data directory) runs a round-robin
between the random sample bot in the sandbox and the very same bot program
played as a remote bot (the SDK connector runs it with the seat token, over
TCP through the gateway). The referee times every action (``timings`` in the
records: request sent to reply received); the figures compare the two seats.
``--tls`` serves TLS (a certificate made for the run, tests/server/pki.py)
and the connector relays the bot's stream over it (kahuna_bot.relay).
Prints figures; asserts nothing. Timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

import grpc

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.referee import load_bot
from arena.server.app import create_server
from arena.server.arena_service import ServiceOptions
from arena.server.tls import load_server_tls
from arena.store import (
    Store,
    add_bot_version,
    create_token,
    ensure_admin_token,
    game_record,
    get_tournament,
    list_games,
)

REPO = Path(__file__).resolve().parents[1]
SDK_DIR = REPO / "sample_bots" / "sdk" / "python"
REMOTE = "random_remote"


def _wall_ms_by_bot(store: Store, tournament_id: int) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    for game in list_games(store, tournament_id=tournament_id, limit=10_000):
        match = game_record(store, game.id)["match"]
        assert isinstance(match, dict)
        for timing in match["timings"]:
            found.setdefault(game.bots[timing["seat"]], []).append(float(timing["wall_ms"]))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="games in the match (even)")
    parser.add_argument("--tls", action="store_true", help="TLS on the port, relayed bot")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kahuna-bench-") as work:
        store = Store.open(Path(work) / "data")
        add_bot_version(store, load_bot(SAMPLE_RANDOM_BOT))
        server_credentials, channel_credentials, tls_flags = None, None, []
        if args.tls:
            sys.path.insert(0, str(REPO))
            from tests.server.pki import make_pki

            pki = make_pki(Path(work) / "pki", "bench")
            tls = load_server_tls(pki.server.cert_path, pki.server.key_path)
            server_credentials = tls.grpc_credentials()
            channel_credentials = grpc.ssl_channel_credentials(pki.ca.cert_pem)
            tls_flags = ["--tls-ca", str(pki.ca.cert_path)]
        server, port = create_server(
            "127.0.0.1:0", store=store, options=ServiceOptions(), credentials=server_credentials
        )
        server.start()
        auth = (("authorization", f"Bearer {ensure_admin_token(store)}"),)
        user = create_token(store, "bench")
        target = f"127.0.0.1:{port}"
        with (
            grpc.insecure_channel(target)
            if channel_credentials is None
            else grpc.secure_channel(target, channel_credentials)
        ) as channel:
            stub = pb_grpc.ArenaServiceStub(channel)
            stub.RegisterRemoteBot(
                pb.RegisterRemoteBotRequest(name=REMOTE),
                metadata=(("authorization", f"Bearer {user}"),),
            )
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SDK_DIR), str(REPO)]),
                       KAHUNA_USER_TOKEN=user)
            connector = subprocess.Popen(
                [sys.executable, "-m", "kahuna_bot.remote", "--arena", target, *tls_flags,
                 "--bot", REMOTE, "--max-seats", "1", "--",
                 sys.executable, str(SAMPLE_RANDOM_BOT / "bot.py")],
                env=env, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            started = time.perf_counter()
            reply = stub.CreateTournament(
                pb.CreateTournamentRequest(
                    name="bench", format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN,
                    bots=[REMOTE, "python_random"], games_per_match=args.games, start=True,
                ),
                metadata=auth,
            )  # fmt: skip
            while get_tournament(store, reply.tournament.id).status != "finished":
                time.sleep(0.05)
            elapsed_s = time.perf_counter() - started
            connector.wait(30)
        server.stop(grace=None)
        by_bot = _wall_ms_by_bot(store, reply.tournament.id)
        store.close()
    print(f"{args.games} games in {elapsed_s:.1f} s (wall, including launches)")
    remote = "remote, relay+TLS+gateway" if args.tls else "remote, TCP via gateway"
    for bot, label in ((REMOTE, remote), ("python_random", "sandboxed, Unix")):
        times = sorted(by_bot.get(bot, []))
        if not times:
            print(f"{label:26s} no actions")
            continue
        p90 = times[int(0.9 * (len(times) - 1))]
        print(
            f"{label:26s} {len(times):5d} actions  median {statistics.median(times):.3f} ms"
            f"  mean {statistics.fmean(times):.3f} ms  p90 {p90:.3f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
