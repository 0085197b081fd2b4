"""How ``pytest -n`` shares the suite between its workers: whole files, the longest first.

xdist's default hands out runs of consecutive tests: a module's shared fixture
(a Ray cluster, a played tournament) can be set up on both workers, and a long
file reached last leaves the other worker idle at the end. Here every file is
one unit of work (xdist's own loadfile scheduler; files that share a session
fixture are one unit: ``SHARED``), and the units go out longest first, so the
last ones handed out are short. ``COSTLIEST`` lists the
longest files, longest first (the units of 12 s and more of a whole run at
``-n 4`` on 2 shared cores, as ``scripts/check`` runs it, timed per unit: Ray clusters,
kit builds, bots that time out, servers, browsers); every other file follows in
collection order. An explicit ``--dist`` other than ``load`` is
left to xdist.
"""

from __future__ import annotations

from typing import Any

import pytest

COSTLIEST = (
    "tests/tournament/test_ray_cluster.py",
    "tests/referee/test_broken_bots.py",
    "tests/referee/test_cheating_bot.py",
    "tests/kits/test_any_name.py",
    "tests/commands/test_match.py",
    "tests/web/test_play_browser.py",
    "tests/tournament/test_ray_security.py",
    "tests/referee/test_halves.py",
    "tests/tournament/test_ladder.py",
    "tests/commands/test_remote_cli.py",
    "tests/kits/test_java_cds.py",
    "tests/commands/test_demo.py",
    "tests/commands/test_store_commands.py",
    "tests/web/test_play.py",
    "tests/store/test_schema_v9.py",
    "tests/kits/test_kits.py",
    "tests/tournament/test_sprt_runner.py",
    "tests/kits/test_readme_cpp_ts.py",
    "tests/web/test_fit_and_play_browser.py",
    "tests/tournament/test_sprt.py",
    "tests/referee/test_observation_invariance.py",
    "tests/tournament/test_ray_tls.py",
    "tests/server/test_arena_service.py",
    "tests/commands/test_serve.py",
    "tests/tournament/test_match_chain.py",
    "tests/test_wheel.py",
    "tests/server/test_remote_bots.py",
    "tests/server/test_disk_full.py",
    "tests/commands/test_ray_nodes.py",
    "tests/test_install.py",
    "tests/web/test_live_browser.py",
    "tests/test_docs_site.py",
    "tests/tournament/test_ray_optional.py",
    "tests/tournament/test_ladder_schedule.py",
    "tests/web/test_browser.py",
    "tests/sample_bots/test_greedy_noise.py",
    "tests/conformance/test_check_bots.py",
    "tests/kahuna/test_spectate.py",
    "tests/tournament/test_audit.py",
    "tests/tournament/test_sprt_format.py",
    "tests/web/test_hardening.py",
    "tests/sample_bots/test_matches.py",
    "tests/server/test_watch_and_stop.py",
    "tests/tournament/test_rating_integrity.py",
)
"""The longest files, longest first."""

SHARED = {
    "tests/tournament/test_ray_node_faults.py": "tests/tournament/test_ray_cluster.py",
    "tests/tournament/test_runner.py": "tests/tournament/test_ray_cluster.py",
}
"""Files that share session fixtures (tests/tournament/conftest.py: one Ray cluster, the
local executor's reference games): each is part of the unit named here, so that one
worker makes the fixtures once."""

_RANK = {unit: rank for rank, unit in enumerate(COSTLIEST)}


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its file, or the unit its file shares."""
    path = nodeid.split("::", 1)[0]
    return SHARED.get(path, path)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker: the costliest units first, in COSTLIEST's order, the rest as
    collected (every worker sorts alike; the scheduler hands units out in this order)."""
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: _RANK.get(unit_of(item.nodeid), len(_RANK)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's loadfile scheduler, handing files out in collection order (sorted above)."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadFileScheduling

    class LongestFirst(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    config.option.loadscopereorder = False  # keep the order above, not tests-per-unit
    return LongestFirst(config, log)
