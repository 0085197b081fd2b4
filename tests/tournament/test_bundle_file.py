"""A saved audit bundle read a part at a time: what the arena writes reads back part for
part and passes; a file that is no bundle (an archive, not UTF-8, a key twice, a part
over its limit, parts out of place, a cut file) is refused naming the problem and the
limit, exit 2, never a traceback; the parts are handed on before the rest is read."""

from __future__ import annotations

import codecs
import gzip
import io
import json
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena import store as st
from arena.cli import main
from arena.testing.demo_data import add_demo_bots, finished_round_robin, play_committed_games
from arena.tournament.policy import audit as audit_module
from arena.tournament.policy import bundle_file
from arena.tournament.policy.audit import audit_parts
from arena.tournament.policy.audit_bundle import bundle_parts, tournament_bundle
from arena.tournament.policy.bundle_file import BundleReadError, bundle_text, read_parts
from arena.tournament.policy.rounds import create_tournament


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("bundle")
    with st.Store.open(root / "data") as store:
        finished_round_robin(store, root / "bots", "saved", ("alpha", "beta", "gamma"),
                             st.TournamentConfig(games_per_match=2))  # fmt: skip
        return tournament_bundle(store, "saved")


def _text(bundle: dict[str, Any]) -> str:
    return "".join(bundle_text(audit_module._parts_of(bundle)))


def _parts(text: str | bytes) -> list[Any]:
    data = text.encode() if isinstance(text, str) else text
    return list(read_parts(io.BytesIO(data)))


def test_the_text_the_arena_writes_reads_back_part_for_part_and_passes(
    bundle: dict[str, Any],
) -> None:
    text = _text(bundle)
    assert json.loads(text) == bundle  # one JSON object, as VERIFY.md describes
    assert _parts(text) == list(audit_module._parts_of(bundle))
    assert _parts(json.dumps(bundle, indent=1)) == _parts(text)  # any layout
    assert _parts(codecs.BOM_UTF8 + text.encode()) == _parts(text)  # as some editors save it
    report = audit_parts(read_parts(io.BytesIO(text.encode())))
    assert report.ok and report.games == 6, report.problem


