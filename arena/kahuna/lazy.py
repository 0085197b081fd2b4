"""A module's names imported on first use (PEP 562), for the engine's modules.

A sandboxed Python bot imports the engine at every launch and uses little of it:
names that only other audiences need (the rules' internals, records, the
spectators' views) are listed with the module that defines them and imported
when first asked for, then kept in the module's namespace like any other name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def on_first_use(
    namespace: dict[str, Any], sources: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module's ``__getattr__`` and ``__dir__`` for ``sources`` (each name and the module
    that defines it), given the module's ``globals()``."""
    module = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        source = sources.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *sources})

    return __getattr__, __dir__
