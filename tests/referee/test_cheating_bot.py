"""A cheating bot predicts no better than an honest one.

Both bots of a long paired match run ``tests/bots/cheatbot.py``: before every
reply each predicts the opponent's hand and the next card of the pile twice,
honestly (this game's observation alone) and by cheating (every deal it ever
saw or could compute, carried across games and across its processes through
memory, /tmp, /dev/shm, $HOME, its directories and an abstract socket), and
writes both to its stderr, which the referee keeps in its own files (the
test's private channel: the opponent never sees them). The test reads
those files as each game ends, scores every prediction against the stored
record, and compares the two predictors per (game, bot) with an exact sign
test, one-sided (is the cheat better?), a fixed secret and fixed seeds.

Where each half of the deal pairs has its own sandboxed processes (a
tournament worker's ``play_in_turn``, ``arena match``'s ``run_halves``) the
cheat is not better. The controls show the test can fail: one process per
bot for the whole match (``run_match`` of a paired match, no halves),
separate processes without the sandbox (a host without namespaces with
``unsafe=True``: one /tmp for all) and the halves at once in one network
namespace, one a deal behind (the cheat's abstract socket, served by a live
process) all let the cheat win significantly.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import shutil
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import arena.referee.results
import arena.referee.slots
import arena.sandbox.probe
from arena.kahuna import State, parse_record, replay_steps
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee import BotSpec, BotStatus, MatchConfig, TimeControl, load_bot, run_match
from arena.referee.endpoint import WireTap
from arena.referee.halves import half_configs, play_in_turn, run_halves
from arena.referee.prestart import decide_prestart
from arena.referee.types import GameReport, MatchReport
from arena.sandbox import SandboxLimits, probe_host
from arena.testing.waiting import wait_until

from .conftest import assert_no_process_left

pytestmark = pytest.mark.slow

CHEATBOT = Path(__file__).resolve().parent.parent / "bots" / "cheatbot.py"
GAMES = 20
CONFIG = MatchConfig(
    games=GAMES,
    seed=9,
    secret=bytes(range(100, 132)),
    time_control=TimeControl(action_ms=3000, bank_ms=10_000),
    limits=SandboxLimits(memory_mb=256),
    max_restarts=0,
)
SIGNIFICANT = 0.001
"""A control passes (the cheat wins) if the sign test's one-sided p is below this."""
NOT_EVEN_WEAKLY = 0.05
"""The real thing passes (the cheat is not better) if that p is above this."""
WAIT_FOR_LINES_S = 10.0


# ----------------------------------------------------------------- the sign test


def sign_test(better: int, worse: int) -> float:
    """Exact one-sided p of ``better`` or more successes in ``better + worse`` fair coin flips
    (McNemar's exact test on the discordant units; ties carry no information)."""
    n = better + worse
    return float(sum(math.comb(n, k) for k in range(better, n + 1)) / 2**n)


@pytest.mark.parametrize(
    ("better", "worse", "p"),
    [
        (0, 0, 1.0),
        (0, 5, 1.0),
        (1, 0, 0.5),
        (5, 0, 1 / 32),
        (3, 1, 5 / 16),
        (10, 10, 0.5880985260009766),
    ],
)
def test_the_sign_test_is_exact(better: int, worse: int, p: float) -> None:
    assert sign_test(better, worse) == pytest.approx(p, rel=1e-12)


# ----------------------------------------------------------------- predictions


@dataclass(frozen=True)
class Prediction:
    bot: str
    game: int
    seat: int
    events: int
    honest: tuple[tuple[str, ...], tuple[str, ...]]  # (hand, next pile card or none)
    cheat: tuple[tuple[str, ...], tuple[str, ...]]
    source: str | None

    @classmethod
    def from_line(cls, line: str) -> Prediction | None:
        try:
            data = json.loads(line)
        except ValueError:
            return None  # the SDK's own words, or a line still being written
        if not isinstance(data, dict) or "cheat" not in data:
            return None
        return cls(
            bot=data["bot"], game=data["game"], seat=data["seat"], events=data["events"],
            honest=(tuple(data["honest"]["hand"]), tuple(data["honest"]["deck"])),
            cheat=(tuple(data["cheat"]["hand"]), tuple(data["cheat"]["deck"])),
            source=data["source"],
        )  # fmt: skip


