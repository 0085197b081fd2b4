"""Runner leases with real processes: exclusive, dropped by the kernel, derived status."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import arena.store.lease as lease_module
from arena.store import (
    INTERRUPTED,
    LeaseHeldError,
    Store,
    StoreError,
    TournamentConfig,
    acquire_lease,
    add_bot_version,
    get_tournament,
    lease_held,
    lease_holder,
    list_tournaments,
    set_status,
)
from arena.store.lease import LeaseHolder, lease_path
from arena.store.models import TournamentStatus
from arena.store.schema import MIGRATIONS, run_step
from arena.store.tournaments import (
    MAX_REASON_CHARS,
    UNRECORDED_INTERRUPTION,
    record_interruption,
)
from arena.tournament.policy.rounds import create_tournament
from tests.store.conftest import MakeBot
from tests.store.lease_holder import kill_9, lease_holding_process


@pytest.fixture
def tournament_id(store: Store, make_bot: MakeBot) -> int:
    for name in ("ann", "bob"):
        add_bot_version(store, make_bot(name))
    return create_tournament(store, "cup", "round_robin", ["ann", "bob"], TournamentConfig()).id


def test_a_lease_is_exclusive_within_a_process_and_released_whole(
    store: Store, tournament_id: int
) -> None:
    assert not lease_held(store, tournament_id)
    assert not lease_path(store, tournament_id).exists(), "a probe created the lock file"
    with acquire_lease(store, tournament_id, name="cup") as lease:
        holder = lease_holder(store, tournament_id)
        assert holder is not None and holder.pid == os.getpid()
        with pytest.raises(LeaseHeldError) as refused:
            acquire_lease(store, tournament_id, name="cup", wait_s=0.05)
        assert str(refused.value).startswith(
            f"tournament 'cup' is already being run by process {os.getpid()}:"
        )
        assert isinstance(refused.value, StoreError)  # the CLI's one-line refusal
        assert lease.held
    assert not lease.held and not lease_held(store, tournament_id)
    assert lease_path(store, tournament_id).read_text() == "", "a released lease kept its pid"
    lease.release()  # idempotent
    with acquire_lease(store, tournament_id, name="cup"):  # free again
        assert lease_held(store.data_dir, tournament_id)


def test_leases_of_two_tournaments_are_independent(store: Store, tournament_id: int) -> None:
    with acquire_lease(store, tournament_id, name="cup"):
        assert not lease_held(store, tournament_id + 1)
        with acquire_lease(store, tournament_id + 1, name="other"):
            assert lease_held(store, tournament_id + 1)


@pytest.mark.slow
def test_another_process_is_refused_until_the_holder_is_killed(
    store: Store, tournament_id: int
) -> None:
    with lease_holding_process(store.data_dir, tournament_id) as holder:
        found = lease_holder(store, tournament_id)
        assert found is not None and found.pid == holder.pid
        with pytest.raises(LeaseHeldError) as refused:
            acquire_lease(store, tournament_id, name="cup")
        assert refused.value.pid == holder.pid
        assert f"process {holder.pid}" in str(refused.value)
        assert get_tournament(store, tournament_id).status == "running"
        kill_9(holder)
        assert not lease_held(store, tournament_id)
        assert get_tournament(store, tournament_id).status == INTERRUPTED
        with acquire_lease(store, tournament_id, name="cup"):
            assert get_tournament(store, tournament_id).status == "running"


@pytest.mark.slow
def test_a_process_that_exits_without_releasing_leaves_no_lease(
    store: Store, tournament_id: int
) -> None:
    code = (
        "import os, sys\nfrom pathlib import Path\nfrom arena.store import acquire_lease\n"
        "lease = acquire_lease(Path(sys.argv[1]), int(sys.argv[2]), name='cup')\n"
        "os._exit(0)  # no release, no cleanup\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(store.data_dir), str(tournament_id)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert lease_path(store, tournament_id).read_text().strip().isdigit()  # pid left behind
    assert not lease_held(store, tournament_id)


@pytest.mark.slow
def test_a_stale_lock_file_of_a_dead_process_is_taken_over(
    store: Store, tournament_id: int
) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    path = lease_path(store, tournament_id)
    path.parent.mkdir(exist_ok=True)
    path.write_text(dead.stdout)
    assert lease_holder(store, tournament_id) is None
    with acquire_lease(store, tournament_id, name="cup", wait_s=0.0):
        assert path.read_text() == f"{os.getpid()}\n"


def test_a_probe_caught_holding_its_shared_lock_delays_a_runner_never_refuses_it(
    store: Store, tournament_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A probe holds a shared lock for an instant (longer if it is descheduled
    meanwhile): taking the lease retries past it. The race, forced: the probe lets go
    only once the runner's first try has met its lock."""
    acquire_lease(store, tournament_id, name="cup").release()  # the lock file exists
    probe = os.open(lease_path(store, tournament_id), os.O_RDONLY)
    fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)  # what lease_holder does
    tries: list[bool] = []
    try_lock = lease_module._try_lock

    def trying(fd: int, kind: int) -> bool:
        got = try_lock(fd, kind)
        tries.append(got)
        if tries == [False]:
            os.close(probe)
        return got

    monkeypatch.setattr(lease_module, "_try_lock", trying)
    with acquire_lease(store, tournament_id, name="cup"):
        assert tries[:2] == [False, True]  # refused once, by the probe; then taken
        assert lease_held(store, tournament_id)


