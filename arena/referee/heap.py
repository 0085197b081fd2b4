"""Python's cyclic garbage collector kept off what was alive as a game began.

A full collection walks every object the process holds (gRPC, protobuf, the
engine, the encoders' caches, the records of the games played): tens of
milliseconds, in whichever thread allocates next, which during a game is the
loop thread that serves both bots. ``gc.freeze`` moves every object alive into
a generation no collection walks, so a collection during a game walks only what
was made since; what a game makes is collected as usual. The heap is frozen as
each game begins and thawed (``gc.unfreeze``) as any game ends, so an object
frozen while alive that becomes garbage later is found again by the collections
after that game: nothing stays out of the collector's sight for longer than
games in play overlap.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()


@contextmanager
def frozen_for_game() -> Iterator[None]:
    """Freeze the heap for the game played inside; thaw it as the game ends."""
    with _LOCK:
        gc.freeze()
    try:
        yield
    finally:
        with _LOCK:
            gc.unfreeze()
