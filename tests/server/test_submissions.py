"""submit_bot's refusals name a file by its place in the archive the user sent, never by
where this server unpacked it (its temporary directory, named after the server's pid)."""

from __future__ import annotations

import io
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import store as st
from arena.bots.submission import SubmissionCheck
from arena.server.submissions import RefusalKind, SubmissionRefused, submit_bot

GOOD_TOML = 'name = "annbot"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'


def tar_gz(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, text in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(text.encode())
            archive.addfile(info, io.BytesIO(text.encode()))
    return buffer.getvalue()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[st.Store]:
    opened = st.Store.open(tmp_path / "data")
    try:
        yield opened
    finally:
        opened.close()


def _refusal(store: st.Store, archive: bytes, check: SubmissionCheck | None = None
             ) -> SubmissionRefused:  # fmt: skip
    smoke = None if check is None else (lambda directory: check)
    with pytest.raises(SubmissionRefused) as refused:
        submit_bot(store, st.Principal("ann", "user"), archive, "tar.gz", smoke)
    message = refused.value.message
    assert "kahuna-upload" not in message and tempfile.gettempdir() not in message, message
    return refused.value


@pytest.mark.parametrize(("files", "message"), [
    ({"bot.toml": GOOD_TOML + "build = 1\n", "bot.py": ""},
     "bot refused: bot.toml: unknown field 'build'"),
    ({"annbot/bot.toml": "name = ", "annbot/bot.py": ""},
     "bot refused: annbot/bot.toml: not valid TOML"),
    ({"bot.py": "print('no bot.toml')\n"},
     "bot refused: bot.toml: no bot.toml in the bot directory"),
    ({"annbot/bot.toml": 'name = "a b"\n'},
     "bot refused: annbot/bot.toml: field 'name' must be"),
], ids=["unknown-field", "bad-toml-in-a-folder", "no-bot-toml", "bad-name"])  # fmt: skip
def test_a_bad_bot_toml_is_named_by_its_place_in_the_archive(
    store: st.Store, files: dict[str, str], message: str
) -> None:
    refused = _refusal(store, tar_gz(files))
    assert refused.kind is RefusalKind.BAD_BOT
    assert refused.message.startswith(message), refused.message
    assert st.list_bots(store) == []


def test_a_failed_check_that_names_the_unpacked_files_names_them_in_the_archive(
    store: st.Store,
) -> None:
    """A check run beside its files (an unsandboxed server) words its failure with their
    paths on this machine: the refusal gives them as the user knows them."""
    seen: list[Path] = []

    def check(directory: Path) -> SubmissionCheck:
        seen.append(directory)
        return SubmissionCheck(refusal=f"crash: can't open file '{directory / 'bot.py'}'"
                                       f" in {directory}")  # fmt: skip

    with pytest.raises(SubmissionRefused) as refused:
        submit_bot(store, st.Principal("ann", "user"),
                   tar_gz({"annbot/bot.toml": GOOD_TOML, "annbot/bot.py": ""}), "tar.gz",
                   check)  # fmt: skip
    assert seen and str(seen[0]) != "annbot"  # the check had the server's path
    assert refused.value.kind is RefusalKind.FAILED_CHECK
    assert refused.value.message == (
        "bot refused: crash: can't open file 'annbot/bot.py' in annbot"
    )
