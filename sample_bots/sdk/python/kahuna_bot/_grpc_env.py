"""gRPC's environment for a bot process, set before anything imports grpc.

gRPC's core reads ``GRPC_EXPERIMENTS`` once, when ``grpc`` is imported.
Switching its ``event_engine_client`` experiment off makes a bot's channel
read its socket in the thread that polls for completions, instead of
handing every message over from an EventEngine thread: one thread wake-up
less per message, less CPU per decision in the
sandbox (``benchmarks/sdk.py``). Only in a bot process (``KAHUNA_REFEREE``
set), only while ``grpc`` is not loaded yet, and never over a
``GRPC_EXPERIMENTS`` of the bot's own.
"""

from __future__ import annotations

import os
import sys

TUNED_EXPERIMENTS = "-event_engine_client"

if "KAHUNA_REFEREE" in os.environ and "grpc" not in sys.modules:
    os.environ.setdefault("GRPC_EXPERIMENTS", TUNED_EXPERIMENTS)
