"""`arena export` speed: public games exported to Parquet per second.

    python3 benchmarks/export.py [--bots N] [--games-per-match G] [--seed S] [--remote]

Fills a fresh store in a temporary directory with a finished round robin of
seeded random games (arena.testing.demo_data: real records, ratings and
rating history, as a tournament stores them), then times
``export_public_games`` over it: games per wall second and per CPU second,
decisions per game, the files' sizes. One process, one core. With ``--remote``
the games come instead from a server on loopback in the same process
(ExportGames, as ``arena remote export`` reads them, into the same writer):
its CPU figure counts the server's work and the client's.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import grpc

from arena import store as st
from arena.export.writer import ExportSummary, export_public_games, write_games
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.server.app import create_server
from arena.server.exports import stored_game
from arena.testing.demo_data import play_demo_tournament


def remote_export(store: st.Store, out: Path) -> ExportSummary:
    """The store's public games through ExportGames on a loopback server, as the CLI does."""
    server, port = create_server("127.0.0.1:0", store=store)
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            metadata = (("authorization", f"Bearer {st.ensure_admin_token(store)}"),)
            sent = pb_grpc.ArenaServiceStub(channel).ExportGames(
                pb.ExportGamesRequest(), metadata=metadata
            )
            return write_games((stored_game(message) for message in sent), out)
    finally:
        server.stop(grace=None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=6)
    parser.add_argument("--games-per-match", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--remote", action="store_true", help="through ExportGames on loopback")
    args = parser.parse_args()
    bots = tuple(f"bot{i}" for i in range(args.bots))
    with tempfile.TemporaryDirectory() as tmp, st.Store.open(Path(tmp) / "data") as store:
        demo = play_demo_tournament(
            store, Path(tmp) / "bots", bots=bots, games_per_match=args.games_per_match,
            seed=args.seed,
        )  # fmt: skip
        wall, cpu = time.perf_counter(), time.process_time()
        if args.remote:
            summary = remote_export(store, Path(tmp) / "out")
        else:
            summary = export_public_games(store, Path(tmp) / "out")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert summary.games == len(demo.game_ids)
        size_mb = (summary.games_path.stat().st_size + summary.decisions_path.stat().st_size) / 1e6
        print(f"{summary.games} games, {summary.decisions} decisions "
              f"({summary.decisions / summary.games:.0f} per game), {size_mb:.1f} MB")
        print(f"{summary.games / wall:,.0f} games/s wall, {summary.games / cpu:,.0f} games/s CPU,"
              f" {summary.decisions / cpu:,.0f} decisions/s CPU")  # fmt: skip


if __name__ == "__main__":
    main()
