"""The house bots' strength ladder and the search's speed.

    python3 benchmarks/house_bots.py micro [--positions N] [--seed S]
    python3 benchmarks/house_bots.py ladder [--games N] [--think-ms A,B] [--seed S]
        [--save DIR]
    python3 benchmarks/house_bots.py duel A [B] [--deals N] [--seed S] [--workers W]

``micro``: positions from seeded random games (every variant); for each, the
seat to move's observation is sampled (``kahuna_bot.sampling``): the CPU
time of one sample (the sampler built once per observation, as a search
does), of building the sampler, and complete uniformly random games per CPU
second from sampled states (the ``random`` playout), playouts to the end of
the round (``round``) and the bot's default ``greedy`` playouts (two turns of
greedy play). One core.

``duel A [B]``: contenders in this process (``--workers`` processes), each
deal played from both seats, each ISMCTS decision given a fixed CPU time
(``time.process_time``, so the load does not change the result): ``A`` and
``B`` are ``greedy`` or ``ismcts[:cpu_ms=N,playout=P,width=W,bias=B]`` (the
bot's defaults for what is left out; 40 ms). Prints the pentanomial score of
A with its 95% interval over deal pairs and A's iterations per decision::

    python3 benchmarks/house_bots.py duel ismcts:cpu_ms=20 greedy --deals 40

``ladder``: real sandboxed matches through ``arena match --json`` (seats
swapped, each deal played from both sides): python_greedy vs python_random,
and python_ismcts at each think budget vs python_greedy and vs
python_random. For each: the pentanomial score with its 95% interval
(``arena.tournament.statistics.stats``), the plain win rate with a Wilson interval,
failure statuses (timeouts must be 0), and the ISMCTS bot's thinking time
per decision as the referee measured it. ``--save DIR`` keeps each match's
``arena match --json`` output there, and a match already saved there is
summarised instead of played again (``ismcts_200_ms_vs_greedy.json`` can be
a longer run of its own: ``arena match sample_bots/python_ismcts
sample_bots/python_greedy --games 200 --seed 14 --json``).
Figures taken while other work runs are noisy; the settings are printed.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_BOTS = ROOT / "sample_bots"
for path in (ROOT / "sample_bots" / "sdk" / "python", SAMPLE_BOTS / "python_ismcts"):
    sys.path.insert(0, str(path))

from bot import DEFAULT_BIAS, DEFAULT_PLAYOUT, DEFAULT_WIDTH, candidates  # noqa: E402
from ismcts import (  # noqa: E402
    GREEDY_EPSILON,
    GREEDY_TURNS,
    PLAYOUTS,
    Playout,
    greedy_playout,
    random_playout,
    round_playout,
    search,
)
from kahuna_bot import greedy  # noqa: E402
from kahuna_bot.sampling import InfoStateSampler  # noqa: E402

from arena.kahuna import (  # noqa: E402
    Action,
    State,
    Variant,
    apply,
    deal_from_seed,
    legal_actions,
    new_game,
    observe,
    reshuffle_from_seed,
    start_round,
)
from arena.tournament.statistics.stats import Z95, GameScore, collect  # noqa: E402

VARIANTS = (Variant(), Variant(tactical=True), Variant(strategic=True, tactical=True))


# ---------------------------------------------------------------- micro


def positions(count: int, seed: int) -> list[State]:
    """States met in seeded random games, the seat to move deciding."""
    rng = random.Random(seed)
    found: list[State] = []
    game = 0
    while len(found) < count:
        variant = VARIANTS[game % len(VARIANTS)]
        state = new_game(deal_from_seed(seed * 1000 + game), variant)
        game += 1
        while not state.is_finished and len(found) < count:
            if state.needs_reshuffle:
                order = reshuffle_from_seed(game, state.round + 1, state.reshuffle_cards)
                state = start_round(state, order)
                continue
            if rng.random() < 0.1:
                found.append(state)
            state = apply(state, rng.choice(legal_actions(state)))
    return found


def micro(count: int, seed: int) -> None:
    states = positions(count, seed)
    observations = [observe(state, state.to_move or 0) for state in states]
    rng = random.Random(seed)
    started = time.process_time()
    samplers = [InfoStateSampler(obs, rng=rng) for obs in observations]
    build_us = (time.process_time() - started) / len(samplers) * 1e6
    repeats = 50
    started = time.process_time()
    for sampler in samplers:
        for _ in range(repeats):
            sampler.sample()
    sample_us = (time.process_time() - started) / (len(samplers) * repeats) * 1e6
    print(f"positions: {len(states)} from seeded random games (seed {seed}), all variants")
    print(f"  sampler built  {build_us:8.1f} us CPU per observation")
    print(f"  one sample     {sample_us:8.1f} us CPU (target < 50)")
    for name, playout, per in (
        ("random", random_playout, 4),
        ("round", round_playout, 4),
        ("greedy", greedy_playout, 4),
    ):
        started = time.process_time()
        actions = 0
        games = 0
        for sampler in samplers:
            for _ in range(per):
                state = sampler.sample()
                before = state.history_length
                end = playout(state, rng)
                actions += end.history_length - before
                games += 1
        elapsed = time.process_time() - started
        what = {
            "random": "complete games",
            "round": "playouts to the round's end",
            "greedy": "greedy playouts (two turns)",
        }[name]
        print(
            f"  {name:<6} playout {games / elapsed:8.0f} {what} per CPU second "
            f"({actions / games:.1f} actions each, sampling included)"
            + (" (target >= 1000)" if name == "random" else "")
        )


# ---------------------------------------------------------------- ladder


def bot_copy(work: Path, think_ms: int) -> Path:
    """python_ismcts with another think budget (its command line in bot.toml)."""
    work.chmod(0o755)  # the bot runs as an unprivileged user: its directory must be readable
    target = work / f"python_ismcts_{think_ms}ms"
    shutil.copytree(
        SAMPLE_BOTS / "python_ismcts", target, ignore=shutil.ignore_patterns("__pycache__")
    )
    name = f"python_ismcts_{think_ms}ms"
    command = ["python3", "bot.py", "--think-ms", str(think_ms), "--playout", DEFAULT_PLAYOUT]
    (target / "bot.toml").write_text(
        f'name = "{name}"\ncommand = {json.dumps(command)}\nruntime = "python"\n'
    )
    return target


def play(first: Path, second: Path, games: int, seed: int) -> dict[str, object]:
    command = [
        sys.executable, "-m", "arena", "match", str(first), str(second),
        "--games", str(games), "--seed", str(seed), "--json",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"arena match {first.name} {second.name} failed: {done.stderr[-2000:]}")
    report: dict[str, object] = json.loads(done.stdout)
    return report


def wilson(wins: float, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return centre - half, centre + half


def summarise(label: str, report: dict[str, object], prefix: str, wall_s: float | None) -> None:
    played = report["games"]
    assert isinstance(played, list)
    bot = next(name for name in played[0]["status"] if name.startswith(prefix))
    scores = []
    for index, game in enumerate(played):
        winner = game["winner"]
        score = 0.5 if winner is None else (1.0 if winner == bot else 0.0)
        scores.append(GameScore(deal=index // 2, score_a=score))
    results = collect(scores)
    wins = sum(game["winner"] == bot for game in played)
    draws = sum(game["winner"] is None for game in played)
    statuses = Counter(
        status for game in played for status in game["status"].values() if status != "ok"
    )
    low, high = wilson(wins, len(played))
    print(f"{label}: {len(played)} games")
    print(
        f"  wins {wins}, draws {draws}: {100 * wins / len(played):.1f}% "
        f"(Wilson 95% {100 * low:.1f}-{100 * high:.1f}%)"
    )
    pairs = results.pair_summary
    if pairs is not None:
        interval = pairs.score.interval
        print(
            f"  pentanomial {results.pentanomial.counts if results.pentanomial else ()}: "
            f"score {pairs.score.value:.3f} (95% {interval.low:.3f}-{interval.high:.3f}), "
            f"Elo {pairs.logistic_elo}, LOS {pairs.los:.3f}"
        )
    print(f"  failure statuses {dict(statuses) or 0} (timeouts {statuses.get('timeout', 0)})")
    thinking = sum(game["time_ms"][bot] for game in played)
    decisions = max(sum(game["actions"] for game in played) / 2, 1)
    print(
        f"  {bot}: {thinking / len(played) / 1000:.1f} s thinking per game, "
        f"~{thinking / decisions:.0f} ms per decision (referee's wall clock)"
    )
    if wall_s is not None:
        print(f"  wall time {wall_s:.0f} s")


def ladder(games: int, budgets: list[int], seed: int, save: Path | None) -> None:
    greedy, rand = SAMPLE_BOTS / "python_greedy", SAMPLE_BOTS / "python_random"
    with tempfile.TemporaryDirectory(prefix="house-bots-") as tmp:
        work = Path(tmp)
        matches: list[tuple[str, Path, Path, str]] = [
            ("greedy vs random", greedy, rand, "python_greedy")
        ]
        for think_ms in budgets:
            copy = bot_copy(work, think_ms)
            for opponent in (greedy, rand):
                label = f"ismcts {think_ms} ms vs {opponent.name.removeprefix('python_')}"
                matches.append((label, copy, opponent, "python_ismcts"))
        print(
            f"settings: {games} games per match, seed {seed}, default clocks "
            f"(2000 ms per action, 30000 ms bank), think budgets {budgets} ms"
        )
        for label, first, second, prefix in matches:
            saved = None if save is None else save / f"{label.replace(' ', '_')}.json"
            if saved is not None and saved.exists():
                print(f"(reusing {saved})")
                summarise(label, json.loads(saved.read_text()), prefix, None)
                continue
            started = time.monotonic()
            report = play(first, second, games, seed)
            if saved is not None:
                saved.parent.mkdir(parents=True, exist_ok=True)
                saved.write_text(json.dumps(report))
            summarise(label, report, prefix, time.monotonic() - started)


# ---------------------------------------------------------------- duel


def parse_contender(text: str) -> dict[str, str]:
    """``greedy`` or ``ismcts[:key=value,...]`` (keys: cpu_ms, playout, width, bias, seed,
    and the greedy playout's turns and epsilon; the bot's defaults for those left out,
    and 40 ms of CPU per decision)."""
    name, _, rest = text.partition(":")
    if name not in ("greedy", "ismcts"):
        raise SystemExit(f"unknown contender {text!r}: greedy or ismcts[:key=value,...]")
    spec = {"name": name}
    for part in filter(None, rest.split(",")):
        key, _, value = part.partition("=")
        spec[key] = value
    return spec


def contender_playout(spec: dict[str, str]) -> Playout:
    """The contender's playout; ``turns`` and ``epsilon`` set the greedy playout's."""
    if "turns" in spec or "epsilon" in spec:
        return functools.partial(
            greedy_playout,
            turns=int(spec.get("turns", GREEDY_TURNS)),
            epsilon=float(spec.get("epsilon", GREEDY_EPSILON)),
        )
    return PLAYOUTS[spec.get("playout", DEFAULT_PLAYOUT)]


def decide(spec: dict[str, str], state: State, game: int) -> tuple[Action, int]:
    """The contender's action in ``state`` (and the search's iterations)."""
    seat = state.to_move
    assert seat is not None
    obs = observe(state, seat)
    legal = legal_actions(state)
    if spec["name"] == "greedy":
        return greedy.choose(obs, legal), 0
    rng = random.Random(f"{spec.get('seed', '0')}:{game}:{len(obs.history)}")
    chosen = candidates(obs, legal, int(spec.get("width", DEFAULT_WIDTH)))
    result = search(
        obs,
        chosen,
        rng,
        seconds=float(spec.get("cpu_ms", "40")) / 1000.0,
        playout=contender_playout(spec),
        favourite=chosen[0],
        bias=float(spec.get("bias", DEFAULT_BIAS)),
        clock=time.process_time,
    )
    return result.action, result.iterations


def duel_deal(job: tuple[dict[str, str], dict[str, str], int]) -> tuple[float, float, int, int]:
    """One deal played twice, seats swapped: A's two scores, A's iterations and decisions."""
    first, second, deal = job
    scores = []
    iterations = decisions = 0
    for a_seat in (0, 1):
        game = 2 * deal + a_seat
        state = new_game(deal_from_seed(deal), Variant())
        while not state.is_finished:
            if state.needs_reshuffle:
                order = reshuffle_from_seed(deal, state.round + 1, state.reshuffle_cards)
                state = start_round(state, order)
                continue
            mine = state.to_move == a_seat
            action, spent = decide(first if mine else second, state, game)
            if mine:
                iterations += spent
                decisions += 1
            state = apply(state, action)
        outcome = state.outcome
        assert outcome is not None
        winner = outcome.winner
        scores.append(0.5 if winner is None else float(winner == a_seat))
    return scores[0], scores[1], iterations, decisions


def duel(first: str, second: str, deals: int, seed: int, workers: int) -> None:
    """Contender A against B in this process (and ``workers`` - 1 others), paired deals."""
    import multiprocessing

    a, b = parse_contender(first), parse_contender(second)
    jobs = [(a, b, seed * 100_000 + deal) for deal in range(deals)]
    started = time.monotonic()
    with multiprocessing.Pool(workers) as pool:
        results = pool.map(duel_deal, jobs, chunksize=1)
    scores = [
        GameScore(deal=index, score_a=score)
        for index, result in enumerate(results)
        for score in result[:2]
    ]
    summary = collect(scores)
    pairs = summary.pair_summary
    iterations = sum(r[2] for r in results)
    decisions = max(sum(r[3] for r in results), 1)
    total = sum(score.score_a for score in scores)
    print(f"duel {first} vs {second}: {deals} deals, seed {seed}")
    print(f"  A scored {total}/{len(scores)} = {total / len(scores):.3f}")
    if pairs is not None:
        interval = pairs.score.interval
        counts = summary.pentanomial.counts if summary.pentanomial else ()
        print(
            f"  pentanomial {counts}: score {pairs.score.value:.3f} "
            f"(95% {interval.low:.3f}-{interval.high:.3f})"
        )
    print(
        f"  A: {iterations / decisions:.0f} iterations per decision, "
        f"wall {time.monotonic() - started:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("micro")
    m.add_argument("--positions", type=int, default=300)
    m.add_argument("--seed", type=int, default=1)
    lad = sub.add_parser("ladder")
    lad.add_argument("--games", type=int, default=40)
    lad.add_argument("--think-ms", default="50,200")
    lad.add_argument("--seed", type=int, default=14)
    lad.add_argument("--save", type=Path)
    d = sub.add_parser("duel")
    d.add_argument("first")
    d.add_argument("second", nargs="?", default="greedy")
    d.add_argument("--deals", type=int, default=50)
    d.add_argument("--seed", type=int, default=1)
    d.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if args.command == "micro":
        micro(args.positions, args.seed)
    elif args.command == "duel":
        duel(args.first, args.second, args.deals, args.seed, args.workers)
    else:
        budgets = [int(part) for part in args.think_ms.split(",")]
        ladder(args.games, budgets, args.seed, args.save)


if __name__ == "__main__":
    main()
