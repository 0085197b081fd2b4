"""A stored bot version's copy on disk, checked before it plays.

The copy (DATA_DIR/bots/NAME/VERSION) is the version: its files hash to the version's
name. A copy gone, unreadable, or changed on disk since it was stored is not the bot's
fault, so it is not played (each game would be its crash, rated as its loss, or
another program's games counted as this version's); a Ray node checks its own copy
the same way.
"""

from __future__ import annotations

from pathlib import Path

from arena.referee import content_hash
from arena.referee.botdir import REMOTE_RUNTIME
from arena.referee.types import BotSpec
from arena.store.db import StoreError


class MissingBotCopyError(StoreError):
    """A bot version's stored copy (DATA_DIR/bots/NAME/VERSION) is gone, unreadable, or no
    longer that version (its files hash to another: changed on disk since it was stored):
    not the bot's fault, so its games are not played (each would be its crash, rated as its
    loss, or another program's games counted as this version's). ``problem`` says which,
    after "the stored copy of NAME version VERSION"."""

    def __init__(
        self, bot: str, version: str, directory: Path, problem: str | None = None
    ) -> None:
        self.bot = bot
        self.version = version
        self.directory = directory
        self.problem = problem or f"is missing from {directory}"
        super().__init__(
            f"the stored copy of {bot} version {version} {self.problem}:"
            " restore the data directory's bots/ from a backup, then resume"
        )


def check_stored_copy(spec: BotSpec) -> None:
    """MissingBotCopyError unless ``spec``'s stored copy is there and hashes to its version
    (a remote bot has none): checked before each match, as a Ray node checks its copy."""
    if spec.runtime == REMOTE_RUNTIME:
        return
    if not (spec.directory / "bot.toml").is_file():
        raise MissingBotCopyError(spec.name, spec.version, spec.directory)
    try:
        found = content_hash(spec.directory)
    except OSError as error:
        raise MissingBotCopyError(
            spec.name, spec.version, spec.directory,
            f"in {spec.directory} cannot be read ({error.filename}: {error.strerror})",
        ) from None  # fmt: skip
    if found != spec.version:
        raise MissingBotCopyError(
            spec.name, spec.version, spec.directory,
            f"in {spec.directory} has changed since it was stored (its files hash to {found})",
        )  # fmt: skip
