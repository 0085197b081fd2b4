"""gRPC's environment for arena processes, set by their entry points before grpc is imported.

gRPC's core reads ``GRPC_EXPERIMENTS`` once, when ``grpc`` is imported. With
its ``event_engine_listener`` experiment (on by default in grpcio 1.8x) a
server's accepted connections are read by an EventEngine thread that hands
every message over to the thread polling for completions; switched off, the
poller reads the socket itself: one thread wake-up less per message. For
the referee (a grpc.aio server per bot) that is less CPU per decision and more games
per second (``benchmarks/referee.py``; figures in benchmarks/RESULTS.md).

Nothing happens on import: the entry points call ``tune_this_process``
(``arena.cli.main``, the benchmarks, the test suite's conftest) and
``tune_child_processes`` (the tournament's local executor, before it starts
its forkserver). Never over a ``GRPC_EXPERIMENTS`` of the user's own. Bots
never inherit it: the sandbox gives them an environment of their own (the
Python SDK tunes its client side itself, ``kahuna_bot._grpc_env``). The
sandbox watchdog imports no grpc and needs nothing.
"""

from __future__ import annotations

import os
import sys

TUNED_EXPERIMENTS = "-event_engine_listener"


def tune_this_process() -> None:
    """Tune gRPC for this process, if it has not imported grpc yet (else it is too late)."""
    if "grpc" not in sys.modules:
        os.environ.setdefault("GRPC_EXPERIMENTS", TUNED_EXPERIMENTS)


def tune_child_processes() -> None:
    """Tune gRPC for the Python processes this one starts from now on (workers)."""
    os.environ.setdefault("GRPC_EXPERIMENTS", TUNED_EXPERIMENTS)
