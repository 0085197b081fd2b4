"""Across games, a bot process learns nothing of a deal before it plays it.

A property over secrets, games and re-deals (hypothesis): take a paired match
and a game ``g`` of it, and build a second world in which only ``g``'s deal
differs -- what the bot in seat ``s`` of ``g`` cannot see (its opponent's hand
and the whole pile) re-dealt, its own hand and the face-up cards kept, and
its reshuffles drawn from another seed. Then, for the process that plays
``g`` in seat ``s``:

* every message it received before ``g``'s GameStart is the same in both
  worlds, byte for byte (once the clock readings and the match id, which
  differ between any two runs, are blanked; a run repeated unchanged is
  shown to give the same bytes);
* in ``g`` itself, each observation it is sent is the same until the events
  it may see (its own draws, the opponent's open plays) first differ.

The matches are played by the real referee (``run_match`` per half, as
``half_configs`` splits them) over its real sockets, with both seats taken
by deterministic SDK bots in this process (remote seats: no launch, so an
example takes well under a second). The referee's game loop runs on its
endpoints, so there is no socket-free way to drive it. The second world is
made by replacing the match's deal derivation for deal ``g // 2`` only.

The control: one process per bot for the whole match (no halves)
fails the first check for every odd ``g``: the GameOver of ``g - 1`` told it
the deal.
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arena.referee.match
from arena.kahuna import Observation, deal_from_seed
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee import BotStatus, MatchConfig, TimeControl, load_bot, run_match
from arena.referee.halves import half_configs
from arena.referee.remote import SeatOffer
from arena.referee.seeds import deal_seed
from arena.referee.types import BotSpec
from arena.testing.examples import examples
from arena.testing.protocol import observation_from_pb

SDK_DIR = Path(__file__).resolve().parents[2] / "sample_bots" / "sdk" / "python"
if str(SDK_DIR) not in sys.path:
    sys.path.insert(0, str(SDK_DIR))

from kahuna_bot import Action, run  # noqa: E402
from kahuna_bot import Observation as BotObservation  # noqa: E402

pytestmark = pytest.mark.slow

GAMES = 6
CONFIG = MatchConfig(
    games=GAMES,
    seed=3,
    time_control=TimeControl(action_ms=60_000, bank_ms=0),  # the bank never moves
    max_restarts=0,
    hello_timeout_ms=10_000,
)
RUN_DEPENDENT = ("match_id", "time_ms", "cpu_ms", "bank_left_ms", "timings", "decisions")
"""What a GameOver record's "match" part says about this run rather than the game."""

Process = tuple[int, int]  # (run of the match: its half, slot 0 or 1)
Wire = dict[Process, list[bytes]]
Deals = Callable[[bytes, int, int], int]


def choose(observation: BotObservation, legal_actions: tuple[Action, ...]) -> Action:
    """A bot that is a function of what it sees (so both worlds differ only by the deal)."""
    rng = random.Random(f"{observation.game_index}:{len(observation.history)}:{observation.hand}")
    return rng.choice(legal_actions)


def offer(seat: SeatOffer, players: list[threading.Thread]) -> None:
    """Take the offered seat with an SDK bot in this process, over the seat's socket."""
    environ = {"KAHUNA_REFEREE": f"unix://{seat.socket_path}", "KAHUNA_TOKEN": seat.token}
    player = threading.Thread(target=run, args=(choose,), kwargs={"environ": environ})
    player.start()
    players.append(player)


def play(config: MatchConfig, far: tuple[BotSpec, BotSpec], *, one_process: bool) -> Wire:
    """Every message each process received, its halves played one after the other."""
    parts = (config,) if one_process else half_configs(config)
    wire: Wire = defaultdict(list)
    for number, half in enumerate(parts):
        players: list[threading.Thread] = []

        def tap(slot: int, raw: bytes, number: int = number) -> None:
            wire[(number, slot)].append(raw)

        def take(seat: SeatOffer, players: list[threading.Thread] = players) -> None:
            offer(seat, players)

        report = run_match(half, *far, wire_tap=tap, on_seat_offer=take)
        for player in players:
            player.join(10)
        for game in report.games:
            assert set(game.statuses.values()) == {BotStatus.OK}, game.statuses
    return wire


def normalized(raw: bytes) -> bytes:
    """A message with the match id and the clock readings blanked."""
    message = referee_pb2.PlayResponse.FromString(raw)
    kind = message.WhichOneof("kind")
    if kind == "welcome":
        message.welcome.match_id = ""
    elif kind == "game_over" and message.game_over.record_json:
        record = json.loads(message.game_over.record_json)
        for key in RUN_DEPENDENT:
            record["match"].pop(key)
        message.game_over.record_json = json.dumps(record, sort_keys=True)
    return message.SerializeToString(deterministic=True)


