"""`arena ray-worker ADDRESS`: join a Ray cluster as a node that plays matches.

Joins only a cluster that asks for Ray's token (``RAY_AUTH_MODE=token``; the
token of ``arena ray-token create`` at ``$RAY_AUTH_TOKEN_PATH`` or
``~/.ray/auth_token``): without the token it refuses to start, and it asks the
head first and refuses a head that answers without one, since anyone who
reaches such a cluster runs any code on this node as its user (``--insecure``
joins anyway). The node's bot cache (``--cache``) must be this user's alone,
and so must the directory that holds Ray's temp directory
(``arena.commands.ray_tempdir``: Ray makes its own writable by everyone).
Runs the sandbox check next (``arena sandbox-check``); only when every layer
works does it start Ray on this node with the custom resource
``kahuna_sandbox`` (matches ask for one unit each), so that a node that
cannot sandbox bots never gets a match. Without the check passing it starts
nothing and exits 1 (``--unsafe-no-sandbox`` advertises the resource anyway:
trusted bots only). ``--ray-start-args`` passes more flags to ``ray start``.
The slots go to the node's Ray processes as ``$KAHUNA_RAY_SLOTS``: each match
task pins itself to one slot's share of the node's CPUs
(``arena.tournament.execution.node_slots``). Ray's own CPU is kept from the matches: no
log monitor (``--include-log-monitor=false``: it streams workers' logs to
drivers, which the arena's driver turns off) and no metrics recording
(``RAY_enable_metrics_collection=0``); and its workers, which play the matches,
run at nice 0, not Ray's 15 (``RAY_worker_niceness=0``: the referee and the
bots it starts would otherwise wait for every other process on the node, on
their own clocks). Ray's workers are told not to kill their
child processes as they exit
(``RAY_kill_child_processes_on_worker_exit=0``): the sandbox watchdog, a child
of the referee, must outlive it to kill its bots. As Ray starts, a process of
its own makes the node's slot players (``arena.tournament.execution.slot_players``:
one long-lived match player per slot, the arena imported once), so that the
first tournament's matches start from warm processes; it exits once they are
ready.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from typing import Any

from arena.commands.pathargs import given, passed_on
from arena.commands.ray_tempdir import flag_value, temp_dir_problem, with_private_temp_dir
from arena.commands.storeargs import EXIT_BAD_FLAGS, fail
from arena.sandbox.probe import probe_host
from arena.tournament.execution.bot_bundles import CACHE_ENV, CacheError, configured_root, open_root
from arena.tournament.execution.node_slots import SLOTS_ENV
from arena.tournament.execution.ray_auth import ClusterAuth, TokenError, cluster_auth, require_token

# arena.tournament.execution.ray_executor's, without importing Ray
SANDBOX_RESOURCE = "kahuna_sandbox"
DESCRIPTION = (
    "Join a Ray cluster as a node that plays matches. Runs `arena sandbox-check` first:"
    " only when every layer of the sandbox works does it start Ray on this node, offering"
    " the resource that matches ask for, so that a node that cannot sandbox bots never"
    " gets a match; otherwise it starts nothing and exits 1 (--unsafe-no-sandbox offers"
    " the resource anyway: trusted bots only). --ray-start-args passes more flags to"
    " `ray start`. Each match runs on its own share of the node's CPUs (--slots). Ray's"
    " files (sockets, logs) go to <tmp>/kahuna-ray-<uid>/ray, inside a directory only"
    " this user can open (a --temp-dir=DIR/ray in --ray-start-args: DIR this user's"
    " alone)."
)
"""The help's description: the module docstring says how, for the code's readers."""
KEEP_CHILDREN_ENV = "RAY_kill_child_processes_on_worker_exit"
METRICS_ENV = "RAY_enable_metrics_collection"
NICENESS_ENV = "RAY_worker_niceness"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ray-worker", help="join a Ray cluster as a node that plays matches",
        description=DESCRIPTION,
    )  # fmt: skip
    parser.add_argument("address", help="the Ray head's address (host:port)")
    parser.add_argument(
        "--slots", type=int, help="matches at once on this node (default: its CPUs)"
    )
    parser.add_argument("--num-cpus", type=int, help="CPUs this node gives Ray (default: all)")
    parser.add_argument(
        "--cache", type=given, help="directory of this node's bot cache ($KAHUNA_RAY_CACHE)"
    )
    parser.add_argument(
        "--unsafe-no-sandbox", action="store_true",
        help="advertise the resource although the sandbox check fails (trusted bots only)",
    )  # fmt: skip
    parser.add_argument(
        "--insecure", action="store_true",
        help="join without token authentication, or a cluster that runs without it: anyone"
        " who reaches the cluster can then run any code on this node",
    )  # fmt: skip
    parser.add_argument("--dry-run", action="store_true", help="print the ray start command only")
    parser.add_argument(
        "--ray-start-args", default="", metavar="ARGS", type=passed_on,
        help="more `ray start` flags, one string (e.g. \"--node-ip-address=10.0.0.5\")",
    )  # fmt: skip
    parser.set_defaults(func=run)


def ray_start_argv(args: argparse.Namespace, slots: int) -> list[str]:
    private, _ = with_private_temp_dir(args.ray_start_args)
    extra = private + shlex.split(args.ray_start_args)
    ray = shutil.which("ray")
    start = [ray] if ray else [sys.executable, "-m", "ray.scripts.scripts"]
    argv = [*start, "start", f"--address={args.address}",
            f"--resources={json.dumps({SANDBOX_RESOURCE: slots})}",
            "--include-log-monitor=false"]  # fmt: skip
    if args.num_cpus is not None:
        argv.append(f"--num-cpus={args.num_cpus}")
    return argv + extra


def flags_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the address or flags, before the sandbox check or `ray start`."""
    host, colon, port = args.address.rpartition(":")
    if not colon or not host or any(c.isspace() for c in host) or not port.isdigit() or not (
        0 < int(port) <= 65535
    ):
        return f"ADDRESS {args.address!r}: give the Ray head's HOST:PORT, e.g. 10.0.0.1:6379"
    for flag, value in (("--slots", args.slots), ("--num-cpus", args.num_cpus)):
        if value is not None and value < 1:
            return f"{flag} must be at least 1, got {value}"
    try:
        shlex.split(args.ray_start_args)
    except ValueError as error:
        return f"--ray-start-args {args.ray_start_args!r}: {error}"
    return None


