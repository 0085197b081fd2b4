"""Bot names a user cannot take: the arena's own sample and house bots.

The sample bots ship with the arena (``arena/_data/sample_bots``) and are the
ones an admin adds first (`arena bot add sample_bots/python_random`); a user
who registered such a name first would own the bot the admin means to add,
and could withdraw it or replace its code. Names are compared without case,
so ``Python_Random`` is taken too. The admin's own bots are protected by
ownership (the store refuses another user's bot).
"""

from __future__ import annotations

import functools
import tomllib

from arena.resources import sample_bots_dir


@functools.cache
def reserved_bot_names() -> frozenset[str]:
    """The sample bots' names, lower-cased (each directory's bot.toml ``name``)."""
    names: set[str] = set()
    for directory in sample_bots_dir().iterdir():
        toml = directory / "bot.toml"
        if not toml.is_file():
            continue
        try:
            name = tomllib.loads(toml.read_text(encoding="utf-8")).get("name")
        except (OSError, tomllib.TOMLDecodeError):
            continue
        if isinstance(name, str):
            names.add(name.lower())
        names.add(directory.name.lower())
    return frozenset(names)


def reserved_name_problem(name: str) -> str | None:
    """Why a user may not take bot name ``name`` (None: they may)."""
    if name.lower() in reserved_bot_names():
        return (
            f"bot name {name!r} is reserved for the arena's own sample and house bots:"
            " choose another name"
        )
    return None
