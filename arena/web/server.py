"""The web interface behind the standard library's ``ThreadingHTTPServer``.

Why the standard library: the pages are a handful of read-only routes over
SQLite; a thread per request is plenty, there is no framework to keep up
with, and ``arena serve`` only has to call ``create_web_server`` to get a
running server on its own port (port 0 picks a free one, for tests). Given an
``ssl.SSLContext`` it serves HTTPS: the TLS handshake happens in each
connection's own thread, so a client that never completes it holds up no one.

Hardened against slow and greedy clients (``WebLimits``): every connection
reads through a ``_DeadlineReader``, so the whole request header must arrive
within a total deadline (a client dribbling a byte a second is cut, not kept
alive by each byte), a keep-alive connection may idle only so long before its
next request, a body must arrive whole within its own deadline (408 after),
the header is bounded in bytes (431) and the body in bytes (413) and taken only
with a ``Content-Length`` (411 for a chunked one), the bodies held at once are
bounded in bytes together (past it a large one gets 503 unread: the connection
cap times the largest body would be gigabytes), and the
number of open connections is capped: past the cap a new connection gets an
immediate 503 (plain HTTP) or is closed (TLS) instead of a thread. Why still
threads rather than an ASGI server: with total deadlines a slow client holds
its thread for at most ``header_timeout_s`` and the cap bounds the threads,
so 500 slow clients cost 500 parked threads (no CPU) and a normal request is
still answered (benchmarks/web_slow_clients.py); the app stays synchronous
SQLite code with no event loop, and there is no new dependency to keep up.
"""

from __future__ import annotations

import io
import socket
import ssl
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from arena.logs import get_logger
from arena.store import Store
from arena.web.app import LEADERBOARD_POLL_MS, Response, WebApp
from arena.web.body_budget import ANYONE, BodyBudget, BodyShares, Reservation
from arena.web.models import WebSource
from arena.web.play import PlayTables
from arena.web.source import StoreSource, open_store
from arena.web.submit import BotSubmitter

DISCARD_LIMIT_BYTES = 64 * 1024 * 1024  # past this, a refused body is left unread
SMALL_BODY_BYTES = 64 * 1024  # a body this small (a move at /play) needs no room in the budget
STOP_WAIT_S = 5.0  # how long ``WebServer.stop`` waits for the serving thread
SERVER_NAME = "KahunaArena"  # the Server: header; names neither Python nor its version
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


@dataclass(frozen=True)
class WebLimits:
    """What one client may cost the web server (seconds, bytes, connections)."""

    header_timeout_s: float = 10.0  # the whole request line and headers, from their first byte
    idle_timeout_s: float = 5.0  # a new or keep-alive connection waiting for its first byte
    body_timeout_s: float = 60.0  # the whole body (8 MiB at 140 KB/s)
    write_timeout_s: float = 30.0  # sending one response
    max_header_bytes: int = 16 * 1024  # request line and headers together
    max_connections: int = 1024  # open connections (each one a thread)
    listen_backlog: int = 512
    # request bodies over SMALL_BODY_BYTES held at once (being received or answered): in
    # all, sent without a valid token, and by one user (arena.web.body_budget)
    max_body_bytes_in_flight: int = 256 * 1024 * 1024
    max_body_bytes_without_token: int = 128 * 1024 * 1024
    max_body_bytes_per_user: int = 64 * 1024 * 1024

    def body_shares(self) -> BodyShares:
        return BodyShares(self.max_body_bytes_in_flight, self.max_body_bytes_without_token,
                          self.max_body_bytes_per_user)  # fmt: skip


class _HeaderTooLarge(Exception):
    pass


class _DeadlineExceeded(Exception):
    def __init__(self, phase: str, seconds: float) -> None:
        super().__init__(f"the request {phase} did not arrive within {seconds:g} s")
        self.phase = phase


