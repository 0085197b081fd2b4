"""The Python bot SDK's CPU per decision, in the sandbox, against the real referee.

Run: python3 benchmarks/sdk.py [--games N] [--rounds R] [--before TREE]

For python_random and python_greedy, each playing itself (so both seats
are the measured bot), prints the bot's CPU per decision: its cgroup's CPU
time over each game (the records' ``match.cpu_ms``) divided by the requests
it answered; then the decisions per second of one random-against-random
match (wall time of the whole match, launches included). ``--before TREE``
(another checkout, e.g. ``git worktree add /tmp/sdk-other <commit>``)
measures that tree's SDK and bots too, interleaved with this checkout's
round by round so that both see the same load; each bot gets
its own copy of the SDK in its directory (``kahuna_bot/`` beside
``bot.py`` comes first on ``sys.path``). Medians over the rounds are printed;
figures are noisy while other work runs on the machine.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

from arena.logs import configure
from arena.referee import BotSpec, MatchConfig, load_bot, run_match

ROOT = Path(__file__).resolve().parent.parent
BOTS = ("python_random", "python_greedy")
SDK_PACKAGE = Path("sample_bots") / "sdk" / "python" / "kahuna_bot"


@dataclass(frozen=True)
class MatchFigures:
    cpu_us_per_decision: float
    decisions: int
    wall_s: float

    @property
    def decisions_per_s(self) -> float:
        return self.decisions / self.wall_s


def vendored_bot(tree: Path, bot: str, into: Path) -> BotSpec:
    """``tree``'s bot directory with ``tree``'s SDK copied beside its bot.py."""
    directory = into / bot
    shutil.copytree(tree / "sample_bots" / bot, directory, ignore=_pycache)
    shutil.copytree(tree / SDK_PACKAGE, directory / "kahuna_bot", ignore=_pycache)
    for path in [directory, *directory.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return load_bot(directory)


def _pycache(_directory: str, names: list[str]) -> list[str]:
    return [name for name in names if name == "__pycache__"]


def play(spec: BotSpec, games: int, seed: int) -> MatchFigures:
    started = time.monotonic()
    report = run_match(MatchConfig(games=games, seed=seed), spec, spec)
    wall_s = time.monotonic() - started
    cpu_ms = 0.0
    decisions = 0
    for game in report.games:
        match = game.record["match"]
        if any(status != "ok" for status in match["statuses"].values()):
            raise RuntimeError(f"{spec.name}: game {match['game_index']} failed: {match}")
        cpu_ms += sum(value for value in match["cpu_ms"] if value is not None)
        decisions += len(match["timings"])
    return MatchFigures(1000 * cpu_ms / decisions, decisions, wall_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10, help="games per match")
    parser.add_argument("--rounds", type=int, default=5, help="matches per bot and tree")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--before", type=Path, help="an older checkout to compare with")
    args = parser.parse_args()
    configure(level="warning")
    trees = {"now": ROOT} if args.before is None else {"before": args.before, "now": ROOT}
    with tempfile.TemporaryDirectory(prefix="sdk-bench-") as work:
        Path(work).chmod(0o755)
        specs: dict[tuple[str, str], BotSpec] = {}
        for label, tree in trees.items():
            (Path(work) / label).mkdir(mode=0o755)
            for bot in BOTS:
                specs[label, bot] = vendored_bot(tree, bot, Path(work) / label)
        figures: dict[tuple[str, str], list[MatchFigures]] = {key: [] for key in specs}
        for round_index in range(args.rounds):
            for key, spec in specs.items():
                figures[key].append(play(spec, args.games, args.seed + round_index))
    print(f"CPU per decision (bot's cgroup), median of {args.rounds} matches of {args.games} games")
    for bot in BOTS:
        cells = []
        for label in trees:
            runs = figures[label, bot]
            cpu = statistics.median(run.cpu_us_per_decision for run in runs)
            spread = f"{min(r.cpu_us_per_decision for r in runs):.0f}-"
            spread += f"{max(r.cpu_us_per_decision for r in runs):.0f}"
            cells.append(f"{label} {cpu:4.0f} us ({spread})")
        print(f"  {bot:<14} " + "   ".join(cells))
    print("Decisions per second of one match (wall time, launches included), median")
    for bot in BOTS:
        cells = [
            f"{label} {statistics.median(r.decisions_per_s for r in figures[label, bot]):5.0f}/s"
            for label in trees
        ]
        print(f"  {bot:<14} " + "   ".join(cells))


if __name__ == "__main__":
    main()
