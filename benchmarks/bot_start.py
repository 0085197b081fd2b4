"""The CPU of starting a sandboxed Python bot, from its launch to its Hello, part by part.

    python3 benchmarks/bot_start.py [--launches 10] [--rounds 1] [--tree NAME=PATH ...]
                                    [--bots python_random python_greedy] [--importtime 5]

Every match a tournament plays launches each bot once per half, and a Python bot
pays its interpreter, its imports and its sandbox before its first move; the suite
launches thousands. This measures one launch the way the referee makes it
(``BotSlot.launch`` on a fresh ``BotEndpoint``, sandboxed, the compiled mounts of
``arena.resources.PYTHON_BOT_MOUNTS``), ``--launches`` times per case, the cases
interleaved, and prints the median CPU ms per launch of each part:

* **the bots** (each of ``--bots``, to its Hello on the endpoint's queue): ``total``,
  the CPU of everything this child and what it started did from the endpoint's
  creation to the Hello's arrival, counted by a cgroup v2 group of its own (the
  kernel's ``cpu.stat``: the gate before it enters the bot's group, the bot, the
  launching thread, gRPC's threads); ``bot``, the bot's own cgroup at its Hello
  (the gate's shell, bwrap, setpriv, Python, the connect and the Hello); ``launcher``,
  the rest; and the launcher's pieces (thread CPU of the calls, in this process):
  ``endpoint`` (made and started), ``probe``, ``stage`` (the staging links),
  ``seccomp`` (the filter), ``cgroup`` (created), ``gate`` (its rlimits and
  affinity), ``watchdog``, and ``thread NAME``, the CPU of this process's threads
  by their names in the kernel (``comm``) where they spent 0.2 ms or more: gRPC's
  own threads are named (``event_engine``), Python's threads are all ``python``
  (the launching thread, the endpoints' event loop that accepts the connection and
  reads the Hello, the spawner that forks the gate, the output drains); ``release``
  (the kill, the cgroup and links removed, the endpoint stopped) is after the Hello;
* **the bot's side, step by step** (its cgroup, each step a command that imports
  more and then connects to a socket of this benchmark and writes a byte: measured
  as the byte arrives): the sandbox with ``/bin/true`` (to its exit), ``python3 -S``,
  ``python3`` (``site``), then cumulatively the standard library modules that
  ``import kahuna_bot`` loads, protobuf and the generated ``kahuna.v1``, h2 (with
  hpack, hyperframe), the engine ``arena.kahuna``, the SDK ``kahuna_bot``; the
  bot's row above adds the bot's own module, the connect and the Hello;
* ``--importtime N``: ``python3 -X importtime`` of ``import kahuna_bot`` inside the
  sandbox, N launches: the median self and cumulative microseconds of the costliest
  modules (inflated by the tracing; read them against each other).

Each ``--tree NAME=PATH`` is a source tree whose ``arena`` (with its SDK and sample
bots) is put first on ``PYTHONPATH`` (default: this checkout): each round runs one
child per tree, in an order rotated by one per round (``_alternate``), and the table
shows each tree's median over all its launches. Needs root and cgroup v2 (or a
hybrid machine's ``unified`` hierarchy), as ``suite_cpu.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import queue
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _alternate import load_text, rotated

REPO = Path(__file__).resolve().parents[1]
GROUP_ENV = "BOT_START_GROUP"
HELLO_TIMEOUT_S = 30.0
STEPS = ("stdlib", "protobuf", "h2", "engine", "sdk")
"""The import groups of the bot's side, cumulative, in this order."""
GROUP_OF = {"google": "protobuf", "kahuna": "protobuf", "h2": "h2", "hpack": "h2",
            "hyperframe": "h2", "arena": "engine", "kahuna_bot": "sdk"}  # fmt: skip


# ------------------------------------------------------------------ the child


def _group_usec() -> int:
    from arena.sandbox.cgroups import read_keyed

    return read_keyed(Path(os.environ[GROUP_ENV]) / "cpu.stat")["usage_usec"]


