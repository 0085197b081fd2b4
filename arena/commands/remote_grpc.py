"""The one module of `arena remote` that talks gRPC: a channel to a saved arena, its calls.

Everything else (arguments, saved login, printed rows, refusals) lives in
arena/commands/remote.py as functions that need no socket.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import grpc

from arena.bots.archive import UPLOAD_CHUNK_BYTES
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc

CALL_TIMEOUT_S = 30.0
SUBMIT_TIMEOUT_S = 300.0  # the server plays a smoke match before it answers
BUNDLE_TIMEOUT_S = 600.0  # a big tournament's every record
STOP_TIMEOUT_S = 60.0  # the server waits up to 30 s for a stopping runner's matches


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where an arena is and how to reach it (what `arena remote login` saves)."""

    address: str  # host:port
    token: str
    tls: bool = False
    tls_ca: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None


def _read(path: Path | None) -> bytes | None:
    return None if path is None else path.read_bytes()


def credentials(endpoint: Endpoint) -> grpc.ChannelCredentials | None:
    """TLS credentials for ``endpoint`` (None: plaintext); OSError names an unreadable file."""
    if not endpoint.tls:
        return None
    return grpc.ssl_channel_credentials(
        root_certificates=_read(endpoint.tls_ca),  # None: gRPC's own roots
        private_key=_read(endpoint.tls_key),
        certificate_chain=_read(endpoint.tls_cert),
    )


def upload_requests(request: pb.SubmitBotRequest) -> Iterator[pb.UploadBotRequest]:
    """UploadBot's messages for ``request``: its start, then its archive in chunks."""
    archive = request.archive
    yield pb.UploadBotRequest(
        start=pb.UploadBotStart(format=request.format, size=len(archive))
    )
    for at in range(0, len(archive), UPLOAD_CHUNK_BYTES):
        yield pb.UploadBotRequest(chunk=archive[at : at + UPLOAD_CHUNK_BYTES])


class Client:
    """ArenaService calls with the endpoint's token; a context manager owning the channel."""

    def __init__(self, endpoint: Endpoint) -> None:
        creds = credentials(endpoint)
        self.channel = (
            grpc.insecure_channel(endpoint.address)
            if creds is None
            else grpc.secure_channel(endpoint.address, creds)
        )
        self.stub = pb_grpc.ArenaServiceStub(self.channel)
        self.metadata = (("authorization", f"Bearer {endpoint.token}"),)

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.channel.close()

    def list_bots(self) -> pb.ListBotsResponse:
        return self.stub.ListBots(
            pb.ListBotsRequest(), metadata=self.metadata, timeout=CALL_TIMEOUT_S
        )

    def tournaments(self) -> pb.ListTournamentsResponse:
        return self.stub.ListTournaments(
            pb.ListTournamentsRequest(), metadata=self.metadata, timeout=CALL_TIMEOUT_S
        )

    def submit(self, request: pb.SubmitBotRequest) -> pb.SubmitBotResponse:
        """``request``'s archive streamed by UploadBot (SubmitBot to an arena without it)."""
        try:
            reply = self.stub.UploadBot(
                upload_requests(request), metadata=self.metadata, timeout=SUBMIT_TIMEOUT_S
            )
        except grpc.RpcError as error:
            if not isinstance(error, grpc.Call) or error.code() != grpc.StatusCode.UNIMPLEMENTED:
                raise
            return self.stub.SubmitBot(request, metadata=self.metadata, timeout=SUBMIT_TIMEOUT_S)
        return pb.SubmitBotResponse.FromString(reply.SerializeToString())  # the same fields

    def leaderboard(self, request: pb.GetLeaderboardRequest) -> pb.GetLeaderboardResponse:
        return self.stub.GetLeaderboard(request, metadata=self.metadata, timeout=CALL_TIMEOUT_S)

    def game_record(self, request: pb.GetGameRecordRequest) -> pb.GetGameRecordResponse:
        return self.stub.GetGameRecord(request, metadata=self.metadata, timeout=CALL_TIMEOUT_S)

    def audit_bundle(
        self, request: pb.GetAuditBundleRequest
    ) -> Iterator[pb.GetAuditBundleResponse]:
        yield from self.stub.GetAuditBundle(
            request, metadata=self.metadata, timeout=BUNDLE_TIMEOUT_S
        )

    def create_tournament(
        self, request: pb.CreateTournamentRequest
    ) -> pb.CreateTournamentResponse:
        return self.stub.CreateTournament(request, metadata=self.metadata, timeout=CALL_TIMEOUT_S)

    def create_token(self, request: pb.CreateUserTokenRequest) -> pb.CreateUserTokenResponse:
        return self.stub.CreateUserToken(request, metadata=self.metadata, timeout=CALL_TIMEOUT_S)

    def list_tokens(self, user: str) -> pb.ListUserTokensResponse:
        return self.stub.ListUserTokens(
            pb.ListUserTokensRequest(user=user), metadata=self.metadata, timeout=CALL_TIMEOUT_S
        )

    def revoke_tokens(self, request: pb.RevokeUserTokenRequest) -> pb.RevokeUserTokenResponse:
        return self.stub.RevokeUserToken(request, metadata=self.metadata, timeout=CALL_TIMEOUT_S)

    def start_tournament(self, name: str) -> pb.StartTournamentResponse:
        return self.stub.StartTournament(
            pb.StartTournamentRequest(name=name), metadata=self.metadata, timeout=CALL_TIMEOUT_S
        )

    def stop_tournament(self, name: str) -> pb.StopTournamentResponse:
        """Waits for the server's runner to stop (up to its own limit, then an error)."""
        return self.stub.StopTournament(
            pb.StopTournamentRequest(name=name), metadata=self.metadata, timeout=STOP_TIMEOUT_S
        )

    def export_games(self, request: pb.ExportGamesRequest) -> Iterator[pb.ExportGamesResponse]:
        """The public games, one message each (no deadline: an export may be millions)."""
        yield from self.stub.ExportGames(request, metadata=self.metadata)

    def watch(self, request: pb.WatchTournamentRequest) -> Iterator[pb.WatchTournamentResponse]:
        """The tournament's progress until it ends (no deadline: a watch may last hours)."""
        yield from self.stub.WatchTournament(request, metadata=self.metadata)
