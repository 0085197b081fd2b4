"""A cheating bot, written as a competitor who wants to win unfairly would.

Run as ``python3 bot.py MARKER TAG`` (MARKER: a unique word that lets a test
find the processes it left; TAG: names the places where the bot's processes
leave each other notes). It plays a random legal action (seeded by its name,
the game and the history length) and, before every reply, predicts the
opponent's hand and the next card of the draw pile twice:

* **honest**: from the current game's observation alone (R9), through the
  public engine's determinization (``arena.kahuna.determinize``): the cards
  the history proves the opponent holds, then the commonest unseen cards;
  for the pile, the commonest unseen card the opponent cannot hold.
* **cheat**: from everything else it can get at. Every deal of every
  GameOver record any of its processes ever received, and every deal that
  a seed found in any message or in its environment gives through the
  public engine code (``deal_from_seed`` of the number itself, and of the
  public ``kahuna-deal/1`` derivation from a match seed), carried from game to
  game in process memory and from process to process through every channel
  it can reach: files in /tmp, /dev/shm, $HOME, its own directory and its
  working directory, and an abstract Unix socket that its first process
  serves. A remembered deal that fits this game (this seat's first hand,
  the unseen cards) gives the rest of the first round's pile and, with it,
  the opponent's hand. When nothing fits, the cheat prediction is the
  honest one. (It does not model later rounds: their piles are reshuffles.)

Each prediction is one JSON line on stderr, which the referee writes to a
file of its own that the opponent never sees: the test's private channel.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import socket
import sys
import threading
from collections import Counter
from pathlib import Path

from kahuna_bot import Action, Bot, Observation
from kahuna_bot._gen import referee_pb2
from kahuna_bot.client import run_session
from kahuna_bot.session import GameInfo, GameResult, MatchInfo, Session

from arena.kahuna import ISLANDS, ActionType, deal_from_seed
from arena.kahuna.determinize import Completion

BIG = 1 << 20  # a number this large anywhere may be a seed
SEED_BITS = 63
FIRST_PILE = 15  # the first round's draw pile (R2)


def old_deal_seed(match_seed: int, deal_index: int) -> int:
    """A deal seed from the match seed alone, with public code: what a bot could compute
    if deals were not keyed by the tournament's secret."""
    text = f"kahuna-deal/1:{match_seed}:{deal_index}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") & ((1 << SEED_BITS) - 1)


class Memory:
    """What the bot knows across games: deals (24 cards each) and seeds."""

    def __init__(self) -> None:
        self.deals: set[tuple[str, ...]] = set()
        self.seeds: set[int] = set()
        self.lock = threading.Lock()

    def to_json(self) -> str:
        with self.lock:
            return json.dumps({"deals": sorted(self.deals), "seeds": sorted(self.seeds)})

    def merge(self, text: str | bytes) -> None:
        try:
            data = json.loads(text)
            deals = {tuple(deal) for deal in data.get("deals", [])}
            seeds = {int(seed) for seed in data.get("seeds", [])}
        except (ValueError, TypeError, AttributeError):
            return
        with self.lock:
            self.deals |= {deal for deal in deals if len(deal) == 24}
            self.seeds |= seeds


