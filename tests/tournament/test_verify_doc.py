"""docs/reference/VERIFY.md is enough to check a tournament: a checker written from it
alone (hashlib, hmac, json, trueskill and an engine to replay records) passes a
tournament the runner's derivation dealt, and catches a deal the commitment does not give."""

from __future__ import annotations

import hashlib
import hmac
import json
import math
from pathlib import Path
from typing import Any

import pytest
import trueskill

from arena import store as st
from arena.kahuna import parse_record, replay
from arena.store.remote import register_remote_bot
from arena.testing.demo_data import add_demo_bots, play_committed_games
from arena.tournament.policy.audit import audit_bundle
from arena.tournament.policy.audit_bundle import tournament_bundle
from arena.tournament.policy.bundle_digest import canonical_json
from arena.tournament.policy.rounds import create_tournament

DOC = (Path(__file__).parents[2] / "docs" / "reference" / "VERIFY.md").read_text()
MASK = 2**64 - 1
GOLDEN = 0x9E3779B97F4A7C15
ISLANDS = ["ALOA", "BARI", "COCO", "DUDA", "ELAI", "FAAA",
           "GOLA", "HUNA", "IFFI", "JOJO", "KAHU", "LALE"]  # fmt: skip
LITERALS = (
    'b"kahuna-arena/seed-commitment/1\\n"', 'b"kahuna-arena/match/1\\n"', '"kahuna-deal/3:"',
    "0x9E3779B97F4A7C15", "0xBF58476D1CE4E5B9", "0x94D049BB133111EB", "mu = 25",
    "sigma = 25/3", "beta = 25/6", "tau = 25/300", "draw probability of 0.0006",
    'sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False',
    " ".join(f"{i} {i}" for i in ISLANDS),
)  # fmt: skip


class SplitMix:
    def __init__(self, state: int) -> None:
        self.state = state & MASK

    def next(self) -> int:
        self.state = (self.state + GOLDEN) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, bound: int) -> int:
        limit = 2**64 - (2**64 % bound)
        while (value := self.next()) >= limit:
            pass
        return value % bound


def stream(seed: int, purpose: int) -> SplitMix:
    return SplitMix(SplitMix(seed).next() ^ ((purpose * GOLDEN) & MASK))


