"""Holds the inner loop fast: a test that crosses a process or server boundary is marked slow.

``pytest -m "not slow"`` is the inner loop; it stays fast only while every test
that starts a process, binds a server or launches a browser says so with
``@pytest.mark.slow``. This plugin sees what a test and its fixtures start
through Python's audit hooks (``subprocess.Popen``, ``os.fork``, ``os.exec``,
``os.posix_spawn``, ``socket.bind``) and gRPC's server constructors. An
unmarked test fails naming what it started, or the fixture that started it
(a fixture shared by several tests starts its server once, so every test that
uses such a fixture is held to the rule, whichever of them set it up). Soak
tests run only when ``-m`` names them (for example ``-m soak``).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Generator
from typing import Any

import pytest

_WATCHED_EVENTS = frozenset(
    {"subprocess.Popen", "os.fork", "os.forkpty", "os.exec", "os.posix_spawn", "os.spawn"}
)


class _Watch:
    """What this process's tests and fixtures have started, as counted and named."""

    count = 0
    """Boundary crossings so far, whatever runs (a fixture's set-up compares it)."""
    started: list[str] | None = None
    """What the running unmarked test started; ``None`` while no such test runs."""
    fixtures: dict[str, str] = {}  # noqa: RUF012  (one for the process)
    """Fixtures whose set-up started a process or a server, and what."""
    earlier_threads: frozenset[int] = frozenset()
    """Threads alive before this test's set-up (the main one aside): what they do is not
    the test's (a server of an earlier test still shutting down, a reaper)."""

    @classmethod
    def note(cls, what: str, *, own: bool = True) -> None:
        """Count ``what``; ``own``: it happened in the main thread or is a server made
        (a fixture's own doing, not another thread's that happened meanwhile)."""
        if own:
            cls.count += 1
            cls.last = what
        if cls.started is not None and len(cls.started) < 5:
            cls.started.append(what)

    last = ""
    """What was counted last (named when a fixture is found to start something)."""


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event not in _WATCHED_EVENTS and event != "socket.bind":
        return
    if threading.get_ident() in _Watch.earlier_threads:
        return
    own = threading.current_thread() is threading.main_thread()
    if event in _WATCHED_EVENTS:
        _Watch.note(f"{event} {_describe(args)}", own=own)
    elif own:  # a bind: the test's own only (a fixture is held to processes and servers)
        _Watch.note(f"socket.bind {args[1]!r}", own=False)


def _describe(args: tuple[Any, ...]) -> str:
    """The program a process event names, short."""
    for arg in args:
        if isinstance(arg, (str, bytes)):
            return repr(arg)[:80]
        if isinstance(arg, (list, tuple)) and arg:
            return repr(list(arg)[:4])[:80]
    return ""


def _watching(factory: Callable[..., Any], name: str) -> Callable[..., Any]:
    def start(*args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() not in _Watch.earlier_threads:  # not an earlier test's
            _Watch.note(name, own=threading.current_thread() is threading.main_thread())
        return factory(*args, **kwargs)

    start.__wrapped__ = factory  # type: ignore[attr-defined]
    return start


def install(config: pytest.Config) -> None:
    """Watch this process from now on and register the hooks below."""
    import grpc
    import grpc.aio

    sys.addaudithook(_audit)
    grpc.server = _watching(grpc.server, "grpc.server")
    grpc.aio.server = _watching(grpc.aio.server, "grpc.aio.server")
    config.pluginmanager.register(sys.modules[__name__], "kahuna-boundaries")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "soak" in (config.option.markexpr or ""):
        return
    soak = [item for item in items if item.get_closest_marker("soak") is not None]
    if soak:
        config.hook.pytest_deselected(items=soak)
        items[:] = [item for item in items if item.get_closest_marker("soak") is None]


def _unmarked(item: pytest.Item) -> bool:
    return item.get_closest_marker("slow") is None and item.get_closest_marker("soak") is None


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any]) -> Generator[None, object, object]:
    before = _Watch.count
    result = yield
    if _Watch.count > before:
        _Watch.fixtures[fixturedef.argname] = _Watch.last
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    main = threading.main_thread().ident
    _Watch.earlier_threads = frozenset(
        t.ident for t in threading.enumerate() if t.ident is not None and t.ident != main
    )
    if _unmarked(item):
        _Watch.started = []
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    result = yield
    started, _Watch.started = _Watch.started, None
    if started is None:
        return result
    used = set(getattr(item, "fixturenames", ()))
    shared = sorted(name for name in _Watch.fixtures if name in used)
    if started or shared:
        what = "; ".join(
            started + [f"fixture {name!r} ({_Watch.fixtures[name]})" for name in shared]
        )
        pytest.fail(
            f"this test starts a process or a server but is not marked slow: {what}"
            " (add @pytest.mark.slow, or keep it in-process)",
            pytrace=False,
        )
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, object, object]:
    _Watch.started = None
    return (yield)
