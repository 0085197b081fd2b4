"""The web server against slow and greedy clients: real sockets, a real server on port 0."""

from __future__ import annotations

import dataclasses
import http.client
import socket
import ssl
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import store as st
from arena.server.submissions import WebSubmitter
from arena.server.tls import load_server_tls
from arena.testing.waiting import wait_until
from arena.web import WebLimits, WebServer, create_web_server
from arena.web.body_budget import ANYONE
from tests.server.pki import make_pki

pytestmark = pytest.mark.slow  # every test here starts a process or a server

LIMITS = WebLimits(
    header_timeout_s=1.0, idle_timeout_s=0.5, body_timeout_s=1.0, max_header_bytes=4096,
    max_connections=40,
)  # fmt: skip


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[WebServer]:
    web, _ = create_web_server(tmp_path / "data", "127.0.0.1", 0, limits=LIMITS)
    try:
        yield web
    finally:
        web.stop()


@pytest.fixture()
def roomy_server(tmp_path: Path) -> Iterator[WebServer]:
    """``server`` with room in the header for a Content-Length of over 4300 digits
    (past which ``int()`` refuses a string)."""
    limits = dataclasses.replace(LIMITS, max_header_bytes=8192)
    web, _ = create_web_server(tmp_path / "data", "127.0.0.1", 0, limits=limits)
    try:
        yield web
    finally:
        web.stop()


@pytest.fixture()
def holding_server(tmp_path: Path) -> Iterator[WebServer]:
    """``server`` whose connections, each with a request begun, stay open through a test
    on a loaded machine (``server``'s would each be cut at the 1 s header deadline)."""
    limits = dataclasses.replace(LIMITS, header_timeout_s=60.0, idle_timeout_s=60.0)
    web, _ = create_web_server(tmp_path / "data", "127.0.0.1", 0, limits=limits)
    try:
        yield web
    finally:
        web.stop()


def connect(server: WebServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def get(server: WebServer, path: str = "/api/leaderboard") -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("GET", path)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


@pytest.mark.timeout(30)
def test_a_header_dribbled_a_byte_at_a_time_is_cut_at_the_total_deadline(
    server: WebServer,
) -> None:
    sock = connect(server)
    started = time.monotonic()
    sent = 0
    request = b"GET /api/leaderboard HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 1000
    try:
        for byte in request:  # every byte well inside any per-read timeout
            sock.sendall(bytes([byte]))
            sent += 1
            time.sleep(0.05)  # the slow client's pace
    except (BrokenPipeError, ConnectionResetError):
        pass
    answer = read_all(sock)
    elapsed = time.monotonic() - started
    assert sent < len(request), "the server waited for the whole dribbled header"
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:100]
    assert b"header did not arrive within 1 s" in answer
    assert elapsed < LIMITS.header_timeout_s + 1.5, elapsed


@pytest.mark.timeout(30)
def test_an_idle_connection_is_closed(server: WebServer) -> None:
    sock = connect(server)
    started = time.monotonic()
    assert read_all(sock) == b""  # closed without a word: nothing was asked
    assert time.monotonic() - started < LIMITS.idle_timeout_s + 1.0


@pytest.mark.timeout(30)
def test_a_keep_alive_connection_is_closed_once_idle(server: WebServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("GET", "/api/leaderboard")
    first = conn.getresponse()
    first.read()
    assert first.status == 200 and first.getheader("Connection") != "close"
    assert conn.sock is not None
    started = time.monotonic()
    assert conn.sock.recv(1) == b""  # the server closes the idle keep-alive connection
    assert time.monotonic() - started < LIMITS.idle_timeout_s + 1.0


@pytest.mark.timeout(30)
def test_a_post_whose_promised_body_never_comes_gets_408_and_a_close(
    server: WebServer,
) -> None:
    sock = connect(server)
    sock.sendall(
        b"POST /replay HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
        b"Content-Length: 5000\r\n\r\nonly part of it"
    )
    started = time.monotonic()
    answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:100]
    assert b"body did not arrive within 1 s" in answer
    assert b"Connection: close" in answer
    assert time.monotonic() - started < LIMITS.body_timeout_s + 1.5


@pytest.mark.timeout(30)
def test_an_oversized_header_is_refused_with_431(server: WebServer) -> None:
    sock = connect(server)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 5000 + b"\r\n\r\n")
    answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:100]
    assert b"over the limit of 4096 bytes" in answer


@pytest.mark.timeout(30)
def test_a_header_just_under_the_limit_is_served(server: WebServer) -> None:
    request = b"GET /api/leaderboard HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: "
    request += b"a" * (LIMITS.max_header_bytes - len(request) - 4) + b"\r\n\r\n"
    assert len(request) == LIMITS.max_header_bytes
    sock = connect(server)
    sock.sendall(request)
    assert read_all(sock).startswith(b"HTTP/1.1 200 ")


