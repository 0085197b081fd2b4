"""A Ray cluster only its operator can use, tried from outside.

A real cluster (``arena.testing.ray_cluster``: a head and a match node, each in
a network namespace the test makes, started as docs/DISTRIBUTED.md says) and
an outsider's host on the same network (``stranger``), which holds none of
the cluster's settings. Without the cluster's token the outsider neither joins
as a node nor runs a task; with it (the control) it runs one. Each of these tries
gets Ray's short connection budget (``SHORT_CONNECT``), the control too, so a
refusal shows in seconds, not after Ray's default retries. Nothing but the
head's Ray port answers it: no Ray Client, no dashboard; and every port the
head and the node listen on asks it for the token (``arena.testing.ray_ports``).
Another user of a node's machine cannot reach Ray's files there (its sockets
and logs), and a bot a match node plays runs as a uid of its own in a network
namespace that reaches none of Ray's ports. An open head (started
``--insecure``) is refused by `arena ray-worker` and by the driver.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.referee.botdir import load_bot
from arena.store import Store, game_stderr
from arena.store.bots import add_bot_version
from arena.testing.other_user import tried_as_nobody
from arena.testing.ray_cluster import (
    SHORT_CONNECT,
    NetnsCluster,
    Node,
    ip_available,
    netns_pids,
)
from arena.testing.ray_ports import listening
from arena.testing.waiting import assert_stays, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]
_unavailable = ip_available()
if _unavailable:
    pytest.skip(f"no namespaced Ray cluster here: {_unavailable}", allow_module_level=True)


def _root(name: str) -> Path:
    return Path(os.environ.get("KAHUNA_TEST_TMP", "/tmp")) / f"kray{os.getpid()}-{name}"


@pytest.fixture(scope="module")
def cluster() -> Iterator[NetnsCluster]:
    root = _root("locked")
    made = NetnsCluster(
        root, workers=({"kahuna_sandbox": 1},), worker_cpus=1, head_cpus=0,
        env={"PYTHONPATH": str(REPO)}, subnet=41,
    )  # fmt: skip
    try:
        with made:
            yield made
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def outsider(
    cluster: NetnsCluster, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Node, dict[str, str]]:
    return cluster.stranger(tmp_path_factory.mktemp("outsider-home"))


def _short_temp(cluster: NetnsCluster) -> Path:
    """A Ray temp directory for a host that should never start Ray (short: Ray's socket
    paths under it must fit in 107 bytes, so that without these checks Ray would start
    and join: the control that the refusal is the arena's)."""
    return Path(tempfile.mkdtemp(prefix="r", dir=cluster.root)) / "ray"  # in one 0700


def _kill_all(node: Node) -> None:
    def none_left() -> bool:
        pids = netns_pids(node.netns)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return not pids

    wait_until(none_left, f"no process left in {node.netns}", 10, interval_s=0.1,
               state=lambda: netns_pids(node.netns))  # fmt: skip


def _wrong_token(home: Path) -> dict[str, str]:
    wrong = home / "wrong_token"
    wrong.write_text("0" * 64)
    wrong.chmod(0o600)
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(wrong)}


