"""The smoke match a bot must finish before it is stored (`arena bot add`, SubmitBot, UploadBot).

Two games (one deal, played from both seats) against the random sample bot,
in the sandbox, with the default time control. Any status other than OK for
the candidate (timeout, crash, illegal action, ...) refuses it.
"""

from __future__ import annotations

from arena.referee import BotSpec, BotStatus, GameReport, MatchConfig, run_match
from arena.referee.match import display_names
from arena.resources import sample_bot

SAMPLE_RANDOM_BOT = sample_bot("python_random")  # shipped with the arena (arena/resources.py)
SMOKE_GAMES = 2


def smoke_failure(candidate: BotSpec, opponent: BotSpec, *, unsafe: bool = False) -> str | None:
    """Why ``candidate`` cannot finish a short match against ``opponent`` (None: it can)."""
    name = display_names(candidate, opponent)[0]
    try:
        config = MatchConfig(games=SMOKE_GAMES, seed=0, unsafe=unsafe)
        report = run_match(config, candidate, opponent)
    except Exception as error:  # the sandbox or referee could not run it at all
        return f"the smoke match could not be played: {error}"
    for game in report.games:
        status = game.statuses.get(name, BotStatus.OK)
        if status is not BotStatus.OK:
            detail = _failure_detail(game, name)
            return (
                f"in smoke game {game.index + 1} of {SMOKE_GAMES} (seat "
                f"{game.bots_by_seat.index(name)}) the bot failed: {status.value}"
                f" after {game.actions} actions" + (f" ({detail})" if detail else "")
            )
    return None


def _failure_detail(game: GameReport, name: str) -> str:
    """What the referee saw of ``name``'s failure (exit status, stderr's end), if recorded.

    The submitter owns the candidate, so its stderr (private to the owner,
    never in the public record) is shown to them here.
    """
    match = game.record.get("match")
    failures = match.get("failures") if isinstance(match, dict) else None
    detail = ""
    for failure in failures if isinstance(failures, list) else ():
        if isinstance(failure, dict) and failure.get("bot") == name:
            detail = str(failure.get("detail") or "")
    tail = game.stderr.get(name, "").replace("\n", " | ")
    return f"{detail}; stderr ends: {tail}" if tail else detail
