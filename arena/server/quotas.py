"""Per-user limits and the one bounded queue of submission checks.

Every limit lives here (``UserLimits``): what a user may hold (bots, remote
bots, versions per bot, bytes of stored files), how often they may submit
(per hour) and how many of their submissions may be checked at once; and,
for the whole server, how many checks run at once and how many may wait.
The submissions a user started in the last hour are counted in memory (a
refusal stores nothing; a restart forgets them). The defaults are ``arena
serve``'s flags; the admin's settings (arena.store.limits, ``arena limits set``
or the SetLimit call) override them for everyone or for one user. The admin's
own submissions count against no per-user limit.

``Quotas.run`` / ``run_async`` admit a submission (or refuse it at once with
``LimitExceeded``) and run its check on the check pool, a pool of its own:
gRPC's SubmitBot and UploadBot and the web's POST /api/submit share it, and the threads of
the API server (the gateway's, the admin's calls) are never taken by a check.
A refusal names the limit, its value and when to retry (``retry_after_s``;
None when waiting does not help): RESOURCE_EXHAUSTED with google.rpc
RetryInfo and QuotaFailure details on gRPC, HTTP 429 with Retry-After on the web.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, NoReturn, TypeVar

import grpc
import grpc.aio
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from arena.bots.archive import MAX_ARCHIVE_BYTES
from arena.store import Principal, Store
from arena.store.kept import KeptAnswers
from arena.store.limits import (
    EVERYONE,
    clear_limit,
    has_remote_version,
    set_limit,
    stored_limits,
    user_usage,
    version_count,
)

T = TypeVar("T")
MiB = 1024 * 1024
HOUR_MS = 3_600_000
CHECK_RETRY_S = 30
"""When to retry a submission refused because checks are busy: about one check's time."""
LIMITS_CACHE_S = 2.0
"""How long a user's limits are kept in memory (the admin's settings from another process)."""
MAX_CHECK_THREADS = 256
"""The check pool's threads at most: checks_total + check_queue may not pass it."""


MAX_LIMIT = 2**63 - 1
"""The largest value a limit takes: the largest the store's integers hold."""


@dataclass(frozen=True, slots=True)
class UserLimits:
    """Each user's limits (the first six), the server's check queue (the next two), and
    whether a user's games at /play are rated in the people's pool (a setting of the
    admin's, stored and overridden per user like the limits)."""

    bots: int = 20
    """Bots a user owns (remote ones included)."""
    remote_bots: int = 10
    """Remote bots a user registers."""
    versions_per_bot: int = 50
    """Versions of one bot."""
    stored_bytes: int = 256 * MiB
    """Bytes of the files of all a user's bot versions."""
    submissions_per_hour: int = 30
    """Submissions (once admitted to a check) and remote registrations a user starts in any
    hour, stored or refused."""
    checks_per_user: int = 1
    """A user's submissions being checked or waiting for a check at once."""
    checks_total: int = 2
    """Submission checks running at once on the whole server."""
    check_queue: int = 8
    """Submissions waiting for a check on the whole server."""
    rated_play: int = 0
    """1: a person's games at /play are rated in the people's pool (0: unrated)."""

    def __post_init__(self) -> None:
        values = asdict(self)
        for name, value in values.items():
            if (problem := _whole_problem(name, value)) is not None:
                raise ValueError(problem)
        for name, value in values.items():
            if (problem := _range_problem(name, value)) is not None:
                raise ValueError(problem)
        if self.checks_total + self.check_queue > MAX_CHECK_THREADS:
            raise ValueError(
                f"checks_total + check_queue must be at most {MAX_CHECK_THREADS},"
                f" got {self.checks_total + self.check_queue}"
            )


LIMIT_NAMES = tuple(f.name for f in fields(UserLimits))
SERVER_LIMITS = frozenset({"checks_total", "check_queue"})
"""Limits of the whole server: set for everyone only."""


