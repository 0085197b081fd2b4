"""What a Ray node is given (its deals' seeds, never the secret) and what the driver checks.

A real match of two sample bots is played from a sealed job, as a node plays it;
every game it reports passes ``check_game``, and each way a node could forge a
game (its deal, a reshuffle, its result, its actions, its seats, its index, a
version, a forfeit) is refused, naming what is wrong.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.kahuna import deal_from_seed
from arena.referee import (
    BotSpec,
    BotStatus,
    GameReport,
    MatchConfig,
    TimeControl,
    load_bot,
    run_match,
)
from arena.referee.seeds import deal_seed
from arena.referee.timings import decision_stats
from arena.tournament.execution.executor import MatchJob
from arena.tournament.execution.node_trust import (
    ForgedGame,
    check_game,
    deal_seeds,
    sealed,
    startup_limit_ms,
    time_limit_ms,
)

REPO = Path(__file__).resolve().parents[2]
SECRET = bytes(range(32))


def _job(games: int = 4, indices: tuple[int, ...] | None = None) -> MatchJob:
    greedy = load_bot(REPO / "sample_bots" / "python_greedy")
    randomly = load_bot(REPO / "sample_bots" / "python_random")
    config = MatchConfig(games=games, seed=5, secret=SECRET, game_indices=indices)
    return MatchJob(7, config, greedy, randomly)


# ---------------------------------------------------------------- what a node gets


def test_a_sealed_job_carries_its_deals_seeds_and_not_the_secret() -> None:
    job = _job(games=8, indices=(0, 2, 4, 6))  # the even half of a paired match
    seeds = deal_seeds(job.config)
    assert seeds == {d: deal_seed(SECRET, d) for d in range(4)}
    given = sealed(job, seeds, (4, 6))  # what is left of it after a lost node
    assert given.config.secret is None
    assert dict(given.config.deal_seeds or ()) == {2: seeds[2], 3: seeds[3]}
    assert given.config.indices_to_play == (4, 6)
    wire = pickle.dumps(given)  # what Ray sends the node
    assert SECRET not in wire
    assert all(seeds[d].to_bytes(8, "big") not in wire for d in (0, 1))  # not its deals
    control = pickle.dumps(dataclasses.replace(given, config=job.config))
    assert SECRET in control  # the check above can see a secret when it is there


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        ({"secret": None}, "a match secret is 32 bytes"),
        ({"secret": None, "deal_seeds": ((0, 1),)}, r"lacks the seed of deal\(s\) \[1\]"),
        ({"secret": None, "deal_seeds": ((0, -1), (1, 2))}, "pairs of whole numbers"),
        ({"secret": None, "deal_seeds": [(0, 1), (1, 2)]}, "pairs of whole numbers"),
        ({"secret": b"short", "deal_seeds": ((0, 1), (1, 2))}, "a match secret is 32 bytes"),
    ],
    ids=["no-secret-no-seeds", "a-deal-missing", "negative-seed", "not-a-tuple", "bad-secret"],
)
def test_a_config_without_its_secret_needs_every_deal_seed(
    change: dict[str, Any], refusal: str
) -> None:
    with pytest.raises(ValueError, match=refusal):
        MatchConfig(games=4, seed=5, **change)


# ---------------------------------------------------------------- what the driver checks


@pytest.fixture(scope="module")
def played() -> tuple[MatchJob, dict[int, int], list[GameReport], list[GameReport]]:
    """The job, its seeds, and its games played sealed (as a node plays them) and played
    with the secret (as the local executor does)."""
    job = _job()
    seeds = deal_seeds(job.config)
    node = sealed(job, seeds, job.config.indices_to_play)
    on_node = run_match(node.config, node.first, node.second).games
    local = run_match(job.config, job.first, job.second).games
    return job, seeds, list(on_node), list(local)



@pytest.mark.slow
def test_a_node_plays_the_deals_the_secret_derives_and_each_game_passes(
    played: tuple[MatchJob, dict[int, int], list[GameReport], list[GameReport]],
) -> None:
    job, seeds, on_node, local = played
    assert [g.index for g in on_node] == [0, 1, 2, 3]
    for node_game, local_game in zip(on_node, local, strict=True):
        for key in ("deal", "reshuffles"):
            assert node_game.record.get(key) == local_game.record.get(key)
        check_game(job, seeds, node_game)
        check_game(job, seeds, local_game)


Forge = Callable[[GameReport, dict[int, int]], GameReport]


def _record(report: GameReport) -> dict[str, Any]:
    return copy.deepcopy(report.record)


def _with_record(report: GameReport, record: dict[str, Any], **more: Any) -> GameReport:
    return dataclasses.replace(report, record=record, **more)


def _other_deal(report: GameReport, seeds: dict[int, int]) -> GameReport:
    record = _record(report)
    record["deal"] = list(deal_from_seed(seeds[report.index // 2] + 1))
    return _with_record(report, record)


def _reshuffle(report: GameReport, _seeds: dict[int, int]) -> GameReport:
    record = _record(report)
    record["reshuffles"][0] = list(reversed(record["reshuffles"][0]))
    return _with_record(report, record)


def _other_winner(report: GameReport, _seeds: dict[int, int]) -> GameReport:
    """The loser reported the winner, in the report and the record's metadata alike."""
    loser = next(name for name in report.bots_by_seat if name != report.winner)
    record = _record(report)
    record["match"]["winner"] = loser
    return _with_record(report, record, winner=loser)


