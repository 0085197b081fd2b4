"""`arena bot`, `arena tournament`, `arena leaderboard` and `arena token`, in-process."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from pathlib import Path

import pytest

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.cli import main
from arena.referee import load_bot
from arena.store import Store, add_bot_version, create_token
from arena.testing.refused_entries import REFUSED_ENTRIES, plant_refused_entry
from tests.cli import arena_in_process
from tests.server.test_arena_service import LEAKY_BOT
from tests.server.test_disk_full import SmallDisk
from tests.store.damage import damage_tables

pytestmark = pytest.mark.slow
GREEDY = SAMPLE_RANDOM_BOT.parent / "python_greedy"


def _arena(capsys: pytest.CaptureFixture[str], data: Path, *args: str) -> tuple[int, str, str]:
    return arena_in_process(capsys, *args, "--data-dir", str(data))


def _bot(tmp: Path, name: str, body: str | None = None, source: Path = SAMPLE_RANDOM_BOT) -> Path:
    target = tmp / "src" / name
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (target / "bot.toml").read_text()
    (target / "bot.toml").write_text(toml.replace(f'name = "{source.name}"', f'name = "{name}"'))
    if body is not None:
        (target / "bot.py").write_text(body)
    return target


@pytest.fixture(scope="module")
def data_with_bots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory where `arena bot add` stored two bots and a tournament ran."""
    root = tmp_path_factory.mktemp("cli")
    data = root / "data"
    for name, source in (("rnd", SAMPLE_RANDOM_BOT), ("grd", GREEDY)):
        assert (
            main(["bot", "add", str(_bot(root, name, source=source)), "--data-dir", str(data)]) == 0
        )
    args = [
        "tournament",
        "run",
        "cup",
        "rnd",
        "grd",
        "--games",
        "2",
        "--no-progress",
        "--no-cpu-pinning",
    ]
    assert main([*args, "--data-dir", str(data)]) == 0
    return data


def test_bot_add_stores_once_and_show_lists_versions(
    data_with_bots: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = _arena(capsys, data_with_bots, "bot", "add", str(_bot(tmp_path, "rnd")))
    assert status == 0 and "already stored" in out
    status, out, _ = _arena(capsys, data_with_bots, "bot", "show", "grd", "--json")
    shown = json.loads(out)
    assert status == 0 and len(shown["versions"]) == 1 and shown["versions"][0]["games"] == 2
    assert len(shown["history"]) == 2
    status, out, _ = _arena(capsys, data_with_bots, "bot", "list", "--json")
    assert [b["name"] for b in json.loads(out)] == ["grd", "rnd"]


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("crashes", "conformance check failed: hello: crash before its Hello: process exited"
                    " with status 1; stderr: cannot load weights.bin"),
        ("command-not-found", "failed to execute no-such-program: No such file or directory"),
        ("no-toml", "no bot.toml"),
        ("missing-dir", "not a directory"),
        ("command-200KB", "field 'command' argument 2 is 200000 bytes; the limit is 4096"),
        *REFUSED_ENTRIES,
        ("bad-owner", "--owner: user name '../eve': use 1-40 letters"),
        ("holds-data-dir", "holds the arena data directory"),
    ],
)
def test_bot_add_refuses_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, message: str
) -> None:
    if case.startswith("link") or case == "fifo":
        directory = _bot(tmp_path, case)
        plant_refused_entry(directory, case)
    elif case == "crashes":
        body = "import sys\nsys.exit('cannot load weights.bin')\n"  # exit status 1
        directory = _bot(tmp_path, "crasher", body)
    elif case == "command-not-found":
        directory = _bot(tmp_path, "nocommand")
        toml = (directory / "bot.toml").read_text()
        (directory / "bot.toml").write_text(toml.replace('"python3"', '"no-such-program"'))
    elif case == "command-200KB":
        directory = _bot(tmp_path, "longcommand")
        toml = (directory / "bot.toml").read_text()
        long_argument = '"bot.py", "' + "a" * 200_000 + '"'
        (directory / "bot.toml").write_text(toml.replace('"bot.py"', long_argument))
    elif case == "no-toml":
        directory = _bot(tmp_path, "notoml")
        (directory / "bot.toml").unlink()
    elif case in ("bad-owner", "holds-data-dir"):
        directory = _bot(tmp_path, "owned")
    else:
        directory = tmp_path / "nowhere"
    flags = ["--owner", "../eve"] if case == "bad-owner" else []
    data = directory / "arena-data" if case == "holds-data-dir" else tmp_path / "data"
    status, out, err = _arena(capsys, data, "bot", "add", str(directory), *flags)
    assert status == (2 if case == "bad-owner" else 1) and message in err, err
    assert "Traceback" not in err and out == "", out
    # refused before the store is opened (from the command line and the bot's directory
    # alone), or after with nothing stored: no data directory is left for a later command
    assert not data.exists()


