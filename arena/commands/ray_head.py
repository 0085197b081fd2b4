"""`arena ray-head`: start the head of a Ray cluster for the arena, locked."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any

from arena.commands.pathargs import passed_on
from arena.commands.ray_tempdir import temp_dir_problem, with_private_temp_dir
from arena.commands.storeargs import EXIT_BAD_FLAGS, fail
from arena.tournament.execution.ray_auth import AUTH_MODE_ENV, TokenError, require_token

DESCRIPTION = """\
`arena ray-head`: start the head of a Ray cluster for the arena, locked.

The one head command of docs/design/DISTRIBUTED.md and docker/compose.ray.yaml. It
starts `ray start --head` with Ray's token authentication on
(`RAY_AUTH_MODE=token`: every node, driver and client must hold the token of
`arena ray-token create`; without one it refuses to start, unless
`--insecure`), no dashboard (`--dashboard HOST` starts one bound to HOST)
and no Ray Client server (`--ray-client PORT` starts one; it asks for the
token too). Ray's own CPU is kept low as on the workers: no log monitor, no
metrics recording. Ray's files (sockets, logs) go to
`<tmp>/kahuna-ray-<uid>/ray`, inside a directory only this user can open: Ray
makes its own temp directory writable by everyone. `--ray-start-args` passes
more flags to `ray start` (`--node-ip-address`, `--block`, `--temp-dir=DIR/ray`
with DIR this user's alone); `--dry-run` prints the command.

Ray has no flag that turns its client server off (it starts one on port 10001
whenever its dependencies are installed), so this runs `ray start` in this
process with Ray told its client is not installed.
"""


METRICS_ENV = "RAY_enable_metrics_collection"
DEFAULT_PORT = 6379


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ray-head", help="start the head of a Ray cluster (token authentication on)",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="the head's port (6379)")
    parser.add_argument(
        "--num-cpus", type=int, default=0,
        help="CPUs the head gives Ray (default 0: the head schedules, it plays no match)",
    )  # fmt: skip
    parser.add_argument(
        "--ray-client", type=int, metavar="PORT",
        help="start Ray's client server on PORT (default: none)",
    )  # fmt: skip
    parser.add_argument(
        "--dashboard", metavar="HOST",
        help="start Ray's dashboard bound to HOST (default: none; 127.0.0.1 for this machine)",
    )  # fmt: skip
    parser.add_argument(
        "--insecure", action="store_true",
        help="start without token authentication: anyone who reaches the head's ports can"
        " run any code on every node",
    )  # fmt: skip
    parser.add_argument("--dry-run", action="store_true", help="print the ray start command only")
    parser.add_argument(
        "--ray-start-args", default="", metavar="ARGS", type=passed_on,
        help="more `ray start` flags, one string (e.g. \"--node-ip-address=10.0.0.1 --block\")",
    )  # fmt: skip
    parser.set_defaults(func=run)


def head_start_args(
    port: int = DEFAULT_PORT, num_cpus: int = 0, *, ray_client: int | None = None,
    dashboard: str | None = None,
) -> list[str]:
    """The arguments of `ray start` for an arena head: what every documented start uses."""
    args = ["start", "--head", f"--port={port}", f"--num-cpus={num_cpus}",
            "--include-log-monitor=false", "--disable-usage-stats"]  # fmt: skip
    if dashboard is None:
        args.append("--include-dashboard=false")
    else:
        args += ["--include-dashboard=true", f"--dashboard-host={dashboard}"]
    if ray_client is not None:
        args.append(f"--ray-client-server-port={ray_client}")
    return args


def head_env(insecure: bool = False) -> dict[str, str]:
    """The environment `ray start --head` runs with (besides the token's path)."""
    return {METRICS_ENV: "0", **({} if insecure else {AUTH_MODE_ENV: "token"})}


def flags_problem(args: argparse.Namespace) -> str | None:
    for flag, port in (("--port", args.port), ("--ray-client", args.ray_client)):
        if port is not None and not 1024 <= port <= 65535:
            return f"{flag} must be a port from 1024 to 65535, got {port}"
    if args.num_cpus < 0:
        return f"--num-cpus must be 0 or more, got {args.num_cpus}"
    if args.dashboard is not None and (not args.dashboard or " " in args.dashboard):
        return f"--dashboard {args.dashboard!r}: give the address to bind, e.g. 127.0.0.1"
    try:
        shlex.split(args.ray_start_args)
    except ValueError as error:
        return f"--ray-start-args {args.ray_start_args!r}: {error}"
    return None


def run(args: argparse.Namespace) -> int:
    problem = flags_problem(args)
    if problem is not None:
        return fail(problem, EXIT_BAD_FLAGS)
    if not args.insecure:
        try:
            require_token(os.environ)
        except TokenError as error:
            return fail(f"{error}; not starting an open head")
    else:
        print("arena: WARNING: no token authentication: anyone who reaches this head can run"
              " any code on every node of the cluster", file=sys.stderr)  # fmt: skip
    private, temp_dir = with_private_temp_dir(args.ray_start_args)
    problem = temp_dir_problem(temp_dir, default=bool(private))
    if problem is not None:
        return fail(problem)
    env = head_env(args.insecure)
    argv = head_start_args(
        args.port, args.num_cpus, ray_client=args.ray_client, dashboard=args.dashboard
    ) + private + shlex.split(args.ray_start_args)  # fmt: skip
    if args.dry_run:
        print(" ".join([*(f"{k}={v}" for k, v in env.items()), "ray", *map(shlex.quote, argv)]))
        return 0
    os.environ.update(env)  # before Ray is imported: it reads its settings once
    try:
        from ray.scripts import scripts
    except ImportError as error:
        return fail(f"arena ray-head needs Ray: pip install 'kahuna-arena[ray]' ({error})")
    if args.ray_client is None:
        if not hasattr(scripts, "get_ray_client_dependency_error"):
            return fail(
                "this Ray version cannot be told to start no client server: give --ray-client"
                " PORT to start one (it asks for the token too)"
            )
        off = ImportError("Ray Client is off (arena ray-head --ray-client PORT turns it on)")
        scripts.get_ray_client_dependency_error = lambda: off
    try:
        scripts.cli.main(args=argv, prog_name="ray", standalone_mode=True)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    return 0
