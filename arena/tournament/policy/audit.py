"""Auditing a finished tournament from its public audit bundle alone.

At creation a tournament publishes ``commitment`` = SHA-256 of its deal secret
and its parameters (``arena.referee.seeds.seed_commitment``); once it is
finished the secret is revealed. ``audit_bundle`` checks a bundle
(``arena.tournament.policy.audit_bundle``: what any user can fetch) in this order and
stops at the first difference, which it names:

1. the revealed secret and the published parameters hash to the commitment;
2. the matches (and byes) are the ones the parameters schedule (round robin,
   gauntlet and SPRT from the entrants, an SPRT test stopping once it decides or
   at its cap; Swiss: each round paired again from the results before it), each
   of the configured number of games, every game stored once;
3. every game's bots sit as the match and its game index say, and its deal and
   reshuffles are the ones the secret derives for its match and deal index
   (``match_seed_material`` of the round and bots, then ``deal_seed``): no
   stored seed enters (but an earlier arena's, below); the deal index is the game
   index halved (paired deals) or the game index (fresh ones) as the committed
   parameters' ``fresh_deals`` say
   for that match, whatever its record claims (a tournament that committed none:
   as its records say, one way for all of a match's games, and the verdict says so);
   a match the bundle names as an earlier arena's (``earlier_seed``) by that arena's
   derivation, which the verdict counts;
4. every record replays legally with the engine, and the result it reaches
   (or, for a game cut short, the forfeit it records) is the stored result and
   the record's own; the stored statuses are the failures the record names;
5. every rating update is the TrueSkill update of that result applied to the
   ratings the two versions had before the game, each of which is the initial
   rating or the one the version's previous game here left (or, the version
   having played elsewhere since, a game this bundle cannot show: named).

Standings and crosstables are computed from the stored results at every read
(``arena.tournament.policy.results``), so once (4) holds they are the records' own.
docs/reference/VERIFY.md states the same steps for a checker written from the docs.

``audit_parts`` reads a bundle part by part (``audit_bundle.bundle_parts``): each
game's record is checked (3, 4) as it comes and dropped, its verdict kept to be given
in its turn, so a bundle of any length is audited keeping only each game's summary.
"""

from __future__ import annotations

import array
import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from arena.kahuna import (
    MalformedRecordError,
    Outcome,
    Record,
    deal_from_seed,
    outcome_to_json,
    record_from_json,
    replay,
)
from arena.kahuna.rng import reshuffle_from_seed
from arena.rating_scale import INITIAL_MU, INITIAL_SIGMA
from arena.referee.results import FORFEIT
from arena.referee.seeds import (
    COMMITMENT_PREFIX,
    SECRET_BYTES,
    MatchIdentity,
    deal_seed,
    earlier_deal_seed,
    match_seed_material,
    secret_from_seed,
)
from arena.store import Store, same_owner
from arena.store.bots import PERSON_PREFIX
from arena.store.models import SprtConfig, TournamentConfig
from arena.tournament.pairing.schedule import round_robin
from arena.tournament.pairing.swiss import SwissEntrant, pair_swiss_round
from arena.tournament.policy.audit_bundle import (
    BUNDLE_FORMAT,
    FORMAT_WITHOUT_PAIRING,
    FORMAT_WITHOUT_REASONS,
    MAX_BUNDLE_GAMES,
    MAX_BUNDLE_MATCHES,
    MAX_SUMMARY_BYTES,
    READABLE_FORMATS,
    BundlePart,
    bundle_parts,
)
from arena.tournament.policy.bundle_digest import BundleDigest
from arena.tournament.policy.bundle_file import loads_once
from arena.tournament.policy.config import max_swiss_rounds, sprt_params
from arena.tournament.policy.results import rate
from arena.tournament.policy.rounds import PLAY_PREFIX
from arena.tournament.policy.sprt_format import GAMES_PER_PAIR, decide

RATING_TOLERANCE = 1e-9
_SHOWN = {None: "a draw", 0: "seat 0 won", 1: "seat 1 won"}


@dataclass(frozen=True)
class AuditReport:
    """``ok`` with what was checked (``checked``), or the first difference (``problem``)."""

    tournament: str
    ok: bool
    games: int  # games checked before the verdict
    commitment: str | None
    revealed_secret: str | None  # hex; None while the tournament is not finished
    problem: str | None = None
    checked: tuple[str, ...] = field(default=())
    digest: str | None = None  # the bundle's (bundle_digest); None: it has none

    def text(self) -> str:
        if self.ok:
            return (f"audit of {self.tournament}: pass: " + "; ".join(self.checked)
                    + f"; {self._digest_text()}: compare it with other participants' (the same"
                    " tournament gives everyone the same digest; docs/reference/VERIFY.md)")
        return f"audit of {self.tournament}: FAIL: {self.problem} ({self._digest_text()})"

    def _digest_text(self) -> str:
        if self.digest is None:
            return "the bundle has no digest"
        return f"the bundle's digest is {self.digest}"

    def to_json(self) -> dict[str, object]:
        return {
            "tournament": self.tournament, "ok": self.ok, "games": self.games,
            "commitment": self.commitment, "revealed_seed": self.revealed_secret,
            "problem": self.problem, "checked": list(self.checked), "digest": self.digest,
        }  # fmt: skip


class _Mismatch(Exception):
    pass


def against_noted(report: AuditReport, published: object, noted: str | None) -> AuditReport:
    """``report``, failed when ``noted`` (the commitment a participant noted at creation;
    None: none given) is not the ``published`` one: a commitment first seen after the
    games proves nothing, since it could hash a secret chosen after them."""
    if noted is None or published == noted.lower():
        return report
    if published is None:  # a ladder, or a bundle that carries none
        return replace(report, ok=False, checked=(), problem=(
            f"the arena published no seed commitment for this tournament, so none matches"
            f" the {noted} you noted"))  # fmt: skip
    return replace(report, ok=False, checked=(), problem=(
        f"the published commitment is {published}, not the {noted} you noted"))  # fmt: skip


