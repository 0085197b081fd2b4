"""Submitting a bot from the browser (``/submit``, ``POST /api/submit``, ``GET /api/me``).

The page's script sends the participant's token in an ``Authorization:
Bearer`` header, never in a cookie (the server sets none and reads none), so a
page elsewhere cannot make a browser submit for its user: there is no ambient
credential to borrow. On top of that a submission must come as
``application/octet-stream`` (no HTML form can send that, and a script of
another origin cannot without a CORS preflight this server never answers),
and a request a browser marks as coming from another site (``Origin``,
``Sec-Fetch-Site``) is refused.

The upload goes to a ``BotSubmitter`` that ``arena serve`` provides: the
server's one submission path (``arena.server.submissions.WebSubmitter``, as
``SubmitBot`` and ``UploadBot`` use), which answers with an HTTP status and the JSON to send
(the bot and version, or the refusal, with the conformance findings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from arena.store import Principal

Json = dict[str, object]
SUBMIT_CONTENT_TYPES = ("application/octet-stream",)
FORMAT_HEADER = "x-archive-format"


class BotSubmitter(Protocol):
    max_bytes: int  # the largest archive it takes

    def __call__(
        self, principal: Principal, archive: bytes, archive_format: str | None
    ) -> tuple[int, Json]: ...


@runtime_checkable
class AccountSource(Protocol):
    """Who a token is, and which bots they own (the store's source has it)."""

    def principal(self, token: str) -> Principal | None: ...

    def owned_bots(self, user: str) -> Sequence[str]: ...


class RequestRefused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def bearer_token(headers: Mapping[str, str]) -> str:
    """The token of ``Authorization: Bearer TOKEN`` (header names lower-cased)."""
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise RequestRefused(401, "no token: send it as the header Authorization: Bearer TOKEN")
    return token.strip()


ASK_FOR_A_TOKEN = (
    "ask the person who runs this arena for yours: they make it with arena token create YOUR_NAME"
)


def token_refusal(refusal: str) -> str:
    """A refused token's words for a person at a page, saying what to do: only the arena's
    admin makes tokens, so an unknown one says whom to ask (a revoked or expired one's
    refusal says it already)."""
    return refusal if "ask the admin" in refusal else f"{refusal} ({ASK_FOR_A_TOKEN})"


def same_origin(headers: Mapping[str, str], scheme: str) -> None:
    """Refuse a request a browser says came from another site.

    ``Origin`` must name this server: the request's ``Host``, or the
    ``X-Forwarded-Host`` a proxy in front sets, over ``scheme`` or the
    ``X-Forwarded-Proto`` it sets. A TLS proxy's page is ``https://`` while the
    server itself serves ``http``, and a proxy may send the upstream's address as
    ``Host``. Trusting those headers here gives a cross-site page nothing: a
    browser sends them from another origin only after a CORS preflight, which this
    server never answers, and the token is never ambient anyway.
    """
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        raise RequestRefused(403, f"a request from another site ({site}) is refused")
    origin = headers.get("origin")
    if origin is None:
        return
    hosts = {_first(headers.get(name)) for name in ("host", "x-forwarded-host")} - {""}
    schemes = {scheme, _first(headers.get("x-forwarded-proto")).lower()} - {""}
    if origin not in {f"{s}://{h}" for s in schemes for h in hosts}:
        host = headers.get("host", "")
        raise RequestRefused(403, f"a request from origin {origin[:100]!r} is refused: this "
                                  f"server is {scheme}://{host[:100]} (behind a proxy: "
                                  "send X-Forwarded-Host and X-Forwarded-Proto)")  # fmt: skip


def _first(value: str | None) -> str:
    """The first of a header's comma-separated values (a proxy chain's first proxy)."""
    return (value or "").split(",")[0].strip()


def submission_content(headers: Mapping[str, str]) -> str | None:
    """Checks the body's type; the archive format the page names (None: told by its bytes)."""
    media_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type not in SUBMIT_CONTENT_TYPES:
        raise RequestRefused(
            415,
            f"send the archive as Content-Type application/octet-stream, not {media_type!r}",
        )
    archive_format = headers.get(FORMAT_HEADER, "").strip().lower()
    return archive_format or None
