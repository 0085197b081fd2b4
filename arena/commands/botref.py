"""A bot as a command names it: a directory, a stored bot or a sample bot.

``arena match`` takes any of the three, tried in that order: a path to a bot
directory; the name of a bot stored in the data directory (its latest
version); the name of a sample bot shipped with the arena (``python_random``,
``go_random``...). A name that is none of them is refused, naming the closest
stored or sample bot. A path that is no directory but ends in a sample bot's name
(``sample_bots/python_greedy`` outside a checkout) is refused naming the sample bot.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from arena.referee import BotConfigError, BotSpec, load_bot
from arena.resources import sample_bots_dir
from arena.store import (
    DamagedDatabaseError,
    NotFoundError,
    Store,
    StoreError,
    bot_spec,
    list_bots,
    resolve_data_dir,
)
from arena.store.paths import DATABASE_NAME


def find_bot(text: str, data_dir: str | None) -> BotSpec:
    """The bot ``text`` names (see the module docstring); BotConfigError saying why not,
    StoreError when the data directory cannot be read."""
    try:
        return _find_bot(text, data_dir)
    except DamagedDatabaseError as error:
        raise StoreError(str(error)) from None


def _find_bot(text: str, data_dir: str | None) -> BotSpec:
    path = Path(text)
    if path.is_dir() or "/" in text or text in (".", ".."):
        if not path.exists() and path.name in _sample_names():
            raise BotConfigError(
                f"{text}: no such directory; the sample bot {path.name} is named without"
                f" its directory: {path.name}"
            )
        return load_bot(path)  # a path: its own errors (no bot.toml, a bad field)
    stored = _stored_names(data_dir)
    if text in stored:
        with Store.open(data_dir) as store:
            try:
                return bot_spec(store, text)
            except NotFoundError:  # withdrawn between the two reads
                pass
    samples = _sample_names()
    if text in samples:
        return load_bot(sample_bots_dir() / text)
    close = difflib.get_close_matches(text, [*stored, *samples], n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise BotConfigError(
        f"{text}: no such bot directory, stored bot or sample bot{hint};"
        f" the sample bots are {', '.join(samples)}"
    )


def _stored_names(data_dir: str | None) -> list[str]:
    """The stored bots' names; none where there is no data directory yet (never made here).
    A data directory that cannot be read raises (StoreError, SchemaError): a stored bot's
    name must not turn into "no such bot"."""
    if not (resolve_data_dir(data_dir) / DATABASE_NAME).is_file():
        return []
    with Store.open(data_dir) as store:
        return [bot.name for bot in list_bots(store)]


def _sample_names() -> list[str]:
    root = sample_bots_dir()
    return sorted(p.parent.name for p in root.glob("*/bot.toml")) if root.is_dir() else []
