"""Real matches of the sample bots: arena.referee.run_match, sandboxed processes.

python_random against js_random must finish every game by the rules with no
failure status and records that replay; python_greedy must beat
python_random (the >= 80% figure over 40+ games is measured by
benchmarks/sample_bots.py, not asserted here).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from arena.kahuna import parse_record, replay
from arena.referee import BotSpec, BotStatus, MatchConfig, load_bot, run_match

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"
RULE_REASONS = {"points", "final_points", "bridges", "draw", "no_bridges"}

pytestmark = pytest.mark.slow


def _needs_node_modules() -> None:
    if not (SAMPLE_BOTS / "js_random" / "node_modules").is_dir():
        pytest.skip("js_random's node_modules missing: run npm ci --prefix sample_bots/js_random")


def test_python_random_and_js_random_play_clean_games() -> None:
    _needs_node_modules()
    python_bot = load_bot(SAMPLE_BOTS / "python_random")
    js_bot = load_bot(SAMPLE_BOTS / "js_random")
    report = run_match(MatchConfig(games=2, seed=11), python_bot, js_bot)
    assert len(report.games) == 2
    assert {game.bots_by_seat for game in report.games} == {
        ("python_random", "js_random"),
        ("js_random", "python_random"),
    }
    for game in report.games:
        assert dict(game.statuses) == {"python_random": BotStatus.OK, "js_random": BotStatus.OK}
        assert game.reason in RULE_REASONS
        assert game.actions > 20
        result = replay(parse_record(json.dumps(game.record)))
        assert result.error is None
        assert result.state.is_finished
    assert sum(report.score.values()) == 2.0


def test_greedy_beats_random_in_a_real_match() -> None:
    greedy = load_bot(SAMPLE_BOTS / "python_greedy")
    random_bot = load_bot(SAMPLE_BOTS / "python_random")
    report = run_match(MatchConfig(games=8, seed=2026), greedy, random_bot)
    for game in report.games:
        assert set(game.statuses.values()) == {BotStatus.OK}, game.statuses
    wins = sum(game.winner == "python_greedy" for game in report.games)
    assert wins >= 6, [(game.winner, game.reason) for game in report.games]


def test_ismcts_plays_a_clean_sandboxed_match_against_random(tmp_path: Path) -> None:
    """python_ismcts imports the engine inside the sandbox and searches within its clock."""
    bot_dir = tmp_path / "python_ismcts"
    shutil.copytree(
        SAMPLE_BOTS / "python_ismcts", bot_dir, ignore=shutil.ignore_patterns("__pycache__")
    )
    toml = (bot_dir / "bot.toml").read_text().replace('"200"', '"15"')
    assert '"--think-ms", "15"' in toml
    (bot_dir / "bot.toml").write_text(toml)
    ismcts = load_bot(bot_dir)
    random_bot = load_bot(SAMPLE_BOTS / "python_random")
    report = run_match(MatchConfig(games=2, seed=14), ismcts, random_bot)
    assert len(report.games) == 2
    for game in report.games:
        failures = game.record["match"].get("failures")  # a failure's reason, when one fails
        assert set(game.statuses.values()) == {BotStatus.OK}, (game.statuses, failures)
        assert game.reason in RULE_REASONS
        result = replay(parse_record(json.dumps(game.record)))
        assert result.error is None and result.state.is_finished


def _noisy_greedy(noise: float, seed: int) -> BotSpec:
    """python_greedy with --noise set on its command, as a bot.toml would set it."""
    greedy = load_bot(SAMPLE_BOTS / "python_greedy")
    command = (*greedy.command, "--noise", str(noise), "--seed", str(seed))
    return dataclasses.replace(greedy, name="python_greedy_noisy", command=command)


def test_noisy_greedy_plays_real_reproducible_matches() -> None:
    greedy = load_bot(SAMPLE_BOTS / "python_greedy")
    config = MatchConfig(games=2, seed=5, secret=bytes(range(32)))
    runs = [run_match(config, greedy, _noisy_greedy(0.5, seed=9)) for _ in range(2)]
    for report in runs:
        for game in report.games:
            assert set(game.statuses.values()) == {BotStatus.OK}, game.statuses
            assert replay(parse_record(json.dumps(game.record))).error is None
    moves = [[game.record["actions"] for game in report.games] for report in runs]
    assert moves[0] == moves[1]  # same secret, same seed: the same games
    other = run_match(config, greedy, _noisy_greedy(0.5, seed=10))
    assert [game.record["actions"] for game in other.games] != moves[0]


def test_noisy_greedy_with_a_bad_setting_fails_to_start() -> None:
    greedy = load_bot(SAMPLE_BOTS / "python_greedy")
    config = MatchConfig(games=1, seed=1, max_restarts=0)
    report = run_match(config, greedy, _noisy_greedy(1.5, seed=0))
    game = report.games[0]
    assert game.winner == "python_greedy"
    assert game.statuses["python_greedy_noisy"] is not BotStatus.OK
    assert "noise must be a probability" in game.stderr.get("python_greedy_noisy", "")
