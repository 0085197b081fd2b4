"""A real multi-node Ray cluster on one machine, each node in its own network namespace.

Tests may only send traffic to loopback or to hosts they create, and Ray binds
the machine's own interface address unless told otherwise. So every node of
the cluster (a head and workers) runs in a network namespace made here, all of
them joined by veth pairs to a bridge in a "switch" namespace, with addresses
in ``10.231.X.0/24`` that exist inside these namespaces only. The driver (the
arena process under test) runs in the head's namespace (``netns_argv``).

Each node has its own temporary directory for Ray (``$RAY_TMPDIR``, short: Ray's
socket paths under it must fit in 107 bytes), where the arena's commands make
Ray's temp directory as they would in a machine's ``/tmp``, and its own bot cache
(``$KAHUNA_RAY_CACHE``), as separate machines would. The cluster is started as
docs/DISTRIBUTED.md says: a token made for it (``ray_token``, in ``root``),
the head by ``arena ray-head`` and the match nodes by ``arena ray-worker``,
every one of them holding the token; ``auth=False`` starts an open cluster
(both with ``--insecure``). ``stranger`` makes a host on the cluster's network
that runs nothing, for tests that play an outsider. ``kill_node`` SIGKILLs
the node's raylet (Ray's node failure: its workers then exit and their
sandbox watchdogs kill their bots) or every process of its namespace.
``close`` kills every process of every namespace and deletes the namespaces,
also when a test failed; a cluster left by a killed test run is found by its
name prefix and removed by ``remove_stale``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.tournament.execution.ray_auth import (
    AUTH_MODE_ENV,
    TOKEN_ENV,
    TOKEN_PATH_ENV,
    create_token,
)

PREFIX = "kray"
RAY_PORT = 6379

SHORT_CONNECT = {
    "RAY_gcs_server_port_wait_time_s": "1",  # attempts at the head's GCS (default 20, 1 s apart)
    "RAY_py_gcs_connect_timeout_s": "5",  # the attempt's wait for the cluster's id (default 30)
    "RAY_gcs_rpc_server_connect_timeout_s": "2",  # its wait for the gRPC channel (default 5)
}
"""Ray's own connection budget, for a client or node a test expects to be refused: one
attempt (ray/_private/node.py: the variable is the number of attempts, floored at one),
so a refused one fails in seconds (a TLS mismatch waits out the attempt, about 10 s; a
minute and more by default: Ray retries the head as if it were still starting). Give
the test's control, which must get in, the same budget: it shows the budget is enough
for a client the cluster accepts."""


def ip_available() -> str | None:
    """Why a namespaced cluster cannot be made here, or None when it can."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None or shutil.which("nsenter") is None:
        return "iproute2 (ip) or util-linux (nsenter) is missing"
    try:
        import ray  # noqa: F401
    except ImportError:
        return "ray is not installed (pip install 'kahuna-arena[ray]')"
    probe = f"{PREFIX}probe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"ip netns add failed: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
    return None


