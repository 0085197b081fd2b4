"""`arena serve` assembly: one gRPC server with both services, health and reflection.

``create_server(address, store=...) -> (server, port)``: bind ``host:0`` in
tests to get a free port. The server carries the arena API
(``kahuna.v1.ArenaService``) and the bot-facing referee
(``kahuna.v1.RefereeService``) as a gateway for remote bots: a bot that says
Hello with a seat token is proxied to that seat's referee socket
(arena.server.gateway). Sandboxed bots keep their private per-match Unix
sockets (arena.referee.endpoint). Health checking
(``grpc.health.v1.Health``) reports SERVING for the server ("") and for each
service; reflection lists them, so ``buf curl``/``grpcurl`` work without the
proto files. With ``credentials`` (arena.server.tls) the one port speaks TLS
for all of them; without, it is plaintext, and binding anything but a
loopback address logs a warning that bearer and seat tokens travel in clear.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.bots.archive import MAX_ARCHIVE_BYTES, remove_stale_uploads
from arena.logs import get_logger
from arena.protocol.gen.kahuna.v1 import arena_service_pb2, arena_service_pb2_grpc, referee_pb2
from arena.server.arena_service import ArenaService, ServiceOptions
from arena.server.gateway import RefereeGateway
from arena.server.tls import is_loopback
from arena.store import Store

ARENA_SERVICE_NAME = arena_service_pb2.DESCRIPTOR.services_by_name["ArenaService"].full_name
MAX_RECEIVE_BYTES = MAX_ARCHIVE_BYTES + 64 * 1024  # an archive at the limit, plus the envelope
MAX_SEND_BYTES = 128 * 1024 * 1024
REFEREE_SERVICE_NAME = referee_pb2.DESCRIPTOR.services_by_name["RefereeService"].full_name
DEFAULT_MAX_WORKERS = 64
"""Threads for calls: each remote bot's Play and each WaitForSeats/Watch stream holds one."""


def create_server(
    address: str,
    *,
    store: Store,
    options: ServiceOptions | None = None,
    max_workers: int = DEFAULT_MAX_WORKERS,
    credentials: grpc.ServerCredentials | None = None,
) -> tuple[grpc.Server, int]:
    """A server (not yet started) bound to ``address``, and the port it got.

    ``credentials`` (``ServerTls.grpc_credentials()``) make the port TLS only.
    Raises RuntimeError naming the address when it cannot be bound.
    """
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="arena-api"),
        options=[
            ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
            ("grpc.max_send_message_length", MAX_SEND_BYTES),
            # gRPC sets SO_REUSEPORT by default on Linux: a second `arena serve` on the
            # same port would then start too and share its connections. Refuse instead.
            ("grpc.so_reuseport", 0),
        ],
    )
    stale = remove_stale_uploads()  # left by a server killed mid-upload (kill -9)
    if stale:
        get_logger(service="arena_api").info("stale_uploads_removed", count=len(stale))
    service = ArenaService(store, options)
    arena_service_pb2_grpc.add_ArenaServiceServicer_to_server(service, server)
    server.add_generic_rpc_handlers((RefereeGateway(store).handler(),))
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names: Sequence[str] = (ARENA_SERVICE_NAME, REFEREE_SERVICE_NAME, health.SERVICE_NAME)
    for name in ("", ARENA_SERVICE_NAME, REFEREE_SERVICE_NAME):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    reflection.enable_server_reflection((*names, reflection.SERVICE_NAME), server)
    try:
        if credentials is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, credentials)
    except RuntimeError as error:
        raise RuntimeError(f"cannot listen on {address}: {error}") from None
    if port == 0 and not address.startswith("unix:"):
        raise RuntimeError(f"cannot listen on {address}")
    host = address.rsplit(":", 1)[0] if not address.startswith("unix:") else address
    if credentials is None and not is_loopback(host):
        get_logger(service="arena_api").warning(
            "plaintext_api_on_network",
            address=address,
            message="no TLS: admin, user and seat tokens travel in clear to this address;"
            " give --tls-cert and --tls-key (or bind 127.0.0.1 behind a TLS proxy)",
        )
    return server, port
