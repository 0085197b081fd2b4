"""The writable file a training launch gets, and the shelf of class-data archives
(arena/sandbox/javacds.py). The JVM's own side (an archive written, used, and a
missing, garbage, truncated or mismatched one ignored) is tests/kits/test_java_cds.py."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from arena.sandbox import SandboxConfigError, SandboxLimits, javacds

from .conftest import Harness

INSIDE = javacds.ARCHIVE_INSIDE


@pytest.mark.slow
def test_the_bot_writes_its_one_file_and_the_arena_takes_it(harness: Harness) -> None:
    bot, output = harness.launch(f"printf archived > {INSIDE}", writable_file=INSIDE)
    assert bot.wait(20) == 0, output.read_text()
    dest = harness.root / "shelf" / "x.jsa"
    assert bot.take_written(dest, max_bytes=1024) == len(b"archived")
    assert dest.read_bytes() == b"archived"
    assert dest.stat().st_mode & 0o777 == 0o644  # the bot's uid reads it when it is used
    bot.kill()


@pytest.mark.slow
def test_what_it_writes_is_bounded_by_its_file_size_limit(harness: Harness) -> None:
    script = f"head -c 3000000 /dev/zero > {INSIDE}; echo status=$?"
    bot, output = harness.launch(script, writable_file=INSIDE,
                                 limits=SandboxLimits(max_file_size_mb=1))  # fmt: skip
    bot.wait(20)
    dest = harness.root / "big.jsa"
    assert bot.take_written(dest, max_bytes=10 * 2**20) == 2**20  # cut at the limit
    assert bot.take_written(harness.root / "small.jsa", max_bytes=1000) is None  # over max
    assert "status=0" not in output.read_text()


@pytest.mark.slow
def test_only_that_file_is_writable_and_none_is_given_by_default(harness: Harness) -> None:
    script = (
        f"touch /run/kahuna/other 2>/dev/null && echo wrote-beside; "
        f"printf x > /bot/bot.txt 2>/dev/null && echo wrote-bot; "
        f"printf x > {INSIDE} 2>/dev/null && echo wrote-archive; echo done"
    )
    status, text = harness.run(script, writable_file=INSIDE)
    assert status == 0 and "done" in text
    assert "wrote-archive" in text  # the control: the same shell can write there
    assert "wrote-beside" not in text and "wrote-bot" not in text
    status, text = harness.run(script)
    assert "wrote-archive" not in text and "done" in text


@pytest.mark.slow
def test_nothing_is_taken_while_the_bot_runs_or_when_it_wrote_nothing(harness: Harness) -> None:
    bot, _ = harness.launch(f"sleep 30; printf late > {INSIDE}", writable_file=INSIDE)
    assert bot.take_written(harness.root / "early.jsa", max_bytes=100) is None
    bot.kill()
    idle, _ = harness.launch("true", writable_file=INSIDE)
    idle.wait(20)
    assert idle.take_written(harness.root / "none.jsa", max_bytes=100) is None
    assert not (harness.root / "none.jsa").exists()


@pytest.mark.slow
@pytest.mark.parametrize("inside", ["relative/x", "/bot/x", "/tmp/x", "/run/kahuna",
                                    "/run/kahuna/referee.sock"])  # fmt: skip
def test_a_writable_file_cannot_cover_the_sandbox(harness: Harness, inside: str) -> None:
    with pytest.raises(SandboxConfigError, match="writable file"):
        harness.launch("true", writable_file=inside)


def _bot_dir(tmp_path: Path) -> Path:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.jar").write_bytes(b"jar")
    return bot


def _fake_jdk(tmp_path: Path, version: str) -> Path:
    home = tmp_path / f"jdk-{version}"
    (home / "lib" / "server").mkdir(parents=True)
    (home / "release").write_text(f'JAVA_RUNTIME_VERSION="{version}"\n')
    (home / "lib" / "server" / "libjvm.so").write_bytes(b"jvm")
    return home


def test_the_key_follows_the_jdk_and_the_bot_files(tmp_path: Path) -> None:
    bot = _bot_dir(tmp_path)
    old, new = _fake_jdk(tmp_path, "17.0.15"), _fake_jdk(tmp_path, "17.0.16")
    key = javacds.archive_key(bot, old)
    assert javacds.archive_key(bot, old) == key
    assert javacds.archive_key(bot, new) != key  # another JDK build
    (old / "lib" / "server" / "libjvm.so").write_bytes(b"jvm, rebuilt")
    rebuilt_jdk = javacds.archive_key(bot, old)
    assert rebuilt_jdk != key
    jar = bot / "bot.jar"
    os.utime(jar, ns=(jar.stat().st_atime_ns, jar.stat().st_mtime_ns + 10**9))
    assert javacds.archive_key(bot, old) != rebuilt_jdk  # the JVM checks the jar's mtime too


def test_a_usable_archive_is_a_regular_file_of_the_size_its_name_says(tmp_path: Path) -> None:
    bot, shelf = _bot_dir(tmp_path), tmp_path / "shelf"
    assert javacds.usable_archive(shelf, bot) is None  # no shelf yet
    shelf.mkdir()
    archive = javacds.DYNAMIC_MAGIC + b"archive"
    path = javacds.archive_path(shelf, bot, len(archive))
    assert path.name == f"{javacds.archive_key(bot)}.{len(archive)}.jsa"
    path.write_bytes(b"garbage" + bytes(len(archive) - 7))  # not a dynamic archive's start
    assert javacds.usable_archive(shelf, bot) is None
    path.write_bytes(archive)
    os.utime(path, (1, 1))
    assert javacds.usable_archive(shelf, bot) == path
    assert path.stat().st_mtime > 1  # marked used, for the pruning
    path.write_bytes(archive[:-1])  # truncated: the JVM would map it and fault
    assert javacds.usable_archive(shelf, bot) is None
    path.unlink()
    empty = javacds.archive_path(shelf, bot, 0)
    empty.write_bytes(b"")
    assert javacds.usable_archive(shelf, bot) is None
    (tmp_path / "elsewhere").write_bytes(archive)
    path.symlink_to(tmp_path / "elsewhere")
    assert javacds.usable_archive(shelf, bot) is None
    (bot / "bot.jar").write_bytes(b"another jar")
    assert javacds.archive_path(shelf, bot, len(archive)) != path  # other files: another key


def test_one_archive_per_version_and_the_least_recently_used_pruned(tmp_path: Path) -> None:
    root = tmp_path / javacds.SHELVES_DIR_NAME
    shelves = [javacds.shelf_dir(tmp_path, "bot", f"v{n}") for n in range(3)]
    now = time.time()
    archives: list[Path] = []
    for age, shelf in enumerate(shelves):  # v0 used last ... v2 first
        shelf.mkdir(parents=True)
        archive = shelf / f"key.100{javacds.SUFFIX}"
        archive.write_bytes(b"x" * 100)
        os.utime(archive, (now - 100 * age, now - 100 * age))
        archives.append(archive)
    stale = shelves[0] / f"older-jdk.100{javacds.SUFFIX}"
    stale.write_bytes(b"x" * 100)
    half_done = shelves[0] / ".incoming-1234"
    half_done.write_bytes(b"x")
    javacds.keep_only(archives[0])
    assert not stale.exists() and not half_done.exists() and archives[0].exists()
    removed = javacds.prune(root, max_bytes=200)
    assert removed == [archives[2]]
    assert javacds.prune(root, max_bytes=200) == []
    javacds.remove_shelf(shelves[1])
    assert not shelves[1].exists()