def locked_problem(args: argparse.Namespace) -> str | None:
    """Why this node could not prove it holds the cluster's token, or None (token
    authentication now on for the Ray processes it starts)."""
    if args.insecure:
        print("arena: WARNING: --insecure: joining without token authentication; anyone who"
              " reaches the cluster can run any code on this node", file=sys.stderr)  # fmt: skip
        return None
    try:
        require_token(os.environ)
    except TokenError as error:
        return f"{error}; not joining (--insecure joins a cluster without authentication)"
    return None


def cache_problem() -> str | None:
    """Why the node's bot cache cannot be used (made now if missing), or None."""
    root = configured_root()
    try:
        os.close(open_root(root))
    except CacheError as error:
        return str(error)
    except OSError as error:
        return f"cannot make the bot cache {root}: {error.strerror} (--cache DIR chooses another)"
    return None


def open_cluster_problem(address: str) -> str | None:
    """Why not to join the head at ``address``: it cannot be asked, or it runs code for
    anyone, without the token."""
    try:
        found = cluster_auth(address)
    except ConnectionError as error:
        return f"{error}; not joining"
    if found is ClusterAuth.OPEN:
        return (
            f"the Ray head at {address} runs without token authentication: anyone who"
            " reaches it can run any code on its nodes, this one too. Start the head with"
            " `arena ray-head` (docs/DISTRIBUTED.md), or give --insecure to join anyway"
        )
    return None


def node_ip_of(ray_start_args: str) -> str | None:
    """The ``--node-ip-address`` given in ``ray_start_args`` (the last), or None."""
    return flag_value(ray_start_args, "--node-ip-address")


def start_warming(args: argparse.Namespace) -> None:
    """Start the process that makes this node's slot players once its raylet is up (it
    outlives this one, which becomes `ray start`, and is no child of it: nobody there
    would reap it; its output goes nowhere: a node without them still plays, its players
    made by the first driver)."""
    node_ip = node_ip_of(args.ray_start_args)
    argv = [sys.executable, "-m", "arena.tournament.execution.slot_players", args.address]
    middle = os.fork()
    if middle == 0:  # started from a child that exits at once: the warmer is orphaned
        try:
            subprocess.Popen(
                argv + ([] if node_ip is None else ["--node-ip", node_ip]),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
            )  # fmt: skip
        finally:
            os._exit(0)
    os.waitpid(middle, 0)


def run(args: argparse.Namespace) -> int:
    problem = flags_problem(args)
    if problem is not None:
        return fail(problem, EXIT_BAD_FLAGS)
    if args.cache:  # absolute: the node's Ray workers run elsewhere
        os.environ[CACHE_ENV] = os.path.abspath(args.cache)
    private, temp_dir = with_private_temp_dir(args.ray_start_args)
    problem = (
        locked_problem(args) or cache_problem()
        or temp_dir_problem(temp_dir, default=bool(private))
    )  # fmt: skip
    if problem is not None:
        return fail(problem)
    report = probe_host()
    if not report.complete:
        problems = "; ".join(report.missing) or "incomplete"
        if not args.unsafe_no_sandbox:
            return fail(
                f"this node cannot sandbox bots ({problems}): not joining as a match node"
                " (`arena sandbox-check` says more)"
            )
        print(f"arena: WARNING: no complete sandbox ({problems}); joining anyway (unsafe)",
              file=sys.stderr)  # fmt: skip
    slots = args.slots or args.num_cpus or os.cpu_count() or 1
    argv = ray_start_argv(args, slots)
    if args.dry_run:
        print(" ".join(argv))
        return 0
    if not args.insecure:
        problem = open_cluster_problem(args.address)
        if problem is not None:
            return fail(problem)
    # Each match task pins itself to one slot's share of the node's CPUs (node_slots);
    # KAHUNA_RAY_SLOTS=0 set by the user turns that off.
    os.environ.setdefault(SLOTS_ENV, str(slots))
    # A Ray worker that exits kills its child processes by default; the sandbox's
    # watchdog is one, and it must outlive the referee to kill the referee's bots
    # (frozen mid-kill otherwise). The watchdog ends the bots itself.
    os.environ.setdefault(KEEP_CHILDREN_ENV, "0")
    # Ray's own CPU on a node is taken from its matches: no metrics recording (the arena
    # reads none), as no log monitor (above: it streams workers' logs to drivers, which
    # the arena's driver turns off).
    os.environ.setdefault(METRICS_ENV, "0")
    # Ray runs its workers at nice 15 ("CPU for other processes first"); a match's referee
    # and bots (its children) would then wait for anything else on the node, and their
    # clocks count that wait: the node is there to play matches.
    os.environ.setdefault(NICENESS_ENV, "0")
    print(f"sandbox check passed; joining {args.address} with {SANDBOX_RESOURCE}={slots}")
    sys.stdout.flush()
    start_warming(args)
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        return fail(f"cannot run ray start: {error} (pip install 'kahuna-arena[ray]')")
    return 1  # not reached
