"""What paired deals save: variance and SPRT length, measured on real sandboxed games.

    python3 benchmarks/pairing_variance.py [--pairs 100] [--noise 0.1] [--seed 1]
        [--games-per-match 20] [--elo1 E] [--runs 300] [--half-width 0.02]

Plays python_greedy (bot A) against python_greedy --noise P (bot B: a random
legal action with probability P, otherwise the greedy one; close strength)
through the real referee (arena.referee.run_match, sandboxed bots), twice:
``--pairs`` deal pairs with paired deals (MatchConfig paired=True: games 2k
and 2k+1 share a deal, seats swapped) and as many games with a fresh deal in
every game (paired=False). For each it prints bot A's score, the pentanomial
of pair scores and the variance of one pair's score (scaled to [0, 1]) beside
what independent games would give (half the per-game trinomial variance),
their ratio, and the interval half-width at equal games. Then the expected
number of games of a pentanomial GSPRT (logistic model, H0: 0 Elo, H1:
``--elo1``, by default the measured Elo; alpha = beta = 0.05), simulated with
a seeded generator from the measured pair distributions (arena.tournament.
sprt_length), from the paired games as measured and from the same games with
pairing ignored (two independent games per pair, same mean score): the
saving. The fresh-deal games, taken two by two, are the control: there the
two analyses should agree up to sampling error.

The target: report the variance reduction and the SPRT length saving
of paired deals (no threshold is set). Defaults take a few minutes; use
``--pairs 500`` or more for tighter figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from arena.referee import BotSpec, BotStatus, MatchConfig, MatchReport, load_bot, run_match
from arena.tournament.statistics.sprt import EloModel, SprtParams
from arena.tournament.statistics.sprt_length import (
    SprtLength,
    independent_pairs,
    pair_probabilities,
    pairs_for_half_width,
    sprt_length,
)
from arena.tournament.statistics.stats import (
    Z95,
    GameScore,
    PairedResults,
    Summary,
    collect,
    pentanomial_summary,
    trinomial_summary,
)

SAMPLE_BOTS = Path(__file__).resolve().parents[1] / "sample_bots"


def noisy_greedy(greedy: BotSpec, noise: float, seed: int) -> BotSpec:
    """python_greedy with --noise on its command line, as its bot.toml could set it."""
    command = (*greedy.command, "--noise", str(noise), "--seed", str(seed))
    return dataclasses.replace(greedy, name="python_greedy_noisy", command=command)


def game_scores(report: MatchReport, bot_a: str, first_deal: int, paired: bool) -> list[GameScore]:
    """Bot A's points per game; a deal is shared by games 2k, 2k+1 only when paired."""
    scores = []
    for game in report.games:
        points = 0.5 if game.winner is None else float(game.winner == bot_a)
        bad = [str(status) for status in game.statuses.values() if status is not BotStatus.OK]
        deal = first_deal + (game.index // 2 if paired else game.index)
        scores.append(GameScore(deal=deal, score_a=points, status=bad[0] if bad else "finished"))
    return scores


def play(
    bots: tuple[BotSpec, BotSpec], pairs: int, per_match: int, seed: int, paired: bool
) -> list[GameScore]:
    secret = hashlib.sha256(f"pairing_variance:{seed}:{paired}".encode()).digest()
    games, done, match = 2 * pairs, 0, 0
    scores: list[GameScore] = []
    started = time.monotonic()
    while done < games:
        count = min(per_match, games - done)
        config = MatchConfig(games=count, seed=match, secret=secret, paired=paired)
        report = run_match(config, *bots)
        scores += game_scores(report, bots[0].name, first_deal=done, paired=paired)
        done += count
        match += 1
        rate = done / (time.monotonic() - started)
        print(
            f"  {'paired' if paired else 'unpaired'}: {done}/{games} games ({rate:.1f}/s)",
            file=sys.stderr,
        )
    return scores


def pseudo_pairs(scores: Sequence[GameScore]) -> PairedResults:
    """Unpaired games grouped two by two (2k, 2k+1: seats swapped, different deals)."""
    return collect(dataclasses.replace(s, deal=i // 2) for i, s in enumerate(scores))


def describe(label: str, results: PairedResults, games: Summary) -> None:
    pairs = results.pair_summary
    assert pairs is not None and results.pentanomial is not None
    statuses = ", ".join(f"{name} {count}" for name, count in results.statuses)
    print(f"{label}: {games.games} games ({statuses}); unpaired games {len(results.unpaired)}")
    print(f"  score of A        {games.score}   (trinomial, per game)")
    print(f"  score of A        {pairs.score}   (pentanomial, {pairs.n} pairs)")
    print(f"  pentanomial       {results.pentanomial.counts}  (pair scores 0, 0.5, 1, 1.5, 2)")
    print(f"  logistic Elo      {pairs.logistic_elo}   normalized Elo {pairs.normalized_elo}")
    print(
        f"  var per pair      {pairs.variance:.5f} measured; {games.variance / 2:.5f} if the "
        f"two games were independent (game variance {games.variance:.5f} / 2)"
    )
    ratio = pairs.variance / (games.variance / 2)
    print(f"  ratio             {ratio:.3f} (pair variance over independent games)")


def sprt_line(label: str, length: SprtLength) -> None:
    print(
        f"  {label:<40} {length.mean_games:8.0f} games on average "
        f"(H1 {length.h1}, H0 {length.h0}, "
        f"inconclusive {length.inconclusive} of {length.runs})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=100, help="deal pairs per mode")
    parser.add_argument("--noise", type=float, default=0.1, help="bot B's random-action rate")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--games-per-match", type=int, default=20)
    parser.add_argument("--elo1", type=float, help="SPRT H1 in logistic Elo (default: measured)")
    parser.add_argument("--runs", type=int, default=300, help="simulated SPRTs per setting")
    parser.add_argument("--max-pairs", type=int, default=20_000, help="cap of a simulated SPRT")
    parser.add_argument("--half-width", type=float, default=0.02, help="score interval target")
    args = parser.parse_args(argv)
    if args.pairs < 2 or args.games_per_match < 2 or args.games_per_match % 2:
        parser.error("--pairs must be >= 2 and --games-per-match even and >= 2")
    greedy = load_bot(SAMPLE_BOTS / "python_greedy")
    bots = (greedy, noisy_greedy(greedy, args.noise, args.seed))
    print(
        f"A = python_greedy, B = python_greedy --noise {args.noise}; {args.pairs} deal pairs "
        f"({2 * args.pairs} games) per mode, matches of {args.games_per_match}"
    )
    started = time.monotonic()
    paired_scores = play(bots, args.pairs, args.games_per_match, args.seed, paired=True)
    unpaired_scores = play(bots, args.pairs, args.games_per_match, args.seed, paired=False)
    wall = time.monotonic() - started

    paired = collect(paired_scores)
    unpaired = pseudo_pairs(unpaired_scores)
    assert paired.pentanomial is not None and unpaired.pentanomial is not None
    describe("paired deals (paired=True)", paired, paired.game_summary)
    describe("fresh deals (paired=False), games taken two by two", unpaired, unpaired.game_summary)

    pair_var = pentanomial_summary(paired.pentanomial).variance
    fresh_var = trinomial_summary(unpaired.trinomial).variance / 2
    print("variance per pair")
    print(
        f"  paired deals {pair_var:.5f}; fresh deals {fresh_var:.5f} "
        f"(independent games); ratio {pair_var / fresh_var:.3f}"
    )
    print(
        f"  paired deals against the same games analysed unpaired: ratio "
        f"{paired.variance_ratio:.3f}"
    )
    games = 2 * args.pairs
    print(f"95% interval half-width of the score at {games} games")
    for label, var in (("paired", pair_var), ("fresh", fresh_var)):
        print(
            f"  {label:<7} +-{Z95 * (var / args.pairs) ** 0.5:.4f}; games for "
            f"+-{args.half_width}: "
            f"{2 * pairs_for_half_width(var, args.half_width):.0f}"
        )

    elo1 = args.elo1
    if elo1 is None:
        elo1 = max(5.0, round(abs(pentanomial_summary(paired.pentanomial).logistic_elo.value)))
    params = SprtParams(elo0=0.0, elo1=elo1, model=EloModel.LOGISTIC)
    print(
        f"SPRT (pentanomial GSPRT, logistic, H0 0 Elo, H1 {elo1:g} Elo, alpha = beta = 0.05), "
        f"{args.runs} simulated tests each, pairs drawn from"
    )
    common = {"runs": args.runs, "seed": args.seed, "max_pairs": args.max_pairs}
    with_pairs = sprt_length(pair_probabilities(paired.pentanomial), params, **common)
    same_games = sprt_length(independent_pairs(paired.trinomial), params, **common)
    sprt_line("paired deals: the measured pentanomial", with_pairs)
    sprt_line("the same games, pairing ignored", same_games)
    saving = 1 - with_pairs.mean_games / same_games.mean_games
    print(f"  saving of paired deals: {saving:.1%} of the games")
    fresh_pairs = sprt_length(pair_probabilities(unpaired.pentanomial), params, **common)
    fresh_games = sprt_length(independent_pairs(unpaired.trinomial), params, **common)
    sprt_line("control, fresh deals two by two", fresh_pairs)
    sprt_line("control, the same games independent", fresh_games)
    control = 1 - fresh_pairs.mean_games / fresh_games.mean_games
    print(f"  control 'saving' (no shared deal, should be about 0): {control:.1%}")
    print(f"wall time {wall:.0f} s for {4 * args.pairs} games")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
