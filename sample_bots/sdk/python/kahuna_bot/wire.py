"""One gRPC bidirectional stream over HTTP/2 on a blocking socket: the bot's transport.

The bot speaks gRPC to the referee as the gRPC-over-HTTP/2 specification
(PROTOCOL-HTTP2 of gRPC) defines it: a ``POST`` of the method's path with
``content-type: application/grpc`` and ``te: trailers``, each message a
5-byte prefix (0 for uncompressed, then the length, big-endian) and its
bytes, in DATA frames both ways; the server ends the call with trailers
``grpc-status`` and ``grpc-message`` (or with headers that carry them and
end the stream at once: "Trailers-Only"). HTTP/2 itself (frames, HPACK,
flow control, the connection's settings and pings) is the ``h2`` library's.

Why not ``grpcio``: a bot plays one stream, with one message out for each
one in, and a sandboxed bot is launched twice per paired match.
Importing ``grpc`` and ``grpc.aio`` costs a launch more CPU than this module,
``h2`` and the socket together, and a decision costs less with no event loop
and no transport threads: everything runs in the caller's thread
(``benchmarks/launch_cost.py``, ``benchmarks/sdk.py``; figures in
docs/reference/PROTOCOL.md).
"""

from __future__ import annotations

import _socket
import collections
import contextlib
import errno
import re
import time
from dataclasses import dataclass

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

PREFIX_BYTES = 5
READ_BYTES = 64 * 1024
"""Read into one buffer of this size, made once: ``recv(n)`` allocates ``n`` bytes per
call, and at 256 KiB that was an ``mmap``, an ``mremap`` and a ``munmap`` per read
(strace), more CPU than the read itself."""
RECEIVE_WINDOW = 16 * 1024 * 1024
"""Our receive window (the stream's and the connection's): the referee's messages never
wait for a WINDOW_UPDATE, and we send one only after 8 MiB read."""
RETRY_CONNECT_S = 0.02
"""Pause between attempts while the server's socket refuses connections (not listening
yet); the caller's connect timeout bounds them all."""


class TargetError(ValueError):
    """``KAHUNA_REFEREE`` is not an address this transport can reach."""


class CallError(Exception):
    """The call ended without an OK status: ``code`` is a gRPC status code's name
    (``UNAVAILABLE``, ``CANCELLED``, ...), ``details`` what the server said, if anything."""

    def __init__(self, code: str, details: str = "") -> None:
        super().__init__(f"{code} {details}".rstrip())
        self.code = code
        self.details = details


@dataclass(frozen=True)
class Target:
    """Where the referee listens: a Unix socket path, or a TCP host and port."""

    unix_path: str | None = None
    host: str = ""
    port: int = 0

    @property
    def authority(self) -> str:
        """The ``:authority`` header gRPC clients send for this target."""
        if self.unix_path is not None:
            return "localhost"
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


GRPC_CODES = (
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED",
)  # fmt: skip


def code_name(value: str) -> str:
    """The name of a ``grpc-status`` value (``"14"`` -> ``UNAVAILABLE``)."""
    if value.isdigit() and int(value) < len(GRPC_CODES):
        return GRPC_CODES[int(value)]
    return "UNKNOWN"


_PERCENT = re.compile(rb"%([0-9A-Fa-f]{2})")


def unquote_message(value: bytes) -> str:
    """A ``grpc-message`` value: percent-encoded UTF-8 (gRPC's PROTOCOL-HTTP2), decoded;
    malformed escapes are kept as they are. (``urllib.parse`` would cost every launch
    its import: ``ipaddress`` and more.)"""
    return _PERCENT.sub(lambda m: bytes((int(m.group(1), 16),)), value).decode("utf-8", "replace")