class Channels:
    """Every place another process of this bot might read what this one writes."""

    def __init__(self, tag: str, memory: Memory) -> None:
        self.memory = memory
        self.name = f".kahuna-cheat-{tag}.json"
        here = Path(__file__).resolve().parent
        places = ["/tmp", "/dev/shm", os.environ.get("HOME", ""), os.getcwd(), str(here)]
        self.files = [Path(place) / self.name for place in dict.fromkeys(places) if place]
        self.address = f"\0kahuna-cheat-{tag}"
        self.serving = False

    def load(self) -> None:
        for path in self.files:
            with contextlib.suppress(OSError):
                self.memory.merge(path.read_bytes())
        self._sync_socket()

    def save(self) -> None:
        self.load()  # never overwrite what another process wrote
        text = self.memory.to_json()
        for path in self.files:
            with contextlib.suppress(OSError):
                part = path.with_name(f"{path.name}.{os.getpid()}")
                part.write_text(text)
                os.replace(part, path)
        self._sync_socket()

    def _sync_socket(self) -> None:
        """Swap memories with the process serving the abstract socket, or become it."""
        if self.serving:
            return
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(0.5)
        try:
            client.connect(self.address)
            client.sendall(self.memory.to_json().encode())
            client.shutdown(socket.SHUT_WR)
            self.memory.merge(_read_all(client))
        except (ConnectionRefusedError, FileNotFoundError):
            self._serve()
        except OSError:
            pass
        finally:
            client.close()

    def _serve(self) -> None:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(self.address)
            server.listen(8)
        except OSError:
            server.close()
            return
        self.serving = True
        threading.Thread(target=self._answer, args=(server,), daemon=True).start()

    def _answer(self, server: socket.socket) -> None:
        while True:
            peer, _ = server.accept()
            with peer:
                peer.settimeout(1.0)
                with contextlib.suppress(OSError):
                    self.memory.merge(_read_all(peer))
                    peer.sendall(self.memory.to_json().encode())


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def numbers_in(value: object, key: str = "") -> list[int]:
    """Every number a seed might hide in: large ones anywhere, any under a "seed" key."""
    found: list[int] = []
    if isinstance(value, dict):
        for name, item in value.items():
            found += numbers_in(item, str(name))
    elif isinstance(value, list | tuple):
        for item in value:
            found += numbers_in(item, key)
    elif isinstance(value, bool):
        pass
    elif isinstance(value, int):
        if value >= BIG or ("seed" in key.lower() and value >= 0):
            found.append(value)
    elif isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            found += numbers_in(int(text), key)
        elif len(text) >= 6 and all(c in "0123456789abcdefABCDEF" for c in text):
            found.append(int(text, 16))
        elif text[:1] in "{[":
            with contextlib.suppress(ValueError):
                found += numbers_in(json.loads(text), key)
    return found


def proto_values(message: object) -> object:
    """A protobuf message as nested dicts, every field kept."""
    if hasattr(message, "ListFields"):
        return {
            field.name: (
                [proto_values(item) for item in value] if field.is_repeated else proto_values(value)
            )
            for field, value in message.ListFields()
        }
    return message


def commonest(counts: Counter[int], how_many: int) -> list[int]:
    """``how_many`` cards taken one at a time, the commonest first (ties: R1 order)."""
    left = Counter(counts)
    chosen = []
    for _ in range(how_many):
        if not +left:
            break
        card = max(sorted(+left), key=lambda c: left[c])
        chosen.append(card)
        left[card] -= 1
    return chosen


def hidden_hand(held: Counter[int], unseen: Counter[int], hidden: int) -> list[int]:
    """The likeliest ``hidden`` cards of the opponent's hand among ``unseen``: the cards
    the history proves it holds or discarded face down first, then the commonest."""
    chosen = commonest(held & unseen, hidden)
    return chosen + commonest(unseen - Counter(chosen), hidden - len(chosen))


