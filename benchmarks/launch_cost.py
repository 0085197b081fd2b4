"""Where the CPU of launching and shutting down a bot goes, measured.

A launch is CPU that no game needs, and a paired match launches every bot once per
half, so the parts are timed one by one to show which to make cheaper.

    python3 benchmarks/launch_cost.py [--repeats 10] [--parts host sandbox parts match]

Every launch of a paired match's halves costs CPU on both sides: the bot's (bwrap,
namespaces, the interpreter and its imports, connecting, exiting) and the referee's
(cgroups, the staging links, the gRPC endpoint, the gate and the output drainer,
Hello/Welcome, the shutdown). Each part here is timed ``--repeats`` times, the
parts of a group interleaved (a, b, c, a, b, c, ...), and printed as the median
CPU milliseconds per repeat:

* ``host``: plain ``python3`` runs (no sandbox) with the bot's ``PYTHONPATH``: an
  empty one (``-S``: without ``site``), ``-c pass``, ``import grpc``,
  ``import google.protobuf``, ``import kahuna_bot`` (CPU of the reaped child);
  then the slowest imports of ``kahuna_bot`` from ``-X importtime``;
* ``sandbox``: ``launch_bot`` of ``/bin/true``, ``python3 -c pass`` and
  ``python3 -c "import kahuna_bot"``, each waited for and released: the bot's CPU
  (its cgroup, bwrap included), and this process's (the launcher, the release);
* ``parts``: the referee's pieces alone, in this process: a bot's cgroups created
  and removed, its staging links made and removed, a ``BotEndpoint`` (a gRPC
  server on a Unix socket) made, started and stopped;
* ``match``: ``run_match`` of two sandboxed python_random bots, 2 and 8 games, and
  a match's two halves (``run_halves``) of 8: this process's CPU (per thread
  where the thread lives on: the endpoint loop, gRPC's pollers; the rest is
  threads that ended), its reaped children (the output drainers) and the bots'
  cgroups, per match.

The machine is shared: run it quiet, and read the load printed with it.
"""

from __future__ import annotations

import argparse
import functools
import os
import queue
import re
import resource
import socket
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

from arena.referee import MatchConfig, load_bot, run_match
from arena.referee.bytecode import compiled_tree
from arena.referee.endpoint import BotEndpoint
from arena.referee.halves import run_halves
from arena.referee.prestart import decide_prestart
from arena.resources import PYTHON_BOT_MOUNTS, sample_bot
from arena.sandbox import SANDBOX_SOCKET, SandboxLimits, launch_bot, probe_host, running
from arena.sandbox.cgroups import create_bot_cgroup
from arena.sandbox.staging import stage_sources
from arena.tournament.execution.cpu_placement import usable_cpus

PARTS = ("host", "sandbox", "parts", "match")
SITE = sysconfig.get_paths()["purelib"]  # the interpreter's site-packages
WITHOUT_SITE = f"import sys; sys.path.append({SITE!r}); import kahuna_bot"  # no .pth files run


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _self_cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1000


def _children_cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def _threads_ns() -> dict[str, int]:
    """CPU (ns, from schedstat) of each living thread of this process, by name."""
    found: dict[str, int] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            ran = int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        name = re.sub(r"[-_]?\d+$", "", name)  # ThreadPoolExecutor-0_1 -> one name
        found[name] = found.get(name, 0) + ran
    return found


def _median(samples: list[float]) -> str:
    return f"{statistics.median(samples):8.1f}"


def _interleaved(cases: dict[str, Callable[[], dict[str, float]]], repeats: int) -> None:
    """Run every case ``repeats`` times, interleaved; print each measure's median."""
    results: dict[str, dict[str, list[float]]] = {name: {} for name in cases}
    for case in cases.values():  # warm-up: caches, the compiled trees, first imports
        case()
    for _ in range(repeats):
        for name, case in cases.items():
            for measure, value in case().items():
                results[name].setdefault(measure, []).append(value)
    for name, measures in results.items():
        shown = ", ".join(f"{m} {_median(v).strip()}" for m, v in measures.items())
        print(f"  {name:<42} {shown}")


# ------------------------------------------------------------------ host python


