"""A damaged database: its header and schema whole, some tables' pages overwritten with
garbage, as a failing disk or a copy cut short leaves it (SQLite opens it and meets the
damage on the first read of such a page)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path


def damage_tables(data: Path, *tables: str) -> None:
    """Overwrite the root pages of ``tables`` (every table and index without any) in the
    database of data directory ``data``, which no process may have open."""
    with contextlib.closing(sqlite3.connect(data / "arena.db")) as db:
        page = int(db.execute("PRAGMA page_size").fetchone()[0])
        rows = db.execute("SELECT tbl_name, rootpage FROM sqlite_master WHERE rootpage > 1")
        roots = [root for table, root in rows if not tables or table in tables]
    assert roots, f"no such tables: {tables}"
    with (data / "arena.db").open("r+b") as file:
        for root in roots:
            file.seek((root - 1) * page)
            file.write(b"\xde\xad" * (page // 2))