def shuffle(cards: list[str], g: SplitMix) -> list[str]:
    for i in range(len(cards) - 1, 0, -1):
        j = g.below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def circle(names: list[str]) -> list[tuple[int, str, str]]:
    slots: list[str | None] = [*names, None] if len(names) % 2 else list(names)
    n, firsts, out = len(slots), dict.fromkeys(names, 0), []
    for r in range(n - 1):
        for k in range(n // 2):
            home, away = slots[k], slots[n - 1 - k]
            if home is None or away is None:
                continue
            if (firsts[away], r % 2) < (firsts[home], 1):
                home, away = away, home
            firsts[home] += 1
            out.append((r + 1, home, away))
        slots = [slots[0], slots[-1], *slots[1:-1]]
    return out


def check(bundle: dict[str, Any], noted: str) -> None:
    """The document's five checks; AssertionError at the first that fails."""
    secret = bytes.fromhex(bundle["secret"])
    text = bundle["parameters"].encode()
    assert hashlib.sha256(b"kahuna-arena/seed-commitment/1\n" + secret + text).hexdigest() == noted
    params = json.loads(text)
    names = [e[0] for e in params["entrants"]]
    games = params["config"]["games_per_match"]
    matches = bundle["matches"]
    assert sorted((m["round"], m["first"][0], m["second"][0]) for m in matches) == sorted(
        circle(names)
    )
    env = trueskill.TrueSkill(mu=25, sigma=25 / 3, beta=25 / 6, tau=25 / 300,
                              draw_probability=0.0006)  # fmt: skip
    afters: dict[tuple[int, str], list[float]] = {}
    played = sorted(((m, g) for m in matches for g in m["played"]), key=lambda x: x[1]["game_id"])
    for m in matches:
        assert m["games"] == games and sorted(g["game_index"] for g in m["played"]) == list(
            range(games)
        )
    fresh = params["config"].get("fresh_deals")
    for m, g in played:
        identity = json.dumps([m["round"], m["first"], m["second"]], separators=(",", ":"))
        material = hmac.new(secret, b"kahuna-arena/match/1\n" + identity.encode(),
                            hashlib.sha256).digest()  # fmt: skip
        record = json.loads(g["record"])
        i = g["game_index"]
        paired = record.get("match", {}).get("paired", True) is not False
        if fresh is not None:  # the committed rule, not the record's word
            rule = not {m["first"][0], m["second"][0]} & set(fresh)
            assert paired == m["paired"] == rule, f"match {m['match_id']}: pairing"
        k = i // 2 if paired else i
        digest = hmac.new(material, f"kahuna-deal/3:{k}".encode(), hashlib.sha256).digest()
        seed = int.from_bytes(digest[:8], "big") & (2**63 - 1)
        order = [m["first"], m["second"]]
        assert g["seats"] == (order if i % 2 == 0 else order[::-1])
        cards = [island for island in ISLANDS for _ in range(2)]
        assert record["deal"] == shuffle(cards, stream(seed, 0)), f"game {g['game_id']}: deal"
        for r, order in enumerate(record.get("reshuffles", []), start=2):
            assert order == shuffle(sorted(order), stream(seed, r))
        state = replay(parse_record(g["record"]))
        assert state.error is None and state.state.outcome is not None
        assert state.state.outcome.winner == g["winner_seat"]
        rating = g["rating"]
        for seat in (0, 1):
            source = rating["before_from"][seat]
            bot = g["seats"][seat][0]
            want = bundle["initial_rating"] if source is None else afters[(source, bot)]
            pairs = zip(want, rating["before"][seat], strict=True)
            assert all(math.isclose(x, y, abs_tol=1e-9) for x, y in pairs)
        a, b = (env.create_rating(*rating["before"][s]) for s in (0, 1))
        winner = g["winner_seat"]
        if winner == 1:
            new_b, new_a = trueskill.rate_1vs1(b, a, env=env)
        else:
            new_a, new_b = trueskill.rate_1vs1(a, b, drawn=winner is None, env=env)
        for seat, new in enumerate((new_a, new_b)):
            got = rating["after"][seat]
            assert math.isclose(new.mu, got[0], abs_tol=1e-9)
            assert math.isclose(new.sigma, got[1], abs_tol=1e-9)
            afters[(g["game_id"], g["seats"][seat][0])] = got


@pytest.fixture
def bundle(tmp_path: Path) -> tuple[dict[str, Any], str]:
    with st.Store.open(tmp_path / "d") as store:
        add_demo_bots(store, tmp_path / "bots", ("alpha", "beta", "gamma"))
        tournament = create_tournament(store, "doc", "round_robin", ["alpha", "beta", "gamma"],
                                       st.TournamentConfig(games_per_match=4))  # fmt: skip
        assert tournament.commitment is not None
        play_committed_games(store, tournament.id)
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        return json.loads(json.dumps(tournament_bundle(store, "doc"))), tournament.commitment


def test_the_document_states_every_constant_this_checker_uses() -> None:
    for literal in LITERALS:
        assert literal in " ".join(DOC.split()), literal


def test_a_checker_written_from_the_document_passes_a_played_tournament(
    bundle: tuple[dict[str, Any], str],
) -> None:
    check(*bundle)


def test_and_catches_a_deal_the_commitment_does_not_give(
    bundle: tuple[dict[str, Any], str],
) -> None:
    data, noted = bundle
    game = data["matches"][0]["played"][0]
    record = json.loads(game["record"])
    record["deal"] = record["deal"][::-1]
    game["record"] = json.dumps(record)
    with pytest.raises(AssertionError, match="deal"):
        check(data, noted)
    with pytest.raises(AssertionError):
        check(bundle[0], "0" * 64)


def test_and_holds_each_match_to_the_committed_pairing(tmp_path: Path) -> None:
    """A remote bot's matches deal afresh (committed ``fresh_deals``): the checker passes
    them, and fails one whose records claim paired deals on the deals pairing gives."""
    with st.Store.open(tmp_path / "d") as store:
        add_demo_bots(store, tmp_path / "bots", ("alpha", "beta"))
        register_remote_bot(store, "faraway", owner="rita")
        tournament = create_tournament(store, "doc", "round_robin", ["alpha", "beta", "faraway"],
                                       st.TournamentConfig(games_per_match=2))  # fmt: skip
        assert tournament.commitment is not None
        play_committed_games(store, tournament.id)
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        data = json.loads(json.dumps(tournament_bundle(store, "doc")))
    assert [m["paired"] for m in data["matches"]].count(False) == 2
    check(data, tournament.commitment)
    match = next(m for m in data["matches"] if m["paired"] is False)
    game = next(g for g in match["played"] if g["game_index"] == 1)
    record = json.loads(game["record"])
    record["match"] = {"paired": True, "deal_index": 0}
    game["record"] = json.dumps(record)
    with pytest.raises(AssertionError, match=f"match {match['match_id']}: pairing"):
        check(data, tournament.commitment)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}  # fmt: skip


