"""The audit bundle's digest: its canonical JSON byte for byte (key order, text, numbers),
the same digest from every path a bundle takes (the store, the arena's stream of parts, a
saved file however it is laid out), a different one for any change an audit reads (a
record's one character included), and its place in every verdict."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena import store as st
from arena.commands.noted import digest_arg
from arena.testing.demo_data import add_demo_bots, finished_round_robin
from arena.testing.waiting import wait_until
from arena.tournament.policy import bundle_digest as bundle_digest_module
from arena.tournament.policy.audit import (
    AuditReport,
    against_digest,
    audit_bundle,
    audit_parts,
    audit_tournament,
)
from arena.tournament.policy.audit_bundle import (
    BundlePart,
    bundle_parts,
    tournament_bundle,
    whole_bundle,
)
from arena.tournament.policy.bundle_digest import (
    DigestError,
    FinishedDigests,
    bundle_digest,
    canonical_json,
    part_line,
)
from arena.tournament.policy.bundle_file import bundle_text, loads_once, read_parts
from arena.tournament.policy.rounds import create_tournament

BOTS = ("alpha", "beta", "gamma")


@pytest.mark.parametrize(
    ("value", "canonical"),
    [
        ({"b": 1, "a": 2, "B": 3}, b'{"B":3,"a":2,"b":1}'),  # code point order
        ({"z": {"y": [1, {"x": None, "w": True}]}}, b'{"z":{"y":[1,{"w":true,"x":null}]}}'),
        ({"\u00e9": 1, "e": 2, "f": 3}, '{"e":2,"f":3,"\u00e9":1}'.encode()),
        ("caf\u00e9 \U0001f600", '"caf\u00e9 \U0001f600"'.encode()),  # raw UTF-8, 2 and 4 bytes
        ('q"b\\s/', b'"q\\"b\\\\s/"'),  # only " and \ escaped; / as it is
        ("\n\r\t\b\f", b'"\\n\\r\\t\\b\\f"'),
        ("\x00\x1f", b'"\\u0000\\u001f"'),  # other controls: \u and 4 lowercase hex digits
        ("\x7f\u2028", "\"\x7f\u2028\"".encode()),  # not controls JSON escapes: raw
        (25, b"25"),
        (25.0, b"25.0"),  # a float keeps its point: 25 and 25.0 are two kinds
        (-0.0, b"-0.0"),
        (8.333333333333334, b"8.333333333333334"),  # shortest text that reads back
        (0.1 + 0.2, b"0.30000000000000004"),
        (1e-05, b"1e-05"),
        (0.0001, b"0.0001"),
        (1e16, b"1e+16"),
        (1234567890123456.0, b"1234567890123456.0"),
        (10**30, b"1000000000000000000000000000000"),  # an integer: every digit
        ([], b"[]"),
        ({}, b"{}"),
    ],
)
def test_the_canonical_json_is_byte_for_byte_as_verify_md_defines_it(
    value: object, canonical: bytes
) -> None:
    assert canonical_json(value) == canonical


@pytest.mark.parametrize(
    ("text", "same_as"),
    [
        ('{"a":25.0}', '{"a": 2.5e1}'),  # a float however written
        ('{"a":25.0}', '{"a":25.000000000000000001}'),  # the same double
        ('{"a":1e-05}', '{"a":0.00001}'),
        ('{"a":1}', '{ "a" : 1 }'),
        ('{"a":"\\u00e9"}', '{"a":"\u00e9"}'),  # an escape or the character itself
        ('{"a":1,"b":2}', '{"b":2,"a":1}'),
    ],
)
def test_texts_that_read_as_one_value_have_one_canonical_form(text: str, same_as: str) -> None:
    assert canonical_json(loads_once(text)) == canonical_json(loads_once(same_as))


@pytest.mark.parametrize(
    ("text", "other"),
    [('{"a":25}', '{"a":25.0}'),  # an integer and a float: read as two kinds
     ('{"a":0}', '{"a":false}'), ('{"a":null}', '{"a":"null"}'), ('{"a":1}', '{"a":[1]}')],
)  # fmt: skip
def test_values_of_two_kinds_have_two_canonical_forms(text: str, other: str) -> None:
    assert canonical_json(loads_once(text)) != canonical_json(loads_once(other))


@pytest.mark.parametrize(
    ("value", "named"),
    [("\ud800", "lone surrogate"), ({"a": ["x\udfff"]}, "lone surrogate"),
     (float("inf"), "not finite"), (float("nan"), "not finite"),
     (json.loads("1e400"), "not finite")],  # a reader's infinity from a finite-looking text
)  # fmt: skip
def test_a_value_without_a_canonical_form_raises_naming_why(value: object, named: str) -> None:
    with pytest.raises(DigestError, match=named):
        canonical_json(value)


def test_the_digest_hashes_each_part_as_a_line_kind_space_json() -> None:
    parts: list[BundlePart] = [("head", {"b": 1, "a": "\u00e9"}), ("match", {"m": 1}),
                               ("game", {"g": 2.0})]  # fmt: skip
    lines = b'head {"a":"\xc3\xa9","b":1}\nmatch {"m":1}\ngame {"g":2.0}\n'
    assert b"".join(part_line(k, p) for k, p in parts) == lines
    assert bundle_digest(iter(parts)) == hashlib.sha256(lines).hexdigest()
    # a game moved to another match is another bundle
    moved: list[BundlePart] = [parts[0], parts[1], ("match", {"m": 1}), parts[2]]
    assert bundle_digest(iter(moved)) != bundle_digest(iter(parts))


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished round robin whose games pass the audit; its data directory."""
    root = tmp_path_factory.mktemp("digest")
    data = root / "data"
    with st.Store.open(data) as store:
        config = st.TournamentConfig(games_per_match=2, seed=5)
        finished_round_robin(store, root / "bots", "digested", BOTS, config)
    return data


