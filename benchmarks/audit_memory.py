"""`arena audit --bundle FILE`: peak memory (RSS) and time against the bundle's size.

    python3 benchmarks/audit_memory.py [--bots N] [--games-per-match G] [--large-mb MB]
                                       [--compare ROOT]

Fills a fresh store in a temporary directory with a finished round robin whose
games are dealt from its secret (arena.testing.demo_data.play_committed_games, so
the bundle passes), saves its bundle, then a large copy of it: the same games, each
record padded under ``match.timings`` (which the audit does not read, as a long
game's real timings are) to make the file about MB megabytes. Each file is audited
by ``python3 -m arena audit --bundle FILE`` in a process of its own, whose peak RSS
(``wait4``) and wall time are printed; with ``--compare ROOT`` the same files are
audited by the checkout at ROOT too (its arena package), e.g. one that reads a
bundle whole. The files are of format 1 (no reasons), which both read. They are
made by this script in a process of its own (``--make DIR``), and this one imports
no arena module: a child's peak RSS counts what its parent held when it forked.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def saved_bundles(work: Path, bots: int, games: int, large_mb: int) -> tuple[Path, Path, int]:
    """The small bundle's file, the large one's, and the number of games in each."""
    from arena import store as st
    from arena.testing.demo_data import add_demo_bots, play_committed_games
    from arena.tournament.policy.audit_bundle import FORMAT_WITHOUT_REASONS, bundle_parts
    from arena.tournament.policy.bundle_file import BundleText, bundle_text
    from arena.tournament.policy.rounds import create_tournament

    names = [f"bot{i}" for i in range(bots)]
    with st.Store.open(work / "data") as store:
        add_demo_bots(store, work / "bots", names)
        tournament = create_tournament(store, "measured", "round_robin", names,
                                       st.TournamentConfig(games_per_match=games))  # fmt: skip
        st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
        played = len(play_committed_games(store, tournament.id))
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        parts = list(bundle_parts(store, "measured"))
    for _, part in parts:
        part.pop("reason", None)
        if "format" in part:
            part["format"] = FORMAT_WITHOUT_REASONS
    small = work / "small.json"
    small.write_text("".join(bundle_text(parts)))
    pad = large_mb * 1_000_000 // played
    large = work / "large.json"
    text = BundleText()
    with large.open("w") as out:
        for kind, part in parts:
            if kind == "game":
                record = json.loads(part["record"])
                record.setdefault("match", {})["timings"] = [1.25] * (pad // 6)
                part = {**part, "record": json.dumps(record)}
            out.write(text.piece(kind, part))
        out.write(text.end())
    return small, large, played


def audited(root: Path, bundle: Path) -> tuple[int, float, float, str]:
    """Exit status, peak RSS in MiB, wall seconds and the verdict's first words."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "arena", "audit", "--bundle", str(bundle)],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             cwd=root)  # fmt: skip
    out = child.stdout.read() if child.stdout else b""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return (child.returncode, usage.ru_maxrss / 1024, time.monotonic() - started,
            out.decode(errors="replace")[:60].strip())  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=6)
    parser.add_argument("--games-per-match", type=int, default=4)
    parser.add_argument("--large-mb", type=int, default=400)
    parser.add_argument("--compare", type=Path, help="another checkout to audit the files with")
    parser.add_argument("--make", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = ["--bots", str(args.bots), "--games-per-match", str(args.games_per_match),
             "--large-mb", str(args.large_mb)]  # fmt: skip
    if args.make:
        small, large, played = saved_bundles(args.make, args.bots, args.games_per_match,
                                             args.large_mb)  # fmt: skip
        print(json.dumps([str(small), str(large), played]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        made = subprocess.run([sys.executable, __file__, *sizes, "--make", tmp], check=True,
                              capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(HERE)})  # fmt: skip
        small_name, large_name, played = json.loads(made.stdout)
        small, large = Path(small_name), Path(large_name)
        print(f"{played} games; small {small.stat().st_size / 1e6:.2f} MB,"
              f" large {large.stat().st_size / 1e6:.1f} MB; load {os.getloadavg()[0]:.1f}")
        roots = [("this tree", HERE)] + ([("compare", args.compare.resolve())]
                                          if args.compare else [])  # fmt: skip
        for label, root in roots:
            for name, bundle in (("small", small), ("large", large)):
                status, rss, wall, said = audited(root, bundle)
                print(f"{label:9} {name:5}: exit {status}, peak RSS {rss:7.1f} MiB,"
                      f" {wall:6.1f} s  {said}")


if __name__ == "__main__":
    main()