def test_tournament_status_leaderboard_and_resume(
    data_with_bots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = _arena(capsys, data_with_bots, "tournament", "status", "cup", "--json")
    shown = json.loads(out)
    assert status == 0 and shown["status"] == "finished" and shown["games_played"] == 2
    assert sum(s["points"] for s in shown["standings"]) == 2
    status, out, _ = _arena(capsys, data_with_bots, "leaderboard", "--json")
    rows = json.loads(out)
    assert [r["rank"] for r in rows] == [1, 2]
    assert rows[0]["conservative"] >= rows[1]["conservative"]
    assert all(r["games"] == 2 for r in rows)
    status, out, _ = _arena(capsys, data_with_bots, "tournament", "resume", "cup", "--no-progress")
    assert status == 0 and "crosstable" in out
    assert out.startswith("cup is already finished: nothing left to play\n")
    status, out, _ = _arena(capsys, data_with_bots, "leaderboard", "--json")
    assert [r["games"] for r in json.loads(out)] == [2, 2]  # nothing played twice
    status, out, _ = _arena(capsys, data_with_bots, "tournament", "list")
    assert status == 0 and "cup" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tournament", "create", "cup", "rnd", "grd"], "already exists"),
        (["tournament", "create", "new", "rnd", "ghost"], "no bot 'ghost'"),
        (["tournament", "resume", "ghost"], "no tournament 'ghost'\n"),
        (["tournament", "resume", "cup", "--concurrency", "0"], "--concurrency"),
        (["tournament", "status", "ghost"], "no tournament 'ghost'\n"),
        (["bot", "show", "ghost"], "no bot 'ghost'"),
        (["token", "create", "bad name"], "user name"),
    ],
    ids=["duplicate", "unknown-bot", "resume-unknown", "concurrency",
         "status-unknown", "show-unknown", "bad-user"],
)  # fmt: skip
def test_bad_requests_get_one_line_errors(
    data_with_bots: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    status, _, err = _arena(capsys, data_with_bots, *args)
    bad_flag = "--concurrency" in args or "token" in args  # refused before anything: exit 2
    assert status == (2 if bad_flag else 1) and message in err and "Traceback" not in err


def test_bad_flag_values_exit_2_before_the_store_is_touched(
    data_with_bots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A flag whose value no tournament accepts is a usage error, like argparse's own."""
    before = _dump(data_with_bots)
    status, out, err = _arena(capsys, data_with_bots, "tournament", "create", "new", "rnd",
                              "grd", "--games", "0")  # fmt: skip
    assert status == 2 and out == "" and "games_per_match" in err and err.count("\n") == 1
    assert _dump(data_with_bots) == before


def _dump(data: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(data / "arena.db") as db:
        return list(db.iterdump())


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["tournament", "run", "new", "rnd", "grd", "--concurrency", "0"], 2, "--concurrency"),
        (["tournament", "run", "new", "rnd", "grd", "--format", "sprt", "--sprt", "gain",
          "--concurrency", "2000"], 2, "--concurrency must be from 1 to 1024, got 2000"),
        (["tournament", "run", "new", "rnd", "grd", "--format", "swiss", "--rounds", "2"], 1,
         "a Swiss tournament of 2 bots has at most 1 round(s)"),
        (["tournament", "create", "new", "rnd", "grd", "--rounds", "1"], 1,
         "Swiss tournaments only"),
        (["tournament", "run", "new", "rnd", "rnd"], 1, "at least two distinct bots"),
        (["tournament", "run", "rnd", "grd"], 2,
         "at least two bots after its name; got the name 'rnd' and 1 bot: grd"),
        (["tournament", "run", "n\u00e9w", "rnd", "grd"], 2, "tournament name"),
        (["tournament", "run", "new", "rnd", "grb"], 1,
         "no bot 'grb' in the store (did you mean grd?"),
    ],
    ids=["run-zero-concurrency", "sprt-2000-workers", "swiss-too-many-rounds",
         "round-robin-rounds", "same-bot-twice", "one-bot-after-the-name", "odd-name",
         "misspelt-bot"],
)  # fmt: skip
def test_refused_tournaments_store_nothing(
    data_with_bots: Path, capsys: pytest.CaptureFixture[str], args: list[str], status: int,
    message: str,
) -> None:  # fmt: skip
    """Flags refused before anything is looked up exit 2, like argparse's own; the rest 1."""
    before = _dump(data_with_bots)
    exit_status, out, err = _arena(capsys, data_with_bots, *args)
    assert exit_status == status and out == "" and err.count("\n") == 1, err
    assert message in err, err
    assert _dump(data_with_bots) == before