@functools.cache
def _bot_pythonpath() -> str:
    """The bot's PYTHONPATH on the host: the compiled trees the sandbox mounts, laid out
    as inside (the engine as ``arena/kahuna`` in a namespace package of its own)."""
    layout = Path(tempfile.mkdtemp(prefix="kahuna-launch-path-"))
    entries = []
    for mount in PYTHON_BOT_MOUNTS:
        tree = compiled_tree(mount.host_dir())
        if mount.python_path:  # an ancestor of the mount (the engine's namespace package)
            inside = Path(mount.inside).relative_to(mount.python_path)
            (layout / inside).parent.mkdir(parents=True, exist_ok=True)
            (layout / inside).symlink_to(tree)
            entries.append(str(layout))
        else:
            entries.append(str(tree))
    return ":".join(entries)


def _host_env() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp", "LANG": "C.UTF-8",
        "PYTHONPATH": _bot_pythonpath(), "PYTHONDONTWRITEBYTECODE": "1",
        "KAHUNA_REFEREE": "unix:///nonexistent",
    }  # fmt: skip


def _host_case(args: list[str]) -> Callable[[], dict[str, float]]:
    env = _host_env()

    def case() -> dict[str, float]:
        before = _children_cpu_ms()
        subprocess.run([sys.executable, *args], env=env, check=True, cwd="/tmp")
        return {"cpu_ms": _children_cpu_ms() - before}

    return case


def bench_host(repeats: int) -> None:
    print("host python (no sandbox), CPU ms of the child:")
    _interleaved(
        {
            "python3 -S -c pass": _host_case(["-S", "-c", "pass"]),
            "python3 -c pass": _host_case(["-c", "pass"]),
            "python3 -c 'import grpc'": _host_case(["-c", "import grpc"]),
            "python3 -c 'import grpc.aio'": _host_case(["-c", "import grpc.aio"]),
            "python3 -c 'import google.protobuf'": _host_case(
                ["-c", "from google.protobuf import descriptor_pb2"]
            ),
            "python3 -c 'import kahuna_bot'": _host_case(["-c", "import kahuna_bot"]),
        },
        repeats,
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import kahuna_bot"],
        env=_host_env(), capture_output=True, text=True, check=True, cwd="/tmp",
    )  # fmt: skip
    rows = []
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if match:
            rows.append((int(match.group(2)), len(match.group(3)), match.group(4)))
    print("  -X importtime of `import kahuna_bot`, cumulative us, the top levels:")
    for cumulative, depth, name in sorted(rows, reverse=True):
        if depth <= 3 and cumulative >= 2000:
            print(f"    {cumulative:>8} {name}")


# ------------------------------------------------------------------ sandbox