class _Pieces:
    """Thread CPU (ms) of named calls of the launch path, summed until taken."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    def wrap(self, module: Any, attribute: str, name: str) -> None:
        original = getattr(module, attribute)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                spent = (time.thread_time() - started) * 1000
                self.spent[name] = self.spent.get(name, 0.0) + spent

        setattr(module, attribute, timed)

    def take(self) -> dict[str, float]:
        spent, self.spent = self.spent, {}
        return spent


def _instrument() -> _Pieces:
    import arena.sandbox.process as process

    pieces = _Pieces()
    for attribute, name in (("probe_host", "probe"), ("stage_sources", "stage"),
                            ("create_bot_cgroup", "cgroup"), ("ensure_watchdog", "watchdog"),
                            ("_set_rlimits", "gate"), ("pin_to_quota", "gate")):  # fmt: skip
        pieces.wrap(process, attribute, name)
    pieces.wrap(process.seccomp, "filter_fd", "seccomp")
    return pieces


def _threads_ms() -> dict[str, float]:
    """CPU ms (schedstat) of each living thread of this process, by name."""
    found: dict[str, float] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            ran = int((task / "schedstat").read_text().split()[0]) / 1e6
        except (OSError, ValueError, IndexError):
            continue
        name = re.sub(r"[-_]?\d+$", "", name)  # ThreadPoolExecutor-0_1 -> one name
        found[name] = found.get(name, 0.0) + ran
    return found


def _bot_case(name: str, work: Path, pieces: _Pieces) -> Callable[[], dict[str, float]]:
    from arena.referee import load_bot
    from arena.referee.endpoint import ArrivalKind, BotEndpoint
    from arena.referee.slots import BotSlot
    from arena.referee.types import MatchConfig
    from arena.resources import sample_bot

    spec = load_bot(sample_bot(name))
    config = MatchConfig()
    count = iter(range(1_000_000))

    def case() -> dict[str, float]:
        arrivals: queue.SimpleQueue[Any] = queue.SimpleQueue()
        pieces.take()
        threads = _threads_ms()
        group, thread = _group_usec(), time.thread_time()
        endpoint = BotEndpoint(0, work / f"e{next(count)}.sock", arrivals)
        endpoint.start()
        endpoint_ms = (time.thread_time() - thread) * 1000
        slot = BotSlot(index=0, spec=spec, name=name, endpoint=endpoint, work_dir=work)
        slot.launch(config, True)
        arrival = arrivals.get(timeout=HELLO_TIMEOUT_S)
        assert slot.process is not None
        bot_ms = slot.process.cpu_time_ms() or 0.0
        total_ms = (_group_usec() - group) / 1000
        after = _threads_ms()
        if arrival.kind is not ArrivalKind.MESSAGE or not arrival.message.HasField("hello"):
            raise SystemExit(f"{name}: {arrival.kind} instead of a Hello: {slot.stderr_excerpt()}")
        launched = pieces.take()
        for thread_name, ran in after.items():
            if ran - threads.get(thread_name, 0.0) >= 0.2:
                launched[f"thread {thread_name}"] = ran - threads.get(thread_name, 0.0)
        released = time.thread_time()
        slot.kill()
        endpoint.stop()
        result = {"total": total_ms, "bot": bot_ms, "launcher": total_ms - bot_ms,
                  "endpoint": endpoint_ms, **launched,
                  "release": (time.thread_time() - released) * 1000}  # fmt: skip
        with contextlib.suppress(FileNotFoundError):
            slot.stderr_path.unlink()
        return result

    return case


class _Listener:
    """A Unix socket the step commands connect to; a byte from one marks its point."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.socket = socket.socket(socket.AF_UNIX)
        self.socket.bind(str(path))
        self.socket.listen(8)
        self.socket.settimeout(HELLO_TIMEOUT_S)

    def wait_byte(self) -> None:
        connection, _ = self.socket.accept()
        with connection:
            connection.settimeout(HELLO_TIMEOUT_S)
            if connection.recv(1) != b".":
                raise SystemExit("a step command connected without writing its byte")


SIGNAL = ("import _socket; s = _socket.socket(1, 1); s.connect({path!r}); s.sendall(b'.');"
          " s.recv(1)")  # fmt: skip