def _winner_in_report_only(report: GameReport, _seeds: dict[int, int]) -> GameReport:
    loser = next(name for name in report.bots_by_seat if name != report.winner)
    return dataclasses.replace(report, winner=loser)


def _cut_short(report: GameReport, _seeds: dict[int, int]) -> GameReport:
    record = _record(report)
    record["actions"] = record["actions"][:-3]
    return _with_record(report, record, actions=report.actions - 3)


def _illegal_action(report: GameReport, _seeds: dict[int, int]) -> GameReport:
    """An action given to the seat that was not to move."""
    record = _record(report)
    action = record["actions"][10]
    action["seat"] = 1 - action["seat"]
    return _with_record(report, record)


def _seats_swapped(report: GameReport, _seeds: dict[int, int]) -> GameReport:
    return dataclasses.replace(report, bots_by_seat=report.bots_by_seat[::-1])


def _index_not_given(report: GameReport, _seeds: dict[int, int]) -> GameReport:
    return dataclasses.replace(report, index=9)


def _other_version(report: GameReport, _seeds: dict[int, int]) -> GameReport:
    record = _record(report)
    record["match"]["bots"][0]["version"] = "0" * 64
    return _with_record(report, record)


def _forfeit_claimed(report: GameReport, _seeds: dict[int, int]) -> GameReport:
    """The winner's opponent said to have timed out, with no failure in the record."""
    loser = next(name for name in report.bots_by_seat if name != report.winner)
    statuses = {**report.statuses, loser: BotStatus.TIMEOUT}
    record = _record(report)
    record["match"]["statuses"] = {k: str(v) for k, v in statuses.items()}
    return _with_record(report, record, statuses=statuses)


def _action_count(report: GameReport, _seeds: dict[int, int]) -> GameReport:
    return dataclasses.replace(report, actions=report.actions + 1)


def _result_field(report: GameReport, _seeds: dict[int, int]) -> GameReport:
    record = _record(report)
    record["result"] = {**record["result"], "points": [99, 0]}
    return _with_record(report, record)


def _negative_start_up(report: GameReport, _seeds: dict[int, int]) -> GameReport:
    """A start-up time below nothing, to take runner time off a bot's ladder charge."""
    return dataclasses.replace(report, startup_ms={report.bots_by_seat[0]: -60_000.0})


@pytest.mark.slow
@pytest.mark.parametrize(
    ("forge", "refusal"),
    [
        (_other_deal, "the deal is not the one its seed derives"),
        (_reshuffle, "the reshuffle of round 2 is not the seed's"),
        (_other_winner, "reported .* the record gives"),
        (_winner_in_report_only, "the record's winner"),
        (_cut_short, "stops before the game ends, and no bot failed"),
        (_illegal_action, "does not replay: action 10"),
        (_seats_swapped, "seats"),
        (_index_not_given, "game index 9 is not one this job was given"),
        (_other_version, "the record's bots"),
        (_forfeit_claimed, "disagrees with the record's failures"),
        (_action_count, "actions reported, the record has"),
        (_result_field, "the record's result is not the one its actions reach"),
        (_negative_start_up, "the start-up times are not a time per bot"),
    ],
    ids=lambda value: getattr(value, "__name__", "")[1:] or None,
)
def test_a_forged_game_is_refused_naming_what_is_wrong(
    played: tuple[MatchJob, dict[int, int], list[GameReport], list[GameReport]],
    forge: Forge, refusal: str,
) -> None:  # fmt: skip
    job, seeds, on_node, _local = played
    won = [g for g in on_node if g.winner is not None and g.record.get("reshuffles")]
    assert won, "no game with a winner and a reshuffle to forge"
    genuine = won[0]
    check_game(job, seeds, genuine)  # the control: the game before forging passes
    with pytest.raises(ForgedGame, match=refusal):
        check_game(job, seeds, forge(genuine, seeds))


