"""A Python bot's interpreter starts without the host's ``.pth`` start-up hooks.

``site`` runs the ``import`` lines of every ``.pth`` file in the interpreter's site
directories at each start: host code (an editable install's finder into the arena's
source, a machine's certificate hook, setuptools' shim) that cost each sandboxed
launch ~20 ms of CPU here and is none of the bot's business. The sandbox masks them
with an empty file of its staging directory (docs/design/SANDBOX.md, "Python's start-up hooks").
"""

from __future__ import annotations

import site
from pathlib import Path

import pytest

from arena.sandbox.bwrap import SandboxFds, SandboxPlan, bwrap_argv, python_start_hooks
from arena.sandbox.limits import SandboxLimits

from .conftest import Harness, lines_of

FDS = SandboxFds(passwd=7, group=8, seccomp=9)


EMPTY = Path("/run/kahuna-arena/stage/1-00/empty")


def _plan(runtime: str, empty: Path | None = EMPTY) -> SandboxPlan:
    return SandboxPlan(
        bot_dir=Path("/srv/bots/a"), command=("python3", "bot.py"), runtime=runtime, env={},
        socket_path=Path("/run/arena/a.sock"), limits=SandboxLimits(), as_root=True,
        empty_file=empty,
    )  # fmt: skip


def _binds(argv: list[str]) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, word in enumerate(argv) if word == "--ro-bind"]


@pytest.mark.parametrize(("runtime", "masked"), [("python", True), ("native", False),
                                                 ("node", False)])  # fmt: skip
def test_each_pth_of_the_site_directories_is_masked_for_python_only(
    runtime: str, masked: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sites = [tmp_path / "site-a", tmp_path / "site-b", tmp_path / "absent"]
    for directory in sites[:2]:
        directory.mkdir()
    (sites[0] / "hook.pth").write_text("import os\n")
    (sites[0] / "module.py").write_text("")
    (sites[1] / "other.pth").write_text("/some/path\n")
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(d) for d in sites])
    hooks = [str(sites[0] / "hook.pth"), str(sites[1] / "other.pth")]
    assert python_start_hooks() == hooks
    binds = _binds(bwrap_argv(_plan(runtime), FDS))
    masks = [inside for source, inside in binds if source == str(EMPTY)]
    assert masks == (hooks if masked else [])
    assert str(EMPTY) not in bwrap_argv(_plan(runtime, empty=None), FDS)  # nothing to bind


def test_the_masks_come_after_the_interpreter_tree_they_cover(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "x.pth").write_text("import os\n")
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(tmp_path)])
    argv = bwrap_argv(_plan("python"), FDS)
    mask = argv.index(str(tmp_path / "x.pth"))
    assert argv[mask - 2 : mask] == ["--ro-bind", str(EMPTY)]
    assert argv.index("--tmpfs") < mask < argv.index("/bot")  # after the runtime trees


@pytest.mark.slow
def test_inside_the_sandbox_every_hook_reads_empty(harness: Harness) -> None:
    hooks = python_start_hooks()
    if not any(Path(hook).stat().st_size for hook in hooks):
        pytest.skip("this interpreter has no non-empty .pth file to mask")
    script = (
        "import sys\n"
        f"for hook in {hooks!r}:\n"
        "    print(hook, len(open(hook, 'rb').read()))\n"
        "print('editable finders', [f for f in sys.meta_path"
        " if getattr(f, '__module__', '').startswith('__editable__')])\n"
    )
    status, output = harness.run(script, lang="python")
    assert status == 0, output
    lines = lines_of(output)
    assert lines[:-1] == [f"{hook} 0" for hook in hooks]  # the host's are not empty
    assert lines[-1] == "editable finders []"
