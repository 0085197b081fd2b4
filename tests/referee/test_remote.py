"""Remote bots in the referee: the seat is offered, not launched, and judged like any bot."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.referee import BotConfigError, BotStatus, MatchConfig, load_bot, run_match
from arena.referee.remote import SeatOffer

SDK_DIR = Path(__file__).resolve().parents[2] / "sample_bots" / "sdk" / "python"
if str(SDK_DIR) not in sys.path:
    sys.path.insert(0, str(SDK_DIR))

from kahuna_bot import Action, Observation, run  # noqa: E402

pytestmark = pytest.mark.slow


def _remote_dir(root: Path, toml: str) -> Path:
    directory = root / "far"
    directory.mkdir()
    (directory / "bot.toml").write_text(toml)
    return directory


def _first(observation: Observation, legal_actions: tuple[Action, ...]) -> Action:
    return legal_actions[len(observation.history) % len(legal_actions)]


def test_a_remote_bot_toml_has_no_command(tmp_path: Path) -> None:
    spec = load_bot(_remote_dir(tmp_path, 'name = "far"\nruntime = "remote"\n'))
    assert (spec.runtime, spec.command) == ("remote", ())


def test_a_remote_bot_with_a_command_is_refused(tmp_path: Path) -> None:
    toml = 'name = "far"\nruntime = "remote"\ncommand = ["python3", "bot.py"]\n'
    with pytest.raises(BotConfigError, match="remote bot has no field 'command'"):
        load_bot(_remote_dir(tmp_path, toml))


def test_run_match_refuses_a_remote_bot_without_a_way_to_offer_its_seat(tmp_path: Path) -> None:
    far = load_bot(_remote_dir(tmp_path, 'name = "far"\nruntime = "remote"\n'))
    with pytest.raises(ValueError, match="remote bot plays only"):
        run_match(MatchConfig(games=2), far, load_bot(SAMPLE_RANDOM_BOT))


def test_an_offered_seat_is_played_over_its_socket(tmp_path: Path) -> None:
    far = load_bot(_remote_dir(tmp_path, 'name = "far"\nruntime = "remote"\n'))
    offers: list[SeatOffer] = []
    players: list[threading.Thread] = []

    def offer(seat: SeatOffer) -> None:  # the connector's part, straight to the socket
        offers.append(seat)
        environ = {"KAHUNA_REFEREE": f"unix://{seat.socket_path}", "KAHUNA_TOKEN": seat.token}
        player = threading.Thread(target=run, args=(_first,), kwargs={"environ": environ})
        player.start()
        players.append(player)

    report = run_match(MatchConfig(games=2), far, load_bot(SAMPLE_RANDOM_BOT), on_seat_offer=offer)
    for player in players:
        player.join(10)
    assert [g.statuses.get("far", BotStatus.OK) for g in report.games] == [BotStatus.OK] * 2
    assert len(offers) == 1 and (offers[0].slot, offers[0].bot) == (0, "far")
    assert offers[0].version == far.version and offers[0].referee_match


def test_a_seat_nobody_takes_times_out_and_is_offered_again(tmp_path: Path) -> None:
    far = load_bot(_remote_dir(tmp_path, 'name = "far"\nruntime = "remote"\n'))
    offers: list[SeatOffer] = []
    config = MatchConfig(games=2, hello_timeout_ms=2000, max_restarts=1)
    report = run_match(config, load_bot(SAMPLE_RANDOM_BOT), far, on_seat_offer=offers.append)
    assert [g.statuses.get("far") for g in report.games] == [BotStatus.TIMEOUT] * 2
    assert [g.winner for g in report.games] == ["python_random"] * 2
    assert len(offers) == 2 and offers[0].token != offers[1].token
    assert {o.slot for o in offers} == {1}
