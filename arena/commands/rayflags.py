"""`--ray ADDRESS` (or ``$KAHUNA_RAY_ADDRESS``): play matches on a Ray cluster.

Ray is an optional extra (``pip install 'kahuna-arena[ray]'``): it is imported
only when an address is given, by ``ray_executor``. The driver joins only a
cluster that asks for Ray's token, holding it (``arena.tournament.execution.ray_auth``):
it sends the cluster the tournament's bots and stores what the cluster returns.
``--ray-insecure`` joins a cluster without authentication.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
from collections.abc import Callable
from pathlib import Path

from arena.tournament.execution.executor import MatchExecutor
from arena.tournament.execution.ray_auth import ClusterAuth, TokenError, cluster_auth, require_token

RAY_ADDRESS_ENV = "KAHUNA_RAY_ADDRESS"


class RayUnavailableError(RuntimeError):
    """A Ray address was given but Ray cannot be used (not installed, cluster unreachable)."""


def add_ray_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ray", metavar="ADDRESS", default=os.environ.get(RAY_ADDRESS_ENV) or None,
        help="play the matches on the Ray cluster at ADDRESS (host:port of its head;"
        f" default ${RAY_ADDRESS_ENV}); needs `pip install 'kahuna-arena[ray]'`",
    )  # fmt: skip
    parser.add_argument(
        "--ray-match-cpus", type=float, default=1.0, metavar="N",
        help="CPUs a match asks of a Ray node (default 1: the referee and two bots that"
        " think in turn; 3 for bots that think on their opponent's time)",
    )  # fmt: skip
    parser.add_argument(
        "--ray-insecure", action="store_true",
        help="join the Ray cluster without its token, or one that runs without token"
        " authentication (anyone who reaches it can run code on it)",
    )  # fmt: skip


def ray_flags_problem(args: argparse.Namespace) -> str | None:
    cpus = getattr(args, "ray_match_cpus", 1.0)  # commands without the flags: none given
    if not 0 < cpus < math.inf:  # also nan
        return f"--ray-match-cpus must be more than 0 and finite, got {cpus:g}"
    return None


def ray_executor(args: argparse.Namespace) -> MatchExecutor | None:
    """The Ray executor the flags ask for, connected; None without an address."""
    if not getattr(args, "ray", None):
        return None
    return connect(args.ray, match_cpus=args.ray_match_cpus, insecure=args.ray_insecure)


def ray_executors(args: argparse.Namespace) -> Callable[[], MatchExecutor] | None:
    """A maker of Ray executors (one per tournament run) on the flags' cluster, joined
    now; None without an address."""
    if not getattr(args, "ray", None):
        return None
    def joined() -> MatchExecutor:
        return connect(args.ray, match_cpus=args.ray_match_cpus, insecure=args.ray_insecure)

    joined()  # fails here, before serving
    return joined


def _token_on(address: str) -> None:
    """Token authentication on for this process and the Ray it imports after this."""
    try:
        require_token(os.environ)
    except TokenError as error:
        raise RayUnavailableError(f"{error}; not joining the cluster at {address}") from None


def _head_locked(address: str) -> None:
    """RayUnavailableError unless the head at ``address`` asks for the token."""
    try:
        found = cluster_auth(address)
    except ConnectionError as error:
        raise RayUnavailableError(f"cannot join the Ray cluster at {address}: {error}") from None
    if found is ClusterAuth.OPEN:
        raise RayUnavailableError(
            f"the Ray cluster at {address} runs without token authentication: anyone who"
            " reaches it can run code on it and read the tournament's bots; start its head"
            " with `arena ray-head` (docs/DISTRIBUTED.md), or give --ray-insecure"
        )


def runs_a_ray_node(proc: Path = Path("/proc")) -> bool:
    """Whether a Ray node (its raylet) runs on this machine: a driver joins a cluster
    through a node of its own machine, and Ray, without one, waits a minute and then
    says only that it failed to connect. True where processes cannot be listed."""
    try:
        entries = list(proc.iterdir())
    except OSError:
        return True
    for entry in entries:
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip() == "raylet":
                    return True
    return not entries


def connect(address: str, *, match_cpus: float = 1.0, insecure: bool = False) -> MatchExecutor:
    if not insecure:
        _token_on(address)
    try:
        from arena.tournament.execution.ray_executor import RayExecutor
    except ImportError as error:
        raise RayUnavailableError(
            f"--ray needs Ray: pip install 'kahuna-arena[ray]' ({error})"
        ) from None
    if not insecure:
        _head_locked(address)
    if not runs_a_ray_node():
        raise RayUnavailableError(
            f"cannot join the Ray cluster at {address} from this machine: it runs no Ray"
            " node, and a driver joins a cluster through a node of its own machine; run the"
            " driver on the head's machine, or start a node here first"
            " (docs/design/DISTRIBUTED.md, the driver)"
        )
    try:
        return RayExecutor(address, match_cpus=match_cpus)
    except (ConnectionError, RuntimeError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise RayUnavailableError(f"cannot join the Ray cluster at {address}: {first}") from None
