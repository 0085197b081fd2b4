"""A seccomp filter, written as classic BPF by hand, that refuses IP sockets and more.

The filter (loaded by bubblewrap through ``--seccomp FD``) does these things:

1. kills the process if a system call arrives in another ABI than the host's
   (``seccomp_data.arch``), so i386 ``socketcall`` cannot be used to get round it;
2. refuses x32 system calls (numbers with bit 30 set) on x86-64 with ENOSYS;
3. lets ``socket`` through only for ``AF_UNIX``; every other address family
   (IPv4, IPv6, packet, netlink, ...) fails with EAFNOSUPPORT;
4. refuses ``io_uring_setup`` with ENOSYS, since io_uring can open sockets
   without passing through the ``socket`` system call;
5. refuses new user namespaces (``clone``/``unshare`` with CLONE_NEWUSER ->
   EPERM; ``clone3``, whose flags BPF cannot read, -> ENOSYS, which makes glibc
   fall back to ``clone``), keeping the kernel's user-namespace code out of reach;
6. refuses file locks (``flock``, ``fcntl``'s record locks and leases) with ENOLCK,
   as a file system without locking does: a lock is kept on the file, and every
   sandbox sees the same read-only files (``/usr``, the bot's own directory), so a
   lock one process sets another can see, a channel between sandboxes (the two
   processes of one bot that play the two games of a deal, say);
7. refuses file watches (``inotify_init``, ``inotify_init1``, ``fanotify_init``) with
   ENOSYS, as a kernel built without them: a watch on a file every sandbox sees
   reports another sandbox's opens and reads of it, the same channel as a lock.

No libseccomp: the program is a few dozen bytes packed with :mod:`struct`.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

# struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }
OFFSET_NR = 0
OFFSET_ARCH = 4
OFFSET_ARG0_LOW = 16  # little-endian: the low half of args[0]
OFFSET_ARG1_LOW = 24

# classic BPF opcodes
BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_JGE_K = 0x35
BPF_JSET_K = 0x45
BPF_RET_K = 0x06

SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000

AF_UNIX = 1
CLONE_NEWUSER = 0x10000000
X32_SYSCALL_BIT = 0x40000000
F_GETLK, F_SETLK, F_SETLKW = 5, 6, 7  # also the *64 forms on 64-bit ABIs
F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 36, 37, 38
F_SETLEASE, F_GETLEASE = 1024, 1025
LOCK_COMMANDS = (
    F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_GETLEASE,
)
"""The ``fcntl`` commands that set or test a record lock or a lease (refused: see 6.
above; a write lease is granted only while nobody else has the file open, and broken
when anybody opens it, so it tells its holder of another sandbox's opens)."""


@dataclass(frozen=True)
class ArchSpec:
    """The numbers the filter needs for one ABI."""

    name: str
    audit_arch: int
    socket_nr: int
    io_uring_setup_nr: int
    clone_nr: int
    clone3_nr: int
    unshare_nr: int
    fcntl_nr: int
    flock_nr: int
    denied_nrs: tuple[int, ...]  # bpf, perf_event_open, userfaultfd, keyctl, add_key, request_key
    watch_nrs: tuple[int, ...]  # inotify_init (x86-64 only), inotify_init1, fanotify_init
    has_x32: bool


ARCHES: dict[str, ArchSpec] = {
    "x86_64": ArchSpec(
        "x86_64", 0xC000003E, socket_nr=41, io_uring_setup_nr=425,
        clone_nr=56, clone3_nr=435, unshare_nr=272, fcntl_nr=72, flock_nr=73,
        denied_nrs=(321, 298, 323, 250, 248, 249), watch_nrs=(253, 294, 300), has_x32=True,
    ),
    "aarch64": ArchSpec(
        "aarch64", 0xC00000B7, socket_nr=198, io_uring_setup_nr=425,
        clone_nr=220, clone3_nr=435, unshare_nr=97, fcntl_nr=25, flock_nr=32,
        denied_nrs=(280, 241, 282, 219, 217, 218), watch_nrs=(26, 262), has_x32=False,
    ),
}


class SeccompUnsupportedError(RuntimeError):
    """No filter is known for this machine's architecture."""


def host_arch(machine: str | None = None) -> ArchSpec:
    """The ABI numbers for ``machine`` (default: this host's ``uname -m``)."""
    machine = machine or platform.machine()
    spec = ARCHES.get(machine)
    if spec is None:
        known = ", ".join(sorted(ARCHES))
        raise SeccompUnsupportedError(
            f"no seccomp filter for architecture {machine!r} (known: {known})"
        )
    return spec


# A tiny assembler: ("ld", offset) | ("jeq"/"jge"/"jset", k, true_label, false_label) |
# ("ret", value) | ("label", name). A label of None means "the next instruction".
Op = tuple[object, ...]


def _program(arch: ArchSpec) -> list[Op]:
    refuse_family = SECCOMP_RET_ERRNO | errno.EAFNOSUPPORT
    refuse_call = SECCOMP_RET_ERRNO | errno.ENOSYS
    refuse_perm = SECCOMP_RET_ERRNO | errno.EPERM
    refuse_lock = SECCOMP_RET_ERRNO | errno.ENOLCK
    ops: list[Op] = [
        ("ld", OFFSET_ARCH),
        ("jeq", arch.audit_arch, None, "kill"),
        ("ld", OFFSET_NR),
    ]
    if arch.has_x32:
        ops.append(("jge", X32_SYSCALL_BIT, "refuse_call", None))
    ops += [
        ("jeq", arch.socket_nr, "check_family", None),
        ("jeq", arch.io_uring_setup_nr, "refuse_call", None),
        ("jeq", arch.clone3_nr, "refuse_call", None),
        ("jeq", arch.clone_nr, "check_flags", None),
        ("jeq", arch.unshare_nr, "check_flags", None),
        ("jeq", arch.flock_nr, "refuse_lock", None),
        ("jeq", arch.fcntl_nr, "check_fcntl", None),
        *[("jeq", nr, "refuse_call", None) for nr in arch.watch_nrs],
        *[("jeq", nr, "refuse_perm", None) for nr in arch.denied_nrs],
        ("ret", SECCOMP_RET_ALLOW),
        ("label", "check_flags"),
        ("ld", OFFSET_ARG0_LOW),
        ("jset", CLONE_NEWUSER, "refuse_perm", "allow"),
        ("label", "refuse_perm"),
        ("ret", refuse_perm),
        ("label", "check_fcntl"),
        ("ld", OFFSET_ARG1_LOW),
        *[("jeq", command, "refuse_lock", None) for command in LOCK_COMMANDS],
        ("ret", SECCOMP_RET_ALLOW),
        ("label", "refuse_lock"),
        ("ret", refuse_lock),
        ("label", "check_family"),
        ("ld", OFFSET_ARG0_LOW),
        ("jeq", AF_UNIX, "allow", None),
        ("ret", refuse_family),
        ("label", "allow"),
        ("ret", SECCOMP_RET_ALLOW),
        ("label", "refuse_call"),
        ("ret", refuse_call),
        ("label", "kill"),
        ("ret", SECCOMP_RET_KILL_PROCESS),
    ]
    return ops


def _assemble(ops: list[Op]) -> bytes:
    labels: dict[str, int] = {}
    position = 0
    for op in ops:
        if op[0] == "label":
            labels[str(op[1])] = position
        else:
            position += 1
    out = bytearray()
    position = 0
    for op in ops:
        kind = op[0]
        if kind == "label":
            continue
        position += 1  # jump offsets count from the next instruction
        if kind == "ld":
            out += struct.pack("=HBBI", BPF_LD_W_ABS, 0, 0, int(str(op[1])))
        elif kind == "ret":
            out += struct.pack("=HBBI", BPF_RET_K, 0, 0, int(str(op[1])))
        else:
            code = {"jeq": BPF_JEQ_K, "jge": BPF_JGE_K, "jset": BPF_JSET_K}[str(kind)]
            jt = 0 if op[2] is None else labels[str(op[2])] - position
            jf = 0 if op[3] is None else labels[str(op[3])] - position
            out += struct.pack("=HBBI", code, jt, jf, int(str(op[1])))
    return bytes(out)


def build_filter(arch: ArchSpec | None = None) -> bytes:
    """The filter as a ``struct sock_filter[]``, ready for ``bwrap --seccomp``."""
    return _assemble(_program(arch or host_arch()))


def filter_fd(program: bytes | None = None) -> int:
    """A readable memfd holding the filter, positioned at its start (caller closes it)."""
    fd = os.memfd_create("kahuna-seccomp", 0)
    os.write(fd, program if program is not None else build_filter())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