def against_digest(report: AuditReport, expected: str | None) -> AuditReport:
    """``report``, failed when the bundle's digest is not ``expected`` (one another
    participant's audit printed; None: none given): the arena sent the two of them
    different bundles, or they checked two runs of the tournament."""
    if expected is None or report.digest == expected:
        return report
    return replace(report, ok=False, checked=(), problem=(
        f"the bundle's digest is not the {expected} expected (--expect-digest): this is"
        " another bundle than the one that digest is of (the arena sent different bundles,"
        " or one of them was edited since)"))  # fmt: skip


def audit_tournament(store: Store, ref: int | str) -> AuditReport:
    """Audit tournament ``ref`` (id or name) of ``store``; NotFoundError when there is none."""
    return audit_parts(bundle_parts(store, ref))


def audit_bundle(bundle: Mapping[str, Any]) -> AuditReport:
    """Audit a tournament from its audit bundle (a JSON object, e.g. fetched from the arena)."""
    return audit_parts(_parts_of(bundle))


def _parts_of(bundle: Mapping[str, Any]) -> Iterator[BundlePart]:
    yield "head", {key: value for key, value in bundle.items() if key != "matches"}
    for match in bundle.get("matches", []):
        yield "match", {key: value for key, value in match.items() if key != "played"}
        for game in match["played"]:
            yield "game", game


def audit_parts(parts: Iterable[BundlePart]) -> AuditReport:
    """Audit a tournament from its audit bundle's parts (``bundle_parts``: the head, then
    each match and its games), read once, in order, and only as far as the verdict needs.
    What the parts' source raises (a file that is no bundle) is raised as it is."""
    progress = _Progress()
    digest = BundleDigest()
    parts = digest.through(parts)

    def report(problem: str | None, checked: tuple[str, ...] = ()) -> AuditReport:
        head = progress.head
        commitment, secret_hex = head.get("commitment"), head.get("secret")
        return AuditReport(
            str(head.get("tournament", "?")), problem is None, progress.games,
            commitment if isinstance(commitment, str) else None,
            secret_hex if isinstance(secret_hex, str) else None, problem, checked,
        )  # fmt: skip

    try:
        kind, head = next(parts, ("head", {}))
        if kind != "head" or not isinstance(head, dict):
            raise _Mismatch("the bundle does not start with its head")
        progress.head = head
        verdict = report(None, _audit(head, parts, progress))
    except _Mismatch as exc:
        verdict = report(str(exc))
    except RecursionError:
        verdict = report("the audit bundle is malformed (nested too deeply)")
    except _MALFORMED as exc:
        verdict = report(f"the audit bundle is malformed ({type(exc).__name__}: {exc})")
    whole = _digest_of_rest(digest, parts)
    if verdict.ok and digest.error is not None:
        return report(f"the audit bundle has no digest: {digest.error}")
    return replace(verdict, digest=whole)


def _digest_of_rest(digest: BundleDigest, parts: Iterator[BundlePart]) -> str | None:
    """The digest of the whole bundle, once the parts the verdict did not need are read
    too (a failed audit stops early; its digest covers the bundle all the same); None
    when the bundle has no canonical form or its rest cannot be read (the verdict stands)."""
    try:
        for _ in parts:
            pass
    except Exception:  # whatever the rest is, the verdict is given
        return None
    return None if digest.error is not None else digest.hexdigest()


@dataclass
class _Progress:
    games: int = 0
    head: dict[str, Any] = field(default_factory=dict)


_MALFORMED = (
    KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError,
    AssertionError, RecursionError,
)  # fmt: skip
_KEPT = ("game_id", "game_index", "seats", "winner_seat", "statuses", "rating")
"""What the audit keeps of a game once its record is checked."""
_ABSENT = object()


class _Summary:
    """What the audit keeps of a game once its record is checked, read as the bundle's
    game is (``game["seats"]``, ``game["rating"]["after"]``): its fields, lists as tuples
    (seats and statuses shared between the games that give the same), its record's
    ``paired`` flag and the verdict of its record's checks. A few hundred bytes a game,
    whatever its record's length."""

    __slots__ = (
        "after",
        "before",
        "before_from",
        "game_id",
        "game_index",
        "paired",
        "seats",
        "statuses",
        "verdict",
        "winner_seat",
    )  # fmt: skip

    def __init__(self, game: Mapping[str, Any], shared: dict[str, Any]) -> None:
        for key in ("game_id", "game_index", "winner_seat"):
            setattr(self, key, _frozen(game[key]) if key in game else _ABSENT)
        for key in ("seats", "statuses"):
            setattr(self, key, _shared(game[key], shared) if key in game else _ABSENT)
        rating = game.get("rating")
        for key in ("before", "before_from", "after"):
            present = isinstance(rating, Mapping) and key in rating
            setattr(self, key, _packed(rating[key]) if present else _ABSENT)  # type: ignore[index]
        self.paired: bool | None = None
        self.verdict: BaseException | None = None

    def __getitem__(self, key: str) -> Any:
        value = self if key == "rating" else getattr(self, key, _ABSENT)
        if value is _ABSENT:
            raise KeyError(key)
        if isinstance(value, array.array):  # two [mu, sigma]
            return ((value[0], value[1]), (value[2], value[3]))
        return value


def _packed(value: Any) -> Any:
    """Two ratings ([[mu, sigma], [mu, sigma]], numbers) as 4 doubles; anything else frozen."""
    if (isinstance(value, list) and len(value) == 2
            and all(isinstance(r, list) and len(r) == 2 for r in value)
            and all(type(x) in (int, float) for r in value for x in r)):  # fmt: skip
        return array.array("d", [float(x) for r in value for x in r])
    return _frozen(value)


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


_SHARED_VALUES = 4096


def _shared(value: Any, shared: dict[str, Any]) -> Any:
    """``value`` frozen, the one object kept for every game that gives an equal value
    (of the first ``_SHARED_VALUES`` values: a real bundle has a few, seats and statuses)."""
    key = json.dumps(value)
    if key in shared or len(shared) < _SHARED_VALUES:
        return shared.setdefault(key, _frozen(value))
    return _frozen(value)


