"""A game's result in words: the one mapping from the referee's reason codes
(``Termination``, ``BotStatus``) to what every page and command says of a game
("gecko won: reef ran out of time"), never a bare code."""

from __future__ import annotations

from collections.abc import Mapping

REASON_WORDS = {  # why a game ended (docs/reference/RULES.md, R7), in words
    "points": "more points",
    "final_points": "equal points, more in the final scoring",
    "bridges": "equal points, more bridges on the board",
    "no_bridges": "{loser} had no bridge left on the board",
    "forfeit": "{loser} forfeited",
    "draw": "equal points and bridges",
    "timeout": "{loser} ran out of time",
    "illegal_action": "{loser} made an illegal move",
    "malformed_message": "{loser} sent a message the referee could not read",
    "protocol_violation": "{loser} broke the protocol",
    "crash": "{loser} crashed",
    "disconnect": "{loser} disconnected",
}


def result_words(
    bots: tuple[str, str], winner_seat: int | None, reason: str | None,
    statuses: tuple[str, str] = ("ok", "ok"),
) -> str:  # fmt: skip
    """Who won and why ("a won: b had no bridge left on the board", "draw"); ``bots`` and
    ``statuses`` (BotStatus values) by seat. A forfeit says the loser's failure; a code
    with no words yet is shown in brackets."""
    reason = reason or ""
    if winner_seat is None:
        said = REASON_WORDS.get(reason, reason)
        return f"draw: {said}" if said and reason != "draw" else "draw"
    winner, loser = bots[winner_seat], bots[1 - winner_seat]
    failed = statuses[1 - winner_seat]
    if reason == "forfeit" and failed in REASON_WORDS:  # the referee's reason for any
        reason = failed  # failure: the loser's status says which ("ran out of time")
    why = REASON_WORDS.get(reason)
    if why is None:
        return f"{winner} won ({reason})" if reason else f"{winner} won"
    return f"{winner} won: {why.format(winner=winner, loser=loser)}"


def report_words(
    bots: tuple[str, str], winner: str | None, reason: str, statuses: Mapping[str, str]
) -> str:
    """``result_words`` of a game told by bot name (a referee's ``GameReport``)."""
    seat = None if winner is None else bots.index(winner)
    return result_words(bots, seat, reason, (statuses.get(bots[0], "ok"),
                                             statuses.get(bots[1], "ok")))  # fmt: skip