OUTSIDERS = [
    # (case, the outsider's Ray settings, made in its home directory)
    ("no token", lambda home, cluster: {}),
    ("token mode, a wrong token", lambda home, cluster: _wrong_token(home)),
]  # fmt: skip
WITH_THE_TOKEN = ("the cluster's token (control)", lambda home, cluster: {
    "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(cluster.ray_token)})  # fmt: skip

TASK = """
import os, sys, ray
ray.init(address=sys.argv[1], logging_level="ERROR")

@ray.remote(num_cpus=0)
def uid():
    return os.getuid()

print("RAN as uid", ray.get(uid.remote()), flush=True)
"""


@pytest.mark.parametrize(
    ("settings", "runs"), [(c[1], False) for c in OUTSIDERS] + [(WITH_THE_TOKEN[1], True)],
    ids=[c[0] for c in OUTSIDERS] + [WITH_THE_TOKEN[0]],
)  # fmt: skip
def test_a_client_without_the_token_cannot_run_a_task(
    cluster: NetnsCluster, outsider: tuple[Node, dict[str, str]], settings: object, runs: bool
) -> None:
    node, env = outsider
    extra = settings(Path(env["HOME"]), cluster)  # type: ignore[operator]
    done = subprocess.run(
        cluster.netns_argv(node, [sys.executable, "-c", TASK, cluster.address]),
        env={**env, **extra, **SHORT_CONNECT}, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    _kill_all(node)
    output = done.stdout + done.stderr
    if runs:
        assert done.returncode == 0 and "RAN as uid" in done.stdout, output[-3000:]
    else:
        assert done.returncode != 0 and "RAN" not in done.stdout, output[-3000:]
        assert "authentication" in output.lower() or "auth token" in output.lower(), output[-3000:]


@pytest.mark.parametrize("settings", [c[1] for c in OUTSIDERS], ids=[c[0] for c in OUTSIDERS])
def test_a_node_without_the_token_cannot_join(
    cluster: NetnsCluster, outsider: tuple[Node, dict[str, str]], settings: object
) -> None:
    node, env = outsider
    extra = settings(Path(env["HOME"]), cluster)  # type: ignore[operator]
    temp = Path(env["HOME"]) / f"ray-{len(extra)}"
    argv = [sys.executable, "-m", "ray.scripts.scripts", "start", f"--address={cluster.address}",
            f"--node-ip-address={node.address}", f"--temp-dir={temp}", "--num-cpus=1",
            '--resources={"kahuna_sandbox": 1}', "--disable-usage-stats"]  # fmt: skip
    try:
        done = subprocess.run(
            cluster.netns_argv(node, argv), env={**env, **extra, **SHORT_CONNECT},
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert done.returncode != 0, done.stderr[-3000:]
        # a node that got in would be listed within the window
        assert_stays(lambda: cluster.alive_nodes() == len(cluster.nodes), 2.0,
                     "no node joined", interval_s=0.5, state=cluster.alive_nodes)  # fmt: skip
    finally:
        _kill_all(node)
    assert "InvalidAuthToken" in done.stderr or "authentication" in done.stderr.lower()


def test_nothing_but_the_heads_ray_port_answers_another_host(
    cluster: NetnsCluster, outsider: tuple[Node, dict[str, str]]
) -> None:
    node, env = outsider
    probe = """
import socket, sys
for port in sys.argv[2:]:
    try:
        socket.create_connection((sys.argv[1], int(port)), timeout=5).close()
        print(port, "open")
    except OSError as error:
        print(port, type(error).__name__)
"""
    ports = {"6379": "open", "10001": "ConnectionRefusedError", "8265": "ConnectionRefusedError"}
    done = subprocess.run(
        cluster.netns_argv(node, [sys.executable, "-c", probe, cluster.head.address, *ports]),
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    found = dict(line.split() for line in done.stdout.splitlines())
    # 6379 open: the control that the outsider reaches the head at all
    assert found == ports, f"Ray Client (10001) or the dashboard (8265) answers: {found}"


# Ray's processes that may listen on a node's address (``ss`` shows 15 characters of a
# name): the GCS, the raylet (node manager and object manager), the runtime env agent
# and Ray's workers (the slot players, a task's worker: each a gRPC server of its own).
_DAEMONS = {"gcs_server", "raylet", "ray::RuntimeEnv"}
_NOT_LISTENING = ("ray::Dashboard",)  # the dashboard agent: its HTTP and metrics ports


def _may_listen(process: str) -> bool:
    return process in _DAEMONS or (
        process.startswith("ray::") and not process.startswith(_NOT_LISTENING)
    )


def test_every_port_of_the_head_and_a_node_asks_an_outsider_for_the_token(
    cluster: NetnsCluster, outsider: tuple[Node, dict[str, str]]
) -> None:
    """Every TCP port the head and the match node listen on, probed from the outsider's
    host: no dashboard, dashboard agent, metrics exporter or Ray Client listens; each gRPC
    port refuses every read of Ray's services (the cluster's nodes and drivers, a raylet's
    configuration and stats, a worker's stats, an object) without the token, and the one
    HTTP port (the runtime env agent) answers 401."""
    node, env = outsider
    for member in cluster.nodes:
        # the node's slot player, made as it joined (`arena ray-worker`), is probed too
        ours = {"gcs_server"} if member is cluster.head else {"raylet", "ray::SlotPlayer"}
        wait_until(lambda: ours <= {listener.process for listener  # noqa: B023
                                    in listening(cluster.netns_argv(member, []))},  # noqa: B023
                   f"{ours} listening on {member.name}", 120, interval_s=0.5)  # fmt: skip
        listeners = listening(cluster.netns_argv(member, []))
        unexpected = [listener for listener in listeners if not _may_listen(listener.process)]
        assert not unexpected, f"{member.name}: more listens than Ray's own ports: {unexpected}"
        reachable = [listener.port for listener in listeners
                     if listener.address in ("*", "0.0.0.0", "::", member.address)]  # fmt: skip
        done = subprocess.run(
            cluster.netns_argv(node, [sys.executable, "-m", "arena.testing.ray_ports",
                                      member.address, *map(str, reachable)]),
            env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        found = json.loads(done.stdout)
        for port, answer in found.items():
            what = f"{member.name} port {port}: {answer}"
            assert isinstance(answer, dict), what  # it listens there: the outsider reaches it
            if answer["http"].startswith("HTTP"):
                assert answer["http"] == "HTTP 401", what
                continue
            codes = set(answer["grpc"].values())
            assert codes <= {"UNAUTHENTICATED", "UNIMPLEMENTED"}, what
            assert "UNAUTHENTICATED" in codes, what


# ------------------------------------------------- another user of a node's machine

LOCAL_TRIES = [
    ("list the node's logs", lambda session: os.listdir(session / "logs")),
    ("read the raylet's log", lambda session: (session / "logs" / "raylet.out").read_bytes()),
    ("put a file by the raylet's socket", lambda session: (session / "sockets" / "x").touch()),
    ("put a link where Ray writes its logs",
     lambda session: os.symlink("/etc/hostname", session / "logs" / "x")),
]  # fmt: skip


def _tried_as_nobody(session: Path) -> dict[str, str]:
    """What each of LOCAL_TRIES gave a process of another user (uid 65534): ``done``, or
    the error's name."""
    return tried_as_nobody(
        [(what, functools.partial(attempt, session)) for what, attempt in LOCAL_TRIES]
    )


def _session_dir(cluster: NetnsCluster, node: Node) -> Path:
    """The session directory the node's running raylet keeps its socket and logs in."""
    pid = cluster.raylet_pid(node)
    assert pid is not None, f"no raylet on {node.name}"
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return Path(next(a for a in argv if a.startswith("--session_dir=")).split("=", 1)[1])


def test_another_user_of_a_nodes_machine_cannot_reach_its_ray_files(cluster: NetnsCluster) -> None:
    """Ray makes its temp directory and every directory in it writable by everyone (no
    sticky bit): in Ray's own place another user of the machine reads the node's logs,
    moves its raylet's socket away, or links a file Ray's daemons rewrite to any file
    the node's user may write. `arena ray-head` and `arena ray-worker` put it inside a
    directory only the node's user can open."""
    for member in cluster.nodes:
        session = _session_dir(cluster, member)
        assert (session / "sockets" / "raylet").exists(), session  # the control: as root
        found = _tried_as_nobody(session)
        assert found == {what: "PermissionError" for what, _ in LOCAL_TRIES}, (
            f"{member.name}: another user of its machine got into {session}: {found}"
        )  # fmt: skip
        private = session.parents[1]  # <tmp>/kahuna-ray-<uid>: the node's user's alone
        assert stat.S_IMODE(private.stat().st_mode) == 0o700, private
        # nothing of Ray's outside it, though drivers (alive_nodes) ran on the head
        assert [p.name for p in member.ray_tmp.iterdir()] == [private.name], member.ray_tmp


def test_a_driver_on_a_machine_without_a_ray_node_is_told_to_start_one(
    cluster: NetnsCluster, outsider: tuple[Node, dict[str, str]], tmp_path: Path
) -> None:
    """A driver joins the cluster through a Ray node of its own machine; without one Ray
    waits a minute and says only that it failed to connect to a head it reached. The
    outsider's host holds the token here and runs no node (a PID namespace of its own:
    the nodes of this machine are not its)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare (util-linux) is missing: no machine without the nodes' processes")
    node, env = outsider
    argv = [unshare, "--pid", "--fork", "--mount-proc", sys.executable, "-m", "arena",
            "tournament", "run", "cup", "r1", "r2", "--data-dir", str(tmp_path / "data"),
            "--ray", cluster.address]  # fmt: skip
    holder = {**env, "RAY_AUTH_TOKEN_PATH": str(cluster.ray_token), **SHORT_CONNECT}
    done = subprocess.run(cluster.netns_argv(node, argv), env=holder, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[-1] == (
        f"arena: cannot join the Ray cluster at {cluster.address} from this machine: it runs"
        " no Ray node, and a driver joins a cluster through a node of its own machine; run"
        " the driver on the head's machine, or start a node here first"
        " (docs/design/DISTRIBUTED.md, the driver)"
    ), done.stderr[-3000:]
    assert not (tmp_path / "data" / "arena.db").exists() or b"cup" not in (
        tmp_path / "data" / "arena.db").read_bytes()  # fmt: skip


# ------------------------------------------------------- a bot on a match node

PROBE_BOT = """
import json, os, socket, sys
found = {"uid": os.getuid(), "gid": os.getgid(), "links": sorted(
    line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:])}
for target in TARGETS:
    host, port = target.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
        found[target] = "open"
    except OSError as error:
        found[target] = type(error).__name__
print("PROBE " + json.dumps(found), file=sys.stderr, flush=True)
sys.exit(1)  # a crash: the arena keeps the end of its stderr for the bot's owner
"""


def _probe_bot(directory: Path, targets: list[str]) -> Path:
    directory.mkdir(parents=True)
    (directory / "bot.py").write_text(f"TARGETS = {targets!r}\n{PROBE_BOT}")
    (directory / "bot.toml").write_text(
        'name = "probe"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'
    )
    return directory


def test_a_bot_on_a_match_node_has_a_uid_of_its_own_and_no_way_to_the_cluster(
    cluster: NetnsCluster, tmp_path: Path
) -> None:
    """A bot that a match node plays runs sandboxed as on one machine: as a uid of its
    own, not the node's user (who can run any code on the cluster), in a network
    namespace of its own that reaches none of Ray's ports, the node's or the head's."""
    worker = cluster.nodes[1]
    targets = [f"{cluster.head.address}:6379"] + [
        f"{worker.address}:{listener.port}"
        for listener in listening(cluster.netns_argv(worker, []))
        if listener.address in ("*", "0.0.0.0", "::", worker.address)
    ]  # fmt: skip
    data = tmp_path / "data"
    with Store.open(data) as store:
        probe = _probe_bot(tmp_path / "probe", targets)
        for bot in (probe, REPO / "sample_bots" / "python_random"):
            add_bot_version(store, load_bot(bot))
    argv = [sys.executable, "-m", "arena", "tournament", "run", "cup", "probe", "python_random",
            "--games", "2", "--data-dir", str(data), "--no-progress", "--ray", cluster.address,
            ]  # fmt: skip
    done = subprocess.run(
        cluster.netns_argv(cluster.head, argv), env=cluster.node_env(cluster.head),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    with Store.open(data) as store:
        with store.reading() as db:
            ids = [row[0] for row in db.execute("SELECT id FROM games ORDER BY id")]
        tails = [tail for game in ids for tail in game_stderr(store, game).values()]
    assert len(ids) == 2 and len(tails) == 2, (ids, tails)  # both games, the probe's tails
    for tail in tails:
        found = json.loads(tail.split("PROBE ", 1)[1].splitlines()[0])
        assert found.pop("uid") not in (0, os.geteuid()) and found.pop("gid") != 0, found
        assert found.pop("links") == ["lo"], found  # its own network namespace
        assert set(found) == set(targets) and "open" not in found.values(), found


# ----------------------------------------------------------- an open head


@pytest.fixture(scope="module")
def open_cluster(cluster: NetnsCluster) -> Iterator[NetnsCluster]:
    root = _root("open")
    made = NetnsCluster(root, workers=(), head_cpus=0, env={"PYTHONPATH": str(REPO)},
                        subnet=42, auth=False)  # fmt: skip
    try:
        with made:
            yield made
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _holder_env(open_cluster: NetnsCluster, locked: NetnsCluster) -> dict[str, str]:
    """A node operator's environment: the token of a (locked) cluster in hand."""
    env = open_cluster.node_env(open_cluster.head)
    env.pop("RAY_AUTH_MODE")
    env["RAY_AUTH_TOKEN_PATH"] = str(locked.ray_token)
    return env


def test_a_worker_refuses_to_join_a_head_without_authentication(
    open_cluster: NetnsCluster, cluster: NetnsCluster, tmp_path: Path
) -> None:
    node, _ = open_cluster.stranger(tmp_path)
    argv = [sys.executable, "-m", "arena", "ray-worker", open_cluster.address, "--slots=1",
            "--num-cpus=1", f"--cache={tmp_path / 'cache'}",
            f"--ray-start-args=--node-ip-address={node.address}"
            f" --temp-dir={_short_temp(open_cluster)}"]  # fmt: skip
    try:
        done = subprocess.run(
            open_cluster.netns_argv(node, argv), env=_holder_env(open_cluster, cluster),
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        alive = open_cluster.alive_nodes()
    finally:
        _kill_all(node)
    assert (done.returncode, alive) == (1, 1), done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"arena: the Ray head at {open_cluster.address} runs without token authentication:"
        " anyone who reaches it can run any code on its nodes, this one too. Start the head"
        " with `arena ray-head` (docs/DISTRIBUTED.md), or give --insecure to join anyway"
    )


@pytest.mark.parametrize(
    "command", [["tournament", "run", "cup", "r1", "r2"], ["serve", "--port", "0"]],
    ids=["tournament run", "serve"],
)  # fmt: skip
def test_the_driver_refuses_a_cluster_without_authentication(
    open_cluster: NetnsCluster, cluster: NetnsCluster, tmp_path: Path, command: list[str]
) -> None:
    argv = [sys.executable, "-m", "arena", *command, "--data-dir", str(tmp_path / "data"),
            "--ray", open_cluster.address]  # fmt: skip
    done = subprocess.run(
        open_cluster.netns_argv(open_cluster.head, argv),
        env=_holder_env(open_cluster, cluster), capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"arena: the Ray cluster at {open_cluster.address} runs without token authentication"
    ), done.stderr


def _owned_by_nobody(cache: Path) -> None:
    cache.mkdir(mode=0o755)
    os.chown(cache, 65534, 65534)


def _world_writable(cache: Path) -> None:
    cache.mkdir()
    cache.chmod(0o1777)


def _a_link(cache: Path) -> None:
    (cache.parent / "elsewhere").mkdir(mode=0o700)
    cache.symlink_to(cache.parent / "elsewhere")


PLANTED = [
    ("owned by another user", _owned_by_nobody, "is owned by uid 65534"),
    ("world-writable", _world_writable, "is writable by other users (mode 1777)"),
    ("a symbolic link", _a_link, "is a symbolic link"),
]  # fmt: skip


@pytest.mark.parametrize(("plant", "words"), [c[1:] for c in PLANTED], ids=[c[0] for c in PLANTED])
def test_a_node_with_a_planted_cache_does_not_join(
    cluster: NetnsCluster, tmp_path: Path, plant: object, words: str
) -> None:
    node, env = cluster.stranger(tmp_path)
    cache = tmp_path / "cache"
    plant(cache)  # type: ignore[operator]
    argv = [sys.executable, "-m", "arena", "ray-worker", cluster.address, "--slots=1",
            "--num-cpus=1", f"--cache={cache}",
            f"--ray-start-args=--node-ip-address={node.address} --temp-dir={_short_temp(cluster)}",
            ]  # fmt: skip
    holder = {**env, "RAY_AUTH_TOKEN_PATH": str(cluster.ray_token)}  # the token: only the cache
    try:
        done = subprocess.run(cluster.netns_argv(node, argv), env=holder, capture_output=True,
                              text=True, timeout=180)  # fmt: skip
        alive = cluster.alive_nodes()
    finally:
        _kill_all(node)
    assert (done.returncode, alive) == (1, len(cluster.nodes)), done.stdout + done.stderr
    message = done.stderr.strip().splitlines()[-1]
    assert message.startswith(f"arena: bot cache {cache} ") and words in message, message
