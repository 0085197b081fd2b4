"""What a Ray node's ports tell a host that does not hold the cluster's token.

``listening`` lists the TCP ports a node's processes listen on (``ss`` in the
node's network namespace); ``probe`` (run on another host, ``python -m
arena.testing.ray_ports HOST PORT...``) connects to each from there and asks
what an outsider would: an HTTP ``GET /`` and, over gRPC, a harmless read of
each Ray service (the cluster's id and nodes, a raylet's configuration and
stats, a worker's stats, an object manager's no-op), each without the token.
It prints one JSON object: per port, ``closed`` or what answered (the HTTP
status, and each gRPC call's status code: ``UNAUTHENTICATED`` where the token
is asked, ``UNIMPLEMENTED`` where that service is not served, ``OK`` where
something was given away).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

# (method, what it would give away); each asked with an empty request
GRPC_READS = (
    ("/ray.rpc.NodeInfoGcsService/GetClusterId", "the cluster's id"),
    ("/ray.rpc.NodeInfoGcsService/GetAllNodeInfo", "every node's address and ports"),
    ("/ray.rpc.JobInfoGcsService/GetAllJobInfo", "every driver's address"),
    ("/ray.rpc.NodeManagerService/GetSystemConfig", "the raylet's configuration"),
    ("/ray.rpc.NodeManagerService/GetNodeStats", "the node's workers and objects"),
    ("/ray.rpc.CoreWorkerService/GetCoreWorkerStats", "a worker's tasks and objects"),
    ("/ray.rpc.ObjectManagerService/Pull", "an object of the store (none named)"),
)


@dataclass(frozen=True)
class Listener:
    address: str  # "*" for every address of the host
    port: int
    process: str


def listening(netns_argv: Sequence[str]) -> list[Listener]:
    """The TCP listeners of the network namespace that ``netns_argv`` (a command prefix,
    e.g. ``nsenter --net=... --``) enters."""
    done = subprocess.run([*netns_argv, "ss", "-ltnpH"], capture_output=True, text=True,
                          check=True, timeout=30)  # fmt: skip
    found = []
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        address, _, port = fields[3].rpartition(":")
        process = line.split('(("', 1)[1].split('"', 1)[0] if '(("' in line else "?"
        found.append(Listener(address.strip("[]"), int(port), process))
    return sorted(found, key=lambda listener: listener.port)


def _http(host: str, port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/", timeout=3) as answer:
            return f"HTTP {answer.status}"
    except urllib.error.HTTPError as error:
        return f"HTTP {error.code}"
    except Exception as error:  # not HTTP (gRPC answers with a binary frame)
        return f"no HTTP ({type(error).__name__})"


def _grpc(host: str, port: int) -> dict[str, str]:
    import grpc

    codes = {}
    with grpc.insecure_channel(f"{host}:{port}") as channel:
        for method, _what in GRPC_READS:
            call = channel.unary_unary(method, request_serializer=lambda _: b"",
                                       response_deserializer=lambda raw: raw)  # fmt: skip
            try:
                call(None, timeout=5)
                codes[method] = "OK"
            except grpc.RpcError as error:
                codes[method] = error.code().name
    return codes


def probe(host: str, ports: Sequence[int]) -> dict[int, object]:
    """What each of ``ports`` of ``host`` answers (see the module docstring)."""
    found: dict[int, object] = {}
    for port in ports:
        try:
            socket.create_connection((host, port), timeout=3).close()
        except OSError as error:
            found[port] = f"closed ({type(error).__name__})"
            continue
        http = _http(host, port)
        found[port] = {"http": http, "grpc": {} if http.startswith("HTTP") else _grpc(host, port)}
    return found


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    print(json.dumps(probe(args[0], [int(port) for port in args[1:]])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
