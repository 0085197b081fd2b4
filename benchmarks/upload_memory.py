"""How much an upload grows the server's memory.

Target: an upload never grows it by more than ``--limit-mib``, whatever the
archive claims of itself: the server must stay up for everyone else.

    python3 benchmarks/upload_memory.py [--limit-mib 64]

Starts a real arena API server in a child process (a fresh data directory,
port 0, no smoke match: this measures the archive, not the bot), sends it
crafted uploads up to the 8 MiB limit with SubmitBot, and prints for each
the answer and the server's RSS growth: its peak RSS during the call (VmHWM,
reset before each call through /proc/PID/clear_refs) minus its RSS before.
Exits 1 when any upload grows it by more than ``--limit-mib``.
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

import _grpc_tuned  # noqa: F401 (first: gRPC's environment as in arena processes)

# isort: split

import grpc

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc

SERVER = """
import sys, time
from arena.server.app import create_server
from arena.server.arena_service import ServiceOptions
from arena.store import Store, ensure_admin_token
store = Store.open(sys.argv[1])
server, port = create_server("127.0.0.1:0", store=store, options=ServiceOptions(concurrency=1))
server.start()
print(port, ensure_admin_token(store), flush=True)
while True:
    time.sleep(3600)
"""
TOML = b'name = "membot"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'
GIB = 1 << 30


def _header(name: bytes, kind: bytes, size: int) -> bytes:
    block = bytearray(512)
    block[0 : len(name)] = name
    block[100:108] = b"0000644\0"
    block[124:136] = f"{size:011o}\0".encode()
    block[156:157] = kind
    block[257:265] = b"ustar\x0000"
    block[148:156] = b" " * 8
    block[148:156] = f"{sum(block):06o}\0 ".encode()
    return bytes(block)


def _raw(*parts: bytes) -> bytes:
    return gzip.compress(b"".join(parts) + bytes(1024))


def _bomb(header: bytes, size: int) -> bytes:
    """``header`` followed by ``size`` bytes of "a" (all it declares), gzipped in chunks."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip framing
    out = [packer.compress(header)]
    chunk = b"a" * (1 << 20)
    for _ in range(size // len(chunk)):
        out.append(packer.compress(chunk))
    out.append(packer.compress(bytes(-size % 512 + 1024)))
    out.append(packer.flush())
    return b"".join(out)


def _tar(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def uploads() -> dict[str, bytes]:
    noise = os.urandom(7_900_000)  # incompressible: the archive is just under 8 MiB
    zeros = bytes(16 * 1024 * 1024 - 1)
    bomb = {"bot.toml": TOML, **{f"z{i}": zeros for i in range(3)}}
    return {
        "tar gnu-longname of 1 GiB": _bomb(_header(b"././@LongLink", b"L", GIB), GIB),
        "tar gnu-longname of 256 MiB": _bomb(_header(b"././@LongLink", b"L", 256 << 20), 256 << 20),
        "tar gnu-longlink of 1 GiB": _bomb(_header(b"././@LongLink", b"K", GIB), GIB),
        "tar pax header of 1 GiB": _bomb(_header(b"pax", b"x", GIB), GIB),
        "tar gnu-longlink declares 1 GiB (7.9 MB)": _raw(_header(b"././@LongLink", b"K", GIB),
                                                         noise),
        "tar pax header declares 1 GiB (7.9 MB)": _raw(_header(b"pax", b"x", GIB), noise),
        "tar 2000 entries, a 64 KiB PAX header each": _raw(*[
            _header(b"pax", b"x", 65536) + b"65536 comment=".ljust(65535, b"a") + b"\n"
            + _header(f"f{i}".encode(), b"0", 0) for i in range(2000)]),
        "tar file declares 1 GiB (7.9 MB)": _raw(_header(b"bot.toml", b"0", GIB), noise),
        "tar.gz valid bot, 7.9 MB file": _tar({"b/bot.toml": TOML, "b/bot.py": noise}),
        "tar.gz 3 x 16 MiB of zeros": _tar(bomb),
        "zip valid bot, 7.9 MB file": _zip({"b/bot.toml": TOML, "b/bot.py": noise}),
        "zip 3 x 16 MiB of zeros": _zip(bomb),
    }  # fmt: skip


def _status(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) * 1024
    return fields


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit-mib", type=float, default=64.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="upload-memory-") as data_dir:
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER, data_dir], stdout=subprocess.PIPE, text=True
        )
        try:
            assert server.stdout is not None
            port, token = server.stdout.readline().split()
            channel = grpc.insecure_channel(
                f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 16 << 20)]
            )
            stub = pb_grpc.ArenaServiceStub(channel)
            metadata = (("authorization", f"Bearer {token}"),)
            stub.ListBots(pb.ListBotsRequest(), metadata=metadata)  # warm up
            worst = 0.0
            for label, data in uploads().items():
                Path(f"/proc/{server.pid}/clear_refs").write_text("5")  # reset VmHWM
                before = _status(server.pid)["VmRSS"]
                started = time.perf_counter()
                try:
                    stub.SubmitBot(pb.SubmitBotRequest(archive=data), metadata=metadata)
                    answer = "OK"
                except grpc.RpcError as error:
                    answer = f"{error.code().name}: {error.details()}"[:90]
                elapsed = time.perf_counter() - started
                after = _status(server.pid)
                growth = (after["VmHWM"] - before) / (1 << 20)
                held = (after["VmRSS"] - before) / (1 << 20)
                worst = max(worst, growth)
                print(f"{label:45} {len(data) / 1e6:5.2f} MB  peak +{growth:7.1f} MiB"
                      f"  held +{held:7.1f} MiB  {elapsed * 1000:6.0f} ms  {answer}")  # fmt: skip
            channel.close()
        finally:
            server.kill()
            server.wait()
    verdict = "ok" if worst <= args.limit_mib else "OVER"
    print(f"worst RSS growth: {worst:.1f} MiB (target <= {args.limit_mib:g} MiB): {verdict}")
    return 0 if worst <= args.limit_mib else 1


if __name__ == "__main__":
    sys.exit(main())