@pytest.mark.parametrize(
    ("stored", "lease", "shown"),
    [
        ("created", False, "created"),
        ("running", True, "running"),
        ("running", False, INTERRUPTED),
        ("finished", False, "finished"),
        ("finished", True, "finished"),
    ],
    ids=lambda value: str(value),
)
def test_the_shown_status_is_derived_from_the_stored_one_and_the_lease(
    store: Store, tournament_id: int, stored: str, lease: bool, shown: str
) -> None:
    set_status(store, tournament_id, stored)
    held = acquire_lease(store, tournament_id, name="cup") if lease else None
    try:
        assert get_tournament(store, tournament_id).status == shown
        assert get_tournament(store, "cup").status == shown
        assert [t.status for t in list_tournaments(store)] == [shown]
    finally:
        if held is not None:
            held.release()


def test_interrupted_is_never_stored(store: Store, tournament_id: int) -> None:
    with pytest.raises(StoreError, match="status must be one of created, running, finished"):
        set_status(store, tournament_id, INTERRUPTED)


def test_a_data_directory_where_no_lease_can_be_created_is_named(tmp_path: Path) -> None:
    blocked = tmp_path / "data"
    blocked.mkdir()
    (blocked / "leases").write_text("not a directory")
    with pytest.raises(StoreError, match="cannot create the runner lease"):
        acquire_lease(blocked, 1, name="cup")


def test_an_interrupted_tournament_says_why_until_its_next_run_starts(
    store: Store, tournament_id: int
) -> None:
    set_status(store, tournament_id, TournamentStatus.RUNNING)  # and nobody holds the lease
    assert get_tournament(store, tournament_id).interrupted_reason == UNRECORDED_INTERRUPTION
    record_interruption(store, tournament_id, "the store is full:\n free space, then resume it")
    shown = get_tournament(store, tournament_id)
    assert shown.status is INTERRUPTED
    assert shown.interrupted_reason == "the store is full: free space, then resume it"
    assert list_tournaments(store)[0].interrupted_reason == shown.interrupted_reason
    with acquire_lease(store, tournament_id, name="cup"):  # a live runner: not interrupted
        assert get_tournament(store, tournament_id).interrupted_reason is None
    set_status(store, tournament_id, TournamentStatus.RUNNING)  # the next run clears it
    assert get_tournament(store, tournament_id).interrupted_reason == UNRECORDED_INTERRUPTION
    record_interruption(store, tournament_id, "x" * 10_000)
    assert get_tournament(store, tournament_id).interrupted_reason == "x" * MAX_REASON_CHARS
    record_interruption(store, tournament_id, "cgroups: cannot write /sys/fs/cgroup/x/y: full")
    shown_reason = get_tournament(store, tournament_id).interrupted_reason
    assert shown_reason == "cgroups: cannot write <path>: full"
    set_status(store, tournament_id, TournamentStatus.FINISHED)
    assert get_tournament(store, tournament_id).interrupted_reason is None


def test_a_real_v5_store_gains_the_interruption_reason(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = sqlite3.connect(data / "arena.db")
    for step in MIGRATIONS[:5]:
        run_step(db, step)
    db.execute(
        "INSERT INTO tournaments (id, name, format, status, config, created_at)"
        " VALUES (1, 'old', 'round_robin', 'running', '{}', '2026')"
    )
    db.execute("PRAGMA user_version = 5")
    db.commit()
    db.close()
    with Store.open(data) as store:
        old = get_tournament(store, "old")
        assert (old.status, old.interrupted_reason) == (INTERRUPTED, UNRECORDED_INTERRUPTION)
        record_interruption(store, 1, "killed by SIGTERM")
        assert get_tournament(store, "old").interrupted_reason == "killed by SIGTERM"


def test_a_lease_note_is_the_reason_when_the_store_took_no_write(
    store: Store, tournament_id: int
) -> None:
    set_status(store, tournament_id, TournamentStatus.RUNNING)
    lease = acquire_lease(store, tournament_id, name="cup")
    lease.note("the arena's data directory has no space left")
    assert lease_holder(store, tournament_id) == LeaseHolder(os.getpid())  # pid still read
    lease.release()
    assert get_tournament(store, tournament_id).interrupted_reason == (
        "the arena's data directory has no space left"
    )
    record_interruption(store, tournament_id, "stored in the database")  # the database wins
    assert get_tournament(store, tournament_id).interrupted_reason == "stored in the database"
    set_status(store, tournament_id, TournamentStatus.RUNNING)
    acquire_lease(store, tournament_id, name="cup").release()  # a new run clears the note
    assert get_tournament(store, tournament_id).interrupted_reason == UNRECORDED_INTERRUPTION