class _Socket:
    """A listening Unix socket, for launch_bot's check (nothing connects)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / "referee.sock"
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(str(self.path))
        self.listener.listen(4)


def _released_cpu(process: running.BotProcess) -> float:
    process.kill()
    return process._resources.last_cpu_time_ms or 0.0


def _sandbox_case(
    command: list[str], runtime: str, directory: Path, listener: _Socket
) -> Callable[[], dict[str, float]]:
    env: dict[str, str] = {"PYTHONDONTWRITEBYTECODE": "1"}
    binds: list[tuple[Path, str]] = []
    if runtime == "python":
        binds = [(compiled_tree(m.host_dir()), m.inside) for m in PYTHON_BOT_MOUNTS]
        env["PYTHONPATH"] = ":".join(m.path_entry(True) for m in PYTHON_BOT_MOUNTS)
        env["KAHUNA_REFEREE"] = f"unix://{SANDBOX_SOCKET}"

    def case() -> dict[str, float]:
        started = _self_cpu_ms()
        children = _children_cpu_ms()
        process = launch_bot(
            bot_dir=directory, command=command, runtime=runtime, env=env,
            socket_path=listener.path, limits=SandboxLimits(), extra_ro_binds=binds,
            stderr_path=directory.parent / "stderr", stdout_path=Path(os.devnull),
        )  # fmt: skip
        launched = _self_cpu_ms()
        process.wait(10.0)
        waited = _self_cpu_ms()
        bot_ms = _released_cpu(process)
        return {
            "bot(cgroup)": bot_ms,
            "launch_bot": launched - started,
            "wait": waited - launched,
            "release": _self_cpu_ms() - waited,
            "children": _children_cpu_ms() - children,
        }

    return case


def bench_sandbox(repeats: int) -> None:
    print("sandboxed launches, waited for and released, CPU ms:")
    with tempfile.TemporaryDirectory(prefix="kahuna-launch-", dir="/tmp") as work:
        root = Path(work)
        os.chmod(root, 0o755)
        bot_dir = root / "bot"
        bot_dir.mkdir(mode=0o755)
        listener = _Socket(root)
        cases = {
            "/bin/true": _sandbox_case(["/bin/true"], "native", bot_dir, listener),
            "python3 -c pass": _sandbox_case(
                ["python3", "-c", "pass"], "python", bot_dir, listener
            ),
            "python3 -S -c pass": _sandbox_case(
                ["python3", "-S", "-c", "pass"], "python", bot_dir, listener
            ),
            "python3 -c 'import kahuna_bot'": _sandbox_case(
                ["python3", "-c", "import kahuna_bot"], "python", bot_dir, listener
            ),
            "python3 -S (site-packages on sys.path) ...": _sandbox_case(
                ["python3", "-S", "-c", WITHOUT_SITE], "python", bot_dir, listener
            ),
        }
        _interleaved(cases, repeats)


# ------------------------------------------------------------------ referee parts


def bench_parts(repeats: int) -> None:
    print("referee parts alone (this process's CPU, ms):")
    with tempfile.TemporaryDirectory(prefix="kahuna-parts-", dir="/tmp") as work:
        root = Path(work)
        bot_dir = sample_bot("python_random")
        listener = _Socket(root)
        extras = tuple((compiled_tree(m.host_dir()), m.inside) for m in PYTHON_BOT_MOUNTS)
        count = iter(range(1_000_000))

        def cgroup() -> dict[str, float]:
            started = _self_cpu_ms()
            group = create_bot_cgroup(f"bot-{os.getpid()}-bench{next(count)}", SandboxLimits())
            made = _self_cpu_ms()
            group.remove()
            return {"create": made - started, "remove": _self_cpu_ms() - made}

        def staging() -> dict[str, float]:
            started = _self_cpu_ms()
            staged = stage_sources(bot_dir, listener.path, extras)
            made = _self_cpu_ms()
            staged.remove()
            return {"link": made - started, "remove": _self_cpu_ms() - made}

        def endpoint() -> dict[str, float]:
            started = _self_cpu_ms()
            point = BotEndpoint(0, root / f"e{next(count)}.sock", queue.SimpleQueue())
            point.start()
            made = _self_cpu_ms()
            point.stop()
            return {"make+start": made - started, "stop": _self_cpu_ms() - made}

        _interleaved({"cgroups": cgroup, "staging links": staging, "endpoint": endpoint},
                     repeats)  # fmt: skip


# ------------------------------------------------------------------ whole matches


def bench_match(repeats: int) -> None:
    print("matches of two sandboxed python_random bots, CPU ms per match:")
    released: list[float] = []
    original = running.release

    def counting(resources: running.Resources) -> None:
        first = not resources.released
        original(resources)
        if first and resources.owner_pid == os.getpid():
            released.append(resources.last_cpu_time_ms or 0.0)

    running.release = counting  # the bots' cgroup CPU, read as each is released
    bot = load_bot(sample_bot("python_random"))

    def match(games: int, halves: bool) -> Callable[[], dict[str, float]]:
        def case() -> dict[str, float]:
            released.clear()
            threads = _threads_ns()
            started, children = _self_cpu_ms(), _children_cpu_ms()
            wall = time.perf_counter()
            config = MatchConfig(games=games)
            if halves:  # as `arena match` plays them on this machine's CPUs
                run_halves(config, bot, bot, prestart=decide_prestart(cpus=len(usable_cpus())))
            else:
                run_match(config, bot, bot)
            wall = time.perf_counter() - wall
            referee = _self_cpu_ms() - started
            after = _threads_ns()
            result = {
                "wall": wall * 1000,
                "bots": sum(released),
                "launches": float(len(released)),
                "referee": referee,
                "children": _children_cpu_ms() - children,
            }
            named = 0.0
            for name, ns in after.items():
                spent = (ns - threads.get(name, 0)) / 1e6
                if spent >= 1.0:
                    result[f"t:{name}"] = spent
                    named += spent
            result["t:ended"] = referee - named
            return result

        return case

    _interleaved(
        {
            "run_match 2 games": match(2, False),
            "run_match 8 games": match(8, False),
            "run_halves 8 games": match(8, True),
        },
        repeats,
    )
    running.release = original


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    args = parser.parse_args(argv)
    report = probe_host()
    print(f"load {_load()} (1, 5, 15 min), {os.cpu_count()} CPUs, sandbox missing:"
          f" {list(report.missing) or 'nothing'}")  # fmt: skip
    benches = {"host": bench_host, "sandbox": bench_sandbox, "parts": bench_parts,
               "match": bench_match}  # fmt: skip
    for part in args.parts:
        benches[part](args.repeats)
    print(f"load after: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