def test_token_create_prints_a_working_token(
    data_with_bots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.store import Store, check_token

    status, out, _ = _arena(capsys, data_with_bots, "token", "create", "dora")
    with Store.open(data_with_bots) as store:
        principal = check_token(store, out.strip())
    assert status == 0 and principal is not None and principal.user == "dora"


def _unusable_data_dir(tmp: Path, case: str) -> Path:
    """A data directory (or what stands in its place) that no command can use."""
    import sqlite3

    data = tmp / "data"
    if case == "a-file":
        data.write_text("not a directory\n")
        return data
    data.mkdir()
    if case == "corrupt":
        (data / "arena.db").write_bytes(b"\x00garbage" * 512)
        return data
    db = sqlite3.connect(data / "arena.db")
    db.execute("CREATE TABLE notes (text TEXT)")
    if case == "newer-schema":
        db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    return data


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("a-file", "is not a directory"),
        ("corrupt", "not a usable arena database"),
        ("foreign-sqlite", "not an arena database"),
        ("newer-schema", "schema v99 is newer than this arena"),
    ],
)
@pytest.mark.parametrize(
    "command", [["bot", "list"], ["leaderboard"], ["tournament", "list"]], ids=" ".join
)
def test_an_unusable_data_dir_gets_one_line_naming_it_and_is_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, message: str,
    command: list[str],
) -> None:  # fmt: skip
    data = _unusable_data_dir(tmp_path, case)
    before = data.read_bytes() if data.is_file() else (data / "arena.db").read_bytes()
    status, out, err = _arena(capsys, data, *command)
    assert status == 1 and out == "" and err.count("\n") == 1, err
    assert err.startswith("arena: ") and message in err and str(data) in err
    after = data.read_bytes() if data.is_file() else (data / "arena.db").read_bytes()
    assert after == before


def damaged_data_dir(tmp: Path) -> Path:
    """A data directory whose database opens (its header and schema are whole) but whose
    tables' pages are overwritten: the damage a failing disk or a copy cut short leaves."""
    data = tmp / "data"
    with Store.open(data) as store:
        create_token(store, "alice", "user")
    damage_tables(data)
    return data


@pytest.mark.parametrize(
    "command",
    [["bot", "list"], ["leaderboard"], ["tournament", "list"], ["token", "list"],
     ["token", "create", "bob"]],
    ids=" ".join,
)  # fmt: skip
def test_a_damaged_database_gets_one_line_naming_it_and_is_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    data = damaged_data_dir(tmp_path)
    before = (data / "arena.db").read_bytes()
    status, out, err = _arena(capsys, data, *command)
    assert status == 1 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"arena: {data / 'arena.db'}: the database is damaged"), err
    assert (data / "arena.db").read_bytes() == before


def test_a_read_only_data_dir_is_named_as_such(tmp_path: Path) -> None:
    import subprocess
    import sys

    from arena.store import Store

    data = tmp_path / "data"
    Store.open(data).close()
    before = _dump(data)
    arena = [sys.executable, "-m", "arena", "bot", "list", "--data-dir", str(data)]
    if os.geteuid() == 0:  # root writes through permissions: mount the directory read-only
        script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"'
        command = ["unshare", "--mount", "sh", "-c", script, "sh", str(data), *arena]
    else:
        data.chmod(0o555)
        command = arena
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    data.chmod(0o755)
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert done.stderr == f"arena: data directory {data} is not writable (read-only file system or permissions)\n"  # noqa: E501
    assert _dump(data) == before


def test_bot_show_lists_recent_failures_with_their_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = f"secret-{uuid.uuid4().hex}"
    data = tmp_path / "data"
    assert main(["bot", "add", str(_bot(tmp_path, "rnd")), "--data-dir", str(data)]) == 0
    leaky = _bot(tmp_path, "leaky", LEAKY_BOT.replace("SECRET", secret))
    with Store.open(data) as store:  # stored directly: it could never pass the smoke match
        add_bot_version(store, load_bot(leaky))
    args = ["tournament", "run", "cup", "rnd", "leaky", "--games", "2", "--no-progress",
            "--no-cpu-pinning"]  # fmt: skip
    assert main([*args, "--data-dir", str(data)]) == 0
    capsys.readouterr()
    status, out, _ = _arena(capsys, data, "bot", "show", "leaky", "--json")
    failures = json.loads(out)["failures"]
    assert status == 0 and len(failures) == 2
    assert all(f["status"] == "crash" and secret in f["stderr"] for f in failures)
    status, out, _ = _arena(capsys, data, "bot", "show", "leaky")
    assert status == 0 and out.count(f"my plans: {secret}") == 2
    status, out, _ = _arena(capsys, data, "bot", "show", "rnd", "--json")
    assert status == 0 and json.loads(out)["failures"] == [] and secret not in out