def _moves(report: GameReport, seat: int) -> int:
    return sum(1 for action in report.record["actions"] if action["seat"] == seat)


def _charged(report: GameReport, seat: int, ms: float, *, record: bool = True) -> GameReport:
    """``report`` with seat ``seat``'s bot charged ``ms`` of thinking time (in the record's
    clock times too, unless not ``record``)."""
    name = report.bots_by_seat[seat]
    forged = _record(report)
    if record:
        forged["match"]["time_ms"][seat] = ms
    return _with_record(report, forged, time_ms={**report.time_ms, name: ms})


TimeCase = Callable[[GameReport, MatchConfig], GameReport]


def _spent_to_the_limit(report: GameReport, config: MatchConfig, seat: int) -> dict[str, Any]:
    """``report``'s record with seat ``seat`` taking all it may: the whole bank and its
    action time on its first move, its action time on every other."""
    control = config.time_control
    record = _record(report)
    match = record["match"]
    first = True
    for timing in match["timings"]:
        if timing["seat"] == seat:
            timing["wall_ms"] = control.action_ms + (control.bank_ms if first else 0)
            first = False
    match["bank_left_ms"][seat] = 0.0
    walls = [t["wall_ms"] for t in match["timings"] if t["seat"] == seat]
    match["decisions"][seat]["wall_ms"] = decision_stats(walls, None)["wall_ms"]
    match["time_ms"][seat] = time_limit_ms(config, _moves(report, seat), failed=False)
    return record


def _time_at_limit(report: GameReport, config: MatchConfig) -> GameReport:
    record = _spent_to_the_limit(report, config, 1)
    name = report.bots_by_seat[1]
    return _with_record(report, record, time_ms={**report.time_ms,
                                                 name: record["match"]["time_ms"][1]})


def _time_past_limit(report: GameReport, config: MatchConfig) -> GameReport:
    record = _spent_to_the_limit(report, config, 1)
    record["match"]["time_ms"][1] += 1
    name = report.bots_by_seat[1]
    return _with_record(report, record, time_ms={**report.time_ms,
                                                 name: record["match"]["time_ms"][1]})


def _a_timeout_s_allowance_without_a_timeout(report: GameReport, config: MatchConfig) -> GameReport:
    """The whole allowance of one more request: only a bot that failed is charged one."""
    return _charged(report, 0, time_limit_ms(config, _moves(report, 0), failed=True))


def _clock_in_report_only(report: GameReport, _config: MatchConfig) -> GameReport:
    return _charged(report, 0, report.time_ms[report.bots_by_seat[0]] + 5, record=False)


def _timings_say_otherwise(report: GameReport, _config: MatchConfig) -> GameReport:
    """A bot shown slow move by move (exported per decision), its total left alone."""
    record = _record(report)
    record["match"]["timings"][3]["wall_ms"] += 500
    return _with_record(report, record)


def _timing_past_the_allowance(report: GameReport, config: MatchConfig) -> GameReport:
    record = _record(report)
    control = config.time_control
    record["match"]["timings"][0]["wall_ms"] = control.action_ms + control.bank_ms + 1
    return _with_record(report, record)


def _timing_of_the_other_seat(report: GameReport, _config: MatchConfig) -> GameReport:
    record = _record(report)
    record["match"]["timings"][0]["seat"] = 1 - record["match"]["timings"][0]["seat"]
    return _with_record(report, record)


def _bank_left(report: GameReport, _config: MatchConfig) -> GameReport:
    record = _record(report)
    record["match"]["bank_left_ms"][0] = 0.0
    return _with_record(report, record)


def _decision_figures(report: GameReport, _config: MatchConfig) -> GameReport:
    record = _record(report)
    record["match"]["decisions"][1]["wall_ms"]["max"] = 1_999.0
    return _with_record(report, record)


def _startup_at_limit(report: GameReport, config: MatchConfig) -> GameReport:
    limit = startup_limit_ms(config)
    return dataclasses.replace(report, startup_ms={report.bots_by_seat[0]: limit})


def _startup_past_limit(report: GameReport, config: MatchConfig) -> GameReport:
    """An hour of start-up, billed to the bot's owner on a ladder."""
    return dataclasses.replace(report, startup_ms={report.bots_by_seat[1]: 3_600_000.0})


