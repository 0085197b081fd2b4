"""gRPC's environment for arena processes, set before anything imports grpc.

gRPC's core reads ``GRPC_EXPERIMENTS`` once, when ``grpc`` is imported. With
its ``event_engine_listener`` experiment (on by default in grpcio 1.8x) a
server's accepted connections are read by an EventEngine thread that hands
every message over to the thread polling for completions; switched off, the
poller reads the socket itself: one thread wake-up less per message. For
the referee (a grpc.aio server per bot) that measured about a fifth less CPU
per decision and ~15% more games per second (``benchmarks/referee.py``,
alternating runs: 0.29 -> 0.23 ms CPU, 0.51 -> 0.43 ms wall per decision).

Set only while ``grpc`` is not loaded yet, and never over a
``GRPC_EXPERIMENTS`` of the user's own. Bots never inherit it: the sandbox
gives them an environment of their own (the Python SDK tunes its client
side itself, ``kahuna_bot._grpc_env``).
"""

from __future__ import annotations

import os
import sys

TUNED_EXPERIMENTS = "-event_engine_listener"

if "grpc" not in sys.modules:
    os.environ.setdefault("GRPC_EXPERIMENTS", TUNED_EXPERIMENTS)
