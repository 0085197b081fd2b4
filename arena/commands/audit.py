"""`arena audit NAME`: check a finished tournament against its published seed commitment.

Exit 0 with one line saying what passed; exit 1 naming the first difference
(a tournament not finished yet cannot be audited: its seed is still secret).
"""

from __future__ import annotations

import argparse
import json

from arena.commands.storeargs import add_data_dir, fail, with_store
from arena.store import Store
from arena.tournament.audit import audit_tournament


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "audit", help="check a finished tournament's seed, deals, results and ratings",
        description=__doc__,
    )  # fmt: skip
    parser.add_argument("name", help="tournament name")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_data_dir(parser)
    parser.set_defaults(func=with_store(run_audit))


def run_audit(store: Store, args: argparse.Namespace) -> int:
    report = audit_tournament(store, args.name)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
        return 0 if report.ok else 1
    if report.ok:
        print(report.text())
        return 0
    return fail(report.text().removeprefix("audit of "))
