"""`arena replay` and `arena play-random` as a user runs them: real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # every test here starts a process or a server


def arena(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        input=stdin, capture_output=True, text=True, timeout=60, check=False,
    )


@pytest.fixture(scope="module")
def record_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("records") / "game.json"
    done = arena("play-random", "--seed", "21", "--tactical", "--out", str(path))
    assert done.returncode == 0, done.stderr
    return path


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def write(tmp_path: Path, data: object) -> str:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_random_game_replays_and_matches(record_path: Path) -> None:
    data = load(record_path)
    assert data["format"] == "kahuna-record/1" and data["variant"]["tactical"] is True
    done = arena("replay", str(record_path))
    assert done.returncode == 0 and done.stderr == ""
    summary = json.loads(done.stdout)
    assert summary["finished"] is True and summary["to_move"] is None
    assert summary["result_matches"] is True
    assert summary["winner"] == data["result"]["winner"]
    assert summary["points"] == data["result"]["points"]


def test_play_random_to_stdout_is_the_same_record(record_path: Path) -> None:
    done = arena("play-random", "--seed", "21", "--tactical")
    assert done.returncode == 0 and json.loads(done.stdout) == load(record_path)


def test_legal_list_of_an_unfinished_game_from_stdin(record_path: Path) -> None:
    data = load(record_path)
    data["actions"] = data["actions"][:5]
    del data["result"]
    done = arena("replay", "-", "--legal", stdin=json.dumps(data))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    legal = summary["legal"]
    assert summary["finished"] is False and summary["winner"] is None
    assert legal == sorted(set(legal)) and legal
    assert "result_matches" not in summary


def test_illegal_action_exits_1_naming_index_and_rule(record_path: Path, tmp_path: Path) -> None:
    data = load(record_path)
    data["actions"] = [{"type": "pass"}, {"type": "pass"}]
    del data["result"]
    done = arena("replay", write(tmp_path, data))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == 'action 1 {"type": "pass"}: C4: the opponent passed: this turn must end with a draw\n'  # noqa: E501


def test_result_mismatch_exits_2(record_path: Path, tmp_path: Path) -> None:
    data = load(record_path)
    data["result"] = {"winner": None, "reason": "draw", "points": [9, 9]}
    done = arena("replay", write(tmp_path, data))
    assert done.returncode == 2
    assert json.loads(done.stdout)["result_matches"] is False
    assert done.stderr.count("\n") == 1 and "mismatch" in done.stderr


@pytest.mark.parametrize("content", [
    "not json at all",
    '{"format": "kahuna-record/1", "deal": ' + "[" * 50000 + "]" * 50000 + "}",
    '{"format": "kahuna-record/1", "deal": ["ALOA"], "actions": [' + "7" * 6000 + "]}",
    '{"format": "kahuna-record/1", "deal": [], "actions": {"a": 1}}',
], ids=["not-json", "deep-nesting", "huge-number", "bad-deal"])
def test_malformed_file_exits_1_with_one_line(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    done = arena("replay", str(path))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_missing_file_and_binary_file_exit_1(tmp_path: Path) -> None:
    done = arena("replay", str(tmp_path / "nope.json"))
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    done = arena("replay", str(binary))
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


ENDLESS = [
    # (case, the record argument, standard input, stderr; None: the record replays)
    ("/dev/zero", "/dev/zero", None,
     "arena replay: /dev/zero: larger than 67108864 bytes: not a game record\n"),
    ("64 MiB + 1 on stdin", "-", " " * (64 * 1024 * 1024 + 1),
     "arena replay: -: larger than 67108864 bytes: not a game record\n"),
    ("control: a record padded to 64 MiB", "-", "PADDED", None),
]  # fmt: skip


@pytest.mark.parametrize(("source", "stdin", "error"), [case[1:] for case in ENDLESS],
                         ids=[case[0] for case in ENDLESS])  # fmt: skip
def test_input_past_64_mib_is_refused_instead_of_read_for_ever(
    record_path: Path, source: str, stdin: str | None, error: str | None
) -> None:
    """`arena replay /dev/zero` read until memory ran out (timeout here)."""
    if stdin == "PADDED":
        text = record_path.read_text()
        stdin = text + " " * (64 * 1024 * 1024 - len(text.encode()))
    done = arena("replay", source, stdin=stdin)
    if error is None:
        assert done.returncode == 0 and json.loads(done.stdout)["finished"], done.stderr
    else:
        assert (done.returncode, done.stdout, done.stderr) == (1, "", error)


def test_a_reader_that_went_away_gets_no_traceback() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # `arena play-random | head -c 0`: nobody reads the output
    try:
        done = subprocess.run(
            [sys.executable, "-m", "arena", "play-random", "--seed", "3"],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, "")


MATCH_SECTIONS = [
    ("before-secret-deals", {"match_id": "ab12", "game_index": 1, "match_seed": 11,
                             "deal_index": 0, "deal_seed": 8_123_456_789}),
    ("secret-deals", {"match_id": "ab12", "game_index": 1, "deal_index": 0, "paired": True}),
]  # fmt: skip


@pytest.mark.parametrize(
    "match", [c[1] for c in MATCH_SECTIONS], ids=[c[0] for c in MATCH_SECTIONS]
)
def test_a_referee_record_replays_with_either_match_section(
    record_path: Path, tmp_path: Path, match: dict[str, object]
) -> None:
    """A record replays alike whether its deals came from the match seed alone or were keyed
    by a secret (both are stored)."""
    plain = json.loads(arena("replay", str(record_path)).stdout)
    done = arena("replay", write(tmp_path, {**load(record_path), "match": match}))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == plain


@pytest.mark.parametrize("size", ["4k", "16m"], ids=["disk full", "control: room"])
def test_play_random_on_a_full_disk_leaves_no_truncated_record(tmp_path: Path, size: str) -> None:
    """It left a truncated record (`arena replay` then called it malformed)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)],
                             capture_output=True, text=True, check=False)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    out = disk / "game.json"
    try:
        done = arena("play-random", "--seed", "21", "--out", str(out))  # ~7.5 kB
        left = sorted(path.name for path in disk.iterdir())
        replayed = arena("replay", str(out)) if left else None
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
    if size == "16m":
        assert done.returncode == 0 and left == ["game.json"], done.stderr
        assert replayed is not None and replayed.returncode == 0, replayed
        return
    assert done.returncode != 0 and left == [], (left, done.stderr)
    assert done.stderr == (
        f"arena play-random: cannot write {out}: No space left on device\n"
    )