class _DeadlineReader(io.RawIOBase):
    """A socket's read side under a total deadline per phase (idle, header, body).

    Each ``recv`` waits only for what is left of the phase's deadline, so the
    deadline holds however the client splits its bytes. In the header phase
    at most ``max_header_bytes`` are handed up: a header that does not end
    within them raises ``_HeaderTooLarge`` instead of reading on.
    """

    def __init__(self, connection: socket.socket, limits: WebLimits) -> None:
        super().__init__()
        self.connection = connection
        self.limits = limits
        self.phase = "idle"
        self.deadline = 0.0
        self.header_budget = 0

    def start_request(self) -> None:
        """Wait for a request: the idle deadline until its first byte, then the header's."""
        self.phase = "idle"
        self.deadline = time.monotonic() + self.limits.idle_timeout_s
        self.header_budget = self.limits.max_header_bytes

    def start_body(self) -> None:
        self.phase = "body"
        self.deadline = time.monotonic() + self.limits.body_timeout_s

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        size = len(view)
        if self.phase in ("idle", "header"):
            if self.header_budget <= 0:
                raise _HeaderTooLarge()
            size = min(size, self.header_budget)
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise self._exceeded()
        self.connection.settimeout(remaining)
        try:
            count = self.connection.recv_into(view[:size])
        except TimeoutError:
            raise self._exceeded() from None
        if self.phase == "idle" and count:
            self.phase = "header"
            self.deadline = time.monotonic() + self.limits.header_timeout_s
        if self.phase == "header":
            self.header_budget -= count
        return count

    def _exceeded(self) -> _DeadlineExceeded:
        limits = self.limits
        seconds = {
            "idle": limits.idle_timeout_s,
            "header": limits.header_timeout_s,
            "body": limits.body_timeout_s,
        }[self.phase]
        return _DeadlineExceeded(self.phase, seconds)


