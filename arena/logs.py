"""The one place where structured logging is configured.

Events are past-tense snake_case (``match_finished``) with bound context
(``match_id``, ``game``, ``seat``). Library code only calls ``get_logger``;
the command line calls ``configure`` once.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO, cast

import structlog

_configured = False


class _StderrNow:
    """Standard error as it is at each write, not as it was when logging was set up: a
    harness that swaps ``sys.stderr`` (pytest's capture, a daemon's redirect) and closes
    the old one must not leave every later event writing to a closed file."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


_STDERR_NOW = cast(TextIO, _StderrNow())  # the two methods a print and a StreamHandler use


def configure(*, level: str = "WARNING", json: bool = False, stream: TextIO | None = None) -> None:
    """Configure structlog and the stdlib root logger (idempotent)."""
    global _configured
    numeric_level = logging.getLevelName(level.upper())
    if not isinstance(numeric_level, int):
        raise ValueError(f"unknown log level {level!r}")
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if json
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric_level),
        logger_factory=structlog.PrintLoggerFactory(file=stream or _STDERR_NOW),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=numeric_level, stream=stream or _STDERR_NOW)
    _configured = True


def get_logger(**context: Any) -> Any:
    """A structlog logger with ``context`` bound."""
    if not _configured:
        configure()
    return structlog.get_logger().bind(**context)
