"""`arena match` as a user runs it: a real process, real sandboxed bots (its refusals of
bad arguments, and the replays that check its records, in this process through the same
``arena.cli.main``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arena.cli import main
from arena.testing.interrupt import start_interruptible
from arena.testing.waiting import wait_until
from tests.cli import arena_in_process
from tests.server.test_disk_full import small_disk

TESTBOT = Path(__file__).resolve().parent.parent / "bots" / "testbot.py"

pytestmark = pytest.mark.slow


def _bot(root: Path, name: str, behaviour: str = "random") -> Path:
    directory = root / name
    directory.mkdir(mode=0o755)
    shutil.copy(TESTBOT, directory / "bot.py")
    (directory / "bot.py").chmod(0o644)
    command = ["python3", "bot.py", f"kt-{uuid.uuid4().hex}", behaviour]
    (directory / "bot.toml").write_text(
        f'name = "{name}"\ncommand = {json.dumps(command)}\nruntime = "python"\n'
    )
    return directory


def _arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=120
    )


def _replayed(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`arena replay PATH` in this process (``arena.cli.main``): status, stdout, stderr."""
    capsys.readouterr()
    status = main(["replay", str(path)])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def bots(tmp_path: Path) -> tuple[Path, Path]:
    tmp_path.chmod(0o755)
    return _bot(tmp_path, "alpha"), _bot(tmp_path, "beta", "illegal")


