"""Holds the inner loop fast: a test that crosses a process or server boundary is marked slow.

``pytest -m "not slow"`` is the inner loop; it stays fast only while every test
that starts a process, binds a server or launches a browser says so with
``@pytest.mark.slow``. This plugin watches each unmarked test's set-up and call
through Python's audit hooks (``subprocess.Popen``, ``os.fork``, ``os.exec``,
``os.posix_spawn``, ``socket.bind``) and gRPC's server constructors, and fails
the test naming what it started. Soak tests run only when asked for by
``-m`` (for example ``-m soak``), whatever else ``-m`` says.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator
from typing import Any

import pytest

_WATCHED_EVENTS = frozenset(
    {"subprocess.Popen", "os.fork", "os.forkpty", "os.exec", "os.posix_spawn", "os.spawn"}
)


class _Watch:
    """What the running unmarked test has started; ``None`` while nothing is watched."""

    started: list[str] | None = None

    @classmethod
    def note(cls, what: str) -> None:
        if cls.started is not None and len(cls.started) < 5:
            cls.started.append(what)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _Watch.started is None:
        return
    if event in _WATCHED_EVENTS:
        _Watch.note(f"{event} {_describe(args)}")
    elif event == "socket.bind":
        _Watch.note(f"socket.bind {args[1]!r}")


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
        _Watch.note(name)
        return factory(*args, **kwargs)

    start.__wrapped__ = factory  # type: ignore[attr-defined]
    return start


def _watch_grpc_servers() -> None:
    import grpc
    import grpc.aio

    grpc.server = _watching(grpc.server, "grpc.server")
    grpc.aio.server = _watching(grpc.aio.server, "grpc.aio.server")


def install() -> None:
    sys.addaudithook(_audit)
    _watch_grpc_servers()


def _asked_for_soak(config: pytest.Config) -> bool:
    return "soak" in (config.option.markexpr or "")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _asked_for_soak(config):
        return
    soak = [item for item in items if item.get_closest_marker("soak") is not None]
    if soak:
        config.hook.pytest_deselected(items=soak)
        items[:] = [item for item in items if item.get_closest_marker("soak") is None]


def _unmarked(item: pytest.Item) -> bool:
    return item.get_closest_marker("slow") is None and item.get_closest_marker("soak") is None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    if _unmarked(item):
        _Watch.started = []
    yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    result = yield
    started, _Watch.started = _Watch.started, None
    if started:
        pytest.fail(
            "this test starts a process or a server but is not marked slow: "
            + "; ".join(started)
            + " (add @pytest.mark.slow, or keep it in-process)",
            pytrace=False,
        )
    return result


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    _Watch.started = None
    yield
