"""POST /api/submit and GET /api/me over HTTP: the token only as a header, no cookie, no
cross-site request taken, refusals named; the server's one submission path stores the bot."""

from __future__ import annotations

import io
import json
import tarfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena import store as st
from arena.server.submissions import WebSubmitter
from arena.web import WebServer, create_web_server
from arena.web.submit import RequestRefused, same_origin

pytestmark = pytest.mark.slow  # every test here starts a process or a server


@dataclass
class Site:
    base_url: str
    store: st.Store
    server: WebServer
    token: str
    other_token: str


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    store = st.Store.open(tmp_path / "data")
    token = st.create_token(store, "ann")
    other = st.create_token(store, "bob")
    server, port = create_web_server(
        store, "127.0.0.1", 0, submitter=WebSubmitter(store, smoke_check=None)
    )
    try:
        yield Site(f"http://127.0.0.1:{port}", store, server, token, other)
    finally:
        server.stop()
        store.close()


def bot_archive(name: str, text: str = "print('hi')\n") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, data in (
            (
                f"{name}/bot.toml",
                f'name = "{name}"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n',
            ),
            (f"{name}/bot.py", text),
        ):
            info = tarfile.TarInfo(path)
            info.size = len(data.encode())
            archive.addfile(info, io.BytesIO(data.encode()))
    return buffer.getvalue()


def send(
    site: Site, path: str, body: bytes | None = None, method: str = "POST", **headers: str
) -> tuple[int, dict[str, Any], dict[str, str]]:
    request = urllib.request.Request(site.base_url + path, data=body, method=method)
    for name, value in headers.items():
        request.add_header(name.replace("_", "-"), value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)


def submit(
    site: Site, body: bytes, token: str | None = None, **headers: str
) -> tuple[int, dict[str, Any], dict[str, str]]:
    given = {"Content_Type": "application/octet-stream", **headers}
    if token is not None:
        given["Authorization"] = f"Bearer {token}"
    return send(site, "/api/submit", body, **given)


def test_a_submitted_archive_is_stored_for_its_owner_and_listed_as_theirs(site: Site) -> None:
    status, payload, headers = submit(
        site, bot_archive("annbot"), site.token, X_Archive_Format="tar.gz"
    )
    assert status == 200, payload
    assert (payload["bot"], payload["created"]) == ("annbot", True)
    assert "Set-Cookie" not in headers
    assert st.get_bot(site.store, "annbot").owner == "ann"
    again = submit(site, bot_archive("annbot"), site.token)  # format told by its bytes
    assert again[0] == 200 and again[1]["created"] is False
    status, me, headers = send(site, "/api/me", method="GET", Authorization=f"Bearer {site.token}")
    assert status == 200 and "Set-Cookie" not in headers
    assert me["user"] == "ann" and [b["name"] for b in me["bots"]] == ["annbot"]
    (version,) = me["bots"][0]["versions"]
    assert version["version"] == payload["version"]
    assert {"mu", "sigma", "games", "timeouts", "crashes", "failures"} <= set(version["rating"])
    _, theirs, _ = send(site, "/api/me", method="GET", Authorization=f"Bearer {site.other_token}")
    assert theirs["bots"] == []


@pytest.mark.parametrize(
    ("headers", "status", "message"),
    [
        ({"Authorization": ""}, 401, "no token: send it as the header Authorization: Bearer TOKEN"),
        ({"Authorization": "Bearer nope"}, 401, "unknown token"),
        ({"Authorization": "Basic x"}, 401, "no token"),
        ({"Content_Type": "application/x-www-form-urlencoded"}, 415, "application/octet-stream"),
        ({"Content_Type": "multipart/form-data; boundary=x"}, 415, "application/octet-stream"),
        ({"Content_Type": "text/plain"}, 415, "application/octet-stream"),
        ({"Origin": "http://evil.example"}, 403, "origin 'http://evil.example' is refused"),
        ({"Sec_Fetch_Site": "cross-site"}, 403, "another site (cross-site)"),
        ({"X_Archive_Format": "rar"}, 400, "unknown archive format 'rar'"),
    ],
    ids=["no-token", "unknown-token", "basic", "form", "multipart", "text", "origin",
         "fetch-site", "format"],
)  # fmt: skip
def test_refusals_name_the_problem_and_store_nothing(
    site: Site, headers: dict[str, str], status: int, message: str
) -> None:
    given = {"Authorization": f"Bearer {site.token}", **headers}
    given = {name: value for name, value in given.items() if value}
    got, payload, _ = submit(site, bot_archive("annbot"), **given)
    assert (got, payload["status"]) == (status, status) and message in payload["error"]
    assert st.list_bots(site.store) == []


def test_another_users_bot_name_is_refused_saying_what_to_do(site: Site) -> None:
    assert submit(site, bot_archive("annbot"), site.token)[0] == 200
    status, payload, _ = submit(site, bot_archive("annbot"), site.other_token)
    assert (status, payload["error"]) == (403, "bot 'annbot' belongs to another user: a bot's"
                                          " name is its first owner's; give yours another"
                                          " (name in its bot.toml)")  # fmt: skip
    assert st.get_bot(site.store, "annbot").owner == "ann"