@pytest.mark.timeout(30)
def test_too_many_headers_are_refused_with_431(server: WebServer) -> None:
    sock = connect(server)
    headers = b"".join(b"X-%d: 1\r\n" % i for i in range(150))
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n")
    assert read_all(sock).startswith(b"HTTP/1.1 431 ")


@pytest.mark.timeout(30)
def test_a_body_over_the_limit_is_refused_with_413(server: WebServer) -> None:
    sock = connect(server)
    sock.sendall(b"POST /replay HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\n")
    sock.shutdown(socket.SHUT_WR)
    answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:100]
    assert b"the limit is" in answer


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("headers", "status", "message"), [
    (b"Transfer-Encoding: chunked\r\n", 411, b"send the body with a Content-Length"),
    ("Content-Length: \u00b2\r\n".encode("latin-1"), 400, b"is not a number"),
    (b"Content-Length: 0x10\r\n", 400, b"is not a number"),
    (b"Content-Length: 5\r\nContent-Length: 6\r\n", 400, b"2 different Content-Lengths"),
    (b"Content-Length: " + b"9" * 5000 + b"\r\n", 413, b"has 5000 digits; the limit is"),
], ids=["chunked", "superscript digit", "hex", "two lengths", "5000 digits"])  # fmt: skip
def test_a_body_whose_length_is_not_plain_gets_one_answer_naming_it_and_a_close(
    roomy_server: WebServer, headers: bytes, status: int, message: bytes
) -> None:
    sock = connect(roomy_server)
    sock.sendall(b"POST /replay HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n" + headers
                 + b"\r\n5\r\nhello\r\n0\r\n\r\n")  # fmt: skip
    answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 %d " % status), answer[:200]
    assert message in answer and b"Connection: close" in answer
    assert answer.count(b"HTTP/1.1 ") == 1, answer  # the body's bytes are never a request


@pytest.mark.timeout(30)
def test_a_zero_padded_length_is_still_a_length(roomy_server: WebServer) -> None:
    sock = connect(roomy_server)
    sock.sendall(b"POST /replay HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                 b"Content-Type: text/plain\r\nContent-Length: " + b"0" * 5000 + b"4\r\n\r\n"
                 b"{}[]")  # fmt: skip
    answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]  # the record's fault, not the length's
    assert b"is not a number" not in answer and answer.count(b"HTTP/1.1 ") == 1


@pytest.mark.timeout(30)
def test_past_the_body_budget_a_large_body_gets_503_unread_and_a_small_one_is_taken(
    tmp_path: Path,
) -> None:
    limits = dataclasses.replace(LIMITS, body_timeout_s=20.0, max_body_bytes_in_flight=3 << 20)
    web, _ = create_web_server(tmp_path / "data", "127.0.0.1", 0, limits=limits)
    big = b"POST /replay HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n" \
          b"Content-Length: %d\r\n\r\n" % (2 << 20)  # fmt: skip
    try:
        holding = connect(web)  # 2 MiB promised, half of it sent: held while it is read
        holding.sendall(big + b"x" * (1 << 20))
        wait_until(lambda: web.bodies.held == 2 << 20, "the first body's room taken", 10)
        refused = connect(web)
        refused.sendall(big)
        answer = read_all(refused)  # at once, unread: the connection is closed
        assert answer.startswith(b"HTTP/1.1 503 "), answer[:200]
        assert b"Retry-After: 1" in answer and b"of 3145728 bytes in all" in answer
        small = connect(web)  # a small body needs no room
        small.sendall(b"POST /replay HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                      b"Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}")  # fmt: skip
        assert read_all(small).startswith(b"HTTP/1.1 400 ")  # the record's fault: taken
        holding.sendall(b"x" * (1 << 20))  # the rest: answered, and its room given back
        assert read_all_until(holding, b"</html>").startswith(b"HTTP/1.1 400 ")
        wait_until(lambda: web.bodies.held == 0, "the first body's room given back", 10)
        again = connect(web)
        again.sendall(big.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1)
                      + b"x" * (2 << 20))  # fmt: skip
        assert read_all(again).startswith(b"HTTP/1.1 400 ")
        assert web.bodies.held == 0
    finally:
        web.stop()


def _post(path: str, length: int, token: str | None = None) -> bytes:
    auth = b"" if token is None else b"Authorization: Bearer %s\r\n" % token.encode()
    head = b"POST %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" % path.encode()
    kind = b"Content-Type: application/octet-stream\r\n"
    return head + auth + kind + b"Content-Length: %d\r\n\r\n" % length


