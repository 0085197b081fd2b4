"""arena/resources.py: what the arena ships beside its code, found through importlib.resources."""

from __future__ import annotations

from pathlib import Path

import pytest

import arena
from arena.resources import (
    PROTO_MOUNT,
    PYTHON_BOT_MOUNTS,
    SDK_MOUNT,
    Mount,
    ResourceError,
    package_dir,
    sample_bot,
    sample_bots_dir,
)
from arena.server.smoke import SAMPLE_RANDOM_BOT

PACKAGE = Path(arena.__file__).parent


@pytest.mark.parametrize(
    ("mount", "module"),
    [(PROTO_MOUNT, "kahuna/v1/referee_pb2.py"), (SDK_MOUNT, "kahuna_bot/client.py")],
    ids=["generated-code", "sdk"],
)
def test_each_python_bot_mount_is_a_directory_of_the_package(mount: Mount, module: str) -> None:
    host = mount.host_dir()
    assert (host / module).is_file()
    assert host.is_relative_to(PACKAGE)  # inside the installed package, wherever that is
    assert mount.path_entry(sandboxed=True) == mount.inside
    assert mount.path_entry(sandboxed=False) == str(host)


def test_the_mounts_are_distinct_places_inside_the_sandbox() -> None:
    insides = [mount.inside for mount in PYTHON_BOT_MOUNTS]
    assert len(set(insides)) == len(insides) and all(i.startswith("/opt/kahuna/") for i in insides)


def test_a_mount_whose_path_entry_is_an_ancestor() -> None:
    """A bound package (``arena`` at .../engine/arena) is imported from its parent."""
    engine = Mount("arena", (), "/opt/kahuna/engine/arena", python_path="/opt/kahuna/engine")
    assert engine.path_entry(sandboxed=True) == "/opt/kahuna/engine"
    assert engine.path_entry(sandboxed=False) == str(PACKAGE.parent)


def test_the_sample_bots_ship_with_the_package() -> None:
    assert sample_bot("python_random") == SAMPLE_RANDOM_BOT
    assert (SAMPLE_RANDOM_BOT / "bot.toml").is_file()
    assert {"python_random", "python_greedy", "js_random", "sdk"} <= {
        path.name for path in sample_bots_dir().iterdir()
    }


def test_a_missing_resource_names_what_is_missing() -> None:
    with pytest.raises(ResourceError, match=r"arena/_data/sample_bots/no_such_bot is missing at "):
        sample_bot("no_such_bot")
    with pytest.raises(ResourceError, match=r"arena/web/no_such_dir is missing"):
        package_dir("arena.web", "no_such_dir")