def _read_matches(
    secret: bytes, config: TournamentConfig, parts: Iterator[BundlePart], reasons: bool,
    pairing_shown: bool = False,
) -> list[dict[str, Any]]:
    """The bundle's matches, each with its games' summaries (``_KEPT``), each game's
    record checked (``_check_game``) as it is read and its verdict (None, or what it
    raised) kept under "verdict" to be given in game id order."""
    matches: list[dict[str, Any]] = []
    games = 0
    shared: dict[str, Any] = {}
    for kind, part in parts:
        if kind == "match":
            if len(matches) == MAX_BUNDLE_MATCHES:
                raise _Mismatch(f"the bundle holds more than {MAX_BUNDLE_MATCHES} matches, the"
                                " most an audit reads (MAX_BUNDLE_MATCHES)")  # fmt: skip
            match = dict(part)
            _check_summary(match, f"match {str(match.get('match_id'))[:40]}")
            if pairing_shown:
                _check_shown_pairing(config, match)
            match["played"] = []
            matches.append(match)
        elif kind == "game" and matches:
            games += 1
            if games > MAX_BUNDLE_GAMES:
                raise _Mismatch(f"the bundle holds more than {MAX_BUNDLE_GAMES} games, the"
                                " most an audit reads (MAX_BUNDLE_GAMES)")  # fmt: skip
            _check_summary({key: part[key] for key in _KEPT if key in part},
                           f"game {str(part.get('game_id'))[:40]}")  # fmt: skip
            summary = _Summary(part, shared)
            summary.paired = _paired(part)
            try:
                _check_game(secret, config, matches[-1], part, reasons)
            except (_Mismatch, *_MALFORMED) as exc:
                summary.verdict = exc
            matches[-1]["played"].append(summary)
        else:
            raise _Mismatch(f"the bundle has a {kind} part where a match or game belongs")
    return matches


def _check_shown_pairing(config: TournamentConfig, match: Mapping[str, Any]) -> None:
    """A bundle's ``paired`` of ``match`` is what the committed rule says of it."""
    rule = config.deals_paired(str(match["first"][0]), str(match["second"][0]))
    if match.get("paired", _ABSENT) is not rule:
        raise _Mismatch(f"match {str(match.get('match_id'))[:40]}: the bundle says paired"
                        f" {json.dumps(match.get('paired'))[:20]}, but the committed parameters"
                        f" {_rule_says(rule)}")  # fmt: skip


def _rule_says(rule: bool | None) -> str:
    return {True: "pair its deals", False: "deal it afresh every game (fresh_deals)",
            None: "commit no rule (null)"}[rule]  # fmt: skip


def _check_summary(part: Mapping[str, Any], what: str) -> None:
    size = len(json.dumps(part))
    if size > MAX_SUMMARY_BYTES:
        raise _Mismatch(f"{what} takes {size} bytes of JSON without its"
                        f" {'games' if what.startswith('match') else 'record'}, more than"
                        f" the {MAX_SUMMARY_BYTES} an audit keeps (MAX_SUMMARY_BYTES)")  # fmt: skip
    _check_numbers(part, what)


_INTEGERS = ("match_id", "round", "games", "game_id", "game_index")
"""The fields of a match or a game that are JSON integers (docs/reference/VERIFY.md)."""


def _check_numbers(part: Mapping[str, Any], what: str) -> None:
    """The numbers of a match or a game are of the kind VERIFY.md gives them: ids, rounds,
    counts and indices integers (not 1.0, "1" or true), a winner 0, 1 or null, ratings
    finite numbers. This checker would read 0.5 as 0 and true as 1; another one reads
    them otherwise, and two checkers must not read two bundles from one file."""
    for key in _INTEGERS:
        if key in part and not _integer(part[key]):
            raise _Mismatch(f"{what}: {key} is {_shown(part[key])}, not an integer")
    winner = part.get("winner_seat")
    if winner is not None and not (_integer(winner) and winner in (0, 1)):
        raise _Mismatch(f"{what}: winner_seat is {_shown(winner)}, not 0, 1 or null")
    rating = part.get("rating")
    if not isinstance(rating, Mapping):
        return  # the game's check names what is missing
    for key in ("before", "after"):
        pairs = rating.get(key)
        for pair in pairs if isinstance(pairs, list) else ():
            for value in pair if isinstance(pair, list) else ():
                if not _finite(value):
                    raise _Mismatch(f"{what}: a rating {key} the game is {_shown(value)},"
                                    " not a finite number")  # fmt: skip
    sources = rating.get("before_from")
    for source in sources if isinstance(sources, list) else ():
        if source is not None and not _integer(source):
            raise _Mismatch(f"{what}: before_from gives {_shown(source)}, not a game id or null")


def _integer(value: object) -> bool:
    return type(value) is int


def _finite(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value)  # type: ignore[arg-type]


def _shown(value: object) -> str:
    return json.dumps(value)[:40]


def _paired(game: Mapping[str, Any]) -> bool | None:
    """What ``game``'s record says of its match's pairing (None: it cannot say)."""
    try:
        meta = json.loads(game["record"]).get("match")
    except (ValueError, AttributeError, RecursionError, KeyError, TypeError):
        return None  # the game's own check names it
    return meta.get("paired", True) is not False if isinstance(meta, dict) else True


