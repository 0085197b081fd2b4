"""A real `arena serve` for a benchmark: started on a free loopback port over a data
directory of its own, from that directory's parent (so PYTHONPATH, not the current
directory, says which checkout of arena serves)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def start_server(data: Path) -> tuple[subprocess.Popen[str], int]:
    """The server's process and the port it listens on (SystemExit if it does not start)."""
    env = {**os.environ, "KAHUNA_ARENA_DATA": str(data)}
    command = [sys.executable, "-m", "arena", "serve", "--host", "127.0.0.1", "--port", "0"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True, cwd=data.parent)
    assert server.stdout is not None
    for line in server.stdout:
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if found:
            return server, int(found.group(1))
    raise SystemExit(f"the server did not start (exit {server.wait()})")
