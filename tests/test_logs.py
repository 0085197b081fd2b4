"""Logging set up once (``arena.logs``) keeps writing where standard error is now."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator

import pytest
import structlog

from arena import logs


@pytest.fixture
def fresh_logging(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``arena.logs`` as if nothing had configured it yet; structlog restored after."""
    monkeypatch.setattr(logs, "_configured", False)
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.mark.usefixtures("fresh_logging")
def test_events_after_standard_error_was_swapped_and_closed_go_to_the_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    logs.get_logger().warning("while_the_first_was_open")  # configures, as a library call does
    first.close()  # a harness's capture of one test ends
    second = io.StringIO()
    monkeypatch.setattr(sys, "stderr", second)
    logs.get_logger(game=3).warning("after_it_was_closed")
    assert "after_it_was_closed" in second.getvalue()
    assert "game=3" in second.getvalue()


@pytest.mark.usefixtures("fresh_logging")
def test_an_explicit_stream_is_kept() -> None:
    stream = io.StringIO()
    logs.configure(stream=stream)
    logs.get_logger().warning("to_the_stream")
    assert "to_the_stream" in stream.getvalue()