def _audit(
    bundle: Mapping[str, Any], parts: Iterator[BundlePart], progress: _Progress
) -> tuple[str, ...]:
    if bundle.get("format") not in READABLE_FORMATS:
        raise _Mismatch(f"not an audit bundle of format {BUNDLE_FORMAT!r} (or"
                        f" {FORMAT_WITHOUT_PAIRING!r}, {FORMAT_WITHOUT_REASONS!r})")  # fmt: skip
    status, commitment, secret_hex = bundle["status"], bundle["commitment"], bundle["secret"]
    if status != "finished" or secret_hex is None:
        raise _Mismatch(
            f"the tournament is {status}: its seed is revealed only once it is"
            " finished, so it cannot be audited yet"
        )
    if commitment is None:
        raise _Mismatch(
            "the tournament published no seed commitment (it was created before the arena"
            " stored commitments), so its deals cannot be shown to be fixed in advance"
        )
    secret = bytes.fromhex(secret_hex)
    if len(secret) != SECRET_BYTES:
        raise _Mismatch(f"the revealed secret is {len(secret)} bytes, not {SECRET_BYTES}")
    parameters_text: str = bundle["parameters"]
    expected = hashlib.sha256(COMMITMENT_PREFIX + secret + parameters_text.encode()).hexdigest()
    if expected != commitment:
        raise _Mismatch(
            f"the revealed seed and the published parameters hash to {expected}, not to the"
            f" published commitment {commitment}"
        )
    try:
        parameters = loads_once(parameters_text)
    except ValueError as exc:
        if "given twice" not in str(exc):
            raise
        raise _Mismatch(f"the committed parameters give {exc}: checkers that keep the first"
                        " and ones that keep the last would audit two tournaments") from None
    if parameters["name"] != bundle["tournament"]:
        raise _Mismatch(
            f"the bundle is labelled {str(bundle['tournament'])[:80]!r}, but its commitment binds"
            f" the parameters of tournament {str(parameters['name'])[:80]!r}"
        )
    reasons = bundle["format"] != FORMAT_WITHOUT_REASONS
    config = TournamentConfig.from_json(parameters["config"])
    _check_fresh_deals(config, parameters)
    pairing_shown = bundle["format"] == BUNDLE_FORMAT
    matches = _read_matches(secret, config, parts, reasons, pairing_shown)
    byes = list(bundle.get("byes", []))
    for bye in byes:
        if not (isinstance(bye, list) and len(bye) == 2 and _integer(bye[0])
                and isinstance(bye[1], str)):  # fmt: skip
            raise _Mismatch(f"a bye is {_shown(bye)}, not [round, bot]: an integer and a name")
    schedule = _check_schedule(parameters, matches, byes)
    if not all(_finite(x) for x in bundle["initial_rating"]):
        raise _Mismatch(f"the initial rating {_shown(bundle['initial_rating'])} is not two"
                        " finite numbers")  # fmt: skip
    initial = (float(bundle["initial_rating"][0]), float(bundle["initial_rating"][1]))
    if not _close(initial, (INITIAL_MU, INITIAL_SIGMA)):
        raise _Mismatch(f"the initial rating {list(initial)} is not the arena's"
                        f" {[INITIAL_MU, INITIAL_SIGMA]} (mu = 25, sigma = 25/3)")  # fmt: skip
    rated = bundle.get("bots_rated", True)
    if not isinstance(rated, bool):
        raise _Mismatch(f"bots_rated must be true or false, not {rated!r}")
    person = any(str(e[0]).startswith(PERSON_PREFIX) for e in parameters["entrants"])
    if not rated and not (str(parameters["name"]).startswith(PLAY_PREFIX) and person):
        raise _Mismatch(
            f"bots_rated is false, but tournament {parameters['name']!r} is no person's game"
            f" at /play (named {PLAY_PREFIX}..., with an entrant {PERSON_PREFIX}USER): the"
            " games of any other tournament move their bots' ratings"
        )
    for m in matches if config.fresh_deals is None else ():  # else each game's rule's
        _check_one_pairing(m)
    games = sorted(((m, g) for m in matches for g in m["played"]),
                   key=lambda mg: int(mg[1]["game_id"]))  # fmt: skip
    pairs: dict[Any, Any] = {}  # each pair of versions kept once, not once a game
    chain = _RatingChain({int(g["game_id"]): pairs.setdefault(v, v)
                          for _, g in games for v in (_versions(g),)})  # fmt: skip
    if len(chain.played) != len(games):
        twice = sorted(i for i, n in Counter(int(g["game_id"]) for _, g in games).items() if n > 1)
        raise _Mismatch(f"game {twice[0]} is in the bundle more than once")
    one_owner = 0
    owned_matches: dict[tuple[str, str, str], None] = {}  # owner, first, second; in order
    for match, game in games:
        if game["verdict"] is not None:
            raise game["verdict"]
        owned = _one_owner(match)
        one_owner += owned and rated
        if owned and rated:
            owned_matches[(str(match["owners"][0]), str(match["first"][0]),
                           str(match["second"][0]))] = None  # fmt: skip
        _check_rating(game, initial, chain, rated and not owned, owned)
        progress.games += 1
    outside = chain.outside
    if parameters["format"] == "sprt":
        schedule += "; " + _check_sprt_stop(parameters, matches)
    checked = [
        f"the revealed secret and the published parameters hash to the commitment {commitment}",
        schedule,
        f"all {progress.games} games are stored, each with its bots in the seats its match"
        " and game index give, and with the deal and reshuffles the secret derives for its"
        " match and deal index" + _pairing_note(config, matches) + _earlier_note(matches),
        "every record replays legally to its stored result"
        + (" and reason" if reasons else " (a bundle of format 1: games' reasons not in it)"),
        ("every rating update is the TrueSkill update of its game's result, from the initial"
         if rated else "a person's game at /play: every version's rating is left as it was,"
         " from the initial")
        + " rating or the one the version's previous game in this tournament left"
        + _outside_note(outside)
        + (f"; {one_owner} games between two bots of one owner move no rating, as the"
           f" store's rule says: {_owned_note(list(owned_matches))}" if one_owner else ""),
    ]
    if secret == secret_from_seed(int(parameters["config"].get("seed", 0))):
        checked.append(
            "note: the secret is the one the published seed gives (created with --seed), so"
            " anyone who knew the seed could compute the deals in advance"
        )
    return tuple(checked)


def _check_fresh_deals(config: TournamentConfig, parameters: Mapping[str, Any]) -> None:
    """The committed ``fresh_deals`` name entrants, each once."""
    if config.fresh_deals is None:
        return
    names = {str(e[0]) for e in parameters["entrants"]}
    for name in config.fresh_deals:
        if name not in names:
            raise _Mismatch(f"the committed fresh_deals name {name[:60]!r}, not an entrant")
    if len(set(config.fresh_deals)) != len(config.fresh_deals):
        raise _Mismatch("the committed fresh_deals name an entrant more than once")


def _pairing_note(config: TournamentConfig, matches: list[dict[str, Any]]) -> str:
    """How the games' deal indices were checked: by the committed rule, or (none committed)
    by each match's records, which an auditor cannot hold to anything committed."""
    if config.fresh_deals is None:
        return ("; not checked: which matches pair their deals, since the tournament committed"
                " no rule for it (created before the arena committed one): each match's deals"
                " are paired or fresh as its records say, one way for all its games")
    fresh = sum(1 for m in matches
                if config.deals_paired(str(m["first"][0]), str(m["second"][0])) is False)
    return (f", paired (deal = game index halved) or fresh as the committed fresh_deals say:"
            f" {len(matches) - fresh} of the {len(matches)} matches paired, {fresh} fresh")


