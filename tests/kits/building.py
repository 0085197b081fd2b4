"""Building the starter kits once per CI run: the one build cache.

Each kit's ``build.sh`` writes its artifact into the kit directory. A build is
keyed by the hash of the kit's sources (every file but the build outputs): a
stamp file in the kit cache (``KAHUNA_KIT_CACHE``, default
``~/.cache/kahuna-kits``, the directory the build scripts keep their tools and
compiler output in) records the hash of the last successful build of that
directory, so every later session of the run, on any pytest-xdist worker,
finds the kit built. An exclusive lock per kit directory makes the second
worker wait for the first's build. ``.ci/run`` builds all five here before the
tests (``python3 -m tests.kits.building``), outside pytest's per-test timeout,
with the copies the tests build of them: each kit rebuilt elsewhere from clean
sources (``rebuilt_elsewhere``), test_any_name's renamed copies and the
README's (``built_copy``).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE_BOTS = REPO / "sample_bots"
BUILD_TIMEOUT_S = 1800


@dataclass(frozen=True)
class Kit:
    name: str
    tools: tuple[str, ...]  # the commands the build needs on PATH
    outputs: tuple[str, ...]  # what build.sh writes into the directory (relative paths/prefixes)
    artifact: str  # the file that must exist after a build
    optional: bool = False  # skipped, not failed, where its tools are missing

    @property
    def directory(self) -> Path:
        return SAMPLE_BOTS / self.name


KITS = (
    Kit("go_random", ("go",), ("bot", "proto/kahuna/v1/game.pb.go",
                              "proto/kahuna/v1/referee.pb.go",
                              "proto/kahuna/v1/referee_grpc.pb.go"), "bot"),
    Kit("rust_random", ("cargo",), ("bot", "target/"), "bot"),
    Kit("java_random", ("mvn",), ("bot.jar", "native/", "target/"), "bot.jar"),
    Kit("cpp_random", ("g++", "protoc", "grpc_cpp_plugin", "pkg-config"), ("bot",), "bot",
        optional=True),
    Kit("ts_random", ("npm",), ("dist/", "src/gen/", "node_modules/"), "dist/bot.js",
        optional=True),
)  # fmt: skip
JS_KIT = Kit("js_random", ("npm",), ("node_modules/",), "node_modules/.package-lock.json",
             optional=True)  # fmt: skip
"""Its build is `npm ci` (.ci/run runs it for the kit itself); built here for its copies."""


def kit(name: str) -> Kit:
    return next(k for k in (*KITS, JS_KIT) if k.name == name)


def missing_tools(kit: Kit) -> list[str]:
    return [tool for tool in kit.tools if shutil.which(tool) is None]


def cache_dir() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kahuna-kits"
    path = Path(os.environ.get("KAHUNA_KIT_CACHE", default))
    path.mkdir(parents=True, exist_ok=True)
    return path


def _is_output(kit: Kit, relative: str) -> bool:
    return any(relative == out or (out.endswith("/") and relative.startswith(out))
               for out in kit.outputs)


def source_hash(kit: Kit, directory: Path | None = None) -> str:
    """sha256 over the kit's sources: every file but its build outputs."""
    root = directory or kit.directory
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        if _is_output(kit, relative):
            continue
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def run_build(directory: Path) -> float:
    """Run ``build.sh`` in ``directory``; its wall time in seconds."""
    started = time.monotonic()
    done = subprocess.run(
        ["bash", str(directory / "build.sh")], capture_output=True, text=True,
        timeout=BUILD_TIMEOUT_S, check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{directory}/build.sh failed ({done.returncode}):\n"
                           f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return time.monotonic() - started


def _stamp_name(kit: Kit, directory: Path) -> str:
    """Per kit and directory: two checkouts sharing the cache keep their own stamps."""
    where = hashlib.sha256(str(directory.resolve()).encode()).hexdigest()[:12]
    return f"{kit.name}-{where}"


def ensure_built(kit: Kit, directory: Path | None = None) -> float | None:
    """Build ``kit`` (or ``directory``, a copy of it) unless its artifact is there from
    a build of the same sources; the build's wall time in seconds, or None when it was
    already built."""
    missing = missing_tools(kit)
    if missing:
        raise RuntimeError(f"{kit.name}: {', '.join(missing)} not installed (.ci/run installs it)")
    root = directory or kit.directory
    cache = cache_dir()
    stamp = cache / f"{_stamp_name(kit, root)}.stamp"
    with (cache / f"{_stamp_name(kit, root)}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        wanted = source_hash(kit, root)
        built = stamp.read_text() if stamp.is_file() else ""
        if built == wanted and (root / kit.artifact).is_file():
            return None
        stamp.unlink(missing_ok=True)  # a failed build leaves no stamp behind
        seconds = run_build(root)
        stamp.write_text(wanted)
        return seconds


def built_copy(kit: Kit, fresh: Path) -> Path:
    """A built directory with the sources of ``fresh`` (a copy of ``kit``, e.g. made by
    `arena bot new`): the cache keeps one per kit, checkout and name, rebuilt only when
    the sources differ from the last build's, so a CI run builds each copy once."""
    checkout = hashlib.sha256(str(REPO.resolve()).encode()).hexdigest()[:12]
    kept = cache_dir() / "copies" / f"{kit.name}-{checkout}" / fresh.name
    with (cache_dir() / f"copy-{kit.name}-{checkout}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not kept.is_dir() or source_hash(kit, kept) != source_hash(kit, fresh):
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(fresh, kept, symlinks=True)
        ensure_built(kit, kept)
    return kept


def clean_copy(kit: Kit, destination: Path) -> None:
    """The kit's sources, without what its build writes, copied to ``destination``."""

    def ignore(directory: str, names: list[str]) -> set[str]:
        relative = Path(directory).relative_to(kit.directory)
        return {name for name in names
                if any((relative / name).as_posix() == out.rstrip("/") for out in kit.outputs)}

    shutil.copytree(kit.directory, destination, ignore=ignore)


def rebuilt_elsewhere(kit: Kit) -> Path:
    """The kit's sources copied clean (``clean_copy``) into a directory of the cache and
    built there by their build.sh: the rebuild elsewhere whose bot version must be the
    kit's. Kept per kit and checkout with a stamp of the sources it was built from; made
    again, from a clean copy, whenever the kit's sources differ, so a CI run builds it
    once (in .ci/run's build step)."""
    checkout = hashlib.sha256(str(REPO.resolve()).encode()).hexdigest()[:12]
    home = cache_dir() / "elsewhere" / f"{kit.name}-{checkout}"
    kept, stamp = home / kit.name, home / "built-from"
    with (cache_dir() / f"elsewhere-{kit.name}-{checkout}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wanted = source_hash(kit)
        built = stamp.read_text() if stamp.is_file() else ""
        if built == wanted and (kept / kit.artifact).is_file():
            return kept
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        clean_copy(kit, kept)
        if (kept / kit.artifact).exists():
            raise RuntimeError(f"the clean copy of {kit.name} holds its artifact {kit.artifact}")
        run_build(kept)
        stamp.write_text(wanted)
    return kept


ANY_NAME_CASES: list[tuple[str, Kit | None, str]] = [
    ("python", None, "9-Lives.py"),
    ("js", JS_KIT, "js-Bot.2"),
    ("ts", kit("ts_random"), "3d-Typed.bot"),
    ("go", kit("go_random"), "Gopher-2.0"),
    ("rust", kit("rust_random"), "2-Ferris.rs"),
    ("java", kit("java_random"), "Duke--1.x"),
    ("cpp", kit("cpp_random"), "c-plus.3"),
]
"""tests/kits/test_any_name.py's copies: (language as the user types it, the kit it
copies (None: nothing to build), a name unlike the kit's own)."""


README_KITS = {"cpp": "cpp_random", "ts": "ts_random", "typescript": "ts_random"}
"""The kits sample_bots/README.md's C++ and TypeScript sections start with `arena bot new
LANGUAGE NAME` and build (tests/kits/test_readme_cpp_ts.py), by the language typed."""
_BOT_NEW = re.compile(r"^\s*arena bot new (\S+) (\S+)\s*$", re.MULTILINE)


def readme_copies() -> list[tuple[str, Kit, str]]:
    """The README's `arena bot new` of a README_KITS kit: (language, kit, name)."""
    text = (SAMPLE_BOTS / "README.md").read_text(encoding="utf-8")
    return [(language, kit(README_KITS[language]), name)
            for language, name in _BOT_NEW.findall(text) if language in README_KITS]  # fmt: skip


def built_in_place(kit: Kit, directory: Path) -> None:
    """What ``directory``'s build.sh writes into it (``directory`` a copy of ``kit``, as
    `arena bot new` made it), taken from ``built_copy``'s build of the same sources under
    the same name: one build per CI run, and reproducible (the kits' build.sh give the
    same bytes for the same sources)."""
    kept = built_copy(kit, directory)
    for output in (out.rstrip("/") for out in kit.outputs):
        source, target = kept / output, directory / output
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
        elif source.is_file():
            shutil.copy2(source, target)
    if not (directory / kit.artifact).is_file():
        raise RuntimeError(f"{directory}: no {kit.artifact} after its build")


def run_arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`arena ARGS...` of this checkout run in ``cwd``, as a user would."""
    python_path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=cwd,
        env={**os.environ, "PYTHONPATH": python_path}, capture_output=True, text=True,
        timeout=BUILD_TIMEOUT_S, check=False,
    )  # fmt: skip


def _build_copies() -> None:
    """Build test_any_name's and the README's copies into the cache (``built_copy``), as
    their tests do."""
    for language, copied, name in [*ANY_NAME_CASES, *readme_copies()]:
        if copied is None or (copied.optional and missing_tools(copied)):
            continue
        with tempfile.TemporaryDirectory(prefix="kahuna-kit-copy-") as tmp:
            made = run_arena("bot", "new", language, name, cwd=Path(tmp))
            if made.returncode != 0:
                raise RuntimeError(f"arena bot new {language} {name} failed:\n{made.stderr}")
            started = time.monotonic()
            built_copy(copied, Path(tmp) / name)
            print(f"kits: {name} (a {copied.name} copy) ready in"
                  f" {time.monotonic() - started:.0f} s", flush=True)  # fmt: skip


def main() -> int:
    """Build every kit, its rebuild elsewhere (test_kits.py) and test_any_name's and the
    README's copies of them now (.ci/run's build step):
    ``python3 -m tests.kits.building``."""
    for each in KITS:
        missing = missing_tools(each)
        if missing and each.optional:
            print(f"kits: {each.name} skipped: {', '.join(missing)} not installed", flush=True)
            continue
        seconds = ensure_built(each)
        done = "already built" if seconds is None else f"built in {seconds:.0f} s"
        print(f"kits: {each.name} {done}", flush=True)
        started = time.monotonic()
        rebuilt_elsewhere(each)
        print(f"kits: {each.name} rebuilt elsewhere, ready in"
              f" {time.monotonic() - started:.0f} s", flush=True)  # fmt: skip
    _build_copies()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
