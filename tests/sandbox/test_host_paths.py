"""What a bot can learn of the host's layout from /proc (issue 17, item 4)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arena.sandbox import SandboxLimits, launch_bot
from arena.sandbox.bwrap import ETC_FILES, runtime_trees

from .conftest import Harness

PROBE = """
import os
print("BEGIN-MOUNTINFO")
print(open("/proc/self/mountinfo").read(), end="")
print("END-MOUNTINFO")
for fd in (0, 1, 2):
    print(f"fd{fd}", os.readlink(f"/proc/self/fd/{fd}"))
print("cwd", os.getcwd())
"""


def test_output_descriptors_and_mounts_name_no_arena_data_path(
    harness: Harness, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data_dir = tmp_path_factory.mktemp("arena-data")  # where the referee keeps bot output
    output = data_dir / "bot0-1.stderr"
    bot = launch_bot(
        bot_dir=harness.bot_dir,
        command=["python3", "-c", PROBE, harness.marker],
        runtime="python",
        env={},
        socket_path=harness.socket_path,
        limits=SandboxLimits(),
        stderr_path=output,
    )
    harness.launched.append(bot)
    assert bot.wait(20) == 0, output.read_text()
    text = output.read_text()
    assert str(data_dir) not in text  # before: fd 1 and 2 named the output file
    lines = text.splitlines()
    links = dict(line.split(" ", 1) for line in lines[lines.index("END-MOUNTINFO") + 1 :])
    assert links["fd0"] == "/dev/null"
    assert links["fd1"].startswith("pipe:[") and links["fd2"] == links["fd1"]
    assert links["cwd"] == "/bot"
    # Bind mounts show their source's path within its filesystem (mountinfo's
    # 4th column): only these host paths may be there, nothing else of the host.
    mountinfo = lines[lines.index("BEGIN-MOUNTINFO") + 1 : lines.index("END-MOUNTINFO")]
    roots = {line.split()[3] for line in mountinfo}
    trees, _ = runtime_trees("python")
    allowed = {
        "/", "/usr", *ETC_FILES, str(harness.bot_dir.resolve()), str(harness.socket_path),
        *(str(tree) for tree in trees), str(Path(sys.base_prefix).resolve()),
    }
    neutral = {root for root in roots if root.startswith(("/bindfile", "/newroot"))}
    neutral |= {root for root in roots if root in ("/irq", "/bus", "/null", "/zero", "/full",
                                                   "/random", "/urandom", "/tty")}
    unexpected = roots - neutral - allowed - {str(Path(p).resolve()) for p in ETC_FILES}
    assert not unexpected, unexpected