def doc_number(value: float) -> str:
    """A float by the document's rule, its shortest digits found without ``repr``."""
    if value == 0:
        return "-0.0" if math.copysign(1, value) < 0 else "0.0"
    sign, value = ("-", -value) if value < 0 else ("", value)
    for places in range(17):
        text = f"{value:.{places}e}"
        if float(text) == value:
            break
    mantissa, exponent = text.split("e")
    digits, e = mantissa.replace(".", "").rstrip("0") or "0", int(exponent)
    if -4 <= e <= 15:
        whole = digits[: e + 1] if e >= 0 else "0"
        fraction = digits[e + 1 :] if e >= 0 else "0" * (-e - 1) + digits
        return f"{sign}{whole.ljust(e + 1, '0') if e >= 0 else whole}.{fraction or '0'}"
    point = f"{digits[0]}.{digits[1:]}" if len(digits) > 1 else digits
    return f"{sign}{point}e{'-' if e < 0 else '+'}{abs(e):02d}"


def doc_canonical(value: object) -> str:
    """The document's canonical JSON, written from its list, not with json.dumps."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return doc_number(value)
    if isinstance(value, str):
        return '"' + "".join(_ESCAPES.get(c, f"\\u{ord(c):04x}" if ord(c) < 0x20 else c)
                             for c in value) + '"'  # fmt: skip
    if isinstance(value, list):
        return "[" + ",".join(doc_canonical(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ",".join(f"{doc_canonical(k)}:{doc_canonical(value[k])}"
                          for k in sorted(value)) + "}"  # fmt: skip


def doc_digest(bundle: dict[str, Any]) -> str:
    lines = ["head " + doc_canonical({k: v for k, v in bundle.items() if k != "matches"})]
    for match in bundle["matches"]:
        lines.append("match " + doc_canonical({k: v for k, v in match.items() if k != "played"}))
        lines.extend("game " + doc_canonical(game) for game in match["played"])
    return hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest()


@pytest.mark.parametrize(
    "value",
    [25.0, 8.333333333333334, -0.0, 0.0, 1e-05, 0.0001, 1e16, 9999999999999998.0, 1.5e300,
     -2.5e-310, 0.1 + 0.2, 123456.789, 5e-324, 1.7976931348623157e308, 7.0e15, 1e15],
)  # fmt: skip
def test_the_documents_number_rule_is_the_digests(value: float) -> None:
    assert doc_number(value) == canonical_json(value).decode()


def test_a_digest_written_from_the_document_is_the_one_the_audit_prints(
    bundle: tuple[dict[str, Any], str],
) -> None:
    data, _ = bundle
    data["note"] = "caf\u00e9 \U0001f600 \x01 \" \\ /"  # text of every kind the rule names
    report = audit_bundle(data)
    assert report.digest == doc_digest(data)
    assert doc_canonical(data["note"]) == canonical_json(data["note"]).decode()
