"""An admin's API calls for tests that cannot reach the server from their own process.

``arena serve --ray`` runs in a Ray cluster's network namespace
(``arena.testing.ray_cluster``), where 127.0.0.1 is the namespace's own
loopback: the test runs this client there (``NetnsCluster.netns_argv``).

    python -m arena.testing.api_client PORT TOKEN_FILE create NAME BOT... --games N --seed S
    python -m arena.testing.api_client PORT TOKEN_FILE start-watch NAME

``create``: CreateTournament (round robin, not started). ``start-watch``:
StartTournament, then WatchTournament to its end; prints one JSON line: the
game ids the stream announced (in order), its messages, and the tournament as
its last message and then ListTournaments give it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import grpc

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc

TIMEOUT_S = 300.0


def _tournament(message: pb.Tournament) -> dict[str, object]:
    return {"name": message.name, "status": message.status,
            "games_played": message.games_played,
            "games_scheduled": message.games_scheduled}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("token_file", type=Path)
    parser.add_argument("what", choices=["create", "start-watch"])
    parser.add_argument("name")
    parser.add_argument("bots", nargs="*")
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    metadata = (("authorization", f"Bearer {args.token_file.read_text().strip()}"),)
    with grpc.insecure_channel(f"127.0.0.1:{args.port}") as channel:
        stub = pb_grpc.ArenaServiceStub(channel)
        if args.what == "create":
            request = pb.CreateTournamentRequest(
                name=args.name, format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN, bots=args.bots,
                games_per_match=args.games, seed=args.seed,
            )  # fmt: skip
            stub.CreateTournament(request, metadata=metadata, timeout=TIMEOUT_S)
            return 0
        stub.StartTournament(
            pb.StartTournamentRequest(name=args.name), metadata=metadata, timeout=TIMEOUT_S
        )
        games: list[int] = []
        messages: list[str] = []
        last: dict[str, object] = {}
        watch = pb.WatchTournamentRequest(name=args.name)
        for event in stub.WatchTournament(watch, metadata=metadata, timeout=TIMEOUT_S):
            messages.append(event.message)
            if event.game_id:
                games.append(event.game_id)
            last = _tournament(event.tournament)
        listed = stub.ListTournaments(
            pb.ListTournamentsRequest(), metadata=metadata, timeout=TIMEOUT_S
        )
        final = next(_tournament(t) for t in listed.tournaments if t.name == args.name)
    print(json.dumps({"games": games, "messages": messages, "last": last, "listed": final}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
