"""A scripted referee: a real gRPC server on a temporary Unix socket.

It plays a fixed conversation (Welcome, GameStart, one ActionRequest built
from a real engine state, then GameOver and MatchOver, or a Goodbye; optionally
a Goodbye or a broken stream after MatchOver) so the
tests can run real bot processes against it and watch what they send.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from arena import kahuna
from arena.protocol.convert import actions_to_pb, observation_to_pb
from arena.protocol.gen.kahuna.v1 import referee_pb2, referee_pb2_grpc

TOKEN = "scripted-token"
REQUEST_ID = 12345678901  # beyond 32 bits: uint64 must survive every language


@dataclass
class Conversation:
    received: list[referee_pb2.PlayRequest] = field(default_factory=list)
    finished: threading.Event = field(default_factory=threading.Event)
    legal_texts: list[str] = field(default_factory=list)


class ScriptedReferee(referee_pb2_grpc.RefereeServiceServicer):
    def __init__(
        self, conversation: Conversation, *, goodbye: bool, after_match_over: str | None,
        no_legal: bool = False,
    ) -> None:  # fmt: skip
        self.conversation = conversation
        self.goodbye = goodbye
        self.after_match_over = after_match_over
        self.no_legal = no_legal

    def Play(
        self, request_iterator: Iterator[referee_pb2.PlayRequest], context: grpc.ServicerContext
    ) -> Iterator[referee_pb2.PlayResponse]:
        received = self.conversation.received
        try:
            received.append(next(request_iterator))
            if self.goodbye:
                yield referee_pb2.PlayResponse(
                    goodbye=referee_pb2.Goodbye(
                        status=referee_pb2.BOT_STATUS_PROTOCOL_VIOLATION, reason="scripted"
                    )
                )
                return
            yield referee_pb2.PlayResponse(
                welcome=referee_pb2.Welcome(protocol_version=1, match_id="m", games=1)
            )
            yield referee_pb2.PlayResponse(
                game_start=referee_pb2.GameStart(game_index=0, seat=0, opponent_name="x")
            )
            yield referee_pb2.PlayResponse(action_request=self._request())
            received.append(next(request_iterator))
            yield referee_pb2.PlayResponse(
                game_over=referee_pb2.GameOver(game_index=0, reason="forfeit", record_json="{}")
            )
            yield referee_pb2.PlayResponse(
                match_over=referee_pb2.MatchOver(your_score=1.0, opponent_score=0.0, games=1)
            )
            if self.after_match_over == "goodbye":
                yield referee_pb2.PlayResponse(
                    goodbye=referee_pb2.Goodbye(
                        status=referee_pb2.BOT_STATUS_PROTOCOL_VIOLATION, reason="after the end"
                    )
                )
            elif self.after_match_over == "abort":
                context.abort(grpc.StatusCode.INTERNAL, "stream broken after the end")
        finally:
            self.conversation.finished.set()

    def _request(self) -> referee_pb2.ActionRequest:
        state = kahuna.new_game(kahuna.deal_from_seed(5))
        legal = sorted(kahuna.legal_actions(state), key=kahuna.Action.text)
        self.conversation.legal_texts = [action.text() for action in legal]
        return referee_pb2.ActionRequest(
            request_id=REQUEST_ID,
            game_index=0,
            observation=observation_to_pb(state, 0, [], 0),
            legal_actions=actions_to_pb([] if self.no_legal else legal),
            action_deadline_ms=2000,
            time_bank_ms=30000,
        )


class ScriptedServer:
    """Context manager: the server, its ``target`` and the ``conversation``.

    ``goodbye``: cut the bot off right after its Hello. ``after_match_over``:
    ``"goodbye"`` sends a Goodbye after MatchOver, ``"abort"`` ends the stream
    with an error status after MatchOver (the match result must stand). ``no_legal``: the
    request lists no legal action (a referee's bug a bot must not answer with a crash).
    """

    def __init__(
        self, *, goodbye: bool = False, tcp: bool = False, after_match_over: str | None = None,
        no_legal: bool = False,
    ) -> None:  # fmt: skip
        self.conversation = Conversation()
        self._dir = Path(tempfile.mkdtemp(prefix="kb-"))  # short: sun_path < 108 bytes
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        servicer = ScriptedReferee(
            self.conversation, goodbye=goodbye, after_match_over=after_match_over,
            no_legal=no_legal,
        )  # fmt: skip
        referee_pb2_grpc.add_RefereeServiceServicer_to_server(servicer, self._server)
        if tcp:  # a remote bot: host:port, port chosen by the OS
            port = self._server.add_insecure_port("127.0.0.1:0")
            self.target = f"127.0.0.1:{port}"
        else:
            self.target = f"unix://{self._dir / 'referee.sock'}"
            self._server.add_insecure_port(self.target)

    def __enter__(self) -> ScriptedServer:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop(grace=None)
        shutil.rmtree(self._dir, ignore_errors=True)