class WebServer(ThreadingHTTPServer):
    """A ``ThreadingHTTPServer`` that owns its ``WebApp`` and serving thread."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        app: WebApp,
        ssl_context: ssl.SSLContext | None = None,
        limits: WebLimits | None = None,
    ) -> None:
        self.host = address[0]  # as given (logged), not as bound
        self.limits = limits or WebLimits()
        self.request_queue_size = self.limits.listen_backlog
        self._open_lock = threading.Lock()
        self.open_connections = 0
        self.bodies = BodyBudget(self.limits.body_shares())  # bodies over SMALL_BODY_BYTES
        super().__init__(address, _Handler)
        self.tls = ssl_context is not None
        if ssl_context is not None:  # accept() yields TLS sockets; handshakes wait for a read
            self.socket = ssl_context.wrap_socket(
                self.socket, server_side=True, do_handshake_on_connect=False
            )
        self.app = app
        self.thread: threading.Thread | None = None

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A failed TLS handshake (plain HTTP, an untrusted certificate) is the client's problem."""
        error = sys.exc_info()[1]
        if isinstance(error, ssl.SSLError | ConnectionError):
            get_logger(component="web").info(
                "web_connection_refused", peer=str(client_address), reason=str(error)
            )
            return
        super().handle_error(request, client_address)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection, or (past the cap) a quick 503 and close."""
        with self._open_lock:
            refused = self.open_connections >= self.limits.max_connections
            if not refused:
                self.open_connections += 1
        if refused:
            self._refuse(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._closed_one()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._closed_one()

    def _closed_one(self) -> None:
        with self._open_lock:
            self.open_connections -= 1

    def _refuse(self, request: socket.socket) -> None:
        """Over the cap: answer 503 without reading (plain HTTP) and close, never block."""
        try:
            if not self.tls:  # a TLS client would need a handshake first: just close
                limit = self.limits.max_connections
                body = f"server busy: {limit} connections are open (the limit); retry\n".encode()
                head = (
                    f"HTTP/1.1 503 Service Unavailable\r\nServer: {SERVER_NAME}\r\n"
                    "Content-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\n"
                    f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                ).encode()
                request.setblocking(False)
                request.send(head + body)
        except OSError:
            pass
        finally:
            self.shutdown_request(request)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def start(self) -> None:
        """Serve in a background daemon thread."""
        self.thread = threading.Thread(
            target=self.serve_forever, name=f"arena-web-{self.port}", daemon=True
        )
        self.thread.start()
        get_logger(component="web").info("web_server_started", host=self.host, port=self.port)

    def stop(self) -> None:
        """Stop serving, close the socket and wait for the thread (idempotent)."""
        if self.thread is not None:
            self.shutdown()
            self.thread.join(timeout=STOP_WAIT_S)
            self.thread = None
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: WebServer
    protocol_version = "HTTP/1.1"
    server_version = SERVER_NAME
    disable_nagle_algorithm = True  # the body must not wait for the ACK of the header's segment
    reader: _DeadlineReader
    _reserved: Reservation | None  # the room the request in hand's body holds

    def setup(self) -> None:
        super().setup()
        self.reader = _DeadlineReader(self.connection, self.server.limits)
        self.rfile = io.BufferedReader(self.reader, 64 * 1024)

    def version_string(self) -> str:
        return SERVER_NAME

    def end_headers(self) -> None:
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        super().end_headers()

    def handle_one_request(self) -> None:
        """One request under the limits; a timeout or an oversized header ends the connection."""
        self.reader.start_request()
        try:
            super().handle_one_request()
        except _HeaderTooLarge:
            limit = self.server.limits.max_header_bytes
            self._refuse_raw(431, "Request Header Fields Too Large",
                             f"the request header is over the limit of {limit} bytes")  # fmt: skip
        except _DeadlineExceeded as exceeded:
            self.close_connection = True
            if exceeded.phase == "header":  # an idle connection is just closed
                self._refuse_raw(408, "Request Timeout", str(exceeded))
        except ConnectionError:
            self.close_connection = True

    def _refuse_raw(self, status: int, reason: str, message: str) -> None:
        """Answer and close before any request was parsed (so without send_error)."""
        self.close_connection = True
        body = (message + "\n").encode()
        head = f"HTTP/1.1 {status} {reason}\r\nServer: {SERVER_NAME}\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in SECURITY_HEADERS.items())
        head += "Content-Type: text/plain; charset=utf-8\r\n"
        head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        try:
            self.connection.settimeout(self.server.limits.write_timeout_s)
            self.connection.sendall(head.encode() + body)
        except OSError:
            pass

    def do_GET(self) -> None:
        self._respond(send_body=True)

    def do_HEAD(self) -> None:
        self._respond(send_body=False)

    def do_POST(self) -> None:
        self._respond(send_body=True)

    def _respond(self, *, send_body: bool) -> None:
        url = urlsplit(self.path)
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        app = self.server.app
        self.reader.start_body()
        self._reserved = None
        try:
            try:
                body, refusal = self._read_body(app.body_limit(url.path))
            except _DeadlineExceeded as exceeded:
                body, refusal = b"", (408, str(exceeded))
            if refusal is not None:
                self.close_connection = True  # any unread body must not be taken for a request
                response = app.error(refusal[0], refusal[1], url.path.startswith("/api/"))
                if refusal[0] == 503:
                    response = Response(response.status, response.content_type, response.body,
                                        {**response.headers, "Retry-After": "1"})  # fmt: skip
            else:
                content_type = self.headers.get("Content-Type", "")
                headers = {name.lower(): value for name, value in self.headers.items()}
                scheme = "https" if self.server.tls else "http"
                response = app.handle(
                    self.command, url.path, query, body, content_type, headers, scheme
                )
            del body  # the request's bytes are let go before its answer is written
        finally:
            if self._reserved is not None:
                self.server.bodies.release(self._reserved)
        self._send(response, send_body=send_body)

    def _read_body(self, limit: int) -> tuple[bytes, tuple[int, str] | None]:
        """The request body, or why it is refused (unread) without reading it.

        Only a ``Content-Length`` body is taken: a chunked one would otherwise be left
        unread and its bytes read as the next request.
        """
        coding = self.headers.get("Transfer-Encoding")
        if coding is not None:
            return b"", (411, f"Transfer-Encoding {coding[:40]!r} is not taken here:"
                              " send the body with a Content-Length")  # fmt: skip
        lengths = set(self.headers.get_all("Content-Length") or [])
        if not lengths:
            return b"", None
        if len(lengths) > 1:
            return b"", (400, f"the request has {len(lengths)} different Content-Lengths")
        text = lengths.pop().strip()
        if not (text.isascii() and text.isdigit()):
            return b"", (400, f"Content-Length {text[:40]!r} is not a number")
        digits = text.lstrip("0") or "0"  # int() refuses a string of over 4300 digits
        if len(digits) > 18:
            return b"", (413, f"the request body's Content-Length has {len(digits)} digits;"
                              f" the limit is {limit} bytes")  # fmt: skip
        length = int(digits)
        if length > limit:
            self._discard(length)
            return b"", (413, f"the request body is {length} bytes; the limit is {limit}")
        if length > SMALL_BODY_BYTES:  # a small body (a move at /play) needs no room
            holder = self.server.app.body_holder(self.headers.get("Authorization", ""))
            reserved = self.server.bodies.reserve(holder or ANYONE, length)
            if isinstance(reserved, str):  # left unread: the connection is closed
                return b"", (503, f"server busy: {reserved}; retry")
            self._reserved = reserved
        return self.rfile.read(length), None

    def _discard(self, length: int) -> None:
        """Read and drop a refused body (up to a bound) so the client sees our answer."""
        remaining = min(length, DISCARD_LIMIT_BYTES)
        while remaining > 0:
            chunk = self.rfile.read(min(remaining, 64 * 1024))
            if not chunk:
                break
            remaining -= len(chunk)

    def _send(self, response: Response, *, send_body: bool) -> None:
        self.connection.settimeout(self.server.limits.write_timeout_s)
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if send_body:
            self.wfile.write(response.body)

    def log_message(self, format: str, *args: Any) -> None:
        get_logger(component="web").debug("web_request_served", request=format % args)


def create_web_server(
    store_or_data_dir: Store | WebSource | str | Path,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    poll_ms: int = LEADERBOARD_POLL_MS,
    ssl_context: ssl.SSLContext | None = None,
    limits: WebLimits | None = None,
    spectator_delay_s: float = 0.0,
    submitter: BotSubmitter | None = None,
    tables: PlayTables | None = None,
    live_answer_s: float = 0.0,
    start: bool = True,
) -> tuple[WebServer, int]:
    """Start the web interface in a background thread; return it and its port.

    ``store_or_data_dir`` is an open ``arena.store.Store``, a data directory
    (opened, and created on first use, like every other command does), or any
    ``WebSource``. Stop the server with ``server.stop()``. ``poll_ms`` is how
    often live pages (leaderboard, running tournaments) fetch fresh data;
    ``ssl_context`` (server side) makes it HTTPS; ``limits`` bound what one
    client may cost (``WebLimits``' defaults unless given); ``spectator_delay_s``:
    live games are shown that many seconds late (``arena.web.live``);
    ``submitter``: the server's submission path, for the ``/submit`` page
    (``arena.web.submit``; without one the page says it takes none); ``tables``: where
    people play bots (``arena.web.play``; without them ``/play`` says it seats no one);
    ``live_answer_s``: how long one computed live JSON answer is shared by every
    spectator (``arena.web.live_answers``; ``arena serve`` shares each for
    ``LIVE_ANSWER_S``, 0 computes every answer afresh); ``start=False``: bound but not
    serving until ``server.start()`` (``arena serve`` binds every port before it stores
    anything).
    """
    source = source_for(store_or_data_dir)
    app = WebApp(
        source, poll_ms=poll_ms, spectator_delay_s=spectator_delay_s, submitter=submitter,
        tables=tables, live_answer_s=live_answer_s,
    )
    server = WebServer((host, port), app, ssl_context, limits)
    if not start:
        return server, server.port
    server.start()
    return server, server.port


def source_for(store_or_data_dir: Store | WebSource | str | Path) -> WebSource:
    if isinstance(store_or_data_dir, str | Path):
        return StoreSource(open_store(Path(store_or_data_dir)))
    if isinstance(store_or_data_dir, Store):
        return StoreSource(store_or_data_dir)
    return store_or_data_dir
