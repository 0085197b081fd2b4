"""The seccomp filter: checked instruction by instruction in a BPF interpreter,
then for real inside the sandbox (with a control run without the filter)."""

from __future__ import annotations

import errno
import platform
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.sandbox import HostReport
from arena.sandbox import seccomp as sc
from arena.testing.waiting import wait_until

from .conftest import Harness, lines_of

X86 = sc.ARCHES["x86_64"]
ARM = sc.ARCHES["aarch64"]
ALLOW = sc.SECCOMP_RET_ALLOW
KILL = sc.SECCOMP_RET_KILL_PROCESS
REFUSE_FAMILY = sc.SECCOMP_RET_ERRNO | errno.EAFNOSUPPORT
REFUSE_CALL = sc.SECCOMP_RET_ERRNO | errno.ENOSYS
REFUSE_PERM = sc.SECCOMP_RET_ERRNO | errno.EPERM
REFUSE_LOCK = sc.SECCOMP_RET_ERRNO | errno.ENOLCK
NEWUSER = sc.CLONE_NEWUSER
SIGCHLD = 17
THREAD_FLAGS = 0x3D0F00  # what glibc's pthread_create passes to clone


def run_filter(program: bytes, *, arch: int, nr: int, arg0: int = 0, arg1: int = 0) -> int:
    """Interpret the classic BPF subset the filter uses over one seccomp_data."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, arg0, arg1, 0, 0, 0, 0)
    instructions = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    accumulator = 0
    pc = 0
    while True:
        code, jt, jf, k = instructions[pc]
        pc += 1
        if code == sc.BPF_LD_W_ABS:
            (accumulator,) = struct.unpack_from("=I", data, k)
        elif code == sc.BPF_RET_K:
            return int(k)
        elif code == sc.BPF_JEQ_K:
            pc += jt if accumulator == k else jf
        elif code == sc.BPF_JGE_K:
            pc += jt if accumulator >= k else jf
        elif code == sc.BPF_JSET_K:
            pc += jt if accumulator & k else jf
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")


@pytest.mark.parametrize(
    ("spec", "arch", "nr", "arg0", "expected"),
    [
        pytest.param(X86, X86.audit_arch, 41, 1, ALLOW, id="x86-socket-unix"),
        pytest.param(X86, X86.audit_arch, 41, 2, REFUSE_FAMILY, id="x86-socket-inet"),
        pytest.param(X86, X86.audit_arch, 41, 10, REFUSE_FAMILY, id="x86-socket-inet6"),
        pytest.param(X86, X86.audit_arch, 41, 16, REFUSE_FAMILY, id="x86-socket-netlink"),
        pytest.param(X86, X86.audit_arch, 41, 17, REFUSE_FAMILY, id="x86-socket-packet"),
        pytest.param(X86, X86.audit_arch, 41, 0x100000001, ALLOW, id="x86-high-bits-ignored"),
        pytest.param(X86, X86.audit_arch, 0, 2, ALLOW, id="x86-read"),
        pytest.param(X86, X86.audit_arch, 425, 0, REFUSE_CALL, id="x86-io-uring-setup"),
        pytest.param(X86, X86.audit_arch, 0x40000000 | 41, 2, REFUSE_CALL, id="x86-x32-socket"),
        pytest.param(X86, X86.audit_arch, 0x40000000 | 39, 0, REFUSE_CALL, id="x86-x32-getpid"),
        pytest.param(X86, 0x40000003, 102, 2, KILL, id="x86-i386-socketcall"),
        pytest.param(X86, X86.audit_arch, 56, SIGCHLD, ALLOW, id="x86-clone-fork"),
        pytest.param(X86, X86.audit_arch, 56, THREAD_FLAGS, ALLOW, id="x86-clone-thread"),
        pytest.param(X86, X86.audit_arch, 56, NEWUSER | SIGCHLD, REFUSE_PERM, id="x86-clone-user"),
        pytest.param(X86, X86.audit_arch, 272, NEWUSER, REFUSE_PERM, id="x86-unshare-userns"),
        pytest.param(X86, X86.audit_arch, 272, 0x20000, ALLOW, id="x86-unshare-mountns"),
        pytest.param(X86, X86.audit_arch, 435, 0, REFUSE_CALL, id="x86-clone3"),
        pytest.param(X86, X86.audit_arch, 321, 0, REFUSE_PERM, id="x86-bpf"),
        pytest.param(X86, X86.audit_arch, 298, 0, REFUSE_PERM, id="x86-perf-event-open"),
        pytest.param(X86, X86.audit_arch, 323, 0, REFUSE_PERM, id="x86-userfaultfd"),
        pytest.param(X86, X86.audit_arch, 250, 0, REFUSE_PERM, id="x86-keyctl"),
        pytest.param(X86, ARM.audit_arch, 198, 2, KILL, id="x86-foreign-arch"),
        pytest.param(ARM, ARM.audit_arch, 198, 1, ALLOW, id="arm-socket-unix"),
        pytest.param(ARM, ARM.audit_arch, 198, 2, REFUSE_FAMILY, id="arm-socket-inet"),
        pytest.param(ARM, ARM.audit_arch, 41, 2, ALLOW, id="arm-41-is-not-socket"),
        pytest.param(ARM, ARM.audit_arch, 97, NEWUSER, REFUSE_PERM, id="arm-unshare-userns"),
        pytest.param(ARM, ARM.audit_arch, 220, NEWUSER, REFUSE_PERM, id="arm-clone-userns"),
        pytest.param(ARM, ARM.audit_arch, 280, 0, REFUSE_PERM, id="arm-bpf"),
        pytest.param(ARM, ARM.audit_arch, 0x40000000 | 1, 0, ALLOW, id="arm-no-x32-check"),
        pytest.param(ARM, X86.audit_arch, 41, 2, KILL, id="arm-foreign-arch"),
    ],
)
def test_filter_decisions(
    spec: sc.ArchSpec, arch: int, nr: int, arg0: int, expected: int
) -> None:
    assert run_filter(sc.build_filter(spec), arch=arch, nr=nr, arg0=arg0) == expected


F_GETFL, F_SETFD = 3, 2


@pytest.mark.parametrize(
    ("spec", "nr", "arg1", "expected"),
    [
        pytest.param(X86, 73, 0, REFUSE_LOCK, id="x86-flock"),
        pytest.param(X86, 72, sc.F_GETLK, REFUSE_LOCK, id="x86-fcntl-getlk"),
        pytest.param(X86, 72, sc.F_SETLK, REFUSE_LOCK, id="x86-fcntl-setlk"),
        pytest.param(X86, 72, sc.F_SETLKW, REFUSE_LOCK, id="x86-fcntl-setlkw"),
        pytest.param(X86, 72, sc.F_OFD_GETLK, REFUSE_LOCK, id="x86-fcntl-ofd-getlk"),
        pytest.param(X86, 72, sc.F_OFD_SETLK, REFUSE_LOCK, id="x86-fcntl-ofd-setlk"),
        pytest.param(X86, 72, sc.F_OFD_SETLKW, REFUSE_LOCK, id="x86-fcntl-ofd-setlkw"),
        pytest.param(X86, 72, sc.F_SETLEASE, REFUSE_LOCK, id="x86-fcntl-setlease"),
        pytest.param(X86, 72, sc.F_GETLEASE, REFUSE_LOCK, id="x86-fcntl-getlease"),
        pytest.param(X86, 72, F_GETFL, ALLOW, id="x86-fcntl-getfl"),
        pytest.param(X86, 72, F_SETFD, ALLOW, id="x86-fcntl-setfd"),
        pytest.param(X86, 72, 0x100000000 | sc.F_SETLK, REFUSE_LOCK, id="x86-high-bits-ignored"),
        pytest.param(ARM, 32, 0, REFUSE_LOCK, id="arm-flock"),
        pytest.param(ARM, 25, sc.F_OFD_SETLK, REFUSE_LOCK, id="arm-fcntl-ofd-setlk"),
        pytest.param(ARM, 25, F_GETFL, ALLOW, id="arm-fcntl-getfl"),
        pytest.param(ARM, 73, 0, ALLOW, id="arm-73-is-not-flock"),
    ],
)
def test_file_locks_are_refused(spec: sc.ArchSpec, nr: int, arg1: int, expected: int) -> None:
    program = sc.build_filter(spec)
    assert run_filter(program, arch=spec.audit_arch, nr=nr, arg1=arg1) == expected


@pytest.mark.parametrize(
    ("spec", "nr", "expected"),
    [
        pytest.param(X86, 253, REFUSE_CALL, id="x86-inotify-init"),
        pytest.param(X86, 294, REFUSE_CALL, id="x86-inotify-init1"),
        pytest.param(X86, 300, REFUSE_CALL, id="x86-fanotify-init"),
        pytest.param(X86, 254, ALLOW, id="x86-inotify-add-watch-needs-an-instance"),
        pytest.param(ARM, 26, REFUSE_CALL, id="arm-inotify-init1"),
        pytest.param(ARM, 262, REFUSE_CALL, id="arm-fanotify-init"),
        pytest.param(ARM, 253, ALLOW, id="arm-253-is-not-inotify"),
    ],
)
def test_file_watches_are_refused(spec: sc.ArchSpec, nr: int, expected: int) -> None:
    program = sc.build_filter(spec)
    assert run_filter(program, arch=spec.audit_arch, nr=nr) == expected


@given(
    nr=st.integers(0, 0x7FFFFFFF),
    arg0=st.integers(0, 2**64 - 1),
    arg1=st.integers(0, 2**64 - 1),
)
def test_only_the_listed_calls_are_touched(nr: int, arg0: int, arg1: int) -> None:
    decision = run_filter(sc.build_filter(X86), arch=X86.audit_arch, nr=nr, arg0=arg0, arg1=arg1)
    if nr == X86.socket_nr:
        assert decision == (ALLOW if arg0 & 0xFFFFFFFF == sc.AF_UNIX else REFUSE_FAMILY)
    elif nr in (X86.io_uring_setup_nr, X86.clone3_nr, *X86.watch_nrs) or nr >= 0x40000000:
        assert decision == REFUSE_CALL
    elif nr in (X86.clone_nr, X86.unshare_nr):
        assert decision == (REFUSE_PERM if arg0 & NEWUSER else ALLOW)
    elif nr in X86.denied_nrs:
        assert decision == REFUSE_PERM
    elif nr == X86.flock_nr:
        assert decision == REFUSE_LOCK
    elif nr == X86.fcntl_nr:
        assert decision == (REFUSE_LOCK if arg1 & 0xFFFFFFFF in sc.LOCK_COMMANDS else ALLOW)
    else:
        assert decision == ALLOW


def test_unknown_architecture_is_named() -> None:
    with pytest.raises(sc.SeccompUnsupportedError, match="sparc64"):
        sc.host_arch("sparc64")
    assert sc.host_arch("aarch64") is ARM


FAMILIES = (
    "import socket, sys\n"
    "for name in ('AF_UNIX', 'AF_INET', 'AF_INET6', 'AF_PACKET', 'AF_NETLINK'):\n"
    "    try:\n"
    "        raw = name in ('AF_PACKET', 'AF_NETLINK')\n"
    "        kind = socket.SOCK_RAW if raw else socket.SOCK_STREAM\n"
    "        socket.socket(getattr(socket, name), kind).close()\n"
    "        print(name, 'ok')\n"
    "    except OSError as exc:\n"
    "        print(name, exc.errno)\n"
    "a, b = socket.socketpair()\n"
    "print('socketpair ok')\n"
)


USERNS_AND_THREADS = (
    "unshare --user true 2>/dev/null && echo USERNS || echo userns refused;"
    " python3 -c 'import threading; t = threading.Thread(target=print, args=(\"thread ok\",));"
    " t.start(); t.join()'; sh -c 'echo fork ok'"
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seccomp", "first_line"),
    [pytest.param(True, "userns refused", id="filter"),
     pytest.param(False, "USERNS", id="control-without-filter")],
)
def test_user_namespaces_are_refused_threads_and_forks_work(
    harness: Harness, seccomp: bool, first_line: str
) -> None:
    host = None if seccomp else HostReport(True, 1, False, ("seccomp",))
    status, output = harness.run(USERNS_AND_THREADS, host=host, unsafe=not seccomp)
    assert status == 0, output
    assert lines_of(output) == [first_line, "thread ok", "fork ok"]


@pytest.mark.slow
def test_socket_families_inside_the_sandbox(harness: Harness) -> None:
    status, output = harness.run(FAMILIES, lang="python", share_net=True)
    assert status == 0, output
    assert lines_of(output)[-6:] == [
        "AF_UNIX ok",
        "AF_INET 97",
        "AF_INET6 97",
        "AF_PACKET 97",
        "AF_NETLINK 97",
        "socketpair ok",
    ]


@pytest.mark.slow
def test_control_without_the_filter_ip_sockets_open(harness: Harness) -> None:
    no_seccomp = HostReport(namespaces=True, cgroup_version=1, seccomp=False, missing=("x",))
    status, output = harness.run(FAMILIES, lang="python", host=no_seccomp, unsafe=True)
    assert status == 0, output
    assert "AF_INET ok" in lines_of(output)


RAW_SYSCALLS = (
    "import ctypes, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "calls = (('x32_getpid', 0x40000000 | 39), ('io_uring_setup', 425), ('bpf', 321),\n"
    "         ('userfaultfd', 323), ('perf_event_open', 298))\n"
    "for name, nr in calls:\n"
    "    result = libc.syscall(nr, 1, 0)\n"
    "    print(name, result, ctypes.get_errno())\n"
)


@pytest.mark.slow
@pytest.mark.skipif(platform.machine() != "x86_64", reason="x32 and numbers are x86-64's")
def test_x32_io_uring_and_denied_calls_are_refused_for_real(harness: Harness) -> None:
    status, output = harness.run(RAW_SYSCALLS, lang="python")
    assert status == 0, output
    assert lines_of(output)[-5:] == [
        "x32_getpid -1 38",
        "io_uring_setup -1 38",
        "bpf -1 1",
        "userfaultfd -1 1",
        "perf_event_open -1 1",
    ]


# One sandboxed process locks a file every sandbox sees (its bot directory is the same
# read-only tree for both), then waits; another tries to read the lock. Without the
# filter the second reads it: a channel between the two processes of one bot, which
# play the two games of a deal (docs/reference/PROTOCOL.md).
LOCK_SETTER = (
    "import fcntl, os, struct, time\n"
    "fd = os.open('/bot/bot.txt', os.O_RDONLY)\n"
    "calls = (('flock', lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)),\n"
    "         ('range', lambda: fcntl.fcntl(fd, fcntl.F_SETLK,\n"
    "                                       struct.pack('hhqqi', fcntl.F_RDLCK, 0, 4242, 1, 0))))\n"
    "for name, call in calls:\n"
    "    try:\n"
    "        call()\n"
    "        print(name, 'set', flush=True)\n"
    "    except OSError as exc:\n"
    "        print(name, 'refused', exc.errno, flush=True)\n"
    "print('published', flush=True)\n"
    "time.sleep(60)\n"
)
LOCK_READER = (
    "import fcntl, os, struct\n"
    "fd = os.open('/bot/bot.txt', os.O_RDONLY)\n"
    "try:\n"
    "    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)\n"
    "    print('flock free')\n"
    "except BlockingIOError:\n"
    "    print('flock SEEN')\n"
    "except OSError as exc:\n"
    "    print('flock refused', exc.errno)\n"
    "try:\n"
    "    found = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack('hhqqi', fcntl.F_WRLCK, 0, 0, 0, 0))\n"
    "    kind, _, start, _, _ = struct.unpack('hhqqi', found)\n"
    "    print('range free' if kind == fcntl.F_UNLCK else f'range SEEN {start}')\n"
    "except OSError as exc:\n"
    "    print('range refused', exc.errno)\n"
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seccomp", "set_lines", "read_lines"),
    [
        pytest.param(
            True,
            [f"flock refused {errno.ENOLCK}", f"range refused {errno.ENOLCK}"],
            [f"flock refused {errno.ENOLCK}", f"range refused {errno.ENOLCK}"],
            id="filter",
        ),
        pytest.param(
            False, ["flock set", "range set"], ["flock SEEN", "range SEEN 4242"],
            id="control-without-filter",
        ),
    ],
)
def test_no_lock_passes_between_two_sandboxes(
    harness: Harness, seccomp: bool, set_lines: list[str], read_lines: list[str]
) -> None:
    options = {} if seccomp else {"host": HostReport(True, 1, False, ("seccomp",)), "unsafe": True}
    _setter, set_output = harness.launch(LOCK_SETTER, lang="python", **options)
    wait_until(
        lambda: "published" in set_output.read_text(),
        "the first sandbox to have tried its locks",
        timeout_s=20,
        state=set_output.read_text,
    )
    status, read_output = harness.run(LOCK_READER, lang="python", **options)
    assert status == 0, read_output
    assert lines_of(set_output.read_text())[-3:] == [*set_lines, "published"]
    assert lines_of(read_output)[-2:] == read_lines


# One sandboxed process watches a file every sandbox sees (its bot directory is the same
# read-only tree for both) for opens; another opens it. Without the filter the first
# reads the second's open: as with locks, a channel between the two processes of one
# bot that play the two games of a deal.
OPEN_WATCHER = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "fd = libc.inotify_init1(0)\n"
    "if fd < 0:\n"
    "    print('inotify refused', ctypes.get_errno(), flush=True)\n"
    "else:\n"
    "    IN_OPEN = 0x20\n"
    "    print('watching', libc.inotify_add_watch(fd, b'/bot/bot.txt', IN_OPEN) > 0, flush=True)\n"
    "    os.read(fd, 4096)  # blocks until an open of the file, in any sandbox\n"
    "    print('open SEEN', flush=True)\n"
)
OPENER = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "FAN_REPORT_FID = 0x200  # what an unprivileged fanotify_init must ask for\n"
    "fd = libc.syscall(300, FAN_REPORT_FID, os.O_RDONLY)\n"
    "print('fanotify', 'opened' if fd >= 0 else ctypes.get_errno(), flush=True)\n"
    "open('/bot/bot.txt').close()\n"
)


@pytest.mark.slow
@pytest.mark.skipif(platform.machine() != "x86_64", reason="fanotify_init's number is x86-64's")
@pytest.mark.parametrize(
    ("seccomp", "watched", "opened"),
    [
        pytest.param(
            True, f"inotify refused {errno.ENOSYS}", f"fanotify {errno.ENOSYS}", id="filter"
        ),
        pytest.param(False, "open SEEN", "fanotify opened", id="control-without-filter"),
    ],
)
def test_no_file_watch_sees_another_sandboxs_opens(
    harness: Harness, seccomp: bool, watched: str, opened: str
) -> None:
    options = {} if seccomp else {"host": HostReport(True, 1, False, ("seccomp",)), "unsafe": True}
    _watcher, watch_output = harness.launch(OPEN_WATCHER, lang="python", **options)
    wait_until(
        lambda: "watching" in watch_output.read_text() or "refused" in watch_output.read_text(),
        "the first sandbox to have set its watch",
        timeout_s=20,
        state=watch_output.read_text,
    )
    status, open_output = harness.run(OPENER, lang="python", **options)
    assert status == 0, open_output
    assert lines_of(open_output)[-1] == opened
    wait_until(
        lambda: watched in lines_of(watch_output.read_text()),
        watched,
        timeout_s=10,
        state=watch_output.read_text,
    )


I386_GETPID = (
    "import ctypes, mmap\n"
    "code = bytes([0xB8, 20, 0, 0, 0, 0xCD, 0x80, 0xC3])  # mov eax, 20; int 0x80; ret\n"
    "page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
    "page.write(code)\n"
    "address = ctypes.addressof(ctypes.c_char.from_buffer(page))\n"
    "print('i386 getpid', ctypes.CFUNCTYPE(ctypes.c_int)(address)(), flush=True)\n"
)


@pytest.mark.slow
@pytest.mark.skipif(platform.machine() != "x86_64", reason="i386 ABI exists only on x86-64")
def test_foreign_abi_system_call_kills_the_process(harness: Harness) -> None:
    status, output = harness.run(I386_GETPID, lang="python")
    assert "i386 getpid" not in output
    assert status == 128 + 31  # SIGSYS from SECCOMP_RET_KILL_PROCESS
