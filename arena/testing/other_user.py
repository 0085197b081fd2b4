"""What another user of the machine gets: each attempt run in a child process that has
dropped to uid and gid 65534 (``nobody``), its answers reported through a pipe.

The sandbox's staging directories and a Ray node's files must be closed to the
machine's other users; a test shows it by trying, as one of them, what they would.
Root only (the child changes its uid).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence

NOBODY = 65534

Attempt = tuple[str, Callable[[], object]]


def tried_as_nobody(attempts: Sequence[Attempt]) -> dict[str, str]:
    """For each ``(what, attempt)``: what the attempt returned if a string, ``done`` if
    anything else, or the name of the OSError it raised, as uid 65534."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.close(read)
            os.setgroups([])
            os.setresgid(NOBODY, NOBODY, NOBODY)
            os.setresuid(NOBODY, NOBODY, NOBODY)
            found: dict[str, str] = {}
            for what, attempt in attempts:
                try:
                    answer = attempt()
                    found[what] = answer if isinstance(answer, str) else "done"
                except OSError as error:
                    found[what] = type(error).__name__
            os.write(write, json.dumps(found).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        reported: dict[str, str] = json.loads(pipe.read() or "{}")
    os.waitpid(child, 0)
    return reported
