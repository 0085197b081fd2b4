"""Imported by the local executor's forkserver alone (``POOL_PRELOAD``), never elsewhere:
it leaves SIGTERM and SIGINT to the runner in the forkserver, and so in every worker it
forks (``arena.tournament.execution.local_executor.leave_stop_signals_to_the_runner``)."""

from __future__ import annotations

from arena.tournament.execution.local_executor import leave_stop_signals_to_the_runner

leave_stop_signals_to_the_runner()
