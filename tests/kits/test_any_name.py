"""Every starter kit works for any bot name, and an unbuilt bot is refused before it plays.

For each of the seven kits, as a user would: `arena bot new KIT NAME` with a
name unlike the kit's own (a leading digit, dashes, a dot, capitals: names a
crate, package or module name may not take), then the refusal of the unbuilt
copy by `arena match` and `arena bot check` ("run ./build.sh first"), the
copy's own build.sh (built once per source hash: building.built_copy), a
full `arena bot check`, and a 2-game match against python_random with no
failure status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.referee import BotStatus, load_bot

from .building import ANY_NAME_CASES, BUILD_TIMEOUT_S, Kit, built_copy, missing_tools

REPO = Path(__file__).resolve().parents[2]
RANDOM_BOT = REPO / "sample_bots" / "python_random"

CASES = ANY_NAME_CASES  # built ahead by .ci/run's build step, each as its test builds it

pytestmark = [pytest.mark.slow, pytest.mark.timeout(BUILD_TIMEOUT_S + 600)]


def _arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    python_path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": python_path},
                          capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)  # fmt: skip


@pytest.mark.parametrize(("language", "built_kit", "name"), CASES, ids=[c[0] for c in CASES])
def test_a_kit_copied_under_any_name_builds_checks_and_plays(
    tmp_path: Path, language: str, built_kit: Kit | None, name: str
) -> None:
    if built_kit is not None and built_kit.optional and missing_tools(built_kit):
        pytest.skip(f"{built_kit.name} needs {', '.join(missing_tools(built_kit))}")
    created = _arena("bot", "new", language, name, cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    fresh = tmp_path / name
    assert load_bot(fresh).name == name
    if built_kit is None:
        bot = fresh
    else:
        assert f"{name}/build.sh" in created.stdout, created.stdout
        for refused in (_arena("match", name, str(RANDOM_BOT), cwd=tmp_path),
                        _arena("bot", "check", name, cwd=tmp_path)):  # fmt: skip
            assert refused.returncode == 2, refused.stdout + refused.stderr
            assert f"{name} is not built" in refused.stderr, refused.stderr
            assert "run ./build.sh first" in refused.stderr, refused.stderr
        bot = built_copy(built_kit, fresh)

    checked = _arena("bot", "check", str(bot), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    played = _arena("match", str(bot), str(RANDOM_BOT), "--games", "2", "--json", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    report = json.loads(played.stdout)
    assert len(report["games"]) == 2
    for game in report["games"]:
        assert set(game["status"].values()) == {BotStatus.OK.value}, game
    assert set(report["score"]) == {name, "python_random"}