def _check_schedule(
    parameters: Mapping[str, Any], matches: list[Any], byes: list[Any]
) -> str:
    entrants = [(str(e[0]), str(e[1])) for e in parameters["entrants"]]
    versions = dict(entrants)
    config, kind = parameters["config"], parameters["format"]
    games = GAMES_PER_PAIR if kind == "sprt" else int(config["games_per_match"])
    seen = []
    for m in matches:
        where = f"match {m['match_id']} (round {m['round']})"
        for side in ("first", "second"):
            bot, version = m[side]
            if versions.get(bot) != version:
                raise _Mismatch(f"{where}: {bot} version {version} is not an entrant")
        if m["first"][0] == m["second"][0]:
            raise _Mismatch(f"{where}: {m['first'][0]} plays itself")
        if m["games"] != games:
            raise _Mismatch(f"{where}: {m['games']} games scheduled, the parameters say {games}")
        indices = sorted(int(g["game_index"]) for g in m["played"])
        if indices != list(range(games)):
            raise _Mismatch(
                f"{where}: stored games have indices {indices}, a finished match has"
                f" 0..{games - 1}"
            )
        seen.append((int(m["round"]), m["first"][0], m["second"][0]))
    names = [bot for bot, _ in entrants]
    want_byes: list[list[object]] = []
    if kind == "round_robin":
        circle = round_robin(names)
        want = [(r.number, p.first, p.second) for r in circle for p in r.pairings]
        want_byes = [[r.number, r.bye] for r in circle if r.bye is not None]
        what = f"a round robin of the {len(names)} entrants in their published order"
    elif kind == "gauntlet":
        want = [(n, names[0], names[n]) for n in range(1, len(names))]
        what = f"a gauntlet of {names[0]} against the other {len(names) - 1} entrants"
    elif kind == "sprt":
        want = [(n, names[0], names[1]) for n in range(1, len(seen) + 1)]
        what = f"an SPRT test's {len(seen)} pairs, {names[0]} (candidate) first in each"
    elif kind == "swiss":
        _check_swiss(seen)
        rounds = _check_swiss_pairings(names, config, games, matches, byes)
        return (
            f"the {len(seen)} matches are the {rounds} Swiss rounds that the standings before"
            f" each pair (arena.tournament.pairing.swiss), each of its {games} games stored"
        )
    else:
        raise _Mismatch(f"a {kind} is never finished, so it is not audited")
    if sorted(seen) != sorted(want):
        extra = sorted((Counter(seen) - Counter(want)).elements())
        missing = sorted((Counter(want) - Counter(seen)).elements())
        twice = sorted(m for m, n in Counter(seen).items() if n > 1)
        raise _Mismatch(
            f"the matches are not the schedule of {what}: (round, first, second)"
            f" {extra[:3] or 'none'} not in it"
            + (f" ({twice[:3]} more than once)" if twice else "")
            + f", {missing[:3] or 'none'} of it missing"
        )
    if sorted([int(n), str(bot)] for n, bot in byes) != want_byes:
        raise _Mismatch(f"the byes [round, bot] {byes} are not the {want_byes or 'none'} of"
                        f" {what}")  # fmt: skip
    return f"the {len(seen)} matches are the schedule of {what}, each of its {games} games stored"


def _check_sprt_stop(parameters: Mapping[str, Any], matches: list[Any]) -> str:
    """An SPRT test stops once a prefix of its pairs decides, or at its cap of pairs: one
    that stopped early, or went past its cap to find a decision, is not the test run."""
    sprt = SprtConfig.from_json(parameters["config"]["sprt"])
    candidate = str(parameters["entrants"][0][0])
    scores = []
    for m in sorted(matches, key=lambda m: int(m["round"])):
        scores.append(sum(0.5 if g["winner_seat"] is None
                          else float(g["seats"][g["winner_seat"]][0] == candidate)
                          for g in m["played"]))  # fmt: skip
    if len(scores) > sprt.max_pairs:
        raise _Mismatch(f"the SPRT test plays {len(scores)} pairs, past its cap of"
                        f" {sprt.max_pairs}")  # fmt: skip
    history, decided_at = decide(scores, sprt_params(sprt))
    if decided_at is None and len(scores) < sprt.max_pairs:
        last = f"{history[-1].llr:.3f}" if history else "0"
        raise _Mismatch(
            f"the SPRT test stops after {len(scores)} pairs, undecided (LLR {last}, bounds"
            f" {sprt_params(sprt).lower_bound:.3f} to {sprt_params(sprt).upper_bound:.3f})"
            f" and short of its cap of {sprt.max_pairs}"
        )
    return ("it stops at its cap" if decided_at is None
            else f"it stops once pair {decided_at} decides")  # fmt: skip


def _check_swiss(seen: list[tuple[int, str, str]]) -> None:
    met: set[frozenset[str]] = set()
    rounds: dict[int, set[str]] = {}
    for number, first, second in sorted(seen):
        playing = rounds.setdefault(number, set())
        if first in playing or second in playing:
            raise _Mismatch(f"round {number}: a bot plays two matches in it")
        playing |= {first, second}
        pair = frozenset((first, second))
        if pair in met:
            raise _Mismatch(f"round {number}: {first} and {second} meet a second time")
        met.add(pair)
    if sorted(rounds) != list(range(1, len(rounds) + 1)):
        raise _Mismatch(f"the rounds played are {sorted(rounds)}, not 1..{len(rounds)}")


def _check_one_pairing(match: Mapping[str, Any]) -> None:
    """A match pairs its deals or does not, for all its games: a record cannot pick for
    itself between the deal of its pair and a fresh one."""
    flags = {g["paired"] for g in match["played"]} - {None}
    if len(flags) > 1:
        raise _Mismatch(
            f"match {match['match_id']}: some records say its deals are paired, others not"
        )


