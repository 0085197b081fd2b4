"""The web interface behind the standard library's ``ThreadingHTTPServer``.

Why the standard library: the pages are a handful of read-only routes over
SQLite; a thread per request is plenty, there is no framework to keep up
with, and ``arena serve`` only has to call ``create_web_server`` to get a
running server on its own port (port 0 picks a free one, for tests). Given an
``ssl.SSLContext`` it serves HTTPS: the TLS handshake happens in each
connection's own thread, so a client that never completes it holds up no one.
"""

from __future__ import annotations

import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from arena.logs import get_logger
from arena.store import Store
from arena.web.app import LEADERBOARD_POLL_MS, Response, WebApp
from arena.web.models import WebSource
from arena.web.source import StoreSource, open_store
from arena.web.upload import MAX_UPLOAD_BYTES

DISCARD_LIMIT_BYTES = 64 * 1024 * 1024  # past this, a refused body is left unread


class WebServer(ThreadingHTTPServer):
    """A ``ThreadingHTTPServer`` that owns its ``WebApp`` and serving thread."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, address: tuple[str, int], app: WebApp, ssl_context: ssl.SSLContext | None = None
    ) -> None:
        super().__init__(address, _Handler)
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

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def start(self) -> None:
        """Serve in a background daemon thread."""
        self.thread = threading.Thread(
            target=self.serve_forever, name=f"arena-web-{self.port}", daemon=True
        )
        self.thread.start()

    def stop(self) -> None:
        """Stop serving, close the socket and wait for the thread (idempotent)."""
        if self.thread is not None:
            self.shutdown()
            self.thread.join(timeout=5)
            self.thread = None
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: WebServer
    protocol_version = "HTTP/1.1"

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
        body, refusal = self._read_body()
        if refusal is not None:
            self.close_connection = True  # any unread body must not be taken for a request
            response = app.error(refusal[0], refusal[1], url.path.startswith("/api/"))
        else:
            content_type = self.headers.get("Content-Type", "")
            response = app.handle(self.command, url.path, query, body, content_type)
        self._send(response, send_body=send_body)

    def _read_body(self) -> tuple[bytes, tuple[int, str] | None]:
        """The request body, or why it is refused (unread) without reading it."""
        text = self.headers.get("Content-Length")
        if text is None:
            return b"", None
        if not text.strip().isdigit():
            return b"", (400, f"Content-Length {text!r} is not a number")
        length = int(text)
        if length > MAX_UPLOAD_BYTES:
            self._discard(length)
            limit = MAX_UPLOAD_BYTES
            return b"", (413, f"the request body is {length} bytes; the limit is {limit}")
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
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        self.send_header("X-Content-Type-Options", "nosniff")
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
) -> tuple[WebServer, int]:
    """Start the web interface in a background thread; return it and its port.

    ``store_or_data_dir`` is an open ``arena.store.Store``, a data directory
    (opened, and created on first use, like every other command does), or any
    ``WebSource``. Stop the server with ``server.stop()``. ``poll_ms`` is how
    often live pages (leaderboard, running tournaments) fetch fresh data;
    ``ssl_context`` (server side) makes it HTTPS.
    """
    source = source_for(store_or_data_dir)
    server = WebServer((host, port), WebApp(source, poll_ms=poll_ms), ssl_context)
    server.start()
    get_logger(component="web").info("web_server_started", host=host, port=server.port)
    return server, server.port


def source_for(store_or_data_dir: Store | WebSource | str | Path) -> WebSource:
    if isinstance(store_or_data_dir, str | Path):
        return StoreSource(open_store(Path(store_or_data_dir)))
    if isinstance(store_or_data_dir, Store):
        return StoreSource(store_or_data_dir)
    return store_or_data_dir
