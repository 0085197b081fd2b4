"""arena/cli.py: the `arena` command's dispatch, as a user runs it (real processes)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import cli
from arena._loading import quit_now, quit_while_loading
from arena.store import Store
from arena.testing.interrupt import start_interruptible
from arena.testing.waiting import wait_until

pytestmark = pytest.mark.slow


def _interrupted_after(delay_s: float, data: Path) -> subprocess.CompletedProcess[str]:
    """`arena tournament list` of a store at ``data``, Ctrl-C'd ``delay_s`` after it was
    started."""
    Store.open(data).close()
    process = start_interruptible(
        [sys.executable, "-m", "arena", "tournament", "list", "--data-dir", str(data)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    time.sleep(delay_s)  # the user's Ctrl-C, at the moment swept
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


_BEFORE_THE_HANDLER = ("<frozen ", "arena/__main__.py")


def _before_arena(stderr: str) -> bool:
    """A KeyboardInterrupt in code that runs before ``arena/__main__.py`` reaches its
    ``try``: runpy finding the package and ``__main__.py``. One inside the package's
    import, ``arena._loading`` or the standard library modules it imports is the
    arena's to turn into one line."""
    lines = stderr.splitlines()
    files = [line.split('"')[1] for line in lines if line.strip().startswith('File "')]
    ours = all(any(mark in file for mark in _BEFORE_THE_HANDLER) for file in files)
    return stderr.rstrip().endswith("KeyboardInterrupt") and bool(files) and ours


def test_ctrl_c_while_the_commands_load_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """A Ctrl-C anywhere in the start-up imports (swept here, since they take a while on a
    loaded machine) is one line, not an import traceback. Before Python's own handler is
    set, the signal simply ends the process (-2), and inside the interpreter's `site`
    (before any of arena runs) Python reports a fatal error of its own; once the command
    has run, nothing is left to interrupt (0)."""
    outcomes = []
    for delay_s in (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0, 1.5):
        done = _interrupted_after(delay_s, tmp_path / "data")
        if done.stderr.startswith("Fatal Python error: init_") or _before_arena(done.stderr):
            continue  # the interpreter starting, or runpy finding arena/__main__.py
        assert "Traceback" not in done.stderr, (delay_s, done.stderr)
        assert done.returncode in (130, -signal.SIGINT, 0), (delay_s, done)
        if done.returncode == 130:
            assert done.stderr.endswith("arena: interrupted\n"), done.stderr
        outcomes.append(done.returncode)
    assert 130 in outcomes  # the sweep did land inside the start-up


_INTERRUPTED_IMPORT = """
import runpy, sys
raised = {"itself": KeyboardInterrupt(), "wrapped": RuntimeError("__set_name__")}
raised["wrapped"].__cause__ = KeyboardInterrupt()
raised["a bug"] = ImportError("a bug, not a Ctrl-C")
class Interrupting:  # the moment a Ctrl-C lands: as arena._loading is looked for
    def find_spec(self, name, path=None, target=None):
        if name == "arena._loading":
            raise raised[sys.argv[1]]
sys.meta_path.insert(0, Interrupting())
runpy.run_module("arena", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize(
    ("raised", "status", "said"),
    [
        ("itself", 130, "arena: interrupted\n"),
        ("wrapped", 130, "arena: interrupted\n"),
        ("a bug", 1, "ImportError: a bug, not a Ctrl-C"),
    ],
)
def test_a_ctrl_c_before_the_handler_is_set_is_one_line(
    raised: str, status: int, said: str
) -> None:
    """``python3 -m arena`` interrupted while it imports ``arena._loading`` (or the
    standard library modules that imports), as itself or wrapped by the import machinery:
    one line; any other error there is raised as it is."""
    done = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_IMPORT, raised],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == status, done
    if status == 130:
        assert done.stderr == said
    else:
        assert said in done.stderr and "arena: interrupted" not in done.stderr


_HELD_AT_EXIT = """
import atexit, pathlib, runpy, sys, time
marker = pathlib.Path(sys.argv.pop(1))
def held():
    marker.touch()
    time.sleep(60)
atexit.register(held)  # first registered, so it runs last: after logging's and gRPC's
runpy.run_module("arena", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_while_the_interpreter_exits_is_one_line_and_keeps_the_output(
    tmp_path: Path,
) -> None:
    """The command has returned and printed; a Ctrl-C that lands in the interpreter's
    shutdown (an atexit handler, held open here until the signal comes) ends the process
    with one line, not an "Exception ignored in atexit callback" traceback, and what the
    command printed is all there."""
    Store.open(tmp_path / "data").close()
    command = ["tournament", "list", "--data-dir", str(tmp_path / "data")]
    plain = subprocess.run([sys.executable, "-m", "arena", *command],
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    marker = tmp_path / "exiting"
    process = start_interruptible(
        [sys.executable, "-c", _HELD_AT_EXIT, str(marker), *command],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_until(lambda: marker.exists() or process.poll() is not None,
                   "the command to reach its atexit handlers", timeout_s=60)  # fmt: skip
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert (process.returncode, err) == (130, "arena: interrupted\n")
    assert out == plain.stdout


class _CtrlC:
    """A class attribute whose ``__set_name__`` meets a Ctrl-C, as a dataclass field can."""

    def __set_name__(self, owner: type, name: str) -> None:
        raise KeyboardInterrupt


def _class_made_during_a_ctrl_c(*_: object) -> None:
    class Made:
        attribute = _CtrlC()


def _broken_parser(*_: object) -> None:
    raise RuntimeError("a bug, not a Ctrl-C")


def test_a_ctrl_c_while_an_import_makes_a_class_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Python 3.11 wraps it in a RuntimeError; it is still the interruption, not a traceback."""
    monkeypatch.setattr(cli, "build_parser", _class_made_during_a_ctrl_c)
    assert cli.main(["tournament", "list"]) == 130
    assert capsys.readouterr().err == "arena: interrupted\n"


def test_an_error_that_no_ctrl_c_caused_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "build_parser", _broken_parser)
    with pytest.raises(RuntimeError, match="a bug, not a Ctrl-C"):
        cli.main(["tournament", "list"])



@pytest.fixture
def pythons_handler() -> Iterator[None]:
    """SIGINT with Python's own handler, as a process started in the foreground has it
    (one started in the background, ``cmd &`` in a script, inherits it ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("pythons_handler")
def test_loading_ends_at_a_ctrl_c_and_the_command_gets_pythons_handler_back() -> None:
    """While the modules load a Ctrl-C ends the process (``quit_now``); the command itself
    gets KeyboardInterrupt again, to stop its matches and store what it has."""
    undo = quit_while_loading()
    try:
        assert signal.getsignal(signal.SIGINT) is quit_now
    finally:
        undo()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _theirs(signum: int, frame: object) -> None:
    pass


@pytest.mark.parametrize("theirs", [_theirs, signal.SIG_IGN], ids=["a handler", "ignored"])
@pytest.mark.usefixtures("pythons_handler")
def test_a_handler_of_someone_elses_and_other_threads_are_left_alone(theirs: object) -> None:
    """Someone else's handler, or SIGINT ignored (``nohup``, a background job), stays."""
    signal.signal(signal.SIGINT, theirs)  # type: ignore[arg-type]
    quit_while_loading()()
    assert signal.getsignal(signal.SIGINT) is theirs
    signal.signal(signal.SIGINT, signal.default_int_handler)
    seen: list[object] = []
    thread = threading.Thread(target=lambda: seen.append(quit_while_loading()))
    thread.start()
    thread.join()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler and len(seen) == 1
