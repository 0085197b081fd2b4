"""Ray's TLS between the nodes of an arena cluster, on a real cluster (docs/DISTRIBUTED.md).

Every node, and the driver, gets ``RAY_USE_TLS=1`` and the files of a CA the
test makes: a node certificate (for serving and as a client, with every
address of the test's network) and its key. The cluster starts as documented
(``arena ray-head``, ``arena ray-worker``, whose check of the head goes over
TLS too) and holds its token as well. A client with the token and the
certificates runs a task (the control); with the token and no TLS, or with
the certificate of another CA, it runs none.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.testing.ray_cluster import SHORT_CONNECT, NetnsCluster, ip_available

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]
SUBNET = 43
_unavailable = ip_available()
if _unavailable:
    pytest.skip(f"no namespaced Ray cluster here: {_unavailable}", allow_module_level=True)
x509 = pytest.importorskip("cryptography.x509")


def make_ray_tls(directory: Path, name: str) -> dict[str, str]:
    """A CA ``name`` and one node certificate signed by it (server and client, for
    localhost and every address of the test's subnet), as Ray's TLS variables."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    day = datetime.timedelta(days=1)

    def certificate(subject: str, key: ec.EllipticCurvePrivateKey, issuer: tuple[x509.Name,
                    ec.EllipticCurvePrivateKey] | None) -> x509.Certificate:  # fmt: skip
        name_ = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
        issuer_name, issuer_key = issuer or (name_, key)
        builder = (
            x509.CertificateBuilder().subject_name(name_).issuer_name(issuer_name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - day).not_valid_after(now + day)
            .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), True)
        )  # fmt: skip
        if issuer is not None:
            addresses = ["127.0.0.1", *(f"10.231.{SUBNET}.{n}" for n in range(1, 30))]
            names = [x509.DNSName("localhost"),
                     *(x509.IPAddress(ipaddress.ip_address(a)) for a in addresses)]  # fmt: skip
            builder = builder.add_extension(x509.SubjectAlternativeName(names), False)
            usages = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            builder = builder.add_extension(x509.ExtendedKeyUsage(usages), False)
        return builder.sign(issuer_key, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = certificate(f"{name} CA", ca_key, None)
    node_key = ec.generate_private_key(ec.SECP256R1())
    node = certificate(f"{name} node", node_key, (ca.subject, ca_key))
    files = {"ca.crt": ca.public_bytes(serialization.Encoding.PEM),
             "node.crt": node.public_bytes(serialization.Encoding.PEM),
             "node.key": node_key.private_bytes(serialization.Encoding.PEM,
                 serialization.PrivateFormat.PKCS8, serialization.NoEncryption())}  # fmt: skip
    for file, data in files.items():
        (directory / file).write_bytes(data)
        (directory / file).chmod(0o600)
    return {"RAY_USE_TLS": "1", "RAY_TLS_SERVER_CERT": str(directory / "node.crt"),
            "RAY_TLS_SERVER_KEY": str(directory / "node.key"),
            "RAY_TLS_CA_CERT": str(directory / "ca.crt")}  # fmt: skip


@pytest.fixture(scope="module")
def cluster() -> Iterator[NetnsCluster]:
    root = Path(os.environ.get("KAHUNA_TEST_TMP", "/tmp")) / f"kray{os.getpid()}-tls"
    tls = make_ray_tls(root / "tls", "cluster")
    made = NetnsCluster(
        root, workers=({"kahuna_sandbox": 1},), worker_cpus=1, head_cpus=0,
        env={"PYTHONPATH": str(REPO), **tls}, subnet=SUBNET,
    )  # fmt: skip
    try:
        with made:
            yield made
    finally:
        shutil.rmtree(root, ignore_errors=True)


TASK = """
import os, sys, ray
ray.init(address=sys.argv[1], logging_level="ERROR")

@ray.remote(num_cpus=1)  # the head has none: on the match node (its slot player holds no CPU)
def uid():
    return os.getuid()

print("RAN on the match node as uid", ray.get(uid.remote(), timeout=60), flush=True)
"""

CLIENTS: list[tuple[str, Callable[[Path], dict[str, str]] | None, bool]] = [
    # (case, the client's TLS settings (made in a directory), whether it runs a task)
    ("TLS with the cluster's CA (control)", None, True),
    ("no TLS", lambda directory: {"RAY_USE_TLS": "0"}, False),
    ("another CA's certificate", lambda directory: make_ray_tls(directory, "other"), False),
]  # fmt: skip


@dataclass(frozen=True)
class Outcome:
    """What one client printed, and how it ended."""

    stdout: str
    output: str
    returncode: int


@pytest.fixture(scope="module")
def outcomes(cluster: NetnsCluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every client of CLIENTS started at once, each with Ray's short connection budget
    (``SHORT_CONNECT``: a refused one gives up in about 10 s, not minutes; the control
    shows the budget is enough), spent side by side rather than one after another, and
    each ended at 90 s."""
    started: dict[str, subprocess.Popen[str]] = {}
    try:
        for case, tls, _runs in CLIENTS:
            env = cluster.node_env(cluster.head)  # the token, and the cluster's TLS files
            env.update(SHORT_CONNECT)
            if tls is not None:
                env.update(tls(tmp_path_factory.mktemp("tls")))
            started[case] = subprocess.Popen(
                cluster.netns_argv(cluster.head, [sys.executable, "-c", TASK, cluster.address]),
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
        deadline = time.monotonic() + 90
        ended: dict[str, Outcome] = {}
        for case, process in started.items():
            try:
                stdout, stderr = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                stdout, stderr = process.communicate()
            ended[case] = Outcome(stdout, (stdout + stderr)[-3000:], process.returncode)
        return ended
    finally:
        for process in started.values():
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.mark.parametrize(("case", "runs"), [(c[0], c[2]) for c in CLIENTS],
                         ids=[c[0] for c in CLIENTS])  # fmt: skip
def test_only_a_client_with_the_clusters_certificates_runs_a_task(
    outcomes: dict[str, Outcome], case: str, runs: bool
) -> None:
    ended = outcomes[case]
    assert ("RAN on the match node" in ended.stdout) is runs, ended.output
    assert (ended.returncode == 0) is runs, ended.output
