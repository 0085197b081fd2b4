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
Python SDK tunes its client side itself, ``kahuna_bot._grpc_env``), and
`arena remote play` calls ``untune_child_processes`` before it runs the user's
bot, whose gRPC (C++, another grpcio) may not know the experiment and says so
on stderr. The sandbox watchdog imports no grpc and needs nothing.
"""

from __future__ import annotations

import os
import sys

TUNED_EXPERIMENTS = "-event_engine_listener"
VARIABLE = "GRPC_EXPERIMENTS"

_set_here = False  # whether this module set the variable (not the user)


def tune_this_process() -> None:
    """Tune gRPC for this process, if it has not imported grpc yet (else it is too late)."""
    if "grpc" not in sys.modules:
        _tune()


def tune_child_processes() -> None:
    """Tune gRPC for the Python processes this one starts from now on (workers)."""
    _tune()


def untune_child_processes() -> None:
    """Leave the tuning out of the programs this process starts from now on, where this
    module set it: they are not the arena's. A ``GRPC_EXPERIMENTS`` of the user's own stays."""
    global _set_here
    if _set_here and os.environ.get(VARIABLE) == TUNED_EXPERIMENTS:
        del os.environ[VARIABLE]
    _set_here = False


def _tune() -> None:
    global _set_here
    if VARIABLE not in os.environ:
        os.environ[VARIABLE] = TUNED_EXPERIMENTS
        _set_here = True