def _tokens(data: Path) -> list[str]:
    import sqlite3

    with contextlib.closing(sqlite3.connect(data / "arena.db")) as db:
        return [row[0] for row in db.execute("SELECT user FROM tokens ORDER BY user")]


# (case, command, whether another connection keeps the WAL index open, what stderr says).
# Closed: opening the store must grow arena.db-shm, which fails (SQLite says only "disk
# I/O error"); open elsewhere: the store opens and the write fails (SQLITE_FULL).
FULL_DISK = [
    ("open: bot list", ["bot", "list"], False, "has no space left (disk I/O error)"),
    ("open: token create", ["token", "create", "zoe"], False, "has no space left"),
    ("write: token create", ["token", "create", "zoe"], True,
     "has no space left (database or disk is full); nothing was stored"),
    ("write: ladder withdraw", ["ladder", "withdraw", "python_random"], True,
     "has no space left"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("command", "held_open", "message"), [case[1:] for case in FULL_DISK],
    ids=[case[0] for case in FULL_DISK],
)  # fmt: skip
def test_a_full_disk_gets_one_line_naming_it_and_the_store_keeps_what_it_held(
    disk: SmallDisk, capsys: pytest.CaptureFixture[str], command: list[str], held_open: bool,
    message: str,
) -> None:  # fmt: skip
    import sqlite3

    data = disk.root / "data"
    with Store.open(data) as store:
        create_token(store, "alice", "user")
        add_bot_version(store, load_bot(SAMPLE_RANDOM_BOT))
    with contextlib.ExitStack() as stack:
        if held_open:
            reader = stack.enter_context(contextlib.closing(sqlite3.connect(data / "arena.db")))
            reader.execute("SELECT 1 FROM tokens").fetchall()
        disk.fill()
        status, out, err = _arena(capsys, data, *command)
        disk.free()
    assert status == 1 and out == "" and err.count("\n") == 1, err
    assert err.startswith("arena: ") and str(data) in err and message in err, err
    assert _tokens(data) == ["alice"]
    control, out, _ = _arena(capsys, data, *command)  # the same command once there is space
    assert control == 0, out


@pytest.mark.parametrize(
    ("kind", "hint"),
    [
        ("ladder", "start it again with `arena serve --ladder --ladder-name lad`"),
        ("round-robin (control)", "resume it with `arena tournament resume lad`"),
        ("play", "a person's game at /play is played only by its table, which is gone: it"
         " stays as it is"),
    ],
)
def test_the_resume_hint_names_the_command_that_resumes_it(
    tmp_path: Path, kind: str, hint: str
) -> None:
    """A ladder's hint said `arena tournament resume`, which refuses a ladder."""
    from arena.commands.tournament import resume_hint
    from arena.store import TournamentFormat, get_tournament
    from arena.store.ladder import create_ladder
    from arena.tournament.policy.config import build_config
    from arena.tournament.policy.ladder_config import merge
    from arena.tournament.policy.rounds import create_tournament

    with Store.open(tmp_path / "data") as store:
        if kind == "ladder":
            config, settings = merge(None, {})
            row = get_tournament(store, create_ladder(store, "lad", config, settings.to_json()))
        elif kind == "play":  # its tournament (play-USER-ID) is only its table's to play
            from arena.store import (
                PlannedMatch,
                PlannedRound,
                latest_version_ids,
                register_remote_bot,
            )
            from arena.store.play import PlaySeat, insert_play_tournament

            add_bot_version(store, load_bot(SAMPLE_RANDOM_BOT))
            register_remote_bot(store, "human-ann", owner="ann")
            entrants = latest_version_ids(store, ["human-ann", "python_random"])
            row = insert_play_tournament(
                store, "play-ann-0123abcd", entrants, build_config(),
                [PlannedRound(1, (PlannedMatch("human-ann", "python_random", 1, 0),))],
                PlaySeat("ann", entrants["python_random"], 0, "unrated"),
            )  # fmt: skip
        else:
            add_bot_version(store, load_bot(SAMPLE_RANDOM_BOT))
            add_bot_version(store, load_bot(GREEDY))
            row = create_tournament(store, "lad", TournamentFormat.ROUND_ROBIN,
                                    ["python_random", "python_greedy"], build_config())  # fmt: skip
        assert resume_hint(row).endswith(hint)


@pytest.mark.parametrize(
    ("value", "status", "words"),
    [
        (str(2**64), 2, "argument --min-games: must be between 0 and 9223372036854775807"),
        ("-1", 2, "argument --min-games: must be between 0 and"),
        ("0", 0, "No bots yet"),  # control
        (str(2**63 - 1), 0, f"No bot version has {2**63 - 1} games or more."),  # control
    ],
    ids=["past-int64", "negative", "zero", "int64-max"],
)
def test_leaderboard_min_games_is_a_number_sqlite_can_take(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, status: int, words: str
) -> None:
    """Past 2**63 - 1 SQLite raises OverflowError, and a negative means nothing: both are
    refused in one line, never a traceback."""
    Store.open(tmp_path / "data").close()
    got, out, err = _arena(capsys, tmp_path / "data", "leaderboard", "--min-games", value)
    assert got == status and words in (out if status == 0 else err), (out, err)
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "command",
    [["audit", "cup"], ["bot", "list"], ["bot", "show", "x"], ["export", "--out", "OUT"],
     ["ladder", "withdraw", "x"], ["ladder", "return", "x"], ["ladder", "collusion"],
     ["leaderboard"], ["limits", "show"], ["token", "list"], ["token", "revoke", "1"],
     ["tournament", "resume", "cup"], ["tournament", "status", "cup"], ["tournament", "list"]],
    ids=" ".join,
)  # fmt: skip
@pytest.mark.parametrize("how", ["--data-dir", "KAHUNA_ARENA_DATA"])
def test_a_command_that_reads_the_store_refuses_a_directory_with_none_and_makes_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    command: list[str], how: str,
) -> None:  # fmt: skip
    """A mistyped data directory is named as one, not made into an empty store that
    answers "nothing here" (exit 0) and is left behind."""
    typo = tmp_path / "dta"
    argv = [str(tmp_path / "out") if word == "OUT" else word for word in command]
    if how == "--data-dir":
        argv += ["--data-dir", str(typo)]
    else:
        monkeypatch.setenv("KAHUNA_ARENA_DATA", str(typo))
    status, out, err = arena_in_process(capsys, *argv)
    assert status == 1 and out == "", (out, err)
    assert err == (f"arena: no arena data directory at {typo} ({how.replace('KAH', '$KAH')}:"
                   " it holds no arena.db); check the path, or store something first"
                   " (arena bot add)\n")  # fmt: skip
    assert not typo.exists() and not (tmp_path / "out").exists()
    Store.open(typo).close()  # control: with a store there, the command reads it
    status, out, err = arena_in_process(capsys, *argv)
    assert "no arena data directory" not in err


