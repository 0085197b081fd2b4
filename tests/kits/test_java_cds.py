"""The class-data archive the arena builds for a Java bot version (arena/sandbox/javacds.py),
played with the real Java kit and the host's JDK.

What is proven: a training launch in the sandbox writes an archive, and later
launches map it; a missing, garbage, truncated or mismatched archive (another
jar) leaves the launch working as without one. The proof that an archive is
really given to the JVM, and really refused, is a copy of the kit whose
command says ``-Xshare:on`` instead of the kit's ``-Xshare:auto`` (its own
options come after the arena's): with it the JVM exits at once when it cannot map the
archive, so that copy passes with a good archive and fails with each broken
one (the control), while the kit as shipped passes with all of them.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from arena.conformance import SCENARIOS, check_bot, train_class_archive
from arena.conformance.training import ensure_class_archive, needs_class_archive
from arena.referee import load_bot
from arena.referee.types import BotSpec
from arena.sandbox import javacds, probe_host

from .building import kit
from .conftest import built

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("java") is None, reason="no JDK on this host"),
]
ONE_GAME = [s for s in SCENARIOS if s.name == "plain_seat0"]


@pytest.fixture(scope="module")
def kit_copies(tmp_path_factory: pytest.TempPathFactory) -> tuple[BotSpec, BotSpec]:
    """The built Java kit and a copy whose command insists on the archive (-Xshare:on),
    each with a shelf of its own; both trained once."""
    if probe_host().missing:
        pytest.skip(f"needs the full sandbox; host lacks {probe_host().missing}")
    shipped = built(kit("java_random"))
    root = tmp_path_factory.mktemp("javacds")
    root.chmod(0o755)
    strict_dir = root / "strict"
    shutil.copytree(shipped.directory, strict_dir, symlinks=True)  # mtimes kept
    toml = strict_dir / "bot.toml"
    text = toml.read_text()
    assert '"-Xshare:auto"' in text  # the kit's own; the last -Xshare wins
    toml.write_text(text.replace('"-Xshare:auto"', '"-Xshare:on"'))
    strict = load_bot(strict_dir)
    assert "-Xshare:on" in strict.command
    data = root / "data"
    specs = tuple(
        dataclasses.replace(spec, class_archives=javacds.shelf_dir(data, spec.name, spec.version))
        for spec in (shipped, strict)
    )
    for spec in specs:
        training = train_class_archive(spec)
        assert training.archive is not None, training.problem
        assert training.size_bytes is not None and training.size_bytes > 1_000_000
    return specs[0], specs[1]


def _archive(spec: BotSpec) -> Path:
    assert spec.class_archives is not None
    archive = javacds.usable_archive(spec.class_archives, spec.directory)
    assert archive is not None
    return archive


def _passes(spec: BotSpec) -> tuple[bool, str]:
    report = check_bot(spec, scenarios=ONE_GAME)
    return report.passed, report.text()


def test_training_writes_an_archive_that_later_launches_map(
    kit_copies: tuple[BotSpec, BotSpec],
) -> None:
    shipped, strict = kit_copies
    for spec in (shipped, strict):
        assert not needs_class_archive(spec)
        assert ensure_class_archive(spec) is None  # nothing to do: it is there
        passed, text = _passes(spec)
        assert passed, text  # the strict copy too: the JVM mapped the archive


def test_without_the_archive_the_strict_copy_fails_which_shows_it_was_used(
    kit_copies: tuple[BotSpec, BotSpec],
) -> None:
    _, strict = kit_copies
    passed, text = _passes(dataclasses.replace(strict, class_archives=None))
    assert passed, text  # no archive given at all: -Xshare:on maps the JDK's own
    archive = _archive(strict)
    kept = archive.read_bytes()
    try:
        archive.write_bytes(_broken(kept, "corrupt_body"))  # offered: its size and start
        passed, text = _passes(strict)
        assert not passed  # the control: an archive it cannot map is fatal under -Xshare:on
    finally:
        archive.write_bytes(kept)


def _broken(good: bytes, how: str) -> bytes:
    """Of the same length (a shorter file is never offered: see the next test)."""
    if how == "garbage":  # but for its first bytes (other files are not offered: below)
        return javacds.DYNAMIC_MAGIC + os.urandom(len(good) - len(javacds.DYNAMIC_MAGIC))
    if how == "corrupt_body":  # a good header, its regions' bytes changed
        middle = len(good) // 2
        return good[:middle] + bytes(b ^ 0x5A for b in good[middle : middle + 65536]) + (
            good[middle + 65536 :]
        )
    raise ValueError(how)


@pytest.mark.parametrize("how", ["garbage", "corrupt_body"])
def test_a_broken_archive_never_breaks_a_launch(
    kit_copies: tuple[BotSpec, BotSpec], how: str
) -> None:
    results: dict[Path, tuple[bool, str]] = {}
    for spec in kit_copies:
        archive = _archive(spec)
        kept = archive.read_bytes()
        try:
            archive.write_bytes(_broken(kept, how))
            assert _archive(spec) == archive  # offered: the JVM must refuse it itself
            results[spec.directory] = _passes(spec)
        finally:
            archive.write_bytes(kept)
    shipped, strict = kit_copies
    assert results[shipped.directory][0], results[shipped.directory][1]
    assert not results[strict.directory][0], "the JVM was given the broken archive (control)"


@pytest.mark.parametrize("how", ["truncated", "not_dynamic"])
def test_a_truncated_or_foreign_file_is_never_offered(
    kit_copies: tuple[BotSpec, BotSpec], how: str
) -> None:
    """JDK 17 checks a dynamic archive's length against its header only for a static
    one, so the arena does (the size is in the file's name); and a file that does not
    start as a dynamic archive would be taken for the base archive, leaving the JVM
    with none at all when refused."""
    shipped, _ = kit_copies
    assert shipped.class_archives is not None
    archive = _archive(shipped)
    kept = archive.read_bytes()
    try:
        archive.write_bytes(kept[: len(kept) // 2] if how == "truncated" else os.urandom(len(kept)))
        assert javacds.usable_archive(shipped.class_archives, shipped.directory) is None
        passed, text = _passes(shipped)
        assert passed, text
    finally:
        archive.write_bytes(kept)


def test_an_archive_of_another_jar_is_refused_by_the_jvm_and_harmless(
    kit_copies: tuple[BotSpec, BotSpec], tmp_path: Path
) -> None:
    """Planted under the key of a jar with another mtime (the arena's key would not
    offer it; the JVM's own class-path check refuses it all the same)."""
    results: dict[Path, tuple[bool, str]] = {}
    for spec in kit_copies:
        assert spec.class_archives is not None
        good = _archive(spec)
        moved = tmp_path / spec.directory.name
        shutil.copytree(spec.directory, moved, symlinks=True)
        jar = moved / "bot.jar"
        os.utime(jar, ns=(jar.stat().st_atime_ns, jar.stat().st_mtime_ns - 10**10))
        other = dataclasses.replace(spec, directory=moved)
        planted = javacds.archive_path(spec.class_archives, moved, good.stat().st_size)
        shutil.copyfile(good, planted)
        try:
            results[spec.directory] = _passes(other)
        finally:
            planted.unlink()
    shipped, strict = kit_copies
    assert results[shipped.directory][0], results[shipped.directory][1]
    assert not results[strict.directory][0], "the JVM checked the jar (control)"
