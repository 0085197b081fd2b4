"""Submitting a bot: the one path behind ``SubmitBot`` and ``UploadBot`` (gRPC) and the
web's ``/submit`` page.

``submit_bot`` unpacks an uploaded archive (``arena.bots.archive``), checks
who may own the bot, runs the submission check (conformance scenarios, then
the smoke match: ``arena.bots.submission``, through the server's
``smoke_check``) and stores the new version. Each refusal is a
``SubmissionRefused`` of one ``RefusalKind`` with a message naming the
problem; the gRPC service maps kinds to status codes and the web to HTTP
statuses (``WebSubmitter``), so both say the same thing. The conformance
findings come back either way, refused or stored.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.bots.archive import (
    MAX_ARCHIVE_BYTES,
    ArchiveError,
    ArchiveTooLargeError,
    unpack_bot_archive,
    upload_directory,
)
from arena.bots.names import reserved_name_problem
from arena.bots.submission import SubmissionCheck
from arena.conformance import ensure_class_archive
from arena.logs import get_logger
from arena.referee import BotConfigError, load_bot
from arena.server.quotas import LimitExceeded, Quotas
from arena.store import (
    BotVersionRow,
    NotFoundError,
    NotOwnerError,
    Principal,
    Store,
    StoreError,
    add_bot_version,
    bot_spec,
    case_twin,
    case_twin_problem,
    get_bot,
    get_version,
    require_owner,
)
from arena.store.limits import directory_bytes, version_count
from arena.store.remote import REMOTE_RUNTIME, register_remote_bot

SmokeCheck = Callable[[Path], SubmissionCheck]  # bot dir -> refusal (or None) and findings
ARCHIVE_FORMATS = ("tar.gz", "zip")
REMOTE_TOML_BYTES = 1024  # what a remote bot's stored bot.toml takes, at most
ARCHIVE_DIR = "archive"
"""Where in its upload directory an archive is unpacked."""


TAKEN_NAME = "a bot's name is its first owner's; give yours another (name in its bot.toml)"
TAKEN_REMOTE_NAME = "a bot's name is its first owner's; register yours under another"


class RefusalKind(enum.StrEnum):
    EMPTY = "empty"  # no archive
    UNKNOWN_FORMAT = "unknown_format"
    TOO_LARGE = "too_large"
    BAD_BOT = "bad_bot"  # the archive or its bot.toml
    FAILED_CHECK = "failed_check"  # conformance scenarios or smoke match
    NOT_ALLOWED = "not_allowed"  # another user's bot, or a name the user cannot own


class SubmissionRefused(Exception):
    def __init__(
        self, kind: RefusalKind, message: str, checked: SubmissionCheck | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.checked = checked or SubmissionCheck()


@dataclass(frozen=True)
class Submitted:
    row: BotVersionRow
    created: bool  # a new version (False: these files were stored already)
    checked: SubmissionCheck


def submit_bot(
    store: Store,
    principal: Principal,
    archive: bytes,
    archive_format: str | None,
    smoke_check: SmokeCheck | None,
    quotas: Quotas | None = None,
) -> Submitted:
    """Unpack, check and store ``archive`` for ``principal``; SubmissionRefused says why not.

    ``archive_format``: ``"tar.gz"``, ``"zip"`` or None (told by its first bytes).
    ``smoke_check`` None: no check (tests of refusals only). Remote bots are not checked.
    ``quotas``: what the user may hold (LimitExceeded past it, before any check is run).
    """
    if not archive:
        raise SubmissionRefused(RefusalKind.EMPTY, "archive is empty")
    with upload_directory() as work:
        unpacked = Path(work) / ARCHIVE_DIR
        try:
            return _submit(
                store, principal, Path(work), archive, archive_format, smoke_check, quotas
            )
        except SubmissionRefused as refused:
            raise SubmissionRefused(
                refused.kind, in_archive(refused.message, unpacked), refused.checked
            ) from None
        except ArchiveTooLargeError as error:
            raise SubmissionRefused(RefusalKind.TOO_LARGE, f"archive refused: {error}") from None
        except (ArchiveError, BotConfigError) as error:
            message = in_archive(f"bot refused: {error}", unpacked)
            raise SubmissionRefused(RefusalKind.BAD_BOT, message) from None
        except NotOwnerError as error:  # a name is its first owner's: say what to do
            raise SubmissionRefused(RefusalKind.NOT_ALLOWED, f"{error}: {TAKEN_NAME}") from None
        except StoreError as error:  # an owner name it cannot be
            raise SubmissionRefused(RefusalKind.NOT_ALLOWED, str(error)) from None


def in_archive(message: str, unpacked: Path) -> str:
    """``message`` with each path under ``unpacked`` given as its place in the archive
    (``bot.toml``, ``mybot/bot.py``): a refusal tells the user the file they sent, never
    where this server unpacked it (its temporary directory, named after its pid)."""
    for root in dict.fromkeys((str(unpacked), str(unpacked.resolve()))):
        message = message.replace(f"{root}/", "").replace(root, ".")
    return message


def _submit(
    store: Store,
    principal: Principal,
    work: Path,
    archive: bytes,
    archive_format: str | None,
    smoke_check: SmokeCheck | None,
    quotas: Quotas | None,
) -> Submitted:
    # the archive's own directory: 0755 like a top-level folder it may hold, so a
    # bot zipped without one (cd bot && zip -r ../b.zip .) is world-readable too,
    # as the sandboxed bot needs; the upload directory around it stays 0700
    target = work / ARCHIVE_DIR
    target.mkdir()
    target.chmod(0o755)
    directory = unpack_bot_archive(archive, target, archive_format)
    spec = load_bot(directory)
    require_owner(store, principal, spec.name, missing_ok=True)
    refused_name = name_refusal(store, principal, spec.name)
    if refused_name is not None:
        raise SubmissionRefused(RefusalKind.NOT_ALLOWED, refused_name)
    log = get_logger(service="arena")
    stored = _stored_version(store, spec.name, spec.version)
    if stored is not None:  # the same files: nothing to check or play again
        log.info("bot_resubmitted", bot=stored.bot, version=stored.version)
        return Submitted(stored, False, SubmissionCheck())
    if quotas is not None:  # before a check: nothing that cannot be stored is played
        remote = spec.runtime == REMOTE_RUNTIME
        quotas.check_holdings(
            principal, spec.name, new_bot=version_count(store, spec.name) == 0, remote=remote,
            new_bytes=REMOTE_TOML_BYTES if remote else directory_bytes(directory),
        )  # fmt: skip
    checked = SubmissionCheck()
    if smoke_check is not None and spec.runtime != REMOTE_RUNTIME:
        checked = smoke_check(directory)
        if checked.refusal is not None:
            raise SubmissionRefused(
                RefusalKind.FAILED_CHECK, f"bot refused: {checked.refusal}", checked
            )
    remote = spec.runtime == REMOTE_RUNTIME
    holding = (
        contextlib.nullcontext() if quotas is None else quotas.holding(
            principal, spec.name, remote=remote,
            new_bytes=REMOTE_TOML_BYTES if remote else directory_bytes(directory),
        )
    )  # fmt: skip
    with holding:  # checked again as it is stored: what changed during the check counts
        if remote:  # its owner runs it: only a bot.toml of ours is kept
            row, created = register_remote_bot(
                store, spec.name, owner=principal.user, description=spec.description
            )
        else:
            row, created = add_bot_version(store, spec, owner=principal.user)
    log.info("bot_submitted", bot=row.bot, version=row.version, user=principal.user)
    if smoke_check is not None:  # a checked Java version: its class-data archive, once
        ensure_class_archive(bot_spec(store, row.bot, row.version))
    return Submitted(row, created, checked)


def name_refusal(store: Store, principal: Principal, name: str) -> str | None:
    """Why ``principal`` may not take bot name ``name`` (a reserved name no user owns yet,
    a name one case apart from a stored bot's)."""
    twin = case_twin(store, name)
    if twin is not None:  # anyone's: two names one case apart pass for one bot
        return case_twin_problem(name, twin)
    if principal.is_admin:
        return None
    try:
        if get_bot(store, name).owner == principal.user:  # theirs from before: keep it
            return None
    except NotFoundError:
        pass
    return reserved_name_problem(name)


def _stored_version(store: Store, name: str, version: str) -> BotVersionRow | None:
    """The stored row of exactly this version of ``name``, if there is one."""
    try:
        row = get_version(store, name, version)
    except NotFoundError:
        return None
    return row if row.version == version else None


# --- the web's upload page (arena.web.submit) ---------------------------------

HTTP_STATUS = {
    RefusalKind.EMPTY: 400,
    RefusalKind.UNKNOWN_FORMAT: 400,
    RefusalKind.TOO_LARGE: 413,
    RefusalKind.BAD_BOT: 400,
    RefusalKind.FAILED_CHECK: 422,
    RefusalKind.NOT_ALLOWED: 403,
}


def _check_json(checked: SubmissionCheck) -> dict[str, object] | None:
    return None if checked.conformance is None else checked.conformance.to_json()


class WebSubmitter:
    """``arena.web.submit.BotSubmitter`` over ``submit_bot``: (HTTP status, JSON payload)."""

    max_bytes = MAX_ARCHIVE_BYTES

    def __init__(
        self, store: Store, smoke_check: SmokeCheck | None, quotas: Quotas | None = None
    ) -> None:
        self.store = store
        self.smoke_check = smoke_check
        self.quotas = quotas or Quotas(store)
        """The server's (SubmitBot's and UploadBot's) own: one queue of checks for all."""

    def __call__(
        self, principal: Principal, archive: bytes, archive_format: str | None
    ) -> tuple[int, dict[str, object]]:
        if archive_format is not None and archive_format not in ARCHIVE_FORMATS:
            message = f"unknown archive format {archive_format!r}; use tar.gz or zip"
            return 400, {"error": message, "status": 400, "kind": str(RefusalKind.UNKNOWN_FORMAT)}
        try:
            done = self.quotas.run(
                principal,
                lambda: submit_bot(
                    self.store, principal, archive, archive_format, self.smoke_check, self.quotas
                ),
            )
        except LimitExceeded as exceeded:  # 429, and Retry-After when waiting helps
            return 429, exceeded.http_json()
        except SubmissionRefused as refused:
            status = HTTP_STATUS[refused.kind]
            return status, {
                "error": refused.message, "status": status, "kind": str(refused.kind),
                "conformance": _check_json(refused.checked),
            }  # fmt: skip
        return 200, {
            "bot": done.row.bot, "version": done.row.version, "created": done.created,
            "conformance": _check_json(done.checked),
        }  # fmt: skip