def _run(*argv: str) -> None:
    done = subprocess.run(list(argv), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")


NETNS_DIR = Path("/var/run/netns")


def netns_pids(name: str) -> list[int]:
    """The processes in network namespace ``name``, found as ``ip netns pids`` finds them
    (each process's ``/proc/PID/ns/net`` is the namespace's file), without starting a
    process: tests poll this many times a second."""
    try:
        target = os.stat(NETNS_DIR / name)
    except OSError:
        return []
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            net = os.stat(f"/proc/{entry.name}/ns/net")
        except OSError:
            continue  # gone, or a kernel thread
        if net.st_ino == target.st_ino and net.st_dev == target.st_dev:
            found.append(int(entry.name))
    return found


def _kill_namespace(name: str) -> None:
    for _ in range(20):
        pids = netns_pids(name)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def remove_stale() -> None:
    """Delete namespaces (and their processes) that a killed earlier test run left."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    for line in listed.splitlines():
        name = line.split()[0] if line.split() else ""
        if not name.startswith(PREFIX):
            continue
        owner = name[len(PREFIX) :].split("-")[0]
        if owner.isdigit() and Path(f"/proc/{owner}").exists():
            continue  # a live test process's cluster
        _kill_namespace(name)
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)


@dataclass
class Node:
    name: str  # "head", "w1", ...
    netns: str
    address: str  # its 10.231.X.Y
    ray_tmp: Path  # its $RAY_TMPDIR: the machine's own /tmp, as Ray sees it
    cache_dir: Path
    resources: dict[str, float]
    cpus: int
    cpu_set: str | None = None  # the host CPUs its processes may use (taskset -c), None: all

    @property
    def temp_dir(self) -> Path:
        """Ray's temp directory on the node (its sessions, sockets and logs), where
        `arena ray-head` and `arena ray-worker` put it."""
        return self.ray_tmp / f"kahuna-ray-{os.geteuid()}" / "ray"


@dataclass
class NetnsCluster:
    """Make with ``start``; always ``close`` (a context manager does)."""

    root: Path  # per-node directories go under it
    workers: Sequence[Mapping[str, float]] = ({"kahuna_sandbox": 2},)  # custom resources each
    worker_cpus: int = 2
    head_cpus: int = 1
    env: Mapping[str, str] = field(default_factory=dict)  # for every node's Ray processes
    # Each worker's own host CPUs (taskset lists such as "0" or "2-3"), as if it were a
    # machine of its own; None: every node may run on every CPU of this machine.
    worker_cpu_sets: Sequence[str] | None = None
    subnet: int = 0  # 10.231.<subnet>.0/24
    auth: bool = True  # Ray's token authentication, as documented; False: an open cluster
    nodes: list[Node] = field(default_factory=list)
    tag: str = ""
    _added: int = 0
    _ray_tmps: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.tag = f"{os.getpid()}-{id(self) % 100000}"
        self._switch = f"{PREFIX}{self.tag}-sw"

    @property
    def head(self) -> Node:
        return self.nodes[0]

    @property
    def address(self) -> str:
        return f"{self.head.address}:{RAY_PORT}"

    @property
    def ray_token(self) -> Path:
        """The cluster's token file (made by ``start`` when ``auth``)."""
        return self.root / "ray_token"

    def __enter__(self) -> NetnsCluster:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ------------------------------------------------------------- network

    def _make_host(self, number: int, name: str) -> Node:
        netns = f"{PREFIX}{self.tag}-{name}"
        _run("ip", "netns", "add", netns)
        _run("ip", "-n", netns, "link", "set", "lo", "up")
        peer = f"vs{number}"
        _run("ip", "-n", netns, "link", "add", "eth0", "type", "veth", "peer", "name", peer,
             "netns", self._switch)  # fmt: skip
        _run("ip", "-n", self._switch, "link", "set", peer, "master", "br0")
        _run("ip", "-n", self._switch, "link", "set", peer, "up")
        address = f"10.231.{self.subnet}.{number}"
        _run("ip", "-n", netns, "addr", "add", f"{address}/24", "dev", "eth0")
        _run("ip", "-n", netns, "link", "set", "eth0", "up")
        base = self.root / name
        ray_tmp = Path(tempfile.mkdtemp(prefix="kr"))  # short, for Ray's socket paths
        ray_tmp.chmod(0o755)
        self._ray_tmps.append(ray_tmp)
        node = Node(name, netns, address, ray_tmp, base / "cache", {}, 0)
        node.cache_dir.mkdir(parents=True, exist_ok=True)
        return node

    def start(self) -> None:
        remove_stale()
        if self.auth:
            self.root.mkdir(parents=True, exist_ok=True)
            self.ray_token.unlink(missing_ok=True)
            create_token(self.ray_token)
        _run("ip", "netns", "add", self._switch)
        _run("ip", "-n", self._switch, "link", "set", "lo", "up")
        _run("ip", "-n", self._switch, "link", "add", "br0", "type", "bridge")
        _run("ip", "-n", self._switch, "link", "set", "br0", "up")
        head = self._make_host(1, "head")
        head.cpus = self.head_cpus
        self.nodes.append(head)
        start_args = (f"--node-ip-address={head.address}"
                      f" --resources={shlex.quote(json.dumps(head.resources))}")  # fmt: skip
        argv = [sys.executable, "-m", "arena", "ray-head", f"--port={RAY_PORT}",
                f"--num-cpus={head.cpus}", f"--ray-start-args={start_args}",
                *([] if self.auth else ["--insecure"])]  # fmt: skip
        self._run_on(head, argv, "arena ray-head")
        for index, resources in enumerate(self.workers):
            node = self._make_host(index + 2, f"w{index + 1}")
            node.resources = dict(resources)
            node.cpus = self.worker_cpus
            if self.worker_cpu_sets is not None:
                node.cpu_set = self.worker_cpu_sets[index]
            self.nodes.append(node)
            self._join(node)
        self.wait_nodes(len(self.nodes))

    def _join(self, node: Node) -> None:
        """A worker with the sandbox resource joins as the docs say (`arena ray-worker`,
        which checks the sandbox first); one without it with a plain `ray start`."""
        slots = node.resources.get("kahuna_sandbox")
        others = {k: v for k, v in node.resources.items() if k != "kahuna_sandbox"}
        if slots is None or others:
            self._ray_start(node, [f"--address={self.address}"])
            return
        start_args = f"--node-ip-address={node.address} --disable-usage-stats"
        argv = [
            sys.executable, "-m", "arena", "ray-worker", self.address, f"--slots={int(slots)}",
            f"--num-cpus={node.cpus}", f"--cache={node.cache_dir}",
            f"--ray-start-args={start_args}", *([] if self.auth else ["--insecure"]),
        ]  # fmt: skip
        self._run_on(node, argv, "arena ray-worker")

    def node_env(self, node: Node) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.env)
        env["KAHUNA_RAY_CACHE"] = str(node.cache_dir)
        env["RAY_TMPDIR"] = str(node.ray_tmp)
        env["RAY_USAGE_STATS_ENABLED"] = "0"
        env.setdefault("RAY_enable_metrics_collection", "0")  # as `arena ray-worker` sets it
        # The cluster's own token, whatever ~/.ray/auth_token holds; an open cluster
        # says so (Ray turns token auth on by itself when it finds ~/.ray/auth_token).
        if self.auth:
            env.setdefault(AUTH_MODE_ENV, "token")
            env.setdefault(TOKEN_PATH_ENV, str(self.ray_token))
        else:
            env.setdefault(AUTH_MODE_ENV, "disabled")
        # Node failure is noticed in seconds, not the default half minute.
        env.setdefault("RAY_health_check_period_ms", "500")
        env.setdefault("RAY_health_check_timeout_ms", "1000")
        env.setdefault("RAY_health_check_failure_threshold", "3")
        return env

    def netns_argv(self, node: Node, argv: Sequence[str]) -> list[str]:
        """``argv`` run in ``node``'s network namespace only. Not ``ip netns exec``: that
        mounts a fresh /sys, without the cgroup hierarchies the sandbox needs."""
        return ["nsenter", f"--net=/var/run/netns/{node.netns}", "--", *argv]

    def _ray_start(self, node: Node, extra: list[str]) -> None:
        node.temp_dir.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        argv = [
            sys.executable, "-m", "ray.scripts.scripts", "start", *extra,
            f"--node-ip-address={node.address}", f"--num-cpus={node.cpus}",
            f"--resources={json.dumps(node.resources)}", "--disable-usage-stats",
            f"--temp-dir={node.temp_dir}",
        ]  # fmt: skip
        self._run_on(node, argv, "ray start")

    def _run_on(self, node: Node, argv: Sequence[str], what: str) -> None:
        """Run ``argv`` in ``node``'s namespace with its environment; RuntimeError naming
        ``what`` and the end of its stderr when it fails. On the node's CPUs only, when it
        has a ``cpu_set`` (Ray's daemons and workers inherit the affinity)."""
        if node.cpu_set is not None:
            argv = ["taskset", "-c", node.cpu_set, *argv]
        done = subprocess.run(
            self.netns_argv(node, argv), env=self.node_env(node), capture_output=True,
            text=True, timeout=180,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"{what} on {node.name} failed: {done.stderr[-2000:]}")

    def add_worker(self, resources: Mapping[str, float], cpus: int | None = None) -> Node:
        """One more worker node, under a name and address never used in this cluster."""
        self._added += 1
        number = len(self.workers) + 1 + self._added
        node = self._make_host(number, f"w{number - 1}")
        node.resources = dict(resources)
        node.cpus = self.worker_cpus if cpus is None else cpus
        self.nodes.append(node)
        self._join(node)
        self.wait_nodes(len(self.nodes))
        return node

    def stranger(self, home: Path) -> tuple[Node, dict[str, str]]:
        """A host on the cluster's network that is no node of it, and the environment of
        an outsider there: none of the cluster's settings or token, ``home`` as its home
        directory (where Ray would look for a token)."""
        self._added += 1
        number = len(self.workers) + 1 + self._added
        node = self._make_host(number, f"x{number}")  # not in `nodes`: `close` finds it
        env = {k: v for k, v in os.environ.items()
               if k not in (AUTH_MODE_ENV, TOKEN_PATH_ENV, TOKEN_ENV)}  # fmt: skip
        env.update(HOME=str(home), RAY_USAGE_STATS_ENABLED="0")
        env.update({k: v for k, v in self.env.items() if k == "PYTHONPATH"})
        return node, env

    def remove_dead(self, node: Node) -> None:
        """Forget a killed node and delete its namespace."""
        _kill_namespace(node.netns)
        subprocess.run(["ip", "netns", "delete", node.netns], capture_output=True)
        self.nodes.remove(node)

    def alive_nodes(self) -> int:
        code = (
            "import ray, json; ray.init(address='auto', logging_level='ERROR');"
            "print(json.dumps(sum(1 for n in ray.nodes() if n['Alive'])))"
        )
        done = subprocess.run(
            self.netns_argv(self.head, [sys.executable, "-c", code]),
            env={**self.node_env(self.head), "RAY_ADDRESS": self.address},
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"cannot list the cluster's nodes: {done.stderr[-2000:]}")
        return int(done.stdout.strip().splitlines()[-1])

    def wait_nodes(self, count: int, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while (alive := self.alive_nodes()) != count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{alive} Ray nodes alive, waited for {count}")
            time.sleep(1.0)

    # ---------------------------------------------------------- node loss

    def raylet_pid(self, node: Node) -> int | None:
        for pid in netns_pids(node.netns):
            with contextlib.suppress(OSError):
                if "raylet" in Path(f"/proc/{pid}/comm").read_text():
                    return pid
        return None

    def kill_node(self, node: Node, *, everything: bool = False) -> None:
        """SIGKILL the node's raylet and its Ray worker processes (``ray::...``: a task's
        worker would otherwise go on streaming its games to the driver for a while after
        its raylet is gone, and a short match could finish unharmed), or every process of
        its namespace. The sandbox watchdogs, not Ray's, are left to kill the bots."""
        if everything:
            _kill_namespace(node.netns)
            return
        pid = self.raylet_pid(node)
        if pid is None:
            raise RuntimeError(f"no raylet runs on {node.name}")
        os.kill(pid, signal.SIGKILL)
        for worker in netns_pids(node.netns):
            with contextlib.suppress(OSError):
                if Path(f"/proc/{worker}/cmdline").read_bytes().startswith(b"ray::"):
                    os.kill(worker, signal.SIGKILL)

    def processes(self, node: Node) -> list[int]:
        return netns_pids(node.netns)

    # ------------------------------------------------------------- cleanup

    def close(self) -> None:
        """Kill every process of this cluster's namespaces and delete them (those of
        nodes half made too: every namespace named after this cluster)."""
        names = [node.netns for node in reversed(self.nodes)]
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        mine = f"{PREFIX}{self.tag}-"
        names += [w for line in listed.splitlines() if (w := line.split(" ")[0]).startswith(mine)]
        for name in dict.fromkeys([*names, self._switch]):
            _kill_namespace(name)
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)
        self.nodes.clear()
        for ray_tmp in self._ray_tmps:
            shutil.rmtree(ray_tmp, ignore_errors=True)
        self._ray_tmps.clear()


def sandboxes_of(node: Node) -> list[int]:
    """The node's sandboxes: their outer bwrap processes stay in the network namespace
    of the referee that launched them (the bot itself gets one of its own), also once
    that referee is gone, until the sandbox watchdog kills them."""
    found = []
    for pid in netns_pids(node.netns):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().strip() == "bwrap":
                found.append(pid)
    return found


@contextlib.contextmanager
def cluster(root: Path, **options: object) -> Iterator[NetnsCluster]:
    with NetnsCluster(root, **options) as made:  # type: ignore[arg-type]
        yield made


def describe(pids: Sequence[int]) -> dict[int, str]:
    """State, parent and cgroups of ``pids`` (what a failing test shows)."""
    described = {}
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text().splitlines()
            fields = {line.split(":")[0]: line.split(":", 1)[1].strip() for line in status}
            groups = Path(f"/proc/{pid}/cgroup").read_text().replace("\n", " ")
            described[pid] = f"{fields.get('State')} ppid {fields.get('PPid')}: {groups[:300]}"
        except OSError as error:
            described[pid] = f"gone ({error.strerror})"
    return described