def _python_env(extra: dict[str, str]) -> tuple[dict[str, str], list[tuple[Path, str]]]:
    """The environment and binds of a Python bot's launch, as ``BotSlot.launch`` makes them."""
    from arena.referee.bytecode import compiled_tree
    from arena.resources import PYTHON_BOT_MOUNTS
    from arena.sandbox import SANDBOX_SOCKET

    path = ":".join(m.path_entry(True) for m in PYTHON_BOT_MOUNTS)
    env = {"KAHUNA_REFEREE": f"unix://{SANDBOX_SOCKET}", "PYTHONUNBUFFERED": "1",
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": path, **extra}  # fmt: skip
    binds = [(compiled_tree(m.host_dir()), m.inside) for m in PYTHON_BOT_MOUNTS]
    return env, binds


def _launch(
    command: list[str],
    work: Path,
    listener: _Listener,
    *,
    stdout: Path | None = None,
    stderr: Path | None = None,
    signals: bool = True,
) -> float:
    """One sandboxed Python command: the bot's cgroup CPU (ms) at its byte (or its exit)."""
    from arena.sandbox import SandboxLimits, launch_bot

    env, binds = _python_env({})
    process = launch_bot(
        bot_dir=work / "bot", command=command, runtime="python", env=env,
        socket_path=listener.path, limits=SandboxLimits(), extra_ro_binds=binds,
        stderr_path=stderr or work / "stderr", stdout_path=stdout or Path(os.devnull),
    )  # fmt: skip
    try:
        if signals:
            listener.wait_byte()
        else:
            process.wait(HELLO_TIMEOUT_S)
        return process.cpu_time_ms() or 0.0
    finally:
        process.kill()


def _modules_loaded(work: Path, listener: _Listener) -> dict[str, list[str]]:
    """The modules ``import kahuna_bot`` loads in the sandbox, in order, by group."""
    out = work / "modules.txt"
    _launch(["python3", "-c", "import sys, kahuna_bot; print(' '.join(sys.modules))"],
            work, listener, stdout=out, signals=False)  # fmt: skip
    groups: dict[str, list[str]] = {step: [] for step in STEPS}
    for name in out.read_text().split():
        top = name.split(".")[0]
        if top in GROUP_OF:
            groups[GROUP_OF[top]].append(name)
        elif top in sys.stdlib_module_names and not name.startswith("encodings"):
            groups["stdlib"].append(name)
    return groups


def _step(command: list[str], work: Path, listener: _Listener, *, signals: bool = True
          ) -> Callable[[], dict[str, float]]:  # fmt: skip
    return lambda: {"bot": _launch(command, work, listener, signals=signals)}


def _step_cases(work: Path, listener: _Listener) -> dict[str, Callable[[], dict[str, float]]]:
    groups = _modules_loaded(work, listener)
    signal_code = SIGNAL.format(path=str(_sandbox_socket()))
    cases = {
        "sandbox /bin/true": _step(["/bin/true"], work, listener, signals=False),
        "python3 -S": _step(["python3", "-S", "-c", signal_code], work, listener),
        "python3 (site)": _step(["python3", "-c", signal_code], work, listener),
    }
    names: list[str] = []
    for step in STEPS:
        names += groups[step]
        code = (f"import importlib\nfor name in {names!r}:\n"
                "    try: importlib.import_module(name)\n"
                f"    except ImportError: pass\n{signal_code}")  # fmt: skip
        measured = _step(["python3", "-c", code], work, listener)
        cases[f"+ {step}"] = functools.partial(
            lambda m, n: {**m(), "modules": float(n)}, measured, len(groups[step])
        )
    return cases


def _sandbox_socket() -> str:
    from arena.sandbox import SANDBOX_SOCKET

    return SANDBOX_SOCKET


def _importtime(work: Path, listener: _Listener, launches: int) -> dict[str, list[float]]:
    """Self and cumulative us of each module, ``-X importtime`` in the sandbox."""
    found: dict[str, list[float]] = {}
    err = work / "importtime.txt"
    for _ in range(launches):
        err.unlink(missing_ok=True)
        _launch(["python3", "-X", "importtime", "-c", "import kahuna_bot"], work, listener,
                stderr=err, signals=False)  # fmt: skip
        for line in err.read_text().splitlines():
            match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
            if match:
                found.setdefault(f"self {match[4]}", []).append(float(match[1]))
                found.setdefault(f"cum {match[4]}", []).append(float(match[2]))
    return found


def child(launches: int, bots: list[str], importtime: int) -> None:
    import _grpc_tuned  # noqa: F401 (gRPC's environment as in arena processes)

    with tempfile.TemporaryDirectory(prefix="kahuna-bot-start-", dir="/tmp") as directory:
        work = Path(directory)
        os.chmod(work, 0o755)
        (work / "bot").mkdir(mode=0o755)
        listener = _Listener(work / "steps.sock")
        pieces = _instrument()
        cases = {f"{name} to Hello": _bot_case(name, work, pieces) for name in bots}
        cases.update(_step_cases(work, listener))
        results: dict[str, dict[str, list[float]]] = {name: {} for name in cases}
        for case in cases.values():  # warm-up: the compiled trees, the first imports
            case()
        for _ in range(launches):
            for name, case in cases.items():
                for measure, value in case().items():
                    results[name].setdefault(measure, []).append(value)
        if importtime:
            results["-X importtime"] = _importtime(work, listener, importtime)
    print(json.dumps(results))


# ------------------------------------------------------------------ the parent


@contextlib.contextmanager
def _group(root: Path, name: str) -> Iterator[Path]:
    group = root / f"bot-start-{name}-{os.getpid()}"
    group.mkdir()
    try:
        yield group
    finally:
        for _ in range(100):
            for pid in (group / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.05)


def run_child(tree: Path, args: argparse.Namespace) -> dict[str, dict[str, list[float]]]:
    """One child at ``tree`` in a cgroup of its own; its figures."""
    from suite_cpu import unified_root  # the parent's only: it puts this checkout on sys.path

    with _group(unified_root(Path("/proc/mounts").read_text()), tree.name) as group:
        procs = str(group / "cgroup.procs")

        def enter() -> None:  # in the child before exec: all it starts is counted
            with open(procs, "w") as handle:
                handle.write(str(os.getpid()))

        env = {**os.environ, "PYTHONPATH": f"{tree}:{REPO / 'benchmarks'}", GROUP_ENV: str(group)}
        argv = [sys.executable, str(Path(__file__).resolve()), "--child",
                "--launches", str(args.launches), "--importtime", str(args.importtime),
                "--bots", *args.bots]  # fmt: skip
        done = subprocess.run(argv, env=env, cwd=tree, capture_output=True, text=True,
                              preexec_fn=enter)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"the child at {tree} failed:\n{done.stderr[-3000:]}")
    result: dict[str, dict[str, list[float]]] = json.loads(done.stdout.splitlines()[-1])
    return result