def split_at_game(messages: Sequence[bytes], game: int) -> tuple[list[bytes], list[bytes]]:
    """(everything before ``game``'s GameStart, that game's messages up to its GameOver)."""
    for at, raw in enumerate(messages):
        message = referee_pb2.PlayResponse.FromString(raw)
        if message.WhichOneof("kind") == "game_start" and message.game_start.game_index == game:
            end = next(
                end for end in range(at, len(messages))
                if referee_pb2.PlayResponse.FromString(messages[end]).WhichOneof("kind")
                == "game_over"
            )  # fmt: skip
            return list(messages[:at]), list(messages[at:end])
    raise AssertionError(f"game {game} was never started")


def requests(messages: Sequence[bytes]) -> list[tuple[bytes, Observation]]:
    """Each ActionRequest of one game as sent, and its observation with the history whole."""
    seen: list[tuple[bytes, Observation]] = []
    for raw in messages:
        message = referee_pb2.PlayResponse.FromString(raw)
        if message.WhichOneof("kind") == "action_request":
            earlier = seen[-1][1].history if seen else ()
            seen.append((raw, observation_from_pb(message.action_request.observation, earlier)))
    return seen


def visible(observation: Observation) -> tuple[object, ...]:
    """What the seat sees of the hidden cards: the events as it saw them (its own deck
    draws), its hand and the face-up cards (a slot refills from the pile)."""
    return observation.history, observation.hand, observation.faceup


def redealt(deal: Sequence[str], seat: int, order: Sequence[int]) -> tuple[str, ...]:
    """``deal`` with what ``seat`` cannot see at the start put in ``order``: its own hand
    (cards 1-3 or 4-6) and the face-up cards (7-9) stay, the rest is shuffled."""
    kept = {*range(3 * seat, 3 * seat + 3), 6, 7, 8}
    hidden = [position for position in range(24) if position not in kept]
    new = list(deal)
    for position, source in zip(hidden, order, strict=True):
        new[position] = deal[hidden[source]]
    return tuple(new)


class World:
    """The match's deals, with deal ``k`` replaced (deal and reshuffle seed)."""

    def __init__(self, k: int, deal: tuple[str, ...], seed: int) -> None:
        self.k, self.deal, self.seed = k, deal, seed

    def deal_seed(self, material: bytes, deal_index: int) -> int:
        return self.seed if deal_index == self.k else deal_seed(material, deal_index)

    def deal_from_seed(self, seed: int) -> tuple[str, ...]:
        return self.deal if seed == self.seed else deal_from_seed(seed)


def in_world(world: World | None, body: Callable[[], Wire]) -> Wire:
    if world is None:
        return body()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arena.referee.match, "deal_seed", world.deal_seed)
        patch.setattr(arena.referee.match, "deal_from_seed", world.deal_from_seed)
        return body()


def remote_pair(root: Path) -> tuple[BotSpec, BotSpec]:
    specs = []
    for name in ("a", "b"):
        directory = root / name
        directory.mkdir(exist_ok=True)
        (directory / "bot.toml").write_text(f'name = "{name}"\nruntime = "remote"\n')
        specs.append(load_bot(directory))
    return specs[0], specs[1]


def differences(
    config: MatchConfig, game: int, seat: int, order: Sequence[int], other_seed: int,
    far: tuple[BotSpec, BotSpec], *, one_process: bool,
) -> list[str]:  # fmt: skip
    """What the process playing ``game`` in ``seat`` could tell apart between the match
    and the match with ``game``'s deal re-dealt (``redealt`` by ``order``)."""
    k = config.deal_index(game)
    original = deal_from_seed(deal_seed(config.secret, k))
    world = World(k, redealt(original, seat, order), other_seed)
    first = in_world(None, lambda: play(config, far, one_process=one_process))
    second = in_world(world, lambda: play(config, far, one_process=one_process))
    slot = seat if game % 2 == 0 else 1 - seat  # bot A sits in seat 0 in even games
    run_of_game = 0 if one_process else next(
        number for number, half in enumerate(half_configs(config))
        if game in half.indices_to_play
    )  # fmt: skip
    process = (run_of_game, slot)
    return told_apart(first[process], second[process], game)