def test_a_refused_token_says_whom_to_ask_for_one(site: Site) -> None:
    """Only the arena's admin makes tokens: an unknown token's refusal says to ask them (not
    to run arena token create, which a participant cannot), a revoked one's says it once."""
    st.revoke_tokens(site.store, user="bob")
    for token, refusal in [
        ("nope", "unknown token (ask the person who runs this arena for yours: they make it"
                 " with arena token create YOUR_NAME)"),
        (site.other_token, "(ask the admin for a new one)"),
    ]:  # fmt: skip
        for path, method in [("/api/me", "GET"), ("/api/submit", "POST")]:
            status, payload, _ = send(site, path, b"", method, Authorization=f"Bearer {token}",
                                      Content_Type="application/octet-stream")  # fmt: skip
            assert status == 401 and payload["error"].endswith(refusal), payload
            assert payload["error"].count("ask") == 1 and "makes one" not in payload["error"]


def test_the_same_origin_and_a_same_origin_fetch_are_taken(site: Site) -> None:
    host = site.base_url.removeprefix("http://")
    status, payload, _ = submit(
        site,
        bot_archive("annbot"),
        site.token,
        Origin=f"http://{host}",
        Sec_Fetch_Site="same-origin",
    )
    assert status == 200, payload


def test_behind_a_tls_proxy_the_page_s_own_origin_is_taken(site: Site) -> None:
    """The proxy serves https://arena.example and reaches the server by its own address."""
    behind = {"Host": site.base_url.removeprefix("http://"), "X_Forwarded_Host": "arena.example",
              "X_Forwarded_Proto": "https", "Sec_Fetch_Site": "same-origin"}  # fmt: skip
    status, payload, _ = submit(site, bot_archive("annbot"), site.token,
                                Origin="https://arena.example", **behind)  # fmt: skip
    assert status == 200, payload
    status, payload, _ = submit(site, bot_archive("annbot"), site.token,
                                Origin="https://evil.example", **behind)  # fmt: skip
    assert status == 403 and "https://evil.example" in payload["error"], payload


@pytest.mark.parametrize(("headers", "taken"), [
    ({"origin": "http://a.example", "host": "a.example"}, True),
    ({"origin": "https://a.example", "host": "a.example"}, False),
    ({"origin": "https://a.example", "host": "a.example", "x-forwarded-proto": "https"}, True),
    ({"origin": "https://a.example", "host": "127.0.0.1:8080", "x-forwarded-proto": "https",
      "x-forwarded-host": "a.example"}, True),
    ({"origin": "https://a.example", "host": "127.0.0.1:8080", "x-forwarded-proto": "https, http",
      "x-forwarded-host": "a.example, 10.0.0.2"}, True),
    ({"origin": "https://b.example", "host": "a.example", "x-forwarded-proto": "https"}, False),
    ({"origin": "https://a.example:444", "host": "a.example", "x-forwarded-proto": "https"}, False),
    ({"origin": "null", "host": "a.example"}, False),
    ({"host": "a.example"}, True),
    ({"origin": "http://a.example", "host": "a.example", "sec-fetch-site": "same-site"}, False),
], ids=["same", "https page, http server, no proxy header", "tls proxy", "proxy with its own host",
        "proxy chain", "other site", "other port", "opaque origin", "no origin",
        "same-site"])  # fmt: skip
def test_which_origins_are_this_server(headers: dict[str, str], taken: bool) -> None:
    try:
        same_origin(headers, "http")
    except RequestRefused as refused:
        assert not taken, refused.message
        assert refused.status == 403
    else:
        assert taken


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"", 400, "archive is empty"),
        (b"not an archive", 400, "bot refused: not a tar.gz or zip archive"),
        (b"\x1f\x8b" + b"\0" * (8 * 1024 * 1024), 413, "the limit is 8388608"),
    ],
    ids=["empty", "garbage", "too-large"],
)
def test_a_bad_archive_is_refused_by_the_server_s_submission_path(
    site: Site, body: bytes, status: int, message: str
) -> None:
    got, payload, _ = submit(site, body, site.token)
    assert got == status and message in payload["error"]


def test_another_user_s_bot_is_theirs(site: Site) -> None:
    assert submit(site, bot_archive("annbot"), site.token)[0] == 200
    status, payload, _ = submit(site, bot_archive("annbot", "print(2)\n"), site.other_token)
    assert status == 403 and "annbot" in payload["error"]


def test_get_is_not_a_submission_and_me_needs_a_token(site: Site) -> None:
    assert send(site, "/api/submit", method="GET")[0] == 405
    status, payload, _ = send(site, "/api/me", method="GET")
    assert status == 401 and "Authorization: Bearer" in payload["error"]


def test_without_a_submitter_the_page_says_so(tmp_path: Path) -> None:
    store = st.Store.open(tmp_path / "data")
    server, port = create_web_server(store, "127.0.0.1", 0)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/submit", timeout=10) as page:
            html = page.read().decode()
        assert 'id="disabled"' in html and "<script>" not in html
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/submit", data=b"x", method="POST",
            headers={"Content-Type": "application/octet-stream"},
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 404
    finally:
        server.stop()
        store.close()
