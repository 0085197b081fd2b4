"""The files the arena needs at run time beside its code, found with importlib.resources.

They ship inside the package (``[tool.setuptools.package-data]`` in
pyproject.toml), so an installed wheel finds them exactly where a source
checkout does:

- ``arena/protocol/gen``: the generated protobuf code, which a Python bot
  imports as the top-level package ``kahuna.v1``;
- ``arena/_data/sample_bots``: a link to the repository's ``sample_bots/``
  (in a wheel, a copy of the parts the arena runs): the Python SDK
  ``kahuna_bot`` mounted into every Python bot's sandbox, the random bot of
  the smoke match, and the sample bots of ``arena demo``;
- ``arena/kahuna``: the rules engine, which the SDK is built on and a
  Python bot may import (``arena.kahuna``) to search.

``PYTHON_BOT_MOUNTS`` is what a Python bot finds on its ``PYTHONPATH``,
bound read-only into its sandbox: one line per directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

SAMPLE_BOTS = ("_data", "sample_bots")


class ResourceError(RuntimeError):
    """A file the arena ships with is missing: the installation is incomplete."""


def package_dir(package: str, *parts: str) -> Path:
    """The directory ``parts`` inside ``package``, as a path on disk (bind mounts need one)."""
    resource = files(package).joinpath(*parts)
    where = "/".join((package.replace(".", "/"), *parts))
    if not isinstance(resource, Path):
        raise ResourceError(f"{where} is inside a zip file, and the sandbox can only bind "
                            "directories: install kahuna-arena as files (pip install)")
    if not resource.is_dir():
        raise ResourceError(f"{where} is missing at {resource}: the installation is "
                            "incomplete (reinstall kahuna-arena)")  # fmt: skip
    return resource


def sample_bots_dir() -> Path:
    """The sample bots shipped with the arena (``sample_bots/`` of the repository)."""
    return package_dir("arena", *SAMPLE_BOTS)


def sample_bot(name: str) -> Path:
    """One sample bot's directory, e.g. ``python_random`` (the smoke-match opponent)."""
    return package_dir("arena", *SAMPLE_BOTS, name)


@dataclass(frozen=True)
class Mount:
    """A directory of the arena bound read-only into a bot's sandbox.

    ``inside`` is where the bot sees it; ``python_path`` the ``PYTHONPATH``
    entry it adds (``inside`` unless given, e.g. the parent of a bound package).
    """

    package: str
    parts: tuple[str, ...]
    inside: str
    python_path: str = ""

    def host_dir(self) -> Path:
        return package_dir(self.package, *self.parts)

    def path_entry(self, sandboxed: bool) -> str:
        """The ``PYTHONPATH`` entry, inside the sandbox or (unsandboxed) on the host."""
        if sandboxed:
            return self.python_path or self.inside
        host = self.host_dir()
        if self.python_path:  # the entry is an ancestor of the mount: the same one on the host
            return str(host.parents[len(Path(self.inside).relative_to(self.python_path).parts) - 1])
        return str(host)


PROTO_MOUNT = Mount("arena.protocol.gen", (), "/opt/kahuna/proto")  # import kahuna.v1
SDK_MOUNT = Mount("arena", (*SAMPLE_BOTS, "sdk", "python"), "/opt/kahuna/sdk")  # kahuna_bot
# the pure rules engine alone (it imports nothing outside itself): import arena.kahuna,
# ``arena`` being a namespace package around it inside the sandbox
ENGINE_MOUNT = Mount("arena.kahuna", (), "/opt/kahuna/engine/arena/kahuna", "/opt/kahuna/engine")
PYTHON_BOT_MOUNTS: tuple[Mount, ...] = (PROTO_MOUNT, SDK_MOUNT, ENGINE_MOUNT)