def _print_table(trees: list[str], merged: dict[str, dict[str, dict[str, list[float]]]]) -> None:
    print(f"\n| case | measure | {' | '.join(trees)} |")
    print(f"|---|---|{'---|' * len(trees)}")
    first = merged[trees[0]]
    for case, measures in first.items():
        if case == "-X importtime":
            continue
        for measure in measures:
            cells = []
            for tree in trees:
                values = merged[tree].get(case, {}).get(measure, [])
                cells.append(f"{statistics.median(values):.1f}" if values else "-")
            print(f"| {case} | {measure} | {' | '.join(cells)} |")
    for tree in trees:
        found = merged[tree].get("-X importtime")
        if not found:
            continue
        print(f"\n-X importtime in the sandbox ({tree}), median us, the 30 costliest by self:")
        rows = sorted(((statistics.median(v), k[5:]) for k, v in found.items()
                       if k.startswith("self ")), reverse=True)[:30]  # fmt: skip
        for self_us, module in rows:
            print(f"  {self_us:8.0f} self {statistics.median(found['cum ' + module]):9.0f} "
                  f"cumulative  {module}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=10, help="launches per case and child")
    parser.add_argument("--rounds", type=int, default=1, help="children per tree, alternating")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=PATH",
                        help="a tree holding an arena package (default: this=.)")  # fmt: skip
    parser.add_argument("--bots", nargs="+", default=["python_random", "python_greedy"])
    parser.add_argument("--importtime", type=int, default=0, metavar="N",
                        help="also -X importtime of the SDK in N launches")  # fmt: skip
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.launches, args.bots, args.importtime)
        return
    trees = [(name, Path(path).resolve()) for name, _, path in
             (given.partition("=") for given in args.tree)] or [("this", REPO)]  # fmt: skip
    for _, tree in trees:  # as an installed tree is: every process loads it compiled
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-x", "/_data/", "arena"],
                       cwd=tree, check=True)  # fmt: skip
    print(load_text())
    merged: dict[str, dict[str, dict[str, list[float]]]] = {name: {} for name, _ in trees}
    for round_index in range(args.rounds):
        for name, tree in rotated(trees, round_index):
            for case, measures in run_child(tree, args).items():
                for measure, values in measures.items():
                    merged[name].setdefault(case, {}).setdefault(measure, []).extend(values)
            print(f"round {round_index + 1}: {name} done, {load_text()}", flush=True)
    _print_table([name for name, _ in trees], merged)


if __name__ == "__main__":
    main()