def parse_target(text: str) -> Target:
    """A gRPC target as bots are given it: ``unix:///abs/path`` (or ``unix:path``),
    ``host:port``, ``[v6]:port``, with an optional ``dns:///``, ``ipv4:`` or ``ipv6:``
    scheme; TargetError naming what is wrong."""
    if text.startswith("unix:"):
        path = text[len("unix:") :]
        if path.startswith("//"):
            path = path[2:]
            if not path.startswith("/"):
                raise TargetError(f"{text!r}: unix:// needs an absolute path (unix:///path)")
        if not path:
            raise TargetError(f"{text!r}: no socket path after unix:")
        return Target(unix_path=path)
    for scheme in ("dns:///", "dns:", "ipv4:", "ipv6:"):
        if text.startswith(scheme):
            text = text[len(scheme) :]
            break
    host, colon, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise TargetError(f"{text!r}: expected unix:///path/to/socket or host:port")
    return Target(host=host, port=int(port))


def connect(target: Target, timeout_s: float) -> _socket.socket:
    """A connected blocking socket, trying again while the server is not listening yet;
    TimeoutError once ``timeout_s`` has passed.

    A Unix socket is the interpreter's own socket type (``_socket``): the ``socket``
    module around it (its enums, ``selectors``) would cost every sandboxed bot's
    launch more CPU than this whole module, and is imported for a TCP target only.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no connection within {timeout_s:g} s")
        try:
            if target.unix_path is not None:
                sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
                try:
                    sock.settimeout(left)
                    sock.connect(target.unix_path)
                except BaseException:
                    sock.close()
                    raise
            else:
                import socket

                sock = socket.create_connection((target.host, target.port), timeout=left)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (ConnectionRefusedError, FileNotFoundError):
            time.sleep(min(RETRY_CONNECT_S, max(0.0, deadline - time.monotonic())))
            continue
        except OSError as error:
            if error.errno in (errno.ECONNREFUSED, errno.ENOENT, errno.EAGAIN):
                time.sleep(min(RETRY_CONNECT_S, max(0.0, deadline - time.monotonic())))
                continue
            if isinstance(error, TimeoutError):
                raise TimeoutError(f"no connection within {timeout_s:g} s") from error
            raise
        sock.settimeout(None)
        return sock


class MessageReader:
    """gRPC's length-prefixed messages out of a stream's DATA, however it is split."""

    def __init__(self, max_bytes: int) -> None:
        self._buffer = bytearray()
        self._max_bytes = max_bytes

    def feed(self, data: bytes) -> list[bytes]:
        """Append ``data``; every message now complete, in order. CallError for a
        compressed or oversized message."""
        buffer = self._buffer
        buffer += data
        messages: list[bytes] = []
        start = 0
        while len(buffer) - start >= PREFIX_BYTES:
            if buffer[start] != 0:
                raise CallError("INTERNAL", "a compressed message (none was asked for)")
            length = int.from_bytes(buffer[start + 1 : start + PREFIX_BYTES], "big")
            if length > self._max_bytes:
                raise CallError(
                    "RESOURCE_EXHAUSTED",
                    f"a message of {length} bytes (more than {self._max_bytes})",
                )
            end = start + PREFIX_BYTES + length
            if len(buffer) < end:
                break
            messages.append(bytes(buffer[start + PREFIX_BYTES : end]))
            start = end
        if start:
            del buffer[:start]
        return messages

    @property
    def partial(self) -> bool:
        """Part of a message is buffered (a stream that ends now ends mid-message)."""
        return bool(self._buffer)


def frame(message: bytes) -> bytes:
    """One gRPC message on the wire: uncompressed, its length, its bytes."""
    return b"\x00" + len(message).to_bytes(4, "big") + message


class Call:
    """One bidirectional-streaming call on a connection of its own.

    ``send`` a message, ``receive`` the next one (None once the server ended the call
    with status OK; CallError for any other end), ``done_writing`` to half-close,
    ``cancel`` to reset the stream and close the connection. Blocking, one thread.
    """

    def __init__(
        self,
        target: Target,
        method: str,
        *,
        connect_timeout_s: float,
        max_receive_bytes: int,
        metadata: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self._sock = connect(target, connect_timeout_s)
        config = h2.config.H2Configuration(client_side=True, header_encoding=None)
        self._conn = h2.connection.H2Connection(config=config)
        self._conn.local_settings = h2.settings.Settings(
            client=True,
            initial_values={
                h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: RECEIVE_WINDOW,
                h2.settings.SettingCodes.ENABLE_PUSH: 0,
                h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: 64 * 1024,
            },
        )
        self._reader = MessageReader(max_receive_bytes)
        self._read_buffer = bytearray(READ_BYTES)
        self._read_view = memoryview(self._read_buffer)
        self._pending: collections.deque[bytes] = collections.deque()
        self._deadline: float | None = None  # monotonic; reads end there (set_deadline)
        self._ended = False
        self._status: CallError | None = None  # the end, once known (code OK: None below)
        self._ok = False
        self._closed = False
        try:
            self._conn.initiate_connection()
            self._conn.increment_flow_control_window(RECEIVE_WINDOW - 65535)
            self._stream = self._conn.get_next_available_stream_id()
            headers = [
                (b":method", b"POST"),
                (b":scheme", b"http"),
                (b":path", method.encode()),
                (b":authority", target.authority.encode()),
                (b"content-type", b"application/grpc"),
                (b"te", b"trailers"),
                (b"user-agent", b"kahuna-bot-python"),
                *((key.encode(), value.encode()) for key, value in metadata),
            ]
            self._conn.send_headers(self._stream, headers)
            self._flush()
        except BaseException:
            self._sock.close()
            raise

    def send(self, message: bytes) -> None:
        """Write one message (waiting for the server's flow-control window if need be);
        CallError if the call has ended."""
        data = frame(message)
        while data:
            if self._ended:
                raise self._status or CallError("INTERNAL", "the call ended")
            window = min(
                self._conn.local_flow_control_window(self._stream),
                self._conn.max_outbound_frame_size,
            )
            if window <= 0:
                self._read_some()  # a WINDOW_UPDATE, or the end
                continue
            chunk, data = data[:window], data[window:]
            try:
                self._conn.send_data(self._stream, chunk)
            except h2.exceptions.ProtocolError as error:  # the stream or connection closed
                self._end(CallError("UNAVAILABLE", f"the call cannot send any more: {error}"))
                raise self._status or CallError("INTERNAL", "the call ended") from error
        self._write_out()

    def receive(self) -> bytes | None:
        """The next message, or None once the call ended with status OK."""
        while not self._pending:
            if self._ended:
                if self._status is not None:
                    raise self._status
                return None
            self._read_some()
        return self._pending.popleft()

    def set_timeout(self, seconds: float | None) -> None:
        """How long a read may wait from now on (None: for ever); past it, the call ends
        (CallError ``DEADLINE_EXCEEDED``)."""
        self._sock.settimeout(seconds)

    def set_deadline(self, seconds: float) -> None:
        """Every read from now on ends within ``seconds`` in all, however a peer spaces its
        bytes (a timeout per read would let a byte every few seconds keep the call open);
        past it, the call ends (CallError ``DEADLINE_EXCEEDED``)."""
        self._deadline = time.monotonic() + seconds

    def done_writing(self) -> None:
        """Half-close: no more messages from us (nothing happens once the call ended)."""
        if self._ended:
            return
        try:
            self._conn.end_stream(self._stream)
        except h2.exceptions.ProtocolError as error:
            self._end(CallError("UNAVAILABLE", f"the call cannot send any more: {error}"))
            return
        with contextlib.suppress(CallError):  # the next read reports the end
            self._write_out()

    def cancel(self) -> None:
        """Reset the stream if it is still open, and close the connection."""
        if self._closed:
            return
        self._closed = True
        try:
            if not self._ended:
                self._conn.reset_stream(self._stream, h2.errors.ErrorCodes.CANCEL)
            self._conn.close_connection()
            self._flush()
        except (OSError, h2.exceptions.ProtocolError):
            pass
        finally:
            self._sock.close()

    def _flush(self) -> None:
        data = self._conn.data_to_send()
        if data:
            self._sock.sendall(data)

    def _write_out(self) -> None:
        """``_flush``, a failed write ending the call (CallError ``UNAVAILABLE``)."""
        try:
            self._flush()
        except OSError as error:
            self._end(CallError("UNAVAILABLE", f"writing the connection: {error.strerror}"))
            raise self._status or CallError("INTERNAL", "the call ended") from error

    def _read_some(self) -> None:
        if self._deadline is not None:
            left = self._deadline - time.monotonic()
            if left <= 0:
                self._end(CallError("DEADLINE_EXCEEDED", "the call's deadline passed"))
                return
            self._sock.settimeout(left)
        try:
            size = self._sock.recv_into(self._read_buffer)
        except TimeoutError:
            self._end(CallError("DEADLINE_EXCEEDED", "nothing read in time"))
            return
        except OSError as error:
            self._end(CallError("UNAVAILABLE", f"reading the connection: {error.strerror}"))
            return
        if not size:
            self._end(CallError("UNAVAILABLE", "the connection closed"))
            return
        try:
            events = self._conn.receive_data(bytes(self._read_view[:size]))
        except h2.exceptions.ProtocolError as error:
            self._end(CallError("INTERNAL", f"HTTP/2: {error}"))
            return
        for event in events:
            self._on_event(event)
        with contextlib.suppress(OSError):  # the next read reports the end
            self._flush()  # acknowledgements: SETTINGS, PING, WINDOW_UPDATE

    def _on_event(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.DataReceived):
            if event.stream_id != self._stream:
                return
            self._conn.acknowledge_received_data(event.flow_controlled_length, self._stream)
            try:
                self._pending += self._reader.feed(event.data)
            except CallError as error:
                self._end(error)
                self._conn.reset_stream(self._stream, h2.errors.ErrorCodes.CANCEL)
        elif isinstance(event, h2.events.ResponseReceived):
            headers = dict(event.headers)
            if headers.get(b":status") != b"200":
                status = headers.get(b":status", b"?").decode()
                self._end(CallError("UNKNOWN", f"HTTP status {status}"))
            elif b"grpc-status" in headers:  # Trailers-Only
                self._on_trailers(headers)
        elif isinstance(event, h2.events.TrailersReceived):
            self._on_trailers(dict(event.headers))
        elif isinstance(event, h2.events.StreamEnded):
            if event.stream_id == self._stream and not self._ended:
                self._end(CallError("INTERNAL", "the call ended without a status"))
        elif isinstance(event, h2.events.StreamReset):
            if event.stream_id == self._stream:
                code = "CANCELLED" if event.error_code == h2.errors.ErrorCodes.CANCEL else (
                    "INTERNAL")  # fmt: skip
                self._end(CallError(code, f"stream reset ({event.error_code!s})"))
        elif isinstance(event, h2.events.ConnectionTerminated):
            last = event.last_stream_id
            if last is None or last < self._stream or event.error_code != 0:
                self._end(CallError("UNAVAILABLE", f"GOAWAY ({event.error_code!s})"))

    def _on_trailers(self, headers: dict[bytes, bytes]) -> None:
        code = code_name(headers.get(b"grpc-status", b"").decode("ascii", "replace"))
        details = unquote_message(headers.get(b"grpc-message", b""))
        if code == "OK":
            if self._reader.partial:
                self._end(CallError("INTERNAL", "the call ended in the middle of a message"))
            else:
                self._end(None)
        else:
            self._end(CallError(code, details))

    def _end(self, status: CallError | None) -> None:
        if not self._ended:
            self._ended = True
            self._status = status
