"""The systemd unit docs/guide/operating.md gives: valid for systemd, stopping the server
alone (``KillMode=mixed``: under the default every process of the service gets the
SIGTERM with it) and giving it longer than its own waits on the way out before a SIGKILL."""

from __future__ import annotations

import configparser
import inspect
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from arena.cli import build_parser
from arena.commands import serve
from arena.commands.ladder import LadderThread
from arena.server import app
from arena.server.arena_service import ArenaService
from arena.web import server as web_server

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "operating.md"


def unit_text() -> str:
    """The one ``ini`` block of the guide that holds a ``[Service]`` section."""
    blocks = re.findall(r"^```ini\n(.*?)^```", GUIDE.read_text(), flags=re.M | re.S)
    units = [b for b in blocks if "[Service]" in b]
    assert len(units) == 1, f"{len(units)} systemd units in {GUIDE}"
    return units[0]


def service() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(unit_text())
    return parser["Service"]


def _seconds(value: str) -> float:
    """A systemd time span of the forms the guide may use: ``120``, ``120s``, ``2min``."""
    found = re.fullmatch(r"(\d+)\s*(s|sec|min|m)?", value.strip())
    assert found, f"TimeoutStopSec={value}: not a span this test reads"
    return float(found.group(1)) * (60 if found.group(2) in ("min", "m") else 1)


def _default(function: object, name: str) -> float:
    default = inspect.signature(function).parameters[name].default  # type: ignore[arg-type]
    assert isinstance(default, (int, float))
    return float(default)


def test_the_unit_stops_the_server_alone_and_waits_longer_than_it_does() -> None:
    unit = service()
    assert unit.get("KillMode", "control-group (the default)") == "mixed"
    waits = (
        _default(LadderThread.stop, "timeout_s")
        + _default(ArenaService.stop_tournaments, "timeout_s")
        + serve.API_STOP_GRACE_S
        + app.DRAIN_S
        + web_server.STOP_WAIT_S
    )
    assert _seconds(unit["TimeoutStopSec"]) > waits


def test_the_unit_keeps_its_bots_inside_it() -> None:
    """On cgroup v2 the bots' groups are made inside the unit's only when systemd
    delegated it (arena.sandbox.cgroups.v2_base)."""
    assert service().get("Delegate") == "yes"


def test_the_unit_runs_a_valid_arena_serve() -> None:
    command = shlex.split(service()["ExecStart"])
    assert Path(command[0]).name == "arena" and command[1] == "serve", command
    try:
        build_parser().parse_args(command[1:])
    except SystemExit as exit_:
        pytest.fail(f"`{' '.join(command)}` is not a valid arena command line ({exit_})")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_accepts_every_line_of_the_unit(tmp_path: Path) -> None:
    """``systemd-analyze verify`` warns about a line it ignores (a misspelt KillMode is
    ignored, leaving the default) and fails on a missing program: the unit's program is
    swapped for one that exists here, and any output fails."""
    text = re.sub(r"^ExecStart=\S+", f"ExecStart={shutil.which('true')}", unit_text(), flags=re.M)
    path = tmp_path / "kahuna-arena.service"
    path.write_text(text)
    done = subprocess.run(
        ["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and not (done.stdout + done.stderr).strip(), done.stderr