class Cheater(Bot):
    name = "cheatbot"
    version = "1"

    def __init__(self, tag: str) -> None:
        self.memory = Memory()
        self.channels = Channels(tag, self.memory)
        self.games = 0
        self.me = "?"
        self.first_hand: tuple[str, ...] | None = None
        self.tried: set[int] = set()
        self.derived: dict[int, set[tuple[str, ...]]] = {}
        self.candidates: set[tuple[str, ...]] = set()
        self.learn_numbers(numbers_in(dict(os.environ)))

    # ------------------------------------------------------------ learning

    def learn_message(self, message: referee_pb2.PlayResponse) -> None:
        self.learn_numbers(numbers_in(proto_values(message)))

    def learn_numbers(self, numbers: list[int]) -> None:
        fresh = [n for n in numbers if n not in self.tried]
        if not fresh:
            return
        self.tried.update(fresh)
        with self.memory.lock:
            self.memory.seeds.update(fresh)

    def seed_deals(self) -> set[tuple[str, ...]]:
        """The deals every seed known gives, as a number and as a match seed (``kahuna-deal/1``)."""
        with self.memory.lock:
            seeds = sorted(self.memory.seeds)
        deals: set[tuple[str, ...]] = set()
        for seed in seeds:
            if seed not in self.derived:
                self.derived[seed] = {deal_from_seed(seed)} | {
                    deal_from_seed(old_deal_seed(seed, k)) for k in range(max(self.games, 1))
                }
            deals |= self.derived[seed]
        return deals

    def on_match_start(self, match: MatchInfo) -> None:
        self.games = match.games
        self.me = match.bot_name
        self.channels.load()

    def on_game_start(self, game: GameInfo) -> None:
        self.first_hand = None
        self.channels.load()
        self.candidates = self.memory.deals | self.seed_deals()

    def on_game_over(self, result: GameResult) -> None:
        deal = result.record.get("deal")
        if isinstance(deal, list) and len(deal) == 24:
            with self.memory.lock:
                self.memory.deals.add(tuple(deal))
        self.channels.save()

    # ------------------------------------------------------------ playing

    def choose(self, observation: Observation, legal_actions: tuple[Action, ...]) -> Action:
        if self.first_hand is None:
            self.first_hand = observation.hand
        self.predict(observation)
        rng = random.Random(f"{self.me}:{observation.game_index}:{len(observation.history)}")
        return rng.choice(legal_actions)

    def predict(self, observation: Observation) -> None:
        places = Completion(observation.engine()).places
        pool = Counter(places.pool)
        held = Counter(places.held)
        known = list(places.known)
        hidden = places.opponent_hidden
        honest_hand = known + hidden_hand(held, pool, hidden)
        honest_deck = commonest(pool - held, 1) if observation.deck_size else []
        cheat_hand, cheat_deck, source = honest_hand, honest_deck, None
        pile = self.known_pile(observation, pool)
        if pile is not None:
            # what is unseen and not in the pile is the opponent's: its hidden hand (and
            # its face-down discards of this round, if any)
            cheat_hand = known + hidden_hand(held, pool - Counter(pile), hidden)
            cheat_deck = pile[:1]
            source = "memory"
        line = {
            "bot": self.me,
            "game": observation.game_index,
            "seat": observation.seat,
            "events": len(observation.history),
            "round": observation.round,
            "honest": {"hand": names(honest_hand), "deck": names(honest_deck)},
            "cheat": {"hand": names(cheat_hand), "deck": names(cheat_deck)},
            "source": source,
        }
        print(json.dumps(line, sort_keys=True), file=sys.stderr, flush=True)

    def known_pile(self, observation: Observation, pool: Counter[int]) -> list[int] | None:
        """The rest of the first round's pile (top first), from a remembered deal that fits
        everything this seat saw of this game: its first hand, its own deck draws, the
        face-up cards, the unseen cards."""
        if observation.round != 1 or self.first_hand is None:
            return None
        seat = observation.seat
        drawn = FIRST_PILE - observation.deck_size
        mine = sorted(self.first_hand)
        own_draws = []  # (cards taken from the pile before it, the card)
        taken = 0  # every draw takes one card from the pile: the deck's or a refill
        for event in observation.history:
            if event.type is ActionType.DRAW:
                if event.seat == seat and event.card is None and event.drawn:
                    own_draws.append((taken, event.drawn))
                taken += 1
        faceup = Counter(card for card in observation.faceup if card)
        for deal in sorted(self.candidates):
            if sorted(deal[3 * seat : 3 * seat + 3]) != mine:
                continue
            if any(deal[9 + before] != card for before, card in own_draws):
                continue
            if faceup - Counter(deal[6 : 9 + drawn]):
                continue
            pile = [ISLANDS.index(card) for card in deal[9 + drawn :]]
            if not Counter(pile) - pool:  # every card of it is still unseen
                return pile
        return None


def names(cards: list[int]) -> list[str]:
    return sorted(ISLANDS[card] for card in cards)


class LoggingSession(Session):
    """A Session that first learns from every message, whatever its kind."""

    cheater: Cheater

    def handle(self, response: referee_pb2.PlayResponse) -> referee_pb2.PlayRequest | None:
        self.cheater.learn_message(response)
        return super().handle(response)


def main() -> int:
    tag = sys.argv[2]
    cheater = Cheater(tag)
    session = LoggingSession(cheater, token=os.environ["KAHUNA_TOKEN"])
    session.cheater = cheater
    return run_session(os.environ["KAHUNA_REFEREE"], session)


if __name__ == "__main__":
    raise SystemExit(main())
