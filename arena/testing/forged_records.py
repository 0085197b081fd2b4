"""A Ray node that forges the games it reports, for the tests of the driver's checks.

``node_env`` gives a test cluster's nodes (all of them: the cluster has one
environment) a ``sitecustomize`` that, on the one node whose bot cache is
``forger_cache`` only, patches the match worker as it is imported: every game
it reports then goes through ``forge`` with the mode read from ``mode_file`` at
that moment (so one cluster serves several tests). The node otherwise plays
as any node does: its bots, its sandbox, its Ray.

Modes, each a forgery a node operator could send:

- ``deal``: the deal's cards in another order (the game as played, on a deal
  its seed does not give);
- ``result``: the loser named the winner, in the report and the record alike;
- ``actions``: the record's last two actions dropped (and the count with them);
- ``drop``: no game reported at all (its job still says it is done);
- ``foreign``: each game reported as one of a match the task was not given (an id far past
  the tournament's own, so never one of the task's chain) instead;
- ``honest``: nothing changed.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from pathlib import Path
from types import ModuleType
from typing import Any

from arena.referee import GameReport

MODES = ("deal", "result", "actions", "drop", "foreign", "honest")
FORGER_ENV = "KAHUNA_TEST_FORGER_CACHE"
MODE_FILE_ENV = "KAHUNA_TEST_FORGE_MODE_FILE"

_SITECUSTOMIZE = '''\
import importlib.machinery
import os
import sys

_TARGET = "arena.tournament.execution.match_chain"


class _Forger:
    """Patches the match worker once it is imported (this node forges its games)."""

    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            from arena.testing.forged_records import install

            install(module)

        spec.loader.exec_module = exec_module
        return spec


_cache = os.environ.get("KAHUNA_RAY_CACHE")
if _cache and _cache == os.environ.get("{forger}"):
    sys.meta_path.insert(0, _Forger())
'''


def node_env(
    directory: Path, forger_cache: Path, mode_file: Path, pythonpath: str
) -> dict[str, str]:
    """The environment that makes the node with bot cache ``forger_cache`` forge its games
    (its ``sitecustomize`` written into ``directory``)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "sitecustomize.py").write_text(_SITECUSTOMIZE.replace("{forger}", FORGER_ENV))
    return {
        "PYTHONPATH": f"{directory}{os.pathsep}{pythonpath}",
        FORGER_ENV: str(forger_cache),
        MODE_FILE_ENV: str(mode_file),
    }


def install(match_chain: ModuleType) -> None:
    """Make ``match_chain``'s matches report each game through ``forge``."""
    hooks = match_chain.MatchHooks
    honest = hooks.on_game

    def on_game(self: Any, report: GameReport) -> None:
        mode = Path(os.environ[MODE_FILE_ENV]).read_text().strip()
        if mode == "foreign":
            # a match id no tournament here has: never one of the task's own chain
            self.put(match_chain.GameFinished(self.match_id + 1_000_000, report))
        elif mode != "drop":
            honest(self, forge(report, mode))

    hooks.on_game = on_game


def forge(report: GameReport, mode: str) -> GameReport:
    """``report`` forged as ``mode`` says (see the module docstring)."""
    record: dict[str, Any] = copy.deepcopy(report.record)
    if mode == "deal":
        record["deal"] = list(reversed(record["deal"]))
        return dataclasses.replace(report, record=record)
    if mode == "result":
        seats = report.bots_by_seat
        forged = seats[0] if report.winner != seats[0] else seats[1]
        record["match"]["winner"] = forged
        return dataclasses.replace(report, record=record, winner=forged)
    if mode == "actions":
        record["actions"] = record["actions"][:-2]
        return dataclasses.replace(report, record=record, actions=len(record["actions"]))
    if mode in ("honest", "drop", "foreign"):
        return report
    raise ValueError(f"no forgery {mode!r}: one of {', '.join(MODES)}")