def _check_swiss_pairings(
    names: list[str], config: Mapping[str, Any], games: int, matches: list[Any], byes: list[Any]
) -> int:
    """Pair every round again from the results before it, as the runner did; the rounds."""
    wanted = config.get("rounds") or math.ceil(math.log2(len(names))) + 1
    rounds = min(int(wanted), max_swiss_rounds(len(names)))
    bye_of = {int(number): str(bot) for number, bot in byes}
    by_round: dict[int, list[Any]] = {}
    for m in matches:
        by_round.setdefault(int(m["round"]), []).append(m)
    if sorted(set(by_round) | set(bye_of)) != list(range(1, rounds + 1)):
        raise _Mismatch(f"a Swiss tournament of {len(names)} entrants plays rounds 1..{rounds},"
                        f" these are {sorted(set(by_round) | set(bye_of))}")  # fmt: skip
    seed_rank = {bot: i for i, bot in enumerate(names)}
    points = dict.fromkeys(names, 0.0)
    opponents: dict[str, set[str]] = {bot: set() for bot in names}
    had_bye: set[str] = set()
    for number in range(1, rounds + 1):
        order = sorted(names, key=lambda b: (-points[b], seed_rank[b]))
        paired = pair_swiss_round([SwissEntrant(b, points[b], frozenset(opponents[b]),
                                                b in had_bye) for b in order])  # fmt: skip
        want = sorted((p.first, p.second) for p in paired.pairings)
        got = sorted((m["first"][0], m["second"][0]) for m in by_round.get(number, []))
        if want != got or paired.bye != bye_of.get(number):
            raise _Mismatch(
                f"round {number}: the standings before it pair {want} (bye {paired.bye}), the"
                f" stored round is {got} (bye {bye_of.get(number)})"
            )
        for m in by_round.get(number, []):
            first, second = m["first"][0], m["second"][0]
            opponents[first].add(second)
            opponents[second].add(first)
            for g in m["played"]:
                seats = [s[0] for s in g["seats"]]
                winner = g["winner_seat"]
                for seat, bot in enumerate(seats):
                    points[bot] += 0.5 if winner is None else float(winner == seat)
        if paired.bye is not None:
            had_bye.add(paired.bye)
            points[paired.bye] += games
    return rounds


def _check_game(
    secret: bytes, config: TournamentConfig, match: Mapping[str, Any], game: Mapping[str, Any],
    reasons: bool = True,
) -> None:
    index = int(game["game_index"])
    where = f"game {game['game_id']} (match {match['match_id']}, game index {index})"
    first, second = list(match["first"]), list(match["second"])
    seats = [first, second] if index % 2 == 0 else [second, first]
    if [list(s) for s in game["seats"]] != seats:
        raise _Mismatch(f"{where}: seats {game['seats']}, its match puts {seats} there")
    record = _read_record(where, game["record"])
    meta = record.extra.get("match")
    meta = meta if isinstance(meta, dict) else {}
    _check_rules(where, config, record, meta, index)
    named = meta.get("bots")
    if isinstance(named, list) and [[b.get("name"), b.get("version")] for b in named] != seats:
        raise _Mismatch(f"{where}: the record names other bots than the match's")
    claimed = meta.get("paired", True) is not False
    rule = config.deals_paired(str(first[0]), str(second[0]))
    if rule is not None and claimed != rule:
        raise _Mismatch(f"match {match['match_id']}: the committed parameters"
                        f" {_rule_says(rule)}, but the record of game {game['game_id']}"
                        f" (game index {index}) says its deals are"
                        f" {'paired' if claimed else 'fresh'}")  # fmt: skip
    paired = claimed if rule is None else rule
    deal_index = index // 2 if paired else index
    if meta.get("deal_index", deal_index) != deal_index:
        raise _Mismatch(
            f"{where}: the record says deal index {meta.get('deal_index')!r}, but"
            f" {'a paired' if paired else 'an unpaired'} match plays deal {deal_index} there"
        )
    identity = MatchIdentity(int(match["round"]), (first[0], first[1]), (second[0], second[1]))
    earlier = _earlier_seed(config, match)
    if earlier is None:
        seed = deal_seed(match_seed_material(secret, identity), deal_index)
    else:
        seed = earlier_deal_seed(secret, earlier, deal_index)
    if record.deal != deal_from_seed(seed):
        raise _Mismatch(f"{where}: the deal differs from the one the revealed seed derives for"
                        f" deal index {deal_index}"
                        + ("" if earlier is None else f" from the match's stored seed {earlier}"
                           " (the arena's earlier derivation)")
                        + ("" if rule is None else f" (the committed parameters"
                           f" {_rule_says(rule)})"))  # fmt: skip
    for k, order in enumerate(record.reshuffles):
        if reshuffle_from_seed(seed, k + 2, order) != order:
            raise _Mismatch(
                f"{where}: the reshuffle of round {k + 2} differs from the one the seed derives"
            )
    try:
        replayed = replay(record)
    except MalformedRecordError as exc:
        raise _Mismatch(f"{where}: the record does not replay: {exc}") from None
    if replayed.error is not None:
        raise _Mismatch(f"{where}: the record does not replay: {replayed.error.message()}")
    state = replayed.state
    stored = game["winner_seat"]
    if record.result is not None and record.result != state.outcome:
        raise _Mismatch(
            f"{where}: the record's own result {json.dumps(outcome_to_json(record.result))}"
            f" is not the one its actions reach, {json.dumps(outcome_to_json(state.outcome))}"
        )
    statuses = [str(s) for s in game["statuses"]]
    _check_statuses(where, statuses, meta, [str(s[0]) for s in seats])
    if state.is_finished:
        outcome = state.outcome
        assert outcome is not None
        winner = outcome.winner
        if any(s != "ok" for s in statuses):
            raise _Mismatch(f"{where}: the record plays the game to its end, but the stored"
                            f" statuses {statuses} say a bot failed in it")  # fmt: skip
    else:  # cut short: a forfeit, which the stored statuses and record must both say
        if all(s == "ok" for s in statuses):
            raise _Mismatch(
                f"{where}: the record stops before the game ends, but no bot failed in it"
            )
        winner = _forfeit_winner(where, meta, stored)
    if winner != stored:
        raise _Mismatch(
            f"{where}: the record gives {_SHOWN[winner]}, the stored result is"
            f" {_SHOWN.get(stored, repr(stored))}"
        )
    named_winner = meta.get("winner", False)  # the bot's name, None for a draw; False: absent
    if named_winner is not False and named_winner != (None if winner is None else seats[winner][0]):
        raise _Mismatch(f"{where}: the record names {named_winner!r} the winner, but"
                        f" {_SHOWN[winner]}")  # fmt: skip
    _check_reason(where, game, meta, state.outcome if state.is_finished else None, statuses,
                  reasons)  # fmt: skip


