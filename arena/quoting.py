"""A value a user supplied, as an error line quotes it: whole when short, its start and
its length when long.

A refusal names the value it refuses (``user name 'eve!'``), but a 100,000-character
name pasted by mistake, or sent on purpose, would fill the terminal, the log line and
the reply. Every layer but the game quotes through here, so the limits are set once;
the names the arena accepts are all shorter than them, and are always quoted whole.
"""

from __future__ import annotations

import re

QUOTED_CHARS = 60
"""How many characters of a long quoted value (a name, a flag's value) an error line shows."""
PATH_CHARS = 240
"""How many characters of a long path or bare word an error line shows (ordinary paths,
longer than any name, are shown whole)."""


def clipped(text: str, limit: int = PATH_CHARS) -> str:
    """``text`` when at most ``limit`` characters; else its first ``limit`` and its length."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def quoted(value: object, limit: int = QUOTED_CHARS) -> str:
    """``repr(value)``, a string of more than ``limit`` characters cut to its first
    ``limit`` (then "... (N characters)"); any other long repr cut the same way."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}... ({len(value)} characters)"
    return clipped(repr(value), limit)


# Characters that move the cursor, rewrite the screen or reorder text on a terminal:
# C0 and C1 controls, DEL, line and paragraph separators, bidirectional overrides.
# The SDK's connector (kahuna_bot.remote.HIDDEN) holds the same set.
HIDDEN = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def visible(text: str, keep: str = "") -> str:
    """``text`` with every character that could drive a terminal shown as ``\\uXXXX``.

    Every text an arena sends goes through here before it is printed or written;
    ``keep`` names the few (a record's newlines) that stay as they are.
    """
    return HIDDEN.sub(
        lambda found: found.group() if found.group() in keep else f"\\u{ord(found.group()):04x}",
        text,
    )
