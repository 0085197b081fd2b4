"""Every starter kit works for any bot name, and an unbuilt bot is refused before it plays.

For each of the seven kits, as a user would: `arena bot new KIT NAME` with a
name unlike the kit's own (a leading digit, dashes, a dot, capitals: names a
crate, package or module name may not take), then the refusal of the unbuilt
copy by `arena match` and `arena bot check` ("run ./build.sh first"; in this
process, through ``arena.cli.main`` as the command runs it), the copy's own
build.sh (built once per source hash: building.built_copy), a full `arena bot
check`, and a 2-game match against python_random with no failure status.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.cli import main
from arena.referee import BotStatus, load_bot

from .building import ANY_NAME_CASES, BUILD_TIMEOUT_S, Kit, built_copy, missing_tools, run_arena

REPO = Path(__file__).resolve().parents[2]
RANDOM_BOT = REPO / "sample_bots" / "python_random"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(BUILD_TIMEOUT_S + 600)]


# built ahead by .ci/run's build step, each as this test builds it
@pytest.mark.parametrize(
    ("language", "built_kit", "name"), ANY_NAME_CASES, ids=[c[0] for c in ANY_NAME_CASES]
)
def test_a_kit_copied_under_any_name_builds_checks_and_plays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    language: str, built_kit: Kit | None, name: str,
) -> None:  # fmt: skip
    if built_kit is not None and built_kit.optional and missing_tools(built_kit):
        pytest.skip(f"{built_kit.name} needs {', '.join(missing_tools(built_kit))}")
    created = run_arena("bot", "new", language, name, cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    fresh = tmp_path / name
    assert load_bot(fresh).name == name
    if built_kit is None:
        bot = fresh
    else:
        assert f"{name}/build.sh" in created.stdout, created.stdout
        monkeypatch.chdir(tmp_path)  # the refusals in this process: arena.cli.main
        for argv in (["match", name, str(RANDOM_BOT)], ["bot", "check", name]):
            status = main(argv)
            out, err = capsys.readouterr()
            assert status == 2, out + err
            assert f"{name} is not built" in err, err
            assert "run ./build.sh first" in err, err
        bot = built_copy(built_kit, fresh)

    checked = run_arena("bot", "check", str(bot), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    played = run_arena("match", str(bot), str(RANDOM_BOT), "--games", "2", "--json", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    report = json.loads(played.stdout)
    assert len(report["games"]) == 2
    for game in report["games"]:
        assert set(game["status"].values()) == {BotStatus.OK.value}, game
    assert set(report["score"]) == {name, "python_random"}