@pytest.mark.timeout(60)
def test_strangers_bodies_cannot_keep_out_a_participant_nor_one_participant_the_others(
    tmp_path: Path,
) -> None:
    """Bodies sent without a token hold at most their share of the budget, and each user
    theirs: past a share the sender gets 503 naming it, and the others are still taken."""
    store = st.Store.open(tmp_path / "data")
    ann, bob = st.create_token(store, "ann"), st.create_token(store, "bob")
    limits = dataclasses.replace(
        LIMITS, body_timeout_s=30.0, max_body_bytes_in_flight=8 << 20,
        max_body_bytes_without_token=3 << 20, max_body_bytes_per_user=3 << 20,
    )  # fmt: skip
    web, _ = create_web_server(store, "127.0.0.1", 0, limits=limits,
                               submitter=WebSubmitter(store, smoke_check=None))  # fmt: skip
    held: list[socket.socket] = []

    def hold(request: bytes, holder: str, room: int) -> None:
        """A body of 2 MiB promised and half sent: its room is held while it is read."""
        sock = connect(web)
        sock.sendall(request + b"x" * (1 << 20))
        held.append(sock)
        wait_until(lambda: web.bodies.held_by(holder) == room, f"{holder or 'anyone'}'s room", 10)

    def answer(request: bytes) -> bytes:
        sock = connect(web)
        sock.sendall(request + b"x" * (100 << 10))  # a body past the small ones, all sent
        return read_all(sock)

    try:
        hold(_post("/replay", 2 << 20), ANYONE, 2 << 20)
        refused = answer(_post("/replay", 2 << 20))
        assert refused.startswith(b"HTTP/1.1 503 ") and b"Retry-After: 1" in refused
        assert b"request bodies sent without a token, 3145728 bytes (their limit)" in refused
        bad_token = answer(_post("/api/submit", 2 << 20, "not-a-token"))  # anyone's, too
        assert bad_token.startswith(b"HTTP/1.1 503 ") and b"without a token" in bad_token
        taken = answer(_post("/api/submit", 100 << 10, ann))  # read, and refused as no archive
        assert taken.startswith(b"HTTP/1.1 4") and not taken.startswith(b"HTTP/1.1 413"), taken
        assert b"server busy" not in taken

        hold(_post("/api/submit", 2 << 20, ann), "ann", 2 << 20)
        refused = answer(_post("/api/submit", 2 << 20, ann))
        assert refused.startswith(b"HTTP/1.1 503 ")
        assert b"your request bodies of 3145728 bytes (the limit per user)" in refused
        taken = answer(_post("/api/submit", 100 << 10, bob))
        assert b"server busy" not in taken and taken.startswith(b"HTTP/1.1 4"), taken
        for sock in held:  # bodies cut short: answered, their room given back
            sock.close()
        wait_until(lambda: web.bodies.held == 0, "every body's room given back", 10)
    finally:
        for sock in held:
            sock.close()
        web.stop()
        store.close()


def read_all_until(sock: socket.socket, end: bytes) -> bytes:
    """What the server sends on a kept-alive connection until ``end``."""
    chunks = b""
    while end not in chunks and (chunk := sock.recv(65536)):
        chunks += chunk
    return chunks


@pytest.mark.timeout(60)
def test_past_the_connection_cap_a_new_connection_gets_503_at_once(
    holding_server: WebServer,
) -> None:
    server = holding_server
    held = [connect(server) for _ in range(LIMITS.max_connections)]
    try:
        for sock in held:  # each one a started, unfinished request: the server holds them all
            sock.sendall(b"GET / HTTP/1.1\r\n")
        wait_until(lambda: server.open_connections >= LIMITS.max_connections,
                   "every connection open", 5, state=lambda: server.open_connections)  # fmt: skip
        assert server.open_connections == LIMITS.max_connections
        started = time.monotonic()
        answer = read_all(connect(server))
        assert time.monotonic() - started < 5  # not after the idle 60 s of a thread
        assert answer.startswith(b"HTTP/1.1 503 "), answer[:100]
        assert b"40 connections are open (the limit)" in answer
    finally:
        for sock in held:
            sock.close()
    # once they are gone, a request is served again
    wait_until(lambda: not server.open_connections, "every connection closed", 5,
               state=lambda: server.open_connections)  # fmt: skip
    assert get(server).status == 200


ENDING = 8


