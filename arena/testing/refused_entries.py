"""Bot directories with one entry the arena refuses to store (a link out, a named pipe),
and what the refusal says: `arena bot add`, an upload and `arena bot check` must all
refuse each, the same way."""

from __future__ import annotations

import os
from pathlib import Path

REFUSED_ENTRIES = [
    # (case, what the refusal says)
    ("link-absolute", "entry 'secret': link to '/etc/hostname' points outside"),
    ("link-up", "entry 'lib/up': link to '../../..' points outside"),
    ("link-chain", "entry 'y': link to 'x/..' resolves outside"),
    ("fifo", "entry 'pipe': a named pipe (FIFO)"),
]


def plant_refused_entry(directory: Path, case: str) -> None:
    """Add ``case``'s refused entry to the bot ``directory``, beside a link that stays
    inside it (allowed, so the refusal is the planted entry's alone)."""
    (directory / "lib").mkdir()
    (directory / "lib" / "inside").symlink_to("../bot.py")
    if case == "link-absolute":
        (directory / "secret").symlink_to("/etc/hostname")
    elif case == "link-up":
        (directory / "lib" / "up").symlink_to("../../..")
    elif case == "link-chain":  # each harmless by its text; y is the directory above
        (directory / "x").symlink_to(".")
        (directory / "y").symlink_to("x/..")
    elif case == "fifo":
        os.mkfifo(directory / "pipe")
    else:
        raise ValueError(f"no refused entry {case!r}")