def test_json_output(bots: tuple[Path, Path]) -> None:
    done = _arena("match", str(bots[0]), str(bots[1]), "--games", "2", "--seed", "4", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [game["winner"] for game in result["games"]] == ["alpha", "alpha"]
    assert [game["reason"] for game in result["games"]] == ["forfeit", "forfeit"]
    assert [game["status"] for game in result["games"]] == [
        {"alpha": "ok", "beta": "illegal_action"}
    ] * 2
    assert [game["seats"] for game in result["games"]] == [["alpha", "beta"], ["beta", "alpha"]]
    assert result["score"] == {"alpha": 2.0, "beta": 0.0}
    alpha, beta = result["intervals"]["alpha"], result["intervals"]["beta"]
    # one deal pair (games 0 and 1 share deal 0), both won by alpha: too few for an interval
    assert (alpha["kind"], alpha["pairs"], alpha["games"], alpha["unpaired"]) == (
        "too_few_pairs", 1, 2, 0)  # fmt: skip
    assert (alpha["score"], beta["score"]) == (1.0, 0.0)  # the score of every game, as it is
    assert (alpha["score_low"], alpha["score_high"], alpha["los"]) == (0.0, 1.0, None)
    assert beta["elo"] is None and beta["elo_low"] is None  # -infinity: JSON has none


def test_the_table_says_what_each_failed_bot_did(bots: tuple[Path, Path]) -> None:
    """The action and the rule it breaks, not only its status: an author should not
    need --json to learn why their bot forfeited."""
    done = _arena("match", *map(str, bots), "--games", "2")
    assert done.returncode == 0, done.stderr
    said = re.findall(r"^game (\d): beta illegal_action: (.+)$", done.stdout, re.MULTILINE)
    assert [game for game, _ in said] == ["0", "1"], done.stdout
    for _, detail in said:
        assert re.fullmatch(r"[a-z]+ .*: [RC]\d+[a-z]*: .+", detail), detail


def test_an_odd_game_is_in_the_score_and_said_to_be_unpaired(bots: tuple[Path, Path]) -> None:
    """`--games 3`: the percentage and Elo are the score's (every game, the odd one
    too), not the pair's alone, and the odd game is named as unpaired."""
    done = _arena("match", str(bots[0]), str(bots[1]), "--games", "3", "--seed", "4")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    score = lines.index("score: alpha 3 - beta 0")  # then what each failed bot did
    assert lines[score + 1].startswith("alpha: 100.0% over 3 games (1 deal pair + 1 unpaired"
                                       " game), Elo +inf; too few pairs")  # fmt: skip
    assert all(line.startswith("game ") for line in lines[score + 2 :]), lines


def test_per_decision_timings_per_bot_in_the_json_and_per_seat_in_the_records(
    tmp_path: Path,
) -> None:
    tmp_path.chmod(0o755)
    alpha, beta = _bot(tmp_path, "alpha"), _bot(tmp_path, "beta")
    records = tmp_path / "records"
    done = _arena("match", str(alpha), str(beta), "--games", "2", "--json",
                  "--records", str(records))  # fmt: skip
    assert done.returncode == 0, done.stderr
    timings = json.loads(done.stdout)["decision_timings"]
    walls: dict[str, list[float]] = {"alpha": [], "beta": []}
    for path in sorted(records.iterdir()):
        match = json.loads(path.read_text())["match"]
        for seat, bot in enumerate(match["bots"]):
            mine = [t["wall_ms"] for t in match["timings"] if t["seat"] == seat]
            walls[bot["name"]] += mine
            per_seat = match["decisions"][seat]
            assert per_seat["decisions"] == len(mine) > 0
            assert per_seat["wall_ms"]["max"] == round(max(mine), 3)
            cpu = match["cpu_ms"][seat]
            assert per_seat["cpu_ms"] == (None if cpu is None else round(cpu, 3))
    for name, mine in walls.items():
        found = timings[name]
        assert found["decisions"] == len(mine)
        assert found["wall_ms"]["median"] <= found["wall_ms"]["p90"] <= found["wall_ms"]["max"]
        assert found["wall_ms"]["max"] == round(max(mine), 3)
        assert found["cpu_ms"] is None or found["cpu_ms_per_decision"] == round(
            found["cpu_ms"] / len(mine), 3
        )


def test_records_replay_and_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tmp_path.chmod(0o755)
    first, second = _bot(tmp_path, "alpha"), _bot(tmp_path, "beta")
    records = tmp_path / "records"
    done = _arena("match", str(first), str(second), "--games", "2", "--records", str(records),
                  "--action-ms", "1500", "--bank-ms", "1000", "--tactical")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[:6] == ["game", "seat", "0", "seat", "1", "winner"]
    assert lines[1].split()[:3] == ["0", "alpha", "beta"]
    assert lines[2].split()[:3] == ["1", "beta", "alpha"]
    assert lines[-2].startswith("score: alpha ")
    assert lines[-1].startswith("alpha: ") and "over 2 games (1 deal pair)" in lines[-1]
    assert "too few pairs for a 95% interval (it needs 5)" in lines[-1]
    paths = sorted(records.iterdir())
    assert [path.name for path in paths] == ["game-000.json", "game-001.json"]
    for path in paths:
        status, out, err = _replayed(path, capsys)
        assert status == 0, err
        summary = json.loads(out)
        assert summary["finished"] and summary["result_matches"]
        assert json.loads(path.read_text())["variant"]["tactical"] is True


def test_handicap_is_in_every_record_and_the_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path.chmod(0o755)
    first, second = _bot(tmp_path, "alpha"), _bot(tmp_path, "beta")
    records = tmp_path / "records"
    done = _arena("match", str(first), str(second), "--games", "2", "--records", str(records),
                  "--handicap", "1:huna-elai,aloa-bari", "--json")
    assert done.returncode == 0, done.stderr
    handicap = [{"seat": 1, "line": "ELAI-HUNA"}, {"seat": 1, "line": "ALOA-BARI"}]
    assert json.loads(done.stdout)["handicap"] == handicap
    for path in sorted(records.iterdir()):
        assert json.loads(path.read_text())["handicap"] == handicap
        status, out, err = _replayed(path, capsys)
        assert status == 0, err
        assert json.loads(out)["result_matches"]


BAD_ARGS = [
    ("missing dir", ["match", "/nonexistent/bot", "{a}"], "not a directory"),
    ("zero games", ["match", "{a}", "{b}", "--games", "0"], "--games: must be between 1"),
    ("words for ms", ["match", "{a}", "{b}", "--action-ms", "fast"], "--action-ms: 'fast'"),
    ("negative seed", ["match", "{a}", "{b}", "--seed", "-1"], "--seed: must be between"),
    ("no toml", ["match", "{empty}", "{b}"], "no bot.toml"),
    ("records is a file", ["match", "{a}", "{b}", "--records", "{a}/bot.toml"], "--records"),
    ("handicap no seat", ["match", "{a}", "{b}", "--handicap", "ALOA-BARI"], "is not SEAT:LINE"),
    ("handicap seat 2", ["match", "{a}", "{b}", "--handicap", "2:ALOA-BARI"], "seat must be 0"),
    ("handicap bad line", ["match", "{a}", "{b}", "--handicap", "0:ALOA-XX"], "--handicap"),
    ("handicap twice", ["match", "{a}", "{b}", "--handicap", "0:aloa-bari,bari-aloa"], "twice"),
    ("handicap 4 lines", ["match", "{a}", "{b}", "--handicap",
                          "0:ALOA-BARI,ALOA-HUNA,ELAI-HUNA,BARI-DUDA"], "1 to 3 bridges"),
]


@pytest.mark.parametrize(("args", "needle"), [case[1:] for case in BAD_ARGS],
                         ids=[case[0] for case in BAD_ARGS])
def test_bad_arguments_give_one_clear_line(
    tmp_path: Path, bots: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
    args: list[str], needle: str,
) -> None:  # fmt: skip
    """In this process (``arena.cli.main``, what the ``arena`` process runs): refused
    before any bot starts."""
    (tmp_path / "empty").mkdir()
    paths = {"a": str(bots[0]), "b": str(bots[1]), "empty": str(tmp_path / "empty")}
    status, out, err = arena_in_process(capsys, *[arg.format(**paths) for arg in args])
    assert status == 2
    assert out == ""
    last = err.strip().splitlines()[-1]
    assert last.startswith("arena match: ") and needle in last, err
    assert "Traceback" not in err


def test_a_crashed_bots_stderr_goes_to_the_operator_not_the_records(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    secret = f"secret-{uuid.uuid4().hex}"
    leaky = _bot(tmp_path, "leaky", "leak_and_crash")
    toml = leaky / "bot.toml"
    toml.write_text(toml.read_text().replace('"leak_and_crash"]', f'"leak_and_crash", "{secret}"]'))
    good = _bot(tmp_path, "good")
    records = tmp_path / "records"
    done = _arena("match", str(leaky), str(good), "--games", "2", "--records", str(records))
    assert done.returncode == 0, done.stderr
    assert f"leaky's stderr (first and last lines):\n  my plans: {secret}" in done.stdout
    written = sorted(records.iterdir())
    assert len(written) == 2
    for path in written:
        text = path.read_text()
        assert secret not in text
        assert "process exited with status 1" in text
    done = _arena("match", str(leaky), str(good), "--games", "1", "--json")
    assert done.returncode == 0, done.stderr
    game = json.loads(done.stdout)["games"][0]
    assert secret in game["stderr"]["leaky"] and secret not in json.dumps(game["failures"])


@pytest.mark.parametrize("flags", [[], ["--ponder"]], ids=["frozen", "ponder"])
def test_a_spinning_bot_plays_a_normal_match_frozen_or_pondering(
    tmp_path: Path, flags: list[str]
) -> None:
    """`--ponder` is accepted; six spinning children fit the default 64 processes."""
    tmp_path.chmod(0o755)
    alpha, spinner = _bot(tmp_path, "alpha"), _bot(tmp_path, "spin", "spinner")
    done = _arena("match", str(alpha), str(spinner), "--games", "2", "--json", *flags)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [game["status"] for game in result["games"]] == [{"alpha": "ok", "spin": "ok"}] * 2


@pytest.mark.parametrize("size", ["40k", "16m"], ids=["disk fills", "control: room"])
def test_records_on_a_full_disk_stop_the_match_naming_the_file_and_leave_no_half_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], size: str
) -> None:
    """It said only '[Errno 28] No space left on device' and left a truncated record."""
    tmp_path.chmod(0o755)
    first, second = _bot(tmp_path, "alpha"), _bot(tmp_path, "beta")
    with small_disk(tmp_path / "disk", size, mode=None) as disk:
        records = disk.root / "records"
        done = _arena("match", str(first), str(second), "--games", "12", "--seed", "7",
                      "--records", str(records))  # fixed deals: the same records fill the disk
        written = sorted(records.iterdir())
        for path in written:  # every record there is whole
            status, _, err = _replayed(path, capsys)
            assert status == 0, (path.name, err)
    if size == "16m":
        assert done.returncode == 0 and len(written) == 12, done.stderr
        return
    assert done.returncode == 2 and 0 < len(written) < 12, done.stderr
    line = re.fullmatch(
        rf"arena match: --records {re.escape(str(records))}: cannot write game-(\d+)\.json:"
        r" No space left on device\n", done.stderr,
    )  # fmt: skip
    assert line is not None, done.stderr
    assert f"game-{line.group(1)}.json" not in [path.name for path in written]


def test_ctrl_c_stops_the_match_after_the_game_in_play_and_leaves_no_bot(tmp_path: Path) -> None:
    """Ctrl-C ends the match once the game in play is over, in both halves: not after the
    last of its 300 games, and with no bot process left."""
    import signal
    import time

    tmp_path.chmod(0o755)
    first, second = _bot(tmp_path, "alpha"), _bot(tmp_path, "beta")
    records = tmp_path / "records"
    process = start_interruptible(
        [sys.executable, "-m", "arena", "match", str(first), str(second), "--games", "300",
         "--records", str(records)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip

    def halves_playing() -> bool:  # one half plays the even games, the other the odd ones
        assert process.poll() is None, "the match ended before the Ctrl-C"
        played = {int(p.stem.split("-")[1]) % 2 for p in records.glob("game-*.json")}
        return played == {0, 1}

    wait_until(halves_playing, "a game stored by each half", 60, interval_s=0.05)
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    interrupted = time.monotonic()
    try:
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    took_s = time.monotonic() - interrupted
    assert process.returncode == 130 and err.endswith("arena: interrupted\n"), err
    assert out == "" and took_s < 10.0, (took_s, out)
    running = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(first) not in running and str(second) not in running