@pytest.mark.parametrize("window", [1, 2, 3, 5, 7, 64])
def test_a_window_may_end_anywhere_inside_a_number(
    window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is read a window at a time: one ending inside ``-12.5e-3`` (after ``-12``,
    ``-12.``, ``-12.5e`` or ``-12.5e-``) reads on, never two tokens or a refusal."""
    text = '{"x": -12.5e-3, "y": [1.25, 30, 4E+2], "z": 7.0, "matches": []}'
    whole = _parts(text)
    assert whole[0] == ("head", {"x": -12.5e-3, "y": [1.25, 30, 400.0], "z": 7.0})
    monkeypatch.setattr(bundle_file, "_READ_CHARS", window)
    assert _parts(text) == whole


def test_the_head_is_handed_on_before_the_games_are_read(bundle: dict[str, Any]) -> None:
    """Streaming: the first part comes while most of a long file is still unread."""
    text = _text(bundle).encode() + b" " * (8 << 20)
    stream = io.BytesIO(text)
    parts = read_parts(stream)
    assert next(parts)[0] == "head"
    assert stream.tell() < len(text) // 2


def _zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("../bundle.json", "{}")
    return out.getvalue()


def _tar() -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        info = tarfile.TarInfo("/etc/bundle.json")
        info.size = 2
        archive.addfile(info, io.BytesIO(b"{}"))
    return out.getvalue()


def _game_key_twice(text: str) -> str:
    return text.replace('"winner_seat": ', '"winner_seat": 0, "winner_seat": ', 1)


def _head_key_twice(text: str) -> str:
    return text.replace('"status": "finished"', '"status": "finished", "status": "created"', 1)


def _matches_not_last(text: str) -> str:
    return text.rstrip()[:-1] + ', "secret": null}'


def _played_not_last(text: str) -> str:
    return text.replace("\n]}", '\n], "late": 9}', 1)


@pytest.mark.parametrize(
    ("alter", "named"),
    [
        (lambda text: _zip(), "a zip archive, not an audit bundle"),
        (lambda text: _tar(), "a tar archive, not an audit bundle"),
        (lambda text: gzip.compress(text.encode()), "gzip-compressed, not an audit bundle"),
        (lambda text: b"\xff\xfe" + text.encode("utf-16-le"), "not UTF-8 text"),
        (lambda text: "", "empty: not an audit bundle"),
        (lambda text: "[1]", "not a JSON object"),
        (lambda text: "[" * 100_000, "JSON nested too deeply"),
        (lambda text: text[: len(text) // 2], "not JSON"),
        (lambda text: text + "{}", "more text after its end"),
        (lambda text: text.replace('"round": 1', '"round": 1' + "0" * 5000, 1),
         "not JSON (Exceeds the limit"),
        (lambda text: "\x00" * 100, "not JSON (Expecting value at character 0)"),
        (lambda text: text.replace("{", '{"note": NaN, ', 1), "not JSON (NaN is not JSON)"),
        (lambda text: text.replace('"round": 1', '"round": 1, "x": -Infinity', 1),
         "not JSON (-Infinity is not JSON)"),
        (lambda text: "{" + ",".join(f'"k{i}": 1' for i in range(1001)) + "}",
         "more than 1000 keys, the most the audit reads in one object (MAX_OBJECT_KEYS)"),
        (_game_key_twice, "key 'winner_seat' given twice"),
        (_head_key_twice, "key 'status' given twice"),
        (_matches_not_last, '"matches" must be its last key'),
        (_played_not_last, '"played" must be its last key'),
    ],
    ids=["zip", "tar", "gzip", "utf-16", "empty", "array", "deep", "cut", "trailing",
         "long-integer", "nul", "nan", "infinity", "many-keys",
         "game-key-twice", "head-key-twice", "matches-not-last", "played-not-last"],
)  # fmt: skip
def test_a_file_that_is_no_bundle_is_refused_naming_why(
    bundle: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    alter: Callable[[str], str | bytes], named: str,
) -> None:  # fmt: skip
    saved = tmp_path / "bundle.json"
    data = alter(_text(bundle))
    saved.write_bytes(data.encode() if isinstance(data, str) else data)
    assert main(["audit", "--bundle", str(saved)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"arena: --bundle {saved}: ") and named in err, err
    assert list(tmp_path.iterdir()) == [saved]  # nothing written beside it


@pytest.mark.parametrize(
    ("alter", "named"),
    [
        (lambda b, n: b["matches"][0]["played"][0].update(record="x" * n),
         "game 1 of match 1 (counting from 1) (from character"),
        (lambda b, n: b.update(parameters="x" * n), "the bundle's 'parameters' (from character"),
        (lambda b, n: b.update(x1="x" * (n // 2), x2="x" * (n // 2)),
         "the bundle without its matches"),
        (lambda b, n: b["matches"][1].update(x1="x" * (n // 2), x2="x" * (n // 2)),
         "match 2 (counting from 1) without its games"),
    ],
    ids=["game", "head-field", "head", "match"],
)  # fmt: skip
def test_a_part_over_its_limit_is_refused_naming_the_limit(
    bundle: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
    alter: Callable[[dict[str, Any], int], None], named: str,
) -> None:  # fmt: skip
    limit = 1000 + max(len(json.dumps(g)) for m in bundle["matches"] for g in m["played"])
    monkeypatch.setattr(bundle_file, "MAX_PART_CHARS", limit)
    assert _parts(_text(bundle))  # the bundle as it is: within the limit
    changed = json.loads(json.dumps(bundle))
    alter(changed, limit)
    with pytest.raises(BundleReadError) as refused:
        _parts(_text(changed))
    assert named in str(refused.value)
    assert (f"takes more than {limit} characters, the most the audit reads for one part"
            " (MAX_PART_CHARS)") in str(refused.value)


def test_the_store_is_read_a_match_at_a_time(
    bundle: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What GetAuditBundle sends from: a match's games are read when that match comes."""
    from arena.tournament.policy import audit_bundle

    with st.Store.open(tmp_path / "d") as store:
        add_demo_bots(store, tmp_path / "bots", ("alpha", "beta", "gamma"))
        tournament = create_tournament(store, "t", "round_robin", ["alpha", "beta", "gamma"],
                                       st.TournamentConfig(games_per_match=2))  # fmt: skip
        st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
        play_committed_games(store, tournament.id)
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        reads: list[int] = []
        real = audit_bundle._games
        monkeypatch.setattr(audit_bundle, "_games",
                            lambda db, match_id, versions: reads.append(match_id)
                            or real(db, match_id, versions))  # fmt: skip
        parts = bundle_parts(store, "t")
        assert next(parts)[0] == "head" and reads == []
        # a match's games are read as the match comes (its first game tells how it was
        # dealt: earlier_seed), and no other match's
        assert next(parts)[0] == "match" and len(reads) == 1
        assert next(parts)[0] == "game" and len(reads) == 1
        assert len(list(parts)) == 1 + (1 + 2) * 2 and len(reads) == 3