def _earlier_seed(config: TournamentConfig, match: Mapping[str, Any]) -> int | None:
    """The stored seed a match was dealt from by the arena's earlier derivation
    (``earlier_deal_seed``), as the bundle names it; None: dealt by the current one.
    Only a tournament that committed no ``fresh_deals`` rule can be an earlier arena's."""
    earlier = match.get("earlier_seed")
    if earlier is None:
        return None
    where = f"match {str(match.get('match_id'))[:40]}"
    if not _integer(earlier) or not 0 <= earlier < 2**63:
        raise _Mismatch(f"{where}: earlier_seed is {_shown(earlier)}, not a whole number from"
                        " 0 to 2**63 - 1")  # fmt: skip
    if config.fresh_deals is not None:
        raise _Mismatch(f"{where}: the bundle says it was dealt by the arena's earlier"
                        " derivation (earlier_seed), but its tournament committed who deals"
                        " afresh (fresh_deals), which only arenas of the current derivation"
                        " do")  # fmt: skip
    return int(earlier)


def _earlier_note(matches: list[dict[str, Any]]) -> str:
    earlier = sum(m.get("earlier_seed") is not None for m in matches)
    if not earlier:
        return ""
    return (f"; {earlier} of the {len(matches)} matches were dealt by the arena's earlier"
            " derivation, from the secret and a seed stored with each match (earlier_seed),"
            " which the commitment does not fix: their deals follow the revealed secret but"
            " are not shown to be fixed in advance")


def _read_record(where: str, text: object) -> Record:
    """The game's stored record, read as ``parse_record`` reads it but for a key given twice
    in one of its objects, refused as the bundle's own are: a checker that keeps the first
    and one that keeps the last would replay two different games."""
    malformed = f"{where}: the stored record is malformed"
    try:
        data = loads_once(text)  # type: ignore[arg-type]  # not text: TypeError names it
    except RecursionError:
        raise _Mismatch(f"{malformed}: not JSON: nested too deeply") from None
    except (ValueError, TypeError) as exc:
        if "given twice" in str(exc):
            raise _Mismatch(f"{where}: the stored record gives {exc}: checkers that keep the"
                            " first and ones that keep the last would replay two different"
                            " games") from None  # fmt: skip
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise _Mismatch(f"{malformed}: not JSON: {reason}") from None
    try:
        return record_from_json(data)
    except MalformedRecordError as exc:
        raise _Mismatch(f"{malformed}: {exc}") from None


def _check_reason(
    where: str, game: Mapping[str, Any], meta: Mapping[str, Any], outcome: Outcome | None,
    statuses: list[str], stored: bool,
) -> None:
    """Why the game ended (the stored ``reason``, when ``stored``, and the record's own
    ``match.reason`` when it has one) is how its replay ends: the rule that ended it, or
    for a game cut short a forfeit (or the failure that forfeited it)."""
    if outcome is not None:
        allowed = [str(outcome.termination)]
    else:
        allowed = [FORFEIT, *sorted({s for s in statuses if s != "ok"})]
    own = meta.get("reason", False)  # False: the record names none
    if own is not False and own not in allowed:
        raise _Mismatch(f"{where}: the record says it ended by {own!r}, its actions end it"
                        f" by {' or '.join(map(repr, allowed))}")  # fmt: skip
    if not stored:
        return
    reason = game.get("reason")
    if reason not in allowed or (own is not False and reason != own):
        why = repr(own) if own is not False else " or ".join(map(repr, allowed))
        raise _Mismatch(f"{where}: the stored reason {reason!r} is not why its record ends,"
                        f" {why}")  # fmt: skip


def _check_rules(
    where: str, config: TournamentConfig, record: Record, meta: Mapping[str, Any], index: int
) -> None:
    """The record is of a game the committed parameters describe: their variant, no
    handicap, their time control (when the record states one), and its own game index
    (when it states one). A game under other rules may replay legally and still not be
    one the tournament should have played."""
    if record.variant != config.variant:
        raise _Mismatch(
            f"{where}: the record is of the variant strategic={record.variant.strategic},"
            f" tactical={record.variant.tactical}; the committed parameters say"
            f" strategic={config.variant.strategic}, tactical={config.variant.tactical}"
        )
    if record.handicap:
        bridges = ", ".join(f"seat {h.seat} {h.line}" for h in record.handicap)
        raise _Mismatch(f"{where}: the record gives a handicap ({bridges}); a tournament's"
                        " games are played without one")  # fmt: skip
    committed = {"action_ms": config.time_control.action_ms,
                 "bank_ms": config.time_control.bank_ms}  # fmt: skip
    control = meta.get("time_control", committed)
    if control != committed:
        raise _Mismatch(f"{where}: the record's time control {json.dumps(control)[:120]} is not"
                        f" the committed {json.dumps(committed)}")  # fmt: skip
    if meta.get("game_index", index) != index:
        raise _Mismatch(f"{where}: the record says it is game index"
                        f" {str(meta.get('game_index'))[:40]} of its match")  # fmt: skip


def _check_statuses(
    where: str, statuses: list[str], meta: Mapping[str, Any], names: list[str]
) -> None:
    """The stored statuses (what pages and counts of timeouts show) are the record's own:
    the seats that failed, and how, are the ones its failures name."""
    failures = meta.get("failures", [])
    if isinstance(failures, list):
        named = {f.get("seat"): f.get("status") for f in failures if isinstance(f, dict)}
        failed = {seat: s for seat, s in enumerate(statuses) if s != "ok"}
        if failed != named:
            raise _Mismatch(
                f"{where}: the stored statuses {statuses} are not the record's failures"
                f" {json.dumps(failures)[:160]}"
            )
    by_name = meta.get("statuses")
    if isinstance(by_name, dict) and by_name != dict(zip(names, statuses, strict=True)):
        raise _Mismatch(f"{where}: the record's statuses {json.dumps(by_name)} are not the"
                        f" stored ones {statuses}")  # fmt: skip


def _versions(game: Mapping[str, Any]) -> tuple[tuple[str, str], tuple[str, str]]:
    (bot0, version0), (bot1, version1) = game["seats"]
    return (str(bot0), str(version0)), (str(bot1), str(version1))


