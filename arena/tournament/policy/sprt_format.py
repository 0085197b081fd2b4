"""The SPRT test format: a candidate against a baseline, one deal pair per match, until it decides.

A test (format ``sprt``, ``arena tournament run NAME --format sprt CANDIDATE
BASELINE``) stores each deal pair as a match of two games (the candidate in seat
0 of the first, seat 1 of the second, on one deal) in a round of its own:
round k is pair k, its seed ``match_seed`` of k. The runner asks for pairs in
batches (``next_pairs``: as many as its workers, never past ``max_pairs``) once
the batch before is played, and no more once the test has decided.

The decision (``decide``) is a pure function of the stored pairs: the first
prefix of complete pairs, in pair order, whose LLR crosses a bound. A pair is
complete once both its games are stored; the prefix stops at the first pair
that is not. So a run killed at any moment and resumed reaches the same
decision from the same pairs, whatever order the pairs finished in. The pairs
of the batch in play when the test decides are played to the end and counted
in the final figures (never discarded); the decision stays the prefix's. A test
at its cap without a decision is ``inconclusive``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from arena.store import MatchRow, Store, TournamentRow, list_matches
from arena.store.models import PlannedMatch, PlannedRound, SprtConfig, TournamentFormat
from arena.store.pairs import paired_outcomes
from arena.tournament.policy.config import match_seed, sprt_params
from arena.tournament.statistics.intervals import LlrPoint
from arena.tournament.statistics.sprt import Decision, SprtParams, llr
from arena.tournament.statistics.stats import Pentanomial

GAMES_PER_PAIR = 2
INCONCLUSIVE = "inconclusive"
RUNNING = "running"


@dataclass(frozen=True, slots=True)
class SprtProgress:
    """Where a test stands: its pairs and the LLR over the complete prefix.

    ``scores``: the candidate's points in each pair of the complete prefix (0 to
    2), in pair order; ``history``: the LLR after each of them; ``decided_at``:
    the length of the first prefix that crossed a bound (None: none yet), with
    its ``decision`` and LLR (``decision_llr``). ``verdict`` says it in words:
    ``H0 accepted``, ``H1 accepted``, ``inconclusive`` (at the cap) or ``running``.
    """

    params: SprtParams
    max_pairs: int
    scheduled: int  # pairs stored so far (played or not)
    complete: int  # pairs with both games stored, prefix or not
    scores: tuple[float, ...]
    history: tuple[LlrPoint, ...]
    decided_at: int | None
    decision: Decision

    @property
    def llr(self) -> float:
        """The LLR over the complete prefix (0 before any pair)."""
        return self.history[-1].llr if self.history else 0.0

    @property
    def decision_llr(self) -> float | None:
        return None if self.decided_at is None else self.history[self.decided_at - 1].llr

    @property
    def lower_bound(self) -> float:
        return self.params.lower_bound

    @property
    def upper_bound(self) -> float:
        return self.params.upper_bound

    @property
    def pentanomial(self) -> tuple[int, int, int, int, int]:
        """The candidate's pair counts over the prefix: LL, LD, DD/WL, WD, WW (may be 0s)."""
        counts = [0, 0, 0, 0, 0]
        for score in self.scores:
            counts[round(2 * score)] += 1
        return counts[0], counts[1], counts[2], counts[3], counts[4]

    @property
    def verdict(self) -> str:
        if self.decision is not Decision.CONTINUE:
            return str(self.decision)
        return INCONCLUSIVE if self.complete >= self.max_pairs else RUNNING

    def sentence(self) -> str:
        """The state in one line, e.g. ``H1 accepted after 23 pairs (LLR 2.97 >= 2.94)``."""
        bounds = f"[{self.lower_bound:.2f}, {self.upper_bound:.2f}]"
        if self.decided_at is not None:
            sign = ">=" if self.decision is Decision.H1 else "<="
            bound = self.upper_bound if self.decision is Decision.H1 else self.lower_bound
            text = (
                f"{self.decision} after {self.decided_at} pairs"
                f" (LLR {self.decision_llr:.2f} {sign} {bound:.2f})"
            )
            extra = self.complete - self.decided_at
            return text + (f"; {extra} more pair(s) in play then, counted" if extra else "")
        if self.verdict == INCONCLUSIVE:
            cap = f"inconclusive at the cap of {self.max_pairs} pairs"
            return f"{cap} (LLR {self.llr:.2f}, bounds {bounds})"
        return f"running: LLR {self.llr:.2f} after {len(self.scores)} pairs, bounds {bounds}"

    def to_json(self) -> dict[str, object]:
        return {
            "elo0": self.params.elo0, "elo1": self.params.elo1, "alpha": self.params.alpha,
            "beta": self.params.beta, "model": str(self.params.model),
            "max_pairs": self.max_pairs, "pairs_scheduled": self.scheduled,
            "pairs_complete": self.complete, "prefix_pairs": len(self.scores),
            "pentanomial": list(self.pentanomial), "llr": round(self.llr, 6),
            "lower_bound": round(self.lower_bound, 6), "upper_bound": round(self.upper_bound, 6),
            "decided_at": self.decided_at, "decision_llr": None if self.decision_llr is None
            else round(self.decision_llr, 6), "verdict": self.verdict,
            "llr_history": [round(p.llr, 4) for p in self.history],
        }  # fmt: skip


