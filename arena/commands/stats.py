"""`arena stats`: the SPRT, Elo and LOS of given pentanomial counts, to check by hand."""

from __future__ import annotations

import argparse
import json
import math
import sys

from arena.tournament.statistics.sprt import ELO_LIMITS, EloModel, SprtParams, sprt_state
from arena.tournament.statistics.stats import (
    MIN_PAIRS,
    NELO_PER_T,
    Pentanomial,
    logistic_elo,
    pair_mean,
    score_games_sigma,
    score_interval,
    score_los,
)

ORDER = "LL,LD,DD/WL,WD,WW"
MAX_PAIRS = 1_000_000_000
"""The most pairs the counts may add up to: far past any test (an SPRT stops by 100,000),
and below where the floating-point statistics of a lopsided count fail."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "stats",
        help="pentanomial SPRT: LLR, bounds, decision, Elo and LOS from pair counts",
        description=(
            "Counts of bot A's pair scores over deal pairs (both games of one deal), in "
            f"this order: {ORDER}, i.e. pair scores 0, 0.5, 1, 1.5, 2 (LD counts LD and DL, "
            "DD/WL counts DD, WL and LW, WD counts WD and DW). Prints the generalized SPRT "
            "(fishtest's pentanomial GSPRT) for H0: Elo = E0 against H1: Elo = E1, the Elo "
            "difference with its 95% interval in the chosen model and the likelihood of "
            "superiority. Exit status 2 on bad input."
        ),
    )
    parser.add_argument("--pentanomial", metavar=ORDER, help="five comma-separated counts")
    parser.add_argument("--elo0", metavar="E0", help="Elo of H0")
    parser.add_argument("--elo1", metavar="E1", help="Elo of H1")
    parser.add_argument("--alpha", default="0.05", help="false-pass rate at E0 (0.05)")
    parser.add_argument("--beta", default="0.05", help="false-fail rate at E1 (0.05)")
    parser.add_argument(
        "--model", default="normalized", help="Elo model: logistic or normalized (normalized)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run_stats)


class InputError(Exception):
    pass


def _float(args: argparse.Namespace, name: str) -> float:
    raw = getattr(args, name)
    if raw is None:
        raise InputError(f"--{name} is required")
    try:
        value = float(raw)
    except ValueError:
        raise InputError(f"--{name}: not a number: {raw!r}") from None
    if not math.isfinite(value):
        raise InputError(f"--{name}: must be finite, got {raw!r}")
    return value


def parse_pentanomial(raw: str | None) -> Pentanomial:
    if raw is None:
        raise InputError("--pentanomial is required")
    parts = raw.split(",")
    if len(parts) != 5:
        raise InputError(f"--pentanomial: expected five comma-separated counts ({ORDER})")
    try:
        counts = [int(p.strip()) for p in parts]
    except ValueError:
        raise InputError(f"--pentanomial: counts must be integers, got {raw!r}") from None
    if any(c < 0 for c in counts):
        raise InputError(f"--pentanomial: counts must be non-negative, got {raw!r}")
    if sum(counts) == 0:
        raise InputError("--pentanomial: at least one pair is needed")
    if sum(counts) > MAX_PAIRS:
        raise InputError(
            f"--pentanomial: the counts add up to more than {MAX_PAIRS:,} pairs, the most taken"
        )
    return Pentanomial((counts[0], counts[1], counts[2], counts[3], counts[4]))


def parse(args: argparse.Namespace) -> tuple[Pentanomial, SprtParams]:
    penta = parse_pentanomial(args.pentanomial)
    elo0, elo1 = _float(args, "elo0"), _float(args, "elo1")
    alpha, beta = _float(args, "alpha"), _float(args, "beta")
    if args.model not in {m.value for m in EloModel}:
        raise InputError(f"--model: logistic or normalized, got {args.model!r}")
    if not elo0 < elo1:
        raise InputError(f"--elo1: must be above --elo0, got [{elo0}, {elo1}]")
    limit = ELO_LIMITS[EloModel(args.model)]
    for name, value in (("elo0", elo0), ("elo1", elo1)):
        if abs(value) > limit:
            raise InputError(
                f"--{name}: must lie within [-{limit:g}, {limit:g}] ({args.model} Elo), got {value}"
            )
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < value < 1.0:
            raise InputError(f"--{name}: must lie strictly between 0 and 1, got {value}")
    if alpha + beta >= 1.0:
        raise InputError("--beta: alpha + beta must be below 1")
    return penta, SprtParams(elo0, elo1, alpha, beta, EloModel(args.model))


def run_stats(args: argparse.Namespace) -> int:
    try:
        penta, params = parse(args)
    except InputError as error:
        print(f"arena stats: {error}", file=sys.stderr)
        return 2
    try:
        state = sprt_state(penta, params)
    except ValueError as error:
        print(f"arena stats: --elo0/--elo1: cannot test these bounds: {error}", file=sys.stderr)
        return 2
    score = pair_mean(penta)
    interval = score_interval(penta)
    los = score_los(penta)

    def elo(s: float) -> float:
        if params.model is EloModel.LOGISTIC:
            return logistic_elo(s)
        return (s - 0.5) / score_games_sigma(penta) * NELO_PER_T

    elo_interval = None if interval is None else [elo(interval.low), elo(interval.high)]
    if args.json:
        print(
            json.dumps(
                {
                    "pentanomial": list(penta.counts),
                    "pairs": penta.pairs,
                    "games": 2 * penta.pairs,
                    "model": params.model.value,
                    "elo0": params.elo0,
                    "elo1": params.elo1,
                    "alpha": params.alpha,
                    "beta": params.beta,
                    "llr": state.llr,
                    "lower_bound": state.lower_bound,
                    "upper_bound": state.upper_bound,
                    "decision": state.decision.value,
                    "score": score,
                    "score_interval": None if interval is None else [interval.low, interval.high],
                    "min_pairs": MIN_PAIRS,
                    "elo": _finite(elo(score)),
                    "elo_interval": None if elo_interval is None else [
                        _finite(e) for e in elo_interval
                    ],
                    "los": los,
                },
                indent=2,
            )
        )
        return 0
    print(f"pairs     {penta.pairs} ({2 * penta.pairs} games), {ORDER} = {penta.counts}")
    print(
        f"SPRT      H0: {params.model.value} Elo {params.elo0:g}, H1: {params.elo1:g} "
        f"(alpha {params.alpha:g}, beta {params.beta:g})"
    )
    print(f"LLR       {state.llr:.4f}  bounds [{state.lower_bound:.4f}, {state.upper_bound:.4f}]")
    print(f"decision  {state.decision.value}")
    if interval is None or elo_interval is None or los is None:
        print(f"Elo       {elo(score):z.2f} ({params.model.value})")
        print(f"score     {score:.4f}")
        print(f"interval  too few pairs for a 95% interval: {penta.pairs}, it needs {MIN_PAIRS}")
        return 0
    print(
        f"Elo       {elo(score):z.2f} "
        f"(95%: [{elo_interval[0]:z.2f}, {elo_interval[1]:z.2f}], {params.model.value})"
    )
    print(f"score     {score:.4f} (95%: [{interval.low:.4f}, {interval.high:.4f}])")
    print(f"LOS       {100 * los:.2f}%")
    return 0


def _finite(value: float) -> float | None:
    """JSON has no infinity: an Elo at a score of 0 or 1 is null."""
    return value if math.isfinite(value) else None