class StderrReader:
    """The bots' stderr files, read where the referee keeps them while a match runs.

    Every match directory is made under ``tempfile.gettempdir()``, which the test
    points at a directory of its own; a game's lines are awaited when it ends
    (a drainer copies them from the bot's pipe), before the match can remove them.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.found: dict[tuple[str, int, int], Prediction] = {}
        # halves played at once await their games from two threads: one reads into
        # ``found`` while the other looks through it
        self._lock = threading.Lock()

    def read(self) -> None:
        for path in self._stderr_files():
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue  # its match was removed meanwhile: read before
            for line in text.splitlines():
                found = Prediction.from_line(line)
                if found is not None:
                    self.found[(found.bot, found.game, found.events)] = found

    def _stderr_files(self) -> list[Path]:
        """The bots' stderr files of the matches still there: a match (the other half's)
        may be removed between listing its directory and reading it."""
        files: list[Path] = []
        for match_dir in self.root.glob("kahuna-*"):
            try:
                files += match_dir.glob("bot*.stderr")
            except OSError:
                continue  # its match was removed meanwhile: read before
        return files

    def await_game(self, game: GameReport) -> None:
        """Wait until every request of ``game`` has its prediction line."""
        wanted = expected_requests(game)

        def missing() -> set[tuple[str, int]]:
            with self._lock:
                self.read()
                return wanted - {(bot, events) for bot, index, events in self.found
                                 if index == game.index}  # fmt: skip

        wait_until(lambda: not missing(), f"game {game.index}'s prediction lines",
                   WAIT_FOR_LINES_S, state=missing)  # fmt: skip


def expected_requests(game: GameReport) -> set[tuple[str, int]]:
    """(bot, events before the request) of every action of ``game``: each answered one."""
    record = game.record
    actions = record["actions"]
    assert isinstance(actions, list)
    return {(game.bots_by_seat[action["seat"]], index) for index, action in enumerate(actions)}


@dataclass(frozen=True)
class Hits:
    predictions: int
    honest: int
    cheat: int
    from_memory: int
    hits_from_memory: int


def score(
    games: dict[int, GameReport], predictions: Iterator[Prediction]
) -> dict[tuple[int, str], Hits]:
    """Right predictions per (game, bot), each against the position the record replays."""
    truth: dict[int, list[State]] = {
        index: [step.state for step in replay_steps(parse_record(json.dumps(game.record)))]
        for index, game in games.items()
    }
    units: dict[tuple[int, str], Hits] = {}
    for found in predictions:
        state = truth[found.game][found.events]  # after that many actions
        assert state.to_move == found.seat, f"{found} made where seat {state.to_move} moves"
        hand, deck = tuple(sorted(state.hands[1 - found.seat])), state.deck[:1]
        unit = units.get((found.game, found.bot), Hits(0, 0, 0, 0, 0))
        honest = (found.honest[0] == hand) + (found.honest[1] == deck)
        cheat = (found.cheat[0] == hand) + (found.cheat[1] == deck)
        remembered = found.source is not None
        units[(found.game, found.bot)] = Hits(
            unit.predictions + 1,
            unit.honest + honest,
            unit.cheat + cheat,
            unit.from_memory + remembered,
            unit.hits_from_memory + remembered * cheat,
        )
    return units


@dataclass(frozen=True)
class Outcome:
    """The sign test over (game, bot) units, and the hit rates behind it."""

    better: int
    worse: int
    p: float
    honest_rate: float
    cheat_rate: float
    from_memory: int
    """Predictions the cheat made from a remembered deal that fitted the game."""
    memory_rate: float
    """How often those were right (hand and pile card each count)."""
    predictions: int

    @classmethod
    def of(cls, units: dict[tuple[int, str], Hits]) -> Outcome:
        better = sum(hits.cheat > hits.honest for hits in units.values())
        worse = sum(hits.cheat < hits.honest for hits in units.values())
        total = sum(hits.predictions for hits in units.values())
        remembered = sum(h.from_memory for h in units.values())
        return cls(
            better=better, worse=worse, p=sign_test(better, worse),
            honest_rate=sum(h.honest for h in units.values()) / (2 * total),
            cheat_rate=sum(h.cheat for h in units.values()) / (2 * total),
            from_memory=remembered,
            memory_rate=sum(h.hits_from_memory for h in units.values()) / max(2 * remembered, 1),
            predictions=total,
        )  # fmt: skip


# ----------------------------------------------------------------- playing


def make_cheater(tmp_path: Path, name: str) -> BotSpec:
    directory = tmp_path / f"{name}-{uuid.uuid4().hex[:6]}"
    directory.mkdir(mode=0o755)
    shutil.copy(CHEATBOT, directory / "bot.py")
    (directory / "bot.py").chmod(0o644)
    marker, tag = f"kt-{uuid.uuid4().hex}", uuid.uuid4().hex[:12]
    command = ["python3", "bot.py", marker, tag]
    (directory / "bot.toml").write_text(
        f'name = {json.dumps(name)}\ncommand = {json.dumps(command)}\nruntime = "python"\n'
    )
    return load_bot(directory)


OnGame = Callable[[GameReport], None]
PRESTART = decide_prestart(cpus=2)  # the next half's processes launched while one plays
Play = Callable[[MatchConfig, BotSpec, BotSpec, OnGame], MatchReport]


def in_turn(config: MatchConfig, a: BotSpec, b: BotSpec, on_game: OnGame) -> MatchReport:
    """A tournament worker's way: the halves one after the other, the next one prestarted."""
    games: list[GameReport] = []
    failures: list[BaseException] = []

    def done(number: int, report: MatchReport | None, error: BaseException | None) -> None:
        if error is not None:
            failures.append(error)
        if report is not None:
            games.extend(report.games)

    play_in_turn(half_configs(config), a, b, prestart=PRESTART, on_done=done, on_game=on_game)
    assert failures == []
    return MatchReport(games=tuple(sorted(games, key=lambda g: g.index)), score={})


