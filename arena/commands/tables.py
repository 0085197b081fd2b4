"""Tables that fit the terminal: whole columns are dropped, never a cell cut.

A rich table narrower than its content wraps or cuts its cells ("py..."). The
commands' tables instead drop their least important columns first, in the
order each table gives, until every cell fits unwrapped, and say which
columns they left out (``--json`` has them all). Names are never cut: a
table that still does not fit wraps them whole onto more lines.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

_UNBOUNDED = 1 << 20


def fit(table: Table, console: Console, drop_order: Sequence[str]) -> Table:
    """``table`` without the fewest of ``drop_order``'s columns (by header, first
    dropped first) that lets it fit ``console``'s width; the caption names them."""
    dropped: list[str] = []
    for header in drop_order:
        if fits(table, console):
            break
        column = next((c for c in table.columns if c.header == header), None)
        if column is not None:
            table.columns.remove(column)
            dropped.append(header)
    if dropped:
        hidden = f"not shown at this width: {', '.join(dropped)}"
        table.caption = f"{table.caption}; {hidden}" if table.caption else hidden
    for column in table.columns:
        column.overflow = "fold"  # a name too long for any width wraps, whole
    return table


def fits(table: Table, console: Console) -> bool:
    """Whether every cell of ``table`` fits ``console``'s width unwrapped."""
    unbounded = console.options.update(width=_UNBOUNDED)  # console.measure clamps to the width
    return Measurement.get(console, unbounded, table).maximum <= console.width


def terminal_width() -> int | None:
    """The width plain-text tables must fit: the terminal's, or ``$COLUMNS``; None
    (any width) where output goes to a file or a pipe."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns if sys.stdout.isatty() else None
    except (OSError, ValueError):  # no file descriptor: captured output
        return None


def fit_rows(
    header: Sequence[str], rows: Sequence[Sequence[str]], drop_order: Sequence[str],
    width: int | None, gap: int = 2,
) -> tuple[list[str], list[list[str]]]:  # fmt: skip
    """Plain-text columns without the fewest of ``drop_order`` (first dropped first)
    that let every line fit ``width`` (None: all of them)."""
    kept = list(range(len(header)))

    def line_width() -> int:
        widths = [max(len(row[i]) for row in [header, *rows]) for i in kept]
        return sum(widths) + gap * (len(widths) - 1)

    for name in drop_order:
        if width is None or line_width() <= width:
            break
        if name in header and header.index(name) in kept:
            kept.remove(header.index(name))
    return [header[i] for i in kept], [[row[i] for i in kept] for row in rows]
