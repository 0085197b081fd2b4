"""`arena sandbox-check`: what this host gives the bot sandbox, layer by layer."""

from __future__ import annotations

import argparse
import json
from typing import Any

from arena.sandbox.cgroups import V1_CONTROLLERS, V2_CONTROLLERS
from arena.sandbox.probe import probe_host


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sandbox-check",
        help="check that this host can sandbox untrusted bots",
        description=(
            "Try each sandbox layer for real (bubblewrap namespaces, the seccomp filter, "
            "a cgroup with every limit) and say exactly what is missing. "
            "Exit status 0 when every layer works, 1 otherwise."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    report = probe_host()
    if args.json:
        print(json.dumps({
            "namespaces": report.namespaces,
            "cgroup_version": report.cgroup_version,
            "seccomp": report.seccomp,
            "missing": list(report.missing),
        }))
        return 0 if report.complete else 1
    controllers = V2_CONTROLLERS if report.cgroup_version == 2 else V1_CONTROLLERS
    rows = [
        ("namespaces", "yes" if report.namespaces else "no", "bwrap: pid, net, ipc, uts, mount"),
        (
            "cgroups",
            f"v{report.cgroup_version}" if report.cgroup_version else "no",
            ", ".join(controllers),
        ),
        ("seccomp", "yes" if report.seccomp else "no", "no IP sockets, no user namespaces"),
    ]
    for name, state, detail in rows:
        print(f"{name:<11} {state:<4} ({detail})")
    for problem in report.missing:
        print(f"missing: {problem}")
    if report.complete:
        print("the sandbox is complete: untrusted bots can run")
        return 0
    print("untrusted bots will be refused unless run with the explicit unsafe flag")
    return 1