def at_once(config: MatchConfig, a: BotSpec, b: BotSpec, on_game: OnGame) -> MatchReport:
    """`arena match`'s way: both halves at the same time.

    Checked, not held (a hold that keeps one half waiting changes which half is ahead,
    and with it what a cross-half channel can carry): a game of the second half ends
    before the first half's last game does, so both halves' processes ran together,
    the first with GameOver records to pass on (through an abstract socket, say, which
    only a live peer can serve)."""
    ended: list[int] = []

    def noted(game: GameReport) -> None:
        ended.append(game.index)
        on_game(game)

    report = run_halves(config, a, b, prestart=PRESTART, on_game=noted)
    last_of_first = max(i for i, index in enumerate(ended) if index % 2 == 0)
    assert any(index % 2 for index in ended[:last_of_first]), f"the halves in turn: {ended}"
    return report


class DealBehind:
    """Keeps the odd half a deal behind the even one, both halves playing.

    A tap of the even half's wire counts the requests each of its bots was sent per
    game (it never holds that wire: both halves' streams are written by one loop
    thread). Once odd game 2k+1 is over, its half's thread waits before game 2k+3
    until each even-half bot has been sent its second request of game 2k+4: it
    answered the first, so it has taken game 2k+2's GameOver (deal k+1) and passed
    it on. Nothing is waited for once the even half has no such game, or is over."""

    def __init__(self) -> None:
        self.requests: dict[tuple[int, int], int] = {}  # (game, even slot) -> requests sent
        self.even_over = False
        self.lock = threading.Lock()  # the tap writes in the loop thread, a half reads

    def tap(self, half: int) -> WireTap | None:
        return self._even if half == 0 else None

    def _even(self, slot: int, raw: bytes) -> None:
        message = referee_pb2.PlayResponse.FromString(raw)
        kind = message.WhichOneof("kind")
        if kind == "action_request":
            key = (message.action_request.game_index, slot)
            with self.lock:
                self.requests[key] = self.requests.get(key, 0) + 1
        elif kind == "match_over":
            self.even_over = True

    def after(self, game: GameReport) -> None:
        """Called as ``game`` ends, in its half's thread: an odd game holds its half."""
        after = game.index + 3  # the even game after the next odd game's deal
        if game.index % 2 == 0 or after >= GAMES:
            return

        def passed_on() -> bool:
            with self.lock:
                answered = all(self.requests.get((after, even), 0) >= 2 for even in (0, 1))
            return answered or self.even_over

        def seen() -> dict[tuple[int, int], int]:
            with self.lock:
                return dict(self.requests)

        wait_until(passed_on, f"the even half's bots into game {after}", 60,
                   interval_s=0.005, state=seen)  # fmt: skip


def one_deal_behind(config: MatchConfig, a: BotSpec, b: BotSpec, on_game: OnGame) -> MatchReport:
    """The halves at once, the odd one held a deal behind (``DealBehind``): how far apart
    two halves started together stay is the scheduler's to decide, and halves that play
    a deal at the same moment have nothing to pass on to each other."""
    behind = DealBehind()

    def noted(game: GameReport) -> None:
        on_game(game)
        behind.after(game)

    return run_halves(config, a, b, prestart=PRESTART, on_game=noted,
                      wire_tap_of_half=behind.tap)  # fmt: skip