def told_apart(first: Sequence[bytes], second: Sequence[bytes], game: int) -> list[str]:
    """How one process's messages in two worlds differ where ``game`` may not show."""
    found = []
    before_1, during_1 = split_at_game(first, game)
    before_2, during_2 = split_at_game(second, game)
    if [normalized(raw) for raw in before_1] != [normalized(raw) for raw in before_2]:
        found.append(f"the messages before game {game} differ")
    if during_1[0] != during_2[0]:
        found.append(f"game {game}'s GameStart differs")
    for number, ((raw_1, seen_1), (raw_2, seen_2)) in enumerate(
        zip(requests(during_1), requests(during_2), strict=False)
    ):
        if visible(seen_1) != visible(seen_2):
            break  # from here on the seat may know the worlds apart
        if raw_1 != raw_2:
            found.append(f"request {number} of game {game} differs where nothing seen does")
    return found


@pytest.fixture(scope="module")
def far(tmp_path_factory: pytest.TempPathFactory) -> tuple[BotSpec, BotSpec]:
    return remote_pair(tmp_path_factory.mktemp("far"))


@settings(max_examples=examples(8), deadline=None)
@given(
    secret=st.binary(min_size=32, max_size=32),
    game=st.integers(0, GAMES - 1),
    seat=st.integers(0, 1),
    order=st.permutations(range(18)),
    other_seed=st.integers(1 << 20, (1 << 63) - 1),
)
def test_a_process_cannot_tell_a_redealt_game_from_the_real_one_before_it_sees_it(
    far: tuple[BotSpec, BotSpec],
    secret: bytes,
    game: int,
    seat: int,
    order: list[int],
    other_seed: int,
) -> None:
    config = dataclasses.replace(CONFIG, secret=secret)
    assert differences(config, game, seat, order, other_seed, far, one_process=False) == []


def test_the_same_world_played_twice_gives_the_same_bytes(far: tuple[BotSpec, BotSpec]) -> None:
    """The normalization blanks only what differs between runs: nothing else moves."""
    first = play(CONFIG, far, one_process=False)
    second = play(CONFIG, far, one_process=False)
    assert first.keys() == second.keys() == {(0, 0), (0, 1), (1, 0), (1, 1)}
    for process, messages in first.items():
        assert [normalized(raw) for raw in messages] == [normalized(raw) for raw in second[process]]
    raw_1, raw_2 = (b"".join(wire[(0, 0)]) for wire in (first, second))
    assert raw_1 != raw_2  # the match ids and clocks did differ


@pytest.mark.parametrize("game", [1, 3, 5])
def test_control_one_process_per_match_knows_an_odd_game_before_it(
    far: tuple[BotSpec, BotSpec], game: int
) -> None:
    order = list(range(18))
    random.Random(game).shuffle(order)
    found = differences(CONFIG, game, 0, order, 1 << 40, far, one_process=True)
    assert f"the messages before game {game} differ" in found
    # the same re-deal split in halves is not told apart
    assert differences(CONFIG, game, 0, order, 1 << 40, far, one_process=False) == []


def _tampered(
    messages: Sequence[bytes], game: int, change: Callable[[referee_pb2.PlayResponse], None]
) -> list[bytes]:
    """``messages`` with the first ActionRequest of ``game`` changed by ``change``."""
    out = list(messages)
    for at, raw in enumerate(out):
        message = referee_pb2.PlayResponse.FromString(raw)
        if (
            message.WhichOneof("kind") == "action_request"
            and message.action_request.game_index == game
        ):
            change(message)
            out[at] = message.SerializeToString()
            return out
    raise AssertionError(f"no request in game {game}")


def _more_deck(message: referee_pb2.PlayResponse) -> None:
    message.action_request.observation.deck_size += 1


def _unknown_field(message: referee_pb2.PlayResponse) -> None:
    # a field this protocol version does not define (e.g. a careless "opponent_hand" added
    # later): the decoders ignore it, the bytes do not
    message.action_request.observation.MergeFromString(b"\xfa\x3e\x04ALOA")


@pytest.mark.parametrize("change", [_more_deck, _unknown_field], ids=["deck-size", "new-field"])
def test_the_check_sees_a_difference_in_what_the_seat_cannot_see(
    far: tuple[BotSpec, BotSpec], change: Callable[[referee_pb2.PlayResponse], None]
) -> None:
    wire = play(CONFIG, far, one_process=False)
    messages = wire[(0, 0)]  # bot A in games 0, 2, 4: seat 0, it moves first
    assert told_apart(messages, messages, 2) == []
    found = told_apart(messages, _tampered(messages, 2, change), 2)
    assert found == ["request 0 of game 2 differs where nothing seen does"]