def _whole_problem(name: str, value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return f"limit {name} must be a whole number, 0 or more, got {value!r}"
    if value > MAX_LIMIT:
        return f"limit {name} must be at most {MAX_LIMIT}, got {value}"
    return None


def limit_value_problem(name: str, value: object) -> str | None:
    """What is wrong with ``value`` for limit ``name`` on its own, in words (None:
    nothing); whether it fits the other limits (checks_total + check_queue) is
    ``UserLimits``' to say."""
    return _whole_problem(name, value) or _range_problem(name, value)


def _range_problem(name: str, value: object) -> str | None:
    """What is wrong with a whole ``value`` for the limits that take fewer values."""
    if name == "rated_play" and value not in (0, 1):
        return f"limit rated_play must be 0 (off) or 1 (on), got {value}"
    if name == "checks_total" and value == 0:
        return "limit checks_total must be at least 1"
    return None


def setting_problem(name: str, user: str | None) -> str | None:
    """Why limit ``name`` cannot be set or cleared for ``user`` (None: everyone), if so."""
    if name not in LIMIT_NAMES:
        return f"no limit {name!r}; the limits are {', '.join(LIMIT_NAMES)}"
    if user is not None and name in SERVER_LIMITS:
        return f"limit {name} is the whole server's: set it for everyone"
    return None


def limit_help(name: str) -> str:
    """The one-line description of limit ``name``."""
    return _HELP[name]


_HELP = {
    "bots": "bots a user owns (remote ones included)",
    "remote_bots": "remote bots a user registers",
    "versions_per_bot": "versions of one bot",
    "stored_bytes": "bytes of the files of all a user's bot versions",
    "submissions_per_hour": "submissions and remote registrations a user starts in any hour",
    "checks_per_user": "a user's submissions being checked or waiting at once",
    "checks_total": "submission checks running at once (the whole server)",
    "check_queue": "submissions waiting for a check (the whole server)",
    "rated_play": "1: a person's games at /play are rated in the people's pool; 0: unrated",
}


@dataclass(frozen=True, slots=True)
class LimitInForce:
    name: str
    value: int
    default: int
    set_for: str  # "default", "everyone" or a user's name
    description: str


class LimitExceeded(Exception):
    """A request past a limit: its name, its value, why, and when to retry (None: waiting
    does not help)."""

    def __init__(self, limit: str, value: int, message: str, retry_after_s: int | None) -> None:
        super().__init__(message)
        self.limit = limit
        self.value = value
        self.message = message
        self.retry_after_s = retry_after_s

    def grpc_status(self, subject: str) -> _LimitStatus:
        """RESOURCE_EXHAUSTED with QuotaFailure and (when it helps) RetryInfo details."""
        details = []
        if self.retry_after_s is not None:
            retry = error_details_pb2.RetryInfo(
                retry_delay=duration_pb2.Duration(seconds=self.retry_after_s)
            )
            packed = any_pb2.Any()
            packed.Pack(retry)
            details.append(packed)
        failure = error_details_pb2.QuotaFailure(
            violations=[
                error_details_pb2.QuotaFailure.Violation(subject=subject, description=self.message)
            ]
        )
        packed = any_pb2.Any()
        packed.Pack(failure)
        details.append(packed)
        status = rpc_status.to_status(
            status_pb2.Status(
                code=code_pb2.RESOURCE_EXHAUSTED, message=self.message, details=details
            )
        )
        metadata = tuple(status.trailing_metadata or ())
        if self.retry_after_s is not None:  # for clients that read no status details
            metadata += (("retry-after", str(self.retry_after_s)),)
        return _LimitStatus(status.code, status.details, metadata)

    def http_json(self) -> dict[str, object]:
        return {
            "error": self.message, "status": 429, "kind": "limit", "limit": self.limit,
            "value": self.value, "retry_after_s": self.retry_after_s,
        }  # fmt: skip


class _LimitStatus(grpc.Status):
    def __init__(
        self, code: grpc.StatusCode, details: str, trailing_metadata: tuple[tuple[str, Any], ...]
    ) -> None:
        self.code = code
        self.details = details
        self.trailing_metadata = trailing_metadata


async def abort_past_limit(
    context: grpc.aio.ServicerContext[Any, Any], exceeded: LimitExceeded, subject: str
) -> NoReturn:
    """End an async call with ``exceeded``'s status (its details and retry-after)."""
    status = exceeded.grpc_status(subject)
    await context.abort(status.code, status.details, status.trailing_metadata)
    raise AssertionError("unreachable")  # context.abort raises


def refuse_past_limit(
    context: grpc.ServicerContext, exceeded: LimitExceeded, subject: str
) -> NoReturn:
    """End a synchronous call with ``exceeded``'s status (its details and retry-after)."""
    status = exceeded.grpc_status(subject)
    context.set_trailing_metadata(status.trailing_metadata)
    context.abort(status.code, status.details)
    raise AssertionError("unreachable")  # context.abort raises


@dataclass(frozen=True, slots=True)
class UploadRoom:
    """What a user may still store (``stored_bytes`` less what their bots take): an
    upload past it is refused as it passes, before its check."""

    user: str
    limit: int
    stored: int

    @property
    def left(self) -> int:
        return self.limit - self.stored

    def past(self, sent: int) -> LimitExceeded:
        return _held_too_much(
            "stored_bytes", self.limit,
            f"{self.user}'s bots take {self.stored} bytes and this upload passed {sent}",
        )  # fmt: skip


class Quotas:
    """The limits of each user (defaults, then the admin's settings) and the check queue."""

    def __init__(self, store: Store, defaults: UserLimits | None = None) -> None:
        self.store = store
        self.defaults = defaults or UserLimits()
        self.pool = futures.ThreadPoolExecutor(MAX_CHECK_THREADS, thread_name_prefix="arena-check")
        self._lock = threading.Condition()
        self._held: dict[str, int] = {}  # a user's admitted submissions (checking or waiting)
        self._admitted = 0
        self._running = 0
        self._started: dict[str, collections.deque[int]] = {}  # a user's starts in the hour (ms)
        self._user_locks: dict[str, threading.Lock] = {}  # held while a user's bot is stored
        self._uploading: dict[str, int] = {}  # a user's UploadBot streams receiving chunks
        self._limits: KeptAnswers[str | None, UserLimits] = KeptAnswers(LIMITS_CACHE_S)

    def limits_for(self, user: str | None) -> UserLimits:
        """``user``'s limits: the defaults, everyone's settings, then their own.

        Kept for LIMITS_CACHE_S: a refusal reads no store (a flood of them cannot
        wait on the store's lock); SetLimit applies at once, `arena limits set` (another
        process) within LIMITS_CACHE_S. Limits read while a SetLimit was stored are
        that call's answer only, never kept."""
        return self._limits.get(user, lambda: self._read_limits(user))

    def _read_limits(self, user: str | None) -> UserLimits:
        stored = stored_limits(self.store, user)
        changes: dict[str, int] = {}
        for scope in (EVERYONE, user):
            for row in stored:
                own = scope == EVERYONE or row.name not in SERVER_LIMITS
                if row.scope == scope and row.name in LIMIT_NAMES and own:
                    changes[row.name] = row.value
        try:
            return replace(self.defaults, **changes)
        except ValueError:  # settings that do not fit together: the defaults hold
            return self.defaults

    def in_force(self, user: str | None) -> list[LimitInForce]:
        """Each limit for ``user`` (None: every user): its value, default and whose setting."""
        stored = stored_limits(self.store, user)
        limits = self._read_limits(user)
        shown = []
        for name in LIMIT_NAMES:
            set_for = "default"
            for row in stored:
                if row.name == name and row.scope == EVERYONE:
                    set_for = "everyone"
            for row in stored:
                if row.name == name and user is not None and row.scope == user:
                    set_for = user if name not in SERVER_LIMITS else set_for
            shown.append(LimitInForce(
                name, getattr(limits, name), getattr(self.defaults, name), set_for, _HELP[name]
            ))  # fmt: skip
        return shown

    def set(self, name: str, value: int | None, user: str | None) -> None:
        """Store (None: clear) the admin's setting of ``name`` for ``user`` (None: everyone);
        ValueError naming an unknown limit, a value out of range, or a server limit set
        for one user."""
        if (problem := setting_problem(name, user)) is not None:
            raise ValueError(problem)
        if value is None:
            clear_limit(self.store, name, user=user)
        else:
            replace(self._read_limits(user), **{name: value})  # ValueError naming what is wrong
            set_limit(self.store, name, value, user=user)
        self._limits.forget()

    # --- what a user holds --------------------------------------------------

    @contextlib.contextmanager
    def holding(
        self, principal: Principal, bot: str, *, remote: bool, new_bytes: int
    ) -> Iterator[None]:
        """Check ``principal``'s holdings for a new version of ``bot`` and keep them
        from changing while the caller stores it: two requests of one user at once
        cannot both pass a limit by one."""
        with self._lock:
            lock = self._user_locks.setdefault(principal.user, threading.Lock())
        with lock:
            self.check_holdings(
                principal, bot, new_bot=version_count(self.store, bot) == 0, remote=remote,
                new_bytes=new_bytes,
            )  # fmt: skip
            yield

    def check_holdings(
        self, principal: Principal, bot: str, *, new_bot: bool, remote: bool, new_bytes: int
    ) -> None:
        """LimitExceeded when storing a new version of ``bot`` would pass a limit."""
        if principal.is_admin:
            return
        limits = self.limits_for(principal.user)
        usage = user_usage(self.store, principal.user)
        user = principal.user
        if new_bot and usage.bots >= limits.bots:
            raise _held_too_much("bots", limits.bots, f"{user} owns {usage.bots} bots")
        if (  # a bot's first remote version makes one more remote bot, a new bot or not
            remote and usage.remote_bots >= limits.remote_bots
            and (new_bot or not has_remote_version(self.store, bot))
        ):  # fmt: skip
            raise _held_too_much(
                "remote_bots", limits.remote_bots, f"{user} has {usage.remote_bots} remote bots"
            )
        versions = 0 if new_bot else version_count(self.store, bot)
        if versions >= limits.versions_per_bot:
            raise _held_too_much(
                "versions_per_bot", limits.versions_per_bot, f"bot {bot!r} has {versions} versions"
            )
        if usage.stored_bytes + new_bytes > limits.stored_bytes:
            raise _held_too_much(
                "stored_bytes", limits.stored_bytes,
                f"{user}'s bots take {usage.stored_bytes} bytes and this version {new_bytes}",
            )  # fmt: skip

    def upload_room(self, principal: Principal) -> UploadRoom | None:
        """What ``principal`` may still store, when it is less than ``MAX_ARCHIVE_BYTES``
        (None: more, or the admin); LimitExceeded when nothing is left. Reads the store:
        call it off the event loop."""
        if principal.is_admin:
            return None
        limits = self.limits_for(principal.user)
        usage = user_usage(self.store, principal.user)
        left = limits.stored_bytes - usage.stored_bytes
        if left <= 0:
            raise _held_too_much(
                "stored_bytes", limits.stored_bytes,
                f"{principal.user}'s bots take {usage.stored_bytes} bytes",
            )  # fmt: skip
        return UploadRoom(principal.user, limits.stored_bytes, usage.stored_bytes) \
            if left < MAX_ARCHIVE_BYTES else None

    def begin_upload(self, principal: Principal) -> None:
        """Count ``principal``'s streamed upload before its first chunk; LimitExceeded at
        once when the user already sends ``checks_per_user`` uploads or started
        ``submissions_per_hour`` submissions in the hour (not counted here: the check
        counts it). Reads no store; ``end_upload`` once it is over."""
        limits = self.limits_for(principal.user)
        user = principal.user
        with self._lock:
            held = self._uploading.get(user, 0)
            if not principal.is_admin:
                if held >= limits.checks_per_user:
                    raise LimitExceeded(
                        "checks_per_user", limits.checks_per_user,
                        f"limit checks_per_user: {user} has {held} upload(s) under way,"
                        f" the limit is {limits.checks_per_user}; retry once it is done",
                        CHECK_RETRY_S,
                    )  # fmt: skip
                self._hour_of(user, limits)
            self._uploading[user] = held + 1

    def end_upload(self, principal: Principal) -> None:
        """One fewer upload under way for ``principal`` (``begin_upload``)."""
        with self._lock:
            held = self._uploading.get(principal.user, 1) - 1
            if held > 0:
                self._uploading[principal.user] = held
            else:
                self._uploading.pop(principal.user, None)

    # --- how often and how many at once ---------------------------------------

    def count_submission(self, principal: Principal, limits: UserLimits | None = None) -> None:
        """Count one submission (or registration) now; LimitExceeded past the hourly limit."""
        if principal.is_admin:
            return
        limits = limits or self.limits_for(principal.user)
        with self._lock:  # counted and checked together: two at once cannot both pass
            started, now_ms = self._hour_of(principal.user, limits)
            started.append(now_ms)

    def _hour_of(
        self, user: str, limits: UserLimits
    ) -> tuple[collections.deque[int], int]:  # fmt: skip
        """``user``'s submission starts in the last hour, and now (ms); LimitExceeded, with
        when to retry, when they already reach ``submissions_per_hour``. Under ``_lock``."""
        now_ms = time.monotonic_ns() // 1_000_000
        started = self._started.setdefault(user, collections.deque())
        while started and started[0] <= now_ms - HOUR_MS:
            started.popleft()
        if len(started) >= limits.submissions_per_hour:
            wait_ms = started[-limits.submissions_per_hour] + HOUR_MS - now_ms \
                if limits.submissions_per_hour else HOUR_MS
            raise LimitExceeded(
                "submissions_per_hour", limits.submissions_per_hour,
                f"limit submissions_per_hour: {user} started {len(started)}"
                f" submissions in the last hour, the limit is {limits.submissions_per_hour};"
                f" retry in {math.ceil(wait_ms / 1000)} s",
                max(1, math.ceil(wait_ms / 1000)),
            )  # fmt: skip
        return started, now_ms

    def _admit(self, principal: Principal) -> UserLimits:
        limits = self.limits_for(principal.user)
        user = principal.user
        with self._lock:
            held = self._held.get(user, 0)
            if not principal.is_admin and held >= limits.checks_per_user:
                raise LimitExceeded(
                    "checks_per_user", limits.checks_per_user,
                    f"limit checks_per_user: {user} has {held} submission(s) being checked,"
                    f" the limit is {limits.checks_per_user}; retry in {CHECK_RETRY_S} s,"
                    " once it is done",
                    CHECK_RETRY_S,
                )  # fmt: skip
            waiting = self._admitted - self._running
            if self._admitted >= limits.checks_total + limits.check_queue:
                raise LimitExceeded(
                    "check_queue", limits.check_queue,
                    f"limit check_queue: the server is checking {self._running} submission(s)"
                    f" and {waiting} wait, the limit is {limits.check_queue} waiting;"
                    f" retry in {CHECK_RETRY_S} s",
                    CHECK_RETRY_S,
                )  # fmt: skip
            self.count_submission(principal, limits)
            self._held[user] = held + 1
            self._admitted += 1
        return limits

    def _release(self, user: str) -> None:
        with self._lock:
            held = self._held.get(user, 1) - 1
            if held > 0:
                self._held[user] = held
            else:
                self._held.pop(user, None)
            self._admitted -= 1

    def _checked(self, limits: UserLimits, work: Callable[[], T]) -> T:
        """``work`` once fewer than ``checks_total`` checks run (on a check pool thread)."""
        with self._lock:
            while self._running >= limits.checks_total:
                self._lock.wait()
            self._running += 1
        try:
            return work()
        finally:
            with self._lock:
                self._running -= 1
                self._lock.notify_all()

    def submit(self, principal: Principal, work: Callable[[], T]) -> futures.Future[T]:
        """Admit ``principal``'s submission (LimitExceeded at once if not) and check it on
        the check pool; the future has ``work``'s result."""
        limits = self._admit(principal)
        try:
            future = self.pool.submit(self._checked, limits, work)
        except RuntimeError:  # the pool is shut down: the server is stopping
            self._release(principal.user)
            raise
        future.add_done_callback(lambda _: self._release(principal.user))
        return future

    def run(self, principal: Principal, work: Callable[[], T]) -> T:
        """``submit`` and wait (the web's request thread waits; it holds no API thread)."""
        return self.submit(principal, work).result()

    async def run_async(self, principal: Principal, work: Callable[[], T]) -> T:
        """``submit`` and await it (a gRPC call on the event loop holds no thread while its
        check waits or runs). Admission reads the limits from memory (``limits_for``)."""
        return await asyncio.wrap_future(self.submit(principal, work))

    def busy(self) -> tuple[int, int]:
        """(checks running, submissions admitted) now."""
        with self._lock:
            return self._running, self._admitted

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def _held_too_much(limit: str, value: int, held: str) -> LimitExceeded:
    return LimitExceeded(
        limit, value,
        f"limit {limit}: {held}, the limit is {value}; waiting does not help:"
        " ask the admin to raise it",
        None,
    )  # fmt: skip
