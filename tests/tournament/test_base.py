"""arena.tournament.orchestration.base.RunnerBase: the constructor, stop and guarded run
that TournamentRunner and LadderRunner share, checked on both (a real store, real bots,
the local process executor)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.commands.ladder import prepare_ladder
from arena.store import Store, TournamentConfig, get_tournament
from arena.store.models import TournamentStatus
from arena.tournament.execution.cpu_placement import usable_cpus
from arena.tournament.orchestration.ladder import LadderRunner
from arena.tournament.orchestration.runner import TournamentRunner
from arena.tournament.policy.rounds import create_tournament
from tests.tournament.test_runner import _data_dir_with_bots

BOTS = {"r1": "random", "r2": "random"}


def _tournament(store: Store) -> int:
    return create_tournament(store, "rr", "round_robin", list(BOTS), TournamentConfig()).id


def _ladder(store: Store) -> int:
    args = argparse.Namespace(
        ladder_name="ladder", concurrency=3, **{f"ladder_{k}": None for k in (
            "games_per_match", "seed", "action_ms", "bank_ms", "placement_matches",
            "placement_in_play", "max_repeat")},
    )  # fmt: skip
    return prepare_ladder(store, args)


Runner = Callable[..., TournamentRunner | LadderRunner]
RUNNERS: list[tuple[str, Callable[[Store], int], Runner]] = [
    ("tournament", _tournament, TournamentRunner),
    ("ladder", _ladder, LadderRunner),
]


@pytest.mark.parametrize(("kind", "create", "runner"), RUNNERS, ids=[r[0] for r in RUNNERS])
def test_a_stop_before_the_first_match_ends_the_run_interrupted_saying_why(
    tmp_path: Path, kind: str, create: Callable[[Store], int], runner: Runner
) -> None:
    data = _data_dir_with_bots(tmp_path, BOTS)
    with Store.open(data) as store:
        tournament_id = create(store)
        run = runner(store, tournament_id, concurrency=1)
        assert run.kind == kind
        run.stop("stopped by the test")
        summary = run.run()
        assert summary.stopped == "stopped by the test"
        assert summary.games_recorded == 0
        stored = get_tournament(store, tournament_id)
        assert (stored.status, stored.interrupted_reason) == (
            TournamentStatus.INTERRUPTED, "stopped by the test"
        )


@pytest.mark.parametrize(
    ("create", "runner", "given", "expected"),
    [
        (_tournament, TournamentRunner, 2, 2),
        (_tournament, TournamentRunner, 0, None),  # 0: the CPUs we may use
        (_ladder, LadderRunner, 2, 2),
        (_ladder, LadderRunner, None, 3),  # the ladder's stored setting
    ],
    ids=["tournament given", "tournament default", "ladder given", "ladder stored"],
)
def test_concurrency_is_the_given_then_the_stored_then_the_cpus(
    tmp_path: Path, create: Callable[[Store], int], runner: Runner,
    given: int | None, expected: int | None,
) -> None:  # fmt: skip
    data = _data_dir_with_bots(tmp_path, BOTS)
    with Store.open(data) as store:
        run = runner(store, create(store), concurrency=given, live=False)
        assert run.concurrency == (expected if expected is not None else len(usable_cpus()))
        run.executor.close()