@pytest.mark.parametrize(
    "command",
    [["bot", "list"], ["leaderboard"], ["token", "create", "zoe"], ["tournament", "list"],
     ["ladder", "withdraw", "x"]],
    ids=" ".join,
)  # fmt: skip
@pytest.mark.parametrize("value", ["", " ", "given (control)"])
def test_an_empty_data_dir_flag_is_refused_not_read_as_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    command: list[str], value: str,
) -> None:  # fmt: skip
    """`--data-dir "$UNSET"` is refused: read as the default, ~/.local/share/kahuna-arena,
    it could be another's store. In this process (``arena.cli.main``), HOME the test's:
    the default is resolved from the environment at each call."""
    home = tmp_path / "home"
    monkeypatch.delenv("KAHUNA_ARENA_DATA", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    given = str(tmp_path / "data") if value.startswith("given") else value
    status, out, err = arena_in_process(capsys, *command, "--data-dir", given)
    assert not (home / ".local" / "share" / "kahuna-arena").exists()
    if given == value:
        assert status == 2 and out == "", err
        assert err.splitlines()[-1].endswith(
            "error: argument --data-dir: is empty (an unset variable?): give a directory"
        )
    elif command[:2] == ["token", "create"]:  # a command that stores makes the store
        assert status == 0 and (tmp_path / "data" / "arena.db").is_file(), err
    else:  # one that reads refuses a directory with no store, and makes none
        assert status == 1 and not (tmp_path / "data").exists()
        assert f"no arena data directory at {tmp_path / 'data'} (--data-dir: it holds no" in err