@dataclass
class _RatingChain:
    """Each version's ratings through the bundle's games, taken in ``game_id`` order: of
    each version only its latest game here and the rating that game left, the only one
    a later game of it may start from."""

    played: dict[int, tuple[tuple[str, str], ...]]  # game id -> the versions by seat
    afters: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    last: dict[tuple[str, str], int] = field(default_factory=dict)  # the latest game so far
    outside: dict[tuple[str, str], tuple[int, tuple[float, float]]] = field(default_factory=dict)

    def prior(
        self, where: str, seat: int, version: tuple[str, str], source: int | None,
        initial: tuple[float, float],
    ) -> tuple[float, float] | None:
        """The rating ``version`` had before this game: the initial one, or what its game
        ``source`` left; None when ``source`` is a game elsewhere (that one's audit's).
        Refused: a source that skips one of its games here, or is a game here it did
        not play (each would leave a result out of its rating)."""
        previous = self.last.get(version)
        if source is None:
            if previous is not None:
                raise _Mismatch(f"{where}: seat {seat}'s rating before the game is the initial"
                                f" one, but {version[0]} played game {previous} here before")
            return initial
        if source in self.played and version not in self.played[source]:
            raise _Mismatch(f"{where}: seat {seat}'s rating before the game comes from game"
                            f" {source}, which {version[0]} {version[1]} did not play")
        if previous is not None and source < previous:
            raise _Mismatch(f"{where}: seat {seat}'s rating before the game comes from game"
                            f" {source}, not from {version[0]}'s later game {previous} here,"
                            f" whose rating update it leaves out")
        if source not in self.played:
            return None
        assert source == previous, "a game here that the version played is its latest so far"
        return self.afters[version]

    def record(self, game_id: int, version: tuple[str, str], after: tuple[float, float]) -> None:
        self.afters[version] = after
        self.last[version] = game_id


def _one_owner(match: Mapping[str, Any]) -> bool:
    """Whether one user owns both bots of ``match`` (its games move no rating); a match
    that names no owners is of the admin's bots."""
    owners = match.get("owners", [None, None])
    if not isinstance(owners, list) or len(owners) != 2:
        raise _Mismatch(f"match {match.get('match_id')}: owners must be a list of two")
    if not all(owner is None or isinstance(owner, str) for owner in owners):
        raise _Mismatch(f"match {match.get('match_id')}: an owner is a name or null")
    return same_owner((owners[0], owners[1]))


def _check_rating(
    game: Mapping[str, Any],
    initial: tuple[float, float],
    chain: _RatingChain,
    rated: bool = True,
    one_owner: bool = False,
) -> None:
    game_id = int(game["game_id"])
    where = f"game {game_id}"
    rating = game["rating"]
    after = rating["after"]
    if None in after:
        raise _Mismatch(f"{where}: no stored rating update")
    before = [(float(b[0]), float(b[1])) for b in rating["before"]]
    versions = _versions(game)
    for seat in (0, 1):
        source = rating["before_from"][seat]
        if source is not None and int(source) >= game_id:
            raise _Mismatch(f"{where}: seat {seat}'s rating before the game comes from a"
                            f" later game, {source}")  # fmt: skip
        source = None if source is None else int(source)
        prior = chain.prior(where, seat, versions[seat], source, initial)
        if prior is None:  # the version's previous game is another tournament's
            assert source is not None
            chain.outside[versions[seat]] = (source, before[seat])
            continue
        if not _close(prior, before[seat]):
            raise _Mismatch(
                f"{where}: seat {seat}'s rating before the game {before[seat]} is not the one"
                f" {'its version starts with' if source is None else f'game {source} left'}"
                f" {prior}"
            )
    expected = rate(before[0], before[1], game["winner_seat"]) if rated else (before[0], before[1])
    should = (
        "the TrueSkill update of the record's result" if rated
        else "its rating before (two bots of one owner: their game moves no rating)" if one_owner
        else "its rating before (a game at /play moves no bot's rating)"
    )  # fmt: skip
    for seat in (0, 1):
        got = (float(after[seat][0]), float(after[seat][1]))
        if not _close(expected[seat], got):
            raise _Mismatch(
                f"{where}: seat {seat}'s stored rating after the game {got}"
                f" is not {should} {expected[seat]}"
            )
        chain.record(game_id, versions[seat], got)


def _owned_note(matches: list[tuple[str, str, str]]) -> str:
    """The matches whose bots the bundle gives one owner: the owners are not committed, so
    each participant checks that a match of their bot names them only when it should."""
    shown = [f"{first} and {second} ({owner})" for owner, first, second in matches[:5]]
    more = f" and {len(matches) - 5} more matches" if len(matches) > 5 else ""
    return ", ".join(shown) + more


def _outside_note(outside: Mapping[tuple[str, str], tuple[int, tuple[float, float]]]) -> str:
    """Which versions start from a rating this bundle cannot show: each one's owner can
    tell whether its version did play that game before."""
    if not outside:
        return ""
    shown = [f"{bot} {version} (game {source}: mu {mu:.3f} sigma {sigma:.3f})"
             for (bot, version), (source, (mu, sigma)) in sorted(outside.items())]  # fmt: skip
    more = f" and {len(shown) - 5} more" if len(shown) > 5 else ""
    starts = "version starts" if len(shown) == 1 else "versions start"
    return (f"; {len(shown)} {starts} from a game outside this tournament, which this"
            f" bundle cannot show: {', '.join(shown[:5])}{more}")


def _close(a: tuple[float, float], b: tuple[float, float]) -> bool:
    pairs = zip(a, b, strict=True)
    return all(math.isclose(x, y, rel_tol=0, abs_tol=RATING_TOLERANCE) for x, y in pairs)


def _forfeit_winner(where: str, meta: dict[object, object], stored: object) -> int | None:
    failures = meta.get("failures")
    if not isinstance(failures, list) or not failures:
        raise _Mismatch(f"{where}: the record stops before the game ends and names no failure")
    seats = {f.get("seat") for f in failures if isinstance(f, dict)}
    if seats == {0}:
        return 1
    if seats == {1}:
        return 0
    if seats == {0, 1} and stored in (0, 1):  # both failed: the referee's order decides
        return int(stored)
    raise _Mismatch(f"{where}: the record's failures are unreadable: "
                    f"{json.dumps(failures)[:80]}")  # fmt: skip
