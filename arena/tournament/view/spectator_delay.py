"""One spectator delay for every public view: what it shows is the arena as it was
``delay_s`` ago.

``DelayLine`` answers an aggregate view (a leaderboard, a tournament's table,
the ladder, a bot's page) as of ``now - delay_s`` without a store that can
answer as of a time: every answer computed is kept with the moment it was
computed, and a request gets the newest one that holds nothing newer than
the cut, i.e. computed before the first game start or end after the cut
(``arena.store.first_event_after``). When nothing happened since the cut the
fresh answer is that one. A view first asked for while games are starting and
ending has no such answer yet: None, until one ages past the delay.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from datetime import UTC, datetime
from typing import Generic, TypeVar

T = TypeVar("T")
MAX_VIEWS = 256  # views kept (each with the answers of at most about one delay)
NOT_PUBLIC = "not public yet"
"""How a refusal of a view with no answer as old as the delay yet begins (the API's
UNAVAILABLE, the web's 503): the caller was let in, the answer waits."""


def stamp(epoch_s: float) -> str:
    """``epoch_s`` as the store's stamps are written (``arena.store.db.utc_now``)."""
    return datetime.fromtimestamp(epoch_s, UTC).isoformat(timespec="milliseconds")


def check_delay(delay_s: float) -> float:
    if not math.isfinite(delay_s) or delay_s < 0:
        raise ValueError(f"the spectator delay must be 0 or more seconds, not {delay_s!r}")
    return delay_s


def _never(value: object) -> bool:
    return False


class DelayLine(Generic[T]):
    """Answers of views as of ``clock() - delay_s``; ``first_event_after(cut)``: the stamp of
    the first game start or end after ``cut``, None when there was none."""

    def __init__(
        self,
        delay_s: float,
        first_event_after: Callable[[str], str | None],
        *,
        clock: Callable[[], float] = time.time,
        max_views: int = MAX_VIEWS,
    ) -> None:
        self.delay_s = check_delay(delay_s)
        self.first_event_after = first_event_after
        self.clock = clock
        self.max_views = max_views
        self._views: OrderedDict[Hashable, list[tuple[str, T]]] = OrderedDict()
        self._lock = threading.Lock()

    def cut(self) -> str:
        """Now minus the delay, as a stamp: the public sees nothing newer."""
        return stamp(self.clock() - self.delay_s)

    def answer(
        self, view: Hashable, compute: Callable[[], T], *, absent: Callable[[T], bool] = _never
    ) -> T | None:
        """``view`` as of the cut (``compute()`` gives it now); None when no answer kept
        holds nothing newer than the cut yet. An answer ``absent`` says names nothing
        (no bot or tournament by that name) is given as it is and kept for no view
        not kept already: then names that do not exist cost no room."""
        if self.delay_s == 0:
            return compute()
        value = compute()
        taken = stamp(self.clock())  # after computing: it holds nothing later than this
        cut = self.cut()
        first = self.first_event_after(cut)
        with self._lock:
            if view not in self._views and absent(value):
                return value
            kept = self._views.setdefault(view, [])
            self._views.move_to_end(view)
            if not kept or not (kept[-1][1] is value or kept[-1][1] == value):
                kept.append((taken, value))  # an equal answer keeps its first, safer, stamp
            while len(self._views) > self.max_views:
                self._views.popitem(last=False)
            safe = [i for i, (at, _) in enumerate(kept) if at <= cut or first is None or at < first]
            if not safe:
                return None
            best = safe[-1]
            older = [i for i, (at, _) in enumerate(kept) if at <= cut]
            if older:  # what came before the newest answer older than the cut is never needed
                del kept[: min(older[-1], best)]
                best -= min(older[-1], best)
            return kept[best][1]