@pytest.mark.timeout(60)
def test_connections_ending_at_once_are_each_counted_off(holding_server: WebServer) -> None:
    """Eight connections end at once: the count of open connections is back at 0 (a count
    that lost an end would refuse connections early for good, one that lost a start
    would let more in than the cap).

    The race, forced: the thread ending each connection reads the count, then is held
    until all eight have come to the count's update."""
    server = holding_server
    held = [connect(server) for _ in range(ENDING)]
    for sock in held:
        sock.sendall(b"GET / HTTP/1.1\r\n")  # a request begun: its thread waits for the rest
    wait_until(lambda: server.open_connections == ENDING, "every connection open", 5,
               state=lambda: server.open_connections)  # fmt: skip
    arrived: list[int] = []
    ending = threading.local()
    closed_one = server._closed_one

    def counted_off() -> None:
        arrived.append(1)
        ending.now = True
        try:
            closed_one()
        finally:
            ending.now = False

    class Watched(WebServer):
        @property  # type: ignore[misc]
        def open_connections(self) -> int:
            count = int(self.__dict__["open_connections"])
            if getattr(ending, "now", False):
                wait_until(lambda: len(arrived) == ENDING, "every connection's end counted", 10,
                           interval_s=0.005, state=lambda: len(arrived))  # fmt: skip
            return count

        @open_connections.setter
        def open_connections(self, value: int) -> None:
            self.__dict__["open_connections"] = value

    server._closed_one = counted_off  # type: ignore[method-assign]
    server.__class__ = Watched
    try:
        for sock in held:
            sock.close()
        wait_until(lambda: len(arrived) == ENDING, "every connection ended", 10,
                   state=lambda: len(arrived))  # fmt: skip
        wait_until(lambda: server.open_connections == 0, "the count back at 0", 10,
                   state=lambda: server.open_connections)  # fmt: skip
    finally:
        server.__class__ = WebServer
        del server._closed_one
    assert get(server).status == 200


def test_every_response_has_the_security_headers_and_no_python_version(
    server: WebServer,
) -> None:
    for path in ("/", "/api/leaderboard", "/static/style.css", "/no/such/page"):
        response = get(server, path)
        csp = response.getheader("Content-Security-Policy") or ""
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, path
        assert "unsafe-inline" not in csp
        assert response.getheader("Referrer-Policy") == "no-referrer"
        assert response.getheader("X-Content-Type-Options") == "nosniff"
        assert response.getheader("X-Frame-Options") == "DENY"
        assert response.getheader("Server") == "KahunaArena", path


def test_the_pages_carry_no_inline_script(server: WebServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    for path in ("/", "/replay"):
        conn.request("GET", path)
        page = conn.getresponse().read().decode()
        assert "<script" in page, path
        for tag in page.split("<script")[1:]:
            opening = tag.split(">", 1)[0]
            assert 'src="/static/' in opening or 'type="application/json"' in opening, opening
    conn.close()


@pytest.mark.timeout(120)
def test_a_normal_request_is_answered_while_many_slow_clients_are_connected(
    tmp_path: Path,
) -> None:
    limits = WebLimits(header_timeout_s=30.0, idle_timeout_s=30.0, max_connections=1024)
    web, port = create_web_server(tmp_path / "data2", "127.0.0.1", 0, limits=limits)
    slow: list[socket.socket] = []
    try:
        for _ in range(300):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: a")
            slow.append(sock)
        wait_until(lambda: web.open_connections >= 300, "300 connections open", 20,
                   interval_s=0.05, state=lambda: web.open_connections)  # fmt: skip
        assert web.open_connections == 300
        latencies = []
        for _ in range(20):
            started = time.monotonic()
            assert get(web).status == 200
            latencies.append(time.monotonic() - started)
        assert max(latencies) < 2.0, latencies
    finally:
        for sock in slow:
            sock.close()
        web.stop()


@pytest.mark.timeout(60)
def test_over_tls_a_stalled_handshake_is_cut_and_a_dribbled_header_too(tmp_path: Path) -> None:
    pki = make_pki(tmp_path / "pki", "web")
    tls = load_server_tls(pki.server.cert_path, pki.server.key_path)
    web, port = create_web_server(tmp_path / "data", "127.0.0.1", 0, ssl_context=tls.context,
                                  limits=LIMITS)  # fmt: skip
    try:
        silent = socket.create_connection(("127.0.0.1", port), timeout=10)
        started = time.monotonic()
        assert read_all(silent) == b""  # no ClientHello: closed at the idle deadline
        assert time.monotonic() - started < LIMITS.idle_timeout_s + 1.0

        trusting = ssl.create_default_context(cafile=str(pki.ca.cert_path))
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock = trusting.wrap_socket(raw, server_hostname="localhost")
        started = time.monotonic()
        try:
            for byte in b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000:
                sock.sendall(bytes([byte]))
                time.sleep(0.05)  # the slow client's pace
        except OSError:
            pass
        answer = read_all(sock)
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:100]
        assert time.monotonic() - started < LIMITS.header_timeout_s + 1.5

        response = urllib.request.urlopen(
            f"https://localhost:{port}/api/leaderboard", timeout=10, context=trusting
        )
        assert response.status == 200
        assert response.getheader("Server") == "KahunaArena"
    finally:
        web.stop()
