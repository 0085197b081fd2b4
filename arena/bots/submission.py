"""What a bot must pass before it is stored (`arena bot add`, SubmitBot, UploadBot).

First the conformance check's submission scenarios (``arena.conformance``:
the situations a short match may never reach, such as a hand of five, the
final turns, a forced draw, requests to answer fast, a forfeit before any
request, MatchOver and exit), then the 2-game smoke match against the random
sample bot (whole games, both seats, the real referee with its freezer). A
failure of either refuses the bot, saying what failed; the findings of the
check are reported either way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from arena.bots.smoke import smoke_failure
from arena.conformance import SUBMISSION_SCENARIOS, CheckReport, ScenarioResult, check_bot
from arena.referee import BotSpec, unbuilt
from arena.sandbox import SandboxUnavailableError


@dataclass(frozen=True)
class SubmissionCheck:
    refusal: str | None = None
    """Why the bot is not stored (None: it passed)."""
    conformance: CheckReport | None = None


def check_submission(
    candidate: BotSpec, opponent: BotSpec, *, unsafe: bool = False,
    on_result: Callable[[ScenarioResult], None] | None = None,
) -> SubmissionCheck:  # fmt: skip
    """The conformance check of ``candidate`` (``on_result`` hears each scenario as it is
    played), then its smoke match against ``opponent``."""
    if (not_built := unbuilt(candidate)) is not None:
        return SubmissionCheck(not_built)
    try:
        report = check_bot(candidate, scenarios=SUBMISSION_SCENARIOS, unsafe=unsafe,
                           on_result=on_result)  # fmt: skip
    except (ValueError, SandboxUnavailableError) as error:
        return SubmissionCheck(f"the conformance check could not be run: {error}")
    refusal = report.refusal()
    if refusal is None:
        refusal = smoke_failure(candidate, opponent, unsafe=unsafe)
    return SubmissionCheck(refusal, report)