@functools.lru_cache(maxsize=1 << 16)
def _llr(counts: tuple[int, int, int, int, int], params: SprtParams) -> float:
    """``llr``, remembered: a test's status, page and chart recompute every prefix of
    the same pairs on each look (the computation solves two small optimisations)."""
    return llr(Pentanomial(counts), params)


def decide(
    scores: Iterable[float], params: SprtParams, *, stop: bool = False
) -> tuple[list[LlrPoint], int | None]:
    """The LLR after each pair of ``scores`` (the candidate's points per pair, in order)
    and the length of the first prefix that crosses a bound (None: none does); with
    ``stop``, the history ends there."""
    counts = [0, 0, 0, 0, 0]
    history: list[LlrPoint] = []
    decided_at: int | None = None
    for index, score in enumerate(scores):
        slot = round(2 * score)
        if not 0 <= slot <= 4 or slot != 2 * score:
            raise ValueError(f"a pair score is 0, 0.5, 1, 1.5 or 2, got {score!r}")
        counts[slot] += 1
        value = _llr((counts[0], counts[1], counts[2], counts[3], counts[4]), params)
        history.append(LlrPoint(index + 1, value))
        if decided_at is None and not params.lower_bound < value < params.upper_bound:
            decided_at = index + 1
            if stop:
                break
    return history, decided_at


def progress_of(
    scores_by_pair: Sequence[float | None], params: SprtParams, max_pairs: int
) -> SprtProgress:
    """A test's progress from each stored pair's score in pair order (None: not complete)."""
    prefix: list[float] = []
    for score in scores_by_pair:
        if score is None:
            break
        prefix.append(score)
    history, decided_at = decide(prefix, params)
    decision = Decision.CONTINUE
    if decided_at is not None:
        decision = Decision.H1 if history[decided_at - 1].llr > 0 else Decision.H0
    return SprtProgress(
        params=params, max_pairs=max_pairs, scheduled=len(scores_by_pair),
        complete=sum(s is not None for s in scores_by_pair), scores=tuple(prefix),
        history=tuple(history), decided_at=decided_at, decision=decision,
    )  # fmt: skip


def pair_scores(
    matches: Sequence[MatchRow], points: Mapping[int, list[float]]
) -> list[float | None]:
    """The candidate's points in each pair (match), in pair order; None until both games
    are stored. ``points``: match id -> the candidate's points in each stored game."""
    out: list[float | None] = []
    for match in sorted(matches, key=lambda m: m.round):
        got = points.get(match.id, [])
        out.append(sum(got) if len(got) == GAMES_PER_PAIR else None)
    return out


def sprt_config(tournament: TournamentRow) -> SprtConfig:
    sprt = tournament.config.sprt
    if tournament.format is not TournamentFormat.SPRT or sprt is None:
        raise ValueError(f"tournament {tournament.name!r} is not an sprt test")
    return sprt


def sprt_progress(store: Store, tournament: TournamentRow) -> SprtProgress:
    """The stored test's progress (``progress_of`` its stored pairs)."""
    sprt = sprt_config(tournament)
    candidate = tournament.entrants[0]
    points: dict[int, list[float]] = {}
    for game in paired_outcomes(store, tournament.id):
        if game.winner_seat is None:
            score = 0.5
        else:
            score = 1.0 if game.bots[game.winner_seat] == candidate else 0.0
        points.setdefault(game.match_id, []).append(score)
    scores = pair_scores(list_matches(store, tournament.id), points)
    return progress_of(scores, sprt_params(sprt), sprt.max_pairs)


def pairs_to_plan(progress: SprtProgress, batch: int) -> range:
    """The numbers of the pairs to store next (1-based): up to ``batch``, none once
    the test has decided or stored ``max_pairs`` pairs."""
    remaining = progress.max_pairs - progress.scheduled
    if progress.decided_at is not None or remaining <= 0:
        return range(0)
    return range(progress.scheduled + 1, progress.scheduled + 1 + min(max(1, batch), remaining))


def next_pairs(
    store: Store, tournament: TournamentRow, version_ids: Mapping[str, int], batch: int
) -> list[PlannedRound]:
    """The next batch of pairs to store (``pairs_to_plan``); called by the runner once
    every stored pair is played."""
    numbers = pairs_to_plan(sprt_progress(store, tournament), batch)
    candidate, baseline = tournament.entrants
    seed = tournament.config.seed
    ids = (version_ids[candidate], version_ids[baseline])
    return [
        PlannedRound(
            number,
            (PlannedMatch(candidate, baseline, GAMES_PER_PAIR, match_seed(seed, number, *ids)),),
        )
        for number in numbers
    ]
