"""run_match(on_event=...): head plus live entries are the game so far, as the record says."""

from __future__ import annotations

import time
from typing import Any

import pytest

from arena.kahuna import HandicapBridge, record_from_json, replay
from arena.referee import GameReport, MatchConfig, TimeControl, run_match
from arena.referee.live import ActionApplied, GameStarted, LiveEvent, RoundStarted, live_entry

from .conftest import MakeBot

pytestmark = pytest.mark.slow


def _rebuilt(head: dict[str, object], entries: list[dict[str, object]]) -> dict[str, Any]:
    """A record from a live view: the head, its actions, its reshuffles."""
    record: dict[str, Any] = dict(head)
    record["actions"] = [e for e in entries if "reshuffle" not in e]  # in order
    record["reshuffles"] = [e["reshuffle"] for e in entries if "reshuffle" in e]
    return record


def test_live_events_rebuild_every_game_before_it_ends(make_bot: MakeBot) -> None:
    timeline: list[tuple[str, object]] = []
    handicap = (HandicapBridge(1, "ALOA-BARI"),)
    config = MatchConfig(games=2, seed=8, time_control=TimeControl(3000, 30000), handicap=handicap)

    def on_event(event: LiveEvent) -> None:
        timeline.append(("event", event))

    def on_game(report: GameReport) -> None:
        timeline.append(("game", report))

    bots = make_bot("random", name="ann"), make_bot("random", name="bob")
    run_match(config, *bots, on_game=on_game, on_event=on_event)
    games = [item for kind, item in timeline if kind == "game"]
    assert len(games) == 2
    position = 0
    for report in games:
        assert isinstance(report, GameReport)
        kind, start = timeline[position]
        assert kind == "event" and isinstance(start, GameStarted)
        assert start.game_index == report.index
        head = start.head
        assert "actions" not in head and "result" not in head
        assert head["handicap"] == [{"seat": 1, "line": "ALOA-BARI"}]
        end = timeline.index(("game", report))
        events = [
            item for _, item in timeline[position + 1 : end]
            if isinstance(item, ActionApplied | RoundStarted)
        ]
        assert len(events) == end - position - 1, "only actions and reshuffles within a game"
        assert {e.game_index for e in events} == {report.index}
        entries = [live_entry(e) for e in events]
        record = report.record
        rebuilt = _rebuilt(head, entries)
        assert rebuilt["deal"] == record["deal"]
        assert rebuilt["reshuffles"] == record.get("reshuffles", [])
        timing = ("wall_ms", "at_ms")
        assert [{k: v for k, v in a.items() if k not in timing} for a in rebuilt["actions"]] == (
            record["actions"]
        )
        times = [a["at_ms"] for a in rebuilt["actions"]]
        assert times == sorted(times) and abs(times[-1] / 1000 - time.time()) < 60
        match = record["match"]
        assert isinstance(match, dict)
        assert [a["wall_ms"] for a in rebuilt["actions"]] == [
            t["wall_ms"] for t in match["timings"]
        ]
        head_match = head["match"]
        assert isinstance(head_match, dict) and head_match["bots"] == match["bots"]
        parsed = record_from_json({**rebuilt, "result": record.get("result")})
        replayed = replay(parsed)
        assert replayed.error is None
        assert replayed.state.is_finished == ("result" in record)
        position = end + 1
