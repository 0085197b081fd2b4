"""`arena audit NAME`: check a finished tournament against its published seed commitment."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

from arena.commands.noted import commitment_arg, digest_arg
from arena.commands.pathargs import given_path
from arena.commands.storeargs import EXIT_BAD_FLAGS, add_data_dir, fail, with_store
from arena.store import Store
from arena.tournament.policy.audit import (
    AuditReport,
    against_digest,
    against_noted,
    audit_parts,
    audit_tournament,
)
from arena.tournament.policy.bundle_file import BundleReadError, read_parts

DESCRIPTION = """\
`arena audit NAME`: check a finished tournament against its published seed commitment.

Exit 0 with what passed; exit 1 naming the first difference (a tournament not
finished yet cannot be audited: its seed is still secret). `--bundle FILE`
checks a saved audit bundle (`arena remote audit NAME --save FILE`) instead of
a data directory, offline: docs/reference/VERIFY.md. It is read a part at a
time, each game's record checked and dropped as it comes; a bundle over the
limits that page names is refused. Give `--commitment HEX`,
the commitment you noted when the tournament was created: one first read from
the bundle itself could hash a secret chosen after the games. Every verdict
prints the bundle's digest: compare it with other participants' (or give
theirs as `--expect-digest HEX`); a different one means a different bundle.
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "audit", help="check a finished tournament's seed, deals, results and ratings",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    parser.add_argument("name", nargs="?", help="tournament name (not with --bundle)")
    parser.add_argument("--bundle", type=given_path, metavar="FILE",
                        help="check this saved audit bundle (JSON) instead")  # fmt: skip
    parser.add_argument("--commitment", metavar="HEX", type=commitment_arg,
                        help="the seed commitment you noted when the tournament was created"
                        " (64 hex digits): it must be the one the bundle or the data"
                        " directory holds")  # fmt: skip
    parser.add_argument("--expect-digest", metavar="HEX", type=digest_arg,
                        help="the bundle digest another participant's audit printed (64 hex"
                        " digits): fail unless this bundle's is the same")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_data_dir(parser)
    parser.set_defaults(func=_dispatch)


def _dispatch(args: argparse.Namespace) -> int:
    if (args.bundle is None) == (args.name is None):
        return fail("give a tournament NAME or --bundle FILE (one of them)", EXIT_BAD_FLAGS)
    if args.bundle is None:
        return with_store(run_audit, existing=True)(args)
    try:
        with args.bundle.open("rb") as stream:
            report = audit_parts(read_parts(stream))
    except OSError as error:
        return fail(f"--bundle {args.bundle}: {error.strerror or error}", EXIT_BAD_FLAGS)
    except BundleReadError as error:
        return fail(f"--bundle {args.bundle}: {error}", EXIT_BAD_FLAGS)
    return _show(_noted(report, args), args)


def run_audit(store: Store, args: argparse.Namespace) -> int:
    return _show(_noted(audit_tournament(store, args.name), args), args)


def _noted(report: AuditReport, args: argparse.Namespace) -> AuditReport:
    """``report`` held to the commitment noted at creation (--commitment) and to the digest
    expected (--expect-digest); without a commitment, a pass says what it cannot show:
    that the commitment it checked was published before play."""
    report = against_digest(report, args.expect_digest)
    noted: str | None = args.commitment
    if noted is not None or not report.ok:
        return against_noted(report, report.commitment, noted)
    return replace(report, checked=(*report.checked, (
        "not checked: that the commitment was published before play (give --commitment HEX,"
        " the one you noted when the tournament was created)")))  # fmt: skip


def _show(report: AuditReport, args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
        return 0 if report.ok else 1
    if report.ok:
        print(report.text())
        return 0
    return fail(report.text().removeprefix("audit of "))
