"""`arena bot check`: a bot played through every situation the contract allows,
by a scripted referee built from the real referee's parts."""

from arena.conformance.report import CheckReport, ScenarioResult
from arena.conformance.runner import check_bot
from arena.conformance.scenarios import SCENARIOS, SUBMISSION_SCENARIOS, Scenario
from arena.conformance.training import (
    Training,
    ensure_class_archive,
    needs_class_archive,
    train_class_archive,
)

__all__ = [
    "SCENARIOS",
    "SUBMISSION_SCENARIOS",
    "CheckReport",
    "Scenario",
    "ScenarioResult",
    "Training",
    "check_bot",
    "ensure_class_archive",
    "needs_class_archive",
    "train_class_archive",
]