def one_process(config: MatchConfig, a: BotSpec, b: BotSpec, on_game: OnGame) -> MatchReport:
    """The control: one process per bot plays every game, both games of each deal."""
    return run_match(config, a, b, on_game=on_game)


@pytest.fixture
def short_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temp root of the test's own (short enough for a socket path): the referee's
    match directories, with the bots' stderr files, are made in it."""
    root = Path(tempfile.mkdtemp(prefix="kcheat-", dir="/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def play_cheaters(play: Play, config: MatchConfig, tmp_path: Path, root: Path) -> Outcome:
    a, b = make_cheater(tmp_path, "a"), make_cheater(tmp_path, "b")
    reader = StderrReader(root)
    try:
        report = play(config, a, b, reader.await_game)
    finally:
        for spec in (a, b):  # what an unsandboxed cheat left on the host
            tag = spec.command[3]
            for place in ("/tmp", "/dev/shm"):
                Path(place, f".kahuna-cheat-{tag}.json").unlink(missing_ok=True)
    assert [game.index for game in report.games] == list(range(config.games))
    for game in report.games:
        assert set(game.statuses.values()) == {BotStatus.OK}, (game.index, game.statuses)
    assert_no_process_left(a, b)
    games = {game.index: game for game in report.games}
    wanted = {(bot, game.index, events) for game in report.games
              for bot, events in expected_requests(game)}  # fmt: skip
    assert set(reader.found) == wanted, "a prediction line is missing"
    return Outcome.of(score(games, iter(reader.found.values())))


@pytest.mark.parametrize("play", [in_turn, at_once], ids=["halves-in-turn", "halves-at-once"])
def test_a_cheating_bot_predicts_no_better_than_an_honest_one(
    play: Play, tmp_path: Path, short_tmp: Path
) -> None:
    outcome = play_cheaters(play, CONFIG, tmp_path, short_tmp)
    assert outcome.predictions > 20 * GAMES
    assert outcome.p > NOT_EVEN_WEAKLY, outcome
    assert outcome.cheat_rate <= outcome.honest_rate + 0.01, outcome


def test_control_one_process_per_match_lets_the_cheat_win(
    tmp_path: Path, short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the unprotected referee: one half for the whole match, and every GameOver with its
    # record (a half that plays a deal again withholds it: test_game_over_record.py)
    monkeypatch.setattr(arena.referee.results, "deal_replayed_in_half", lambda *_: False)
    outcome = play_cheaters(one_process, CONFIG, tmp_path, short_tmp)
    assert outcome.p < SIGNIFICANT, outcome
    assert outcome.cheat_rate > outcome.honest_rate, outcome
    assert outcome.from_memory > 10 * GAMES and outcome.memory_rate > 0.8, outcome


def test_control_halves_at_once_sharing_a_network_namespace_let_the_cheat_win(
    tmp_path: Path, short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox as it is but for its network namespace (``share_net``, as the seccomp
    tests use it): the halves played at once, the odd one a deal behind, reach each other
    through the cheat's abstract Unix socket, which only a process still running can
    serve."""
    shared = functools.partial(arena.referee.slots.launch_bot, share_net=True)
    monkeypatch.setattr(arena.referee.slots, "launch_bot", shared)
    outcome = play_cheaters(one_deal_behind, CONFIG, tmp_path, short_tmp)
    assert outcome.p < SIGNIFICANT, outcome
    assert outcome.cheat_rate > outcome.honest_rate, outcome


def test_control_processes_without_the_sandbox_let_the_cheat_win(
    tmp_path: Path, short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host without namespaces, played with ``unsafe=True``: a plain process per half,
    each bot's processes sharing /tmp (and everything else)."""
    real = probe_host()
    no_namespaces = dataclasses.replace(
        real, namespaces=False, seccomp=False, missing=("namespaces: turned off by the test",)
    )
    monkeypatch.setattr(arena.sandbox.probe, "_cached_probe", lambda: no_namespaces)
    config = dataclasses.replace(CONFIG, unsafe=True)
    outcome = play_cheaters(in_turn, config, tmp_path, short_tmp)
    assert outcome.p < SIGNIFICANT, outcome
    assert outcome.cheat_rate > outcome.honest_rate, outcome
    assert outcome.from_memory > 10 * GAMES and outcome.memory_rate > 0.8, outcome
