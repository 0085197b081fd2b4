"""A real process holding a tournament's runner lease, as a runner does at its start.

It takes the lease (``arena.store.acquire_lease``), stores the tournament as
``running`` (``set_status``, like ``TournamentRunner.run``), says ``held`` on
its standard output and sleeps; kill it (``kill -9`` included) to end the run.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HOLDER = """
import sys, time
from arena.store import Store, acquire_lease, set_status
data_dir, tournament_id, status = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with Store.open(data_dir) as store:
    lease = acquire_lease(store, tournament_id, name="held")
    if status:
        set_status(store, tournament_id, status)
    print("held", flush=True)
    time.sleep(300)
"""


@contextmanager
def lease_holding_process(
    data_dir: Path, tournament_id: int, *, status: str = "running"
) -> Iterator[subprocess.Popen[str]]:
    """A process holding the lease (and, unless ``status`` is empty, that stored status)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(data_dir), str(tournament_id), status],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line == "held\n", process.stderr.read() if process.stderr else line
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)


def kill_9(process: subprocess.Popen[str]) -> None:
    process.kill()  # SIGKILL: no handler, no cleanup; the kernel drops the flock
    process.wait(10)
