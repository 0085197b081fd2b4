"""The game's exceptions: malformed input is not the same as an illegal move."""

from __future__ import annotations


class KahunaError(Exception):
    """Base class of every error the game raises."""


class MalformedActionError(KahunaError, ValueError):
    """Not an action at all: unparseable text, a wrong JSON shape, an unknown island."""


class IllegalActionError(KahunaError):
    """A well-formed action that the rules refuse in this position."""

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(f"{rule}: {reason}")
        self.rule = rule
        self.reason = reason


class MalformedRecordError(KahunaError, ValueError):
    """A record that is not a valid kahuna-record/1; the message is one line."""


class SetupError(KahunaError, ValueError):
    """A deal, reshuffle or handicap the game cannot start from (``new_game``, ``start_round``)."""