def _through_the_wire(parts: Iterator[BundlePart]) -> Iterator[BundlePart]:
    """The parts as GetAuditBundle sends them (json.dumps each) and the client reads them."""
    for kind, part in parts:
        yield kind, loads_once(json.dumps(part))


def _relaid(bundle: dict[str, Any]) -> bytes:
    """The bundle as another tool might save it: keys reversed, indented, non-ASCII raw,
    every float written with an exponent."""

    def reverse(value: Any) -> Any:
        if isinstance(value, dict):
            kept = [k for k in reversed(list(value)) if k not in ("matches", "played")]
            last = [k for k in ("matches", "played") if k in value]  # a saved bundle's rule
            return {key: reverse(value[key]) for key in kept + last}
        if isinstance(value, list):
            return [reverse(v) for v in value]
        return value

    text = json.dumps(reverse(bundle), indent=3, ensure_ascii=False)
    return text.encode()


def test_every_path_gives_a_finished_tournament_the_same_digest(finished: Path) -> None:
    with st.Store.open(finished) as store:
        tournament = st.get_tournament(store, "digested")
        from_store = audit_tournament(store, "digested")
        digests = FinishedDigests()
        shown = digests.of(store, tournament.id)
        bundle = tournament_bundle(store, "digested")
        wire = audit_parts(_through_the_wire(bundle_parts(store, "digested")))
        saved = "".join(bundle_text(bundle_parts(store, "digested"))).encode("ascii")
        again = digests.of(store, tournament.id)
    from_file = audit_parts(read_parts(io.BytesIO(saved)))
    relaid = audit_parts(read_parts(io.BytesIO(_relaid(bundle))))
    assert from_store.ok and wire.ok and from_file.ok and relaid.ok, from_store.problem
    assert from_store.digest is not None and len(from_store.digest) == 64
    assert {wire.digest, from_file.digest, relaid.digest, shown, again,
            audit_bundle(bundle).digest} == {from_store.digest}  # fmt: skip
    assert from_store.digest in from_store.text() and "compare it" in from_store.text()
    assert from_store.to_json()["digest"] == from_store.digest


def _edit_record(bundle: dict[str, Any]) -> None:
    game = bundle["matches"][0]["played"][0]
    game["record"] = game["record"].replace('"deal":', '"deal" :', 1)  # the same record, read


def _drop_a_game(bundle: dict[str, Any]) -> None:
    bundle["matches"][-1]["played"].pop()


def _extra_head_key(bundle: dict[str, Any]) -> None:
    bundle["note"] = "for alice"


def _integer_rating(bundle: dict[str, Any]) -> None:
    bundle["initial_rating"][0] = 25  # the same number to the audit, another kind


@pytest.mark.parametrize(
    "alter", [_edit_record, _drop_a_game, _extra_head_key, _integer_rating],
    ids=["a record's whitespace", "a game left out", "an extra key", "25 for 25.0"],
)  # fmt: skip
def test_any_change_to_what_an_audit_reads_changes_the_digest_pass_or_fail(
    finished: Path, alter: Callable[[dict[str, Any]], None]
) -> None:
    with st.Store.open(finished) as store:
        bundle = tournament_bundle(store, "digested")
    honest = audit_bundle(bundle)
    alter(bundle)
    changed = audit_bundle(bundle)
    assert changed.digest is not None and changed.digest != honest.digest
    # a failed audit stops early, and still gives the digest of the whole bundle
    assert changed.digest == bundle_digest(_parts(bundle))
    assert changed.digest in changed.text()