def _other_time_control(report: GameReport, _config: MatchConfig) -> GameReport:
    record = _record(report)
    record["match"]["time_control"] = {"action_ms": 60_000, "bank_ms": 0}
    return _with_record(report, record)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "refusal"),
    [
        (_time_at_limit, None),
        (_startup_at_limit, None),
        (_time_past_limit, r"game \d+: \S+ \(seat 1\) is charged [\d.]+ ms of thinking time,"
                           r" more than the \d+ ms the time control allows for its \d+ moves"),
        (_a_timeout_s_allowance_without_a_timeout, r"\(seat 0\) is charged .* thinking time"),
        (_clock_in_report_only, "the record's clock times"),
        (_startup_past_limit, r"game \d+: \S+ \(seat 1\) is charged 3600000.0 ms of start-up,"
                              r" more than the 20000 ms one launch may take"),
        (_other_time_control, "the record's time control"),
        (_timings_say_otherwise, r"\(seat \d\) is charged [\d.]+ ms of thinking time, its"
                                 r" moves' timings add up to"),
        (_timing_past_the_allowance, r"the record's timing of action 0, .* is not a time"
                                     r" seat 0's clock allowed \(32000 ms\)"),
        (_timing_of_the_other_seat, "the record's timing of action 0"),
        (_bank_left, "the record's bank left"),
        (_decision_figures, "the record's decision figures are not its timings'"),
    ],
    ids=lambda value: getattr(value, "__name__", "")[1:] or ("refused" if value else "passes"),
)
def test_a_game_charges_each_bot_no_more_time_than_the_config_allows(
    played: tuple[MatchJob, dict[int, int], list[GameReport], list[GameReport]],
    case: TimeCase, refusal: str | None,
) -> None:  # fmt: skip
    job, seeds, on_node, _local = played
    genuine = next(g for g in on_node if g.winner is not None)
    changed = case(genuine, job.config)
    if refusal is None:
        check_game(job, seeds, changed)
    else:
        with pytest.raises(ForgedGame, match=refusal):
            check_game(job, seeds, changed)


def test_a_forfeited_game_allows_the_failed_request_s_whole_allowance() -> None:
    config = MatchConfig(games=2, secret=SECRET)
    control = config.time_control
    assert time_limit_ms(config, 3, failed=False) == 3 * control.action_ms + control.bank_ms
    assert time_limit_ms(config, 3, failed=True) == 4 * control.action_ms + control.bank_ms
    assert startup_limit_ms(MatchConfig(games=2, secret=SECRET, hello_timeout_ms=500)) == 10_500


def _test_bot(tmp_path: Path, behaviour: str, *args: str) -> BotSpec:
    """A bot running tests/bots/testbot.py with ``behaviour`` (tests/referee/conftest.py)."""
    directory = tmp_path / behaviour
    directory.mkdir(mode=0o755)
    shutil.copy(REPO / "tests" / "bots" / "testbot.py", directory / "bot.py")
    (directory / "bot.py").chmod(0o644)
    command = ["python3", "bot.py", f"kt-{behaviour}", behaviour, *args]
    (directory / "bot.toml").write_text(f"name = {json.dumps(behaviour.replace('_', '-'))}\n"
                                        f"command = {json.dumps(command)}\nruntime = \"python\"\n")
    (directory / "bot.toml").chmod(0o644)
    return load_bot(directory)


@pytest.mark.slow
def test_forfeits_and_relaunches_as_a_node_plays_them_pass(tmp_path: Path) -> None:
    """The time checks refuse nothing a referee reports: a timeout's whole allowance, a
    crash on its turn, the start-up of a relaunch, a bank spent."""
    tmp_path.chmod(0o755)
    late = _test_bot(tmp_path, "late_once", "0.4")
    crashing = _test_bot(tmp_path, "exit_midgame")
    config = MatchConfig(games=4, secret=SECRET, time_control=TimeControl(100, 150))
    job = MatchJob(7, config, late, crashing)
    seeds = deal_seeds(config)
    node = sealed(job, seeds, config.indices_to_play)
    games = run_match(node.config, node.first, node.second).games
    statuses = {status for game in games for status in game.statuses.values()}
    assert {BotStatus.TIMEOUT, BotStatus.CRASH} <= statuses
    assert any(game.startup_ms for game in games[1:]), "no relaunch carried by a game"
    for game in games:
        check_game(job, seeds, game)