def _parts(bundle: dict[str, Any]) -> Iterator[BundlePart]:
    text = "".join(bundle_text(iter(_split(bundle))))
    return read_parts(io.BytesIO(text.encode()))


def _split(bundle: dict[str, Any]) -> list[BundlePart]:
    parts: list[BundlePart] = [("head", {k: v for k, v in bundle.items() if k != "matches"})]
    for match in bundle["matches"]:
        parts.append(("match", {k: v for k, v in match.items() if k != "played"}))
        parts.extend(("game", game) for game in match["played"])
    return parts


def test_a_bundle_without_a_canonical_form_fails_its_audit(finished: Path) -> None:
    with st.Store.open(finished) as store:
        bundle = tournament_bundle(store, "digested")
    assert whole_bundle(iter(_split(bundle))) == bundle
    bundle["note"] = "\udc80"  # read nowhere else: only the digest sees it
    report = audit_bundle(bundle)
    assert not report.ok and report.digest is None
    assert "no digest" in (report.problem or "") and "lone surrogate" in (report.problem or "")
    assert "the bundle has no digest" in report.text()


def test_an_unfinished_tournaments_digest_is_none_where_the_arena_shows_it(tmp_path: Path) -> None:
    with st.Store.open(tmp_path / "data") as store:
        add_demo_bots(store, tmp_path / "bots", BOTS[:2])
        tournament = create_tournament(store, "open", "round_robin", list(BOTS[:2]),
                                       st.TournamentConfig(games_per_match=2, seed=1))  # fmt: skip
        assert FinishedDigests().of(store, tournament.id) is None


def test_a_digest_still_being_computed_holds_no_caller_past_its_wait(
    finished: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long tournament's bundle takes a while to read: a listing shows no digest for it
    meanwhile, then the digest, computed once."""
    release, calls = threading.Event(), []

    def slow(parts: Iterator[BundlePart]) -> str:
        calls.append(1)
        assert release.wait(10)
        return bundle_digest(parts)

    monkeypatch.setattr(bundle_digest_module, "bundle_digest", slow)
    with st.Store.open(finished) as store:
        tournament = st.get_tournament(store, "digested")
        digests = FinishedDigests()
        assert digests.of_many(store, [tournament.id, tournament.id], wait_s=0.01) == {
            tournament.id: None}  # fmt: skip
        assert digests.of(store, tournament.id, wait_s=0) is None  # not queued twice
        release.set()
        shown = wait_until(lambda: digests.of(store, tournament.id, wait_s=0), "the digest")
        assert shown == audit_tournament(store, "digested").digest and calls == [1]


def _report(digest: str | None) -> AuditReport:
    return AuditReport("t", True, 2, "c" * 64, "s" * 64, checked=("fine",), digest=digest)


@pytest.mark.parametrize(
    ("given", "digest", "problem"),
    [(None, "a" * 64, None), ("a" * 64, "a" * 64, None),
     ("b" * 64, "a" * 64, f"the bundle's digest is not the {'b' * 64} expected"),
     ("b" * 64, None, f"the bundle's digest is not the {'b' * 64} expected")],
)  # fmt: skip
def test_an_expected_digest_fails_a_pass_unless_it_is_the_bundles(
    given: str | None, digest: str | None, problem: str | None
) -> None:
    held = against_digest(_report(digest), given)
    assert held.ok is (problem is None)
    assert problem is None or problem in (held.problem or "")
    shown = "the bundle has no digest" if digest is None else f"the bundle's digest is {digest}"
    assert held.text().count(shown) == 1  # the one it has, once, in the verdict


@pytest.mark.parametrize(
    ("given", "ok"),
    [("A" * 64, True), (" " + "0f" * 32 + "\n", True), ("a" * 63, False), ("a" * 65, False),
     ("g" * 64, False), ("sha256:" + "a" * 64, False), ("", False), ("x" * 500, False)],
)  # fmt: skip
def test_expect_digest_takes_64_hex_digits_and_names_anything_else(given: str, ok: bool) -> None:
    if ok:
        assert digest_arg(given) == given.strip().lower()
        return
    with pytest.raises(argparse.ArgumentTypeError, match="is not a bundle digest: give the 64"):
        digest_arg(given)
