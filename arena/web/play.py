"""A person plays a stored bot from one seat (``/play``, ``/api/play``).

The person's seat is a remote seat of an ordinary match: ``run_match`` runs
the bot sandboxed under the same referee, judge, clocks and variants as any
match, and offers the other seat (a remote bot ``human-USER`` registered for
the person) to this module, which connects to the seat's private socket and
speaks the bot protocol for the person (``SeatLink``). So the page can only
ever know what the referee sends a seat: the seat's observation (R9: hidden
information is absent by type, ``arena.kahuna.observe``) and its legal
actions. The page's JSON is built from those frames alone.

The game is stored as a one-game tournament ``play-USER-ID`` (a record like
any other, with the deal's seed committed and revealed as for every
tournament, kept out of the tournament lists) and never moves the bots'
ratings; when the admin's ``rated_play`` setting is on for the person, it is
rated in the people's pool instead (``arena.tournament.policy.play_pool``
says which games; ``/api/play/ratings`` shows the pool).
Every request carries the person's token as ``Authorization: Bearer`` (as
``/submit`` does); a table is seen and played only by the user who opened it.
The token that opened a table is checked again every ``TOKEN_RECHECK_S`` while
its game is played, as a remote bot's owner's token is (arena.server.gateway):
once it is revoked or expires, the arena ends the person's seat at once, a
DISCONNECT whose recorded reason says the person's token was revoked (or
expired), and the bot wins; the clock is not left to run out.
"""

from __future__ import annotations

import json
import queue
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import grpc

from arena.kahuna import Action, Variant
from arena.logs import get_logger
from arena.protocol.convert import TERMINATION_TO_PB, action_from_pb, action_to_pb
from arena.protocol.gen.kahuna.v1 import game_pb2, referee_pb2
from arena.referee import load_bot, run_match
from arena.referee.endpoint import SERVICE_NAME
from arena.referee.judge import PROTOCOL_VERSION
from arena.referee.remote import SeatOffer, cut_words, write_cut_note
from arena.referee.seeds import match_seed_material
from arena.referee.types import BotSpec, GameReport, MatchConfig, TimeControl
from arena.resources import sample_bot
from arena.store import (
    NotFoundError,
    Principal,
    Store,
    StoreError,
    TournamentLease,
    acquire_lease,
    add_bot_version,
    bot_spec,
    get_version,
    list_bots,
    register_remote_bot,
)
from arena.store.bots import PERSON_PREFIX
from arena.store.copies import MissingBotCopyError, check_stored_copy
from arena.store.models import (
    PlannedMatch,
    PlannedRound,
    TournamentConfig,
    TournamentStatus,
)
from arena.store.play import (
    PlaySeat,
    PoolEntry,
    insert_play_tournament,
    people_pool,
    play_games,
)
from arena.store.tokens import AUTH_CACHE_S, TokenRefusedError, authenticate
from arena.store.tournaments import (
    list_matches,
    record_interruption,
    set_status,
    tournament_secret,
)
from arena.tournament.pairing.schedule import round_robin
from arena.tournament.policy.config import match_identity
from arena.tournament.policy.play_pool import store_play_game, why_unrated
from arena.tournament.policy.rounds import PLAY_PREFIX
from arena.web.submit import RequestRefused, bearer_token, same_origin

Json = dict[str, object]
PLAY_METHOD = f"/{SERVICE_NAME}/Play"
REMOTE_RUNTIME = "remote"
HUMAN_PREFIX = PERSON_PREFIX  # reserved: only user U may store a bot named human-U
HOUSE_BOTS = ("python_random", "python_greedy")  # shipped with the arena; stored on first use
MAX_BODY_BYTES = 4096
GAMES_LISTED = 50  # a person's latest games on their play page


def _never(user: str) -> bool:
    return False


TABLE_TOKEN_BOUND_S = 5.0
"""A table's game ends at most this long after the token that opened it is revoked or
expires (the bound of the API's open streams, arena.server.rechecks)."""
TOKEN_RECHECK_S = TABLE_TOKEN_BOUND_S - AUTH_CACHE_S
"""How often a table's token is checked again (a kept answer may be AUTH_CACHE_S old)."""

MIN_POLL_MS = 20
MAX_POLL_MS = 10_000
"""The /play page's polling interval: often enough to follow a bot, rarely enough to
leave the server to its tables."""


@dataclass(frozen=True)
class PlayOptions:
    """What a table may cost: the clock (both seats', as in any match) and how many tables."""

    time_control: TimeControl = field(
        default_factory=lambda: TimeControl(action_ms=120_000, bank_ms=0)
    )
    max_tables: int = 8  # open at once on this server
    max_tables_per_user: int = 1  # open at once per user
    kept_s: float = 600.0  # how long a finished table stays readable
    unsafe: bool = False  # run the bot without the sandbox (arena serve --unsafe-no-sandbox)
    rated_play: Callable[[str], bool] = _never  # the admin's rated_play setting, per user
    poll_ms: int = 400  # how often the /play page asks for its table while the bot moves

    def __post_init__(self) -> None:
        if not MIN_POLL_MS <= self.poll_ms <= MAX_POLL_MS:
            raise ValueError(
                f"poll_ms must be from {MIN_POLL_MS} to {MAX_POLL_MS} ms, got {self.poll_ms}"
            )


class PlayRefused(Exception):
    """A request refused, with the HTTP status and a message naming the problem."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def event_json(event: game_pb2.SeenEvent) -> Json:
    """A seen event as ``arena.kahuna.observe`` writes it (``_event_json``)."""
    obj: Json = {"seat": event.seat, "type": _ACTION_TYPES[event.type]}
    if event.cards:
        obj["cards"] = list(event.cards)
    if event.card:
        obj["card"] = event.card
    if event.line:
        obj["line"] = event.line
    if event.drawn:
        obj["drawn"] = event.drawn
    if event.hidden:
        obj["hidden"] = True
    return obj


_ACTION_TYPES = {
    game_pb2.ACTION_TYPE_PLACE: "place",
    game_pb2.ACTION_TYPE_REMOVE: "remove",
    game_pb2.ACTION_TYPE_DISCARD: "discard",
    game_pb2.ACTION_TYPE_DRAW: "draw",
    game_pb2.ACTION_TYPE_PASS: "pass",
}


_TERMINATIONS = {pb: termination.value for termination, pb in TERMINATION_TO_PB.items()}


def outcome_json(outcome: game_pb2.Outcome) -> Json:
    return {"winner": outcome.winner if outcome.HasField("winner") else None,
            "reason": _TERMINATIONS.get(outcome.termination, "unknown"),
            "points": list(outcome.points)}  # fmt: skip


def seat_view(obs: game_pb2.Observation, history: list[Json]) -> Json:
    """The seat's observation as ``arena.kahuna.observation_to_json`` writes it: the
    frame's fields, and the history the frames sent so far (they send only what is new)."""
    return {
        "seat": obs.seat,
        "variant": {"strategic": obs.variant.strategic, "tactical": obs.variant.tactical},
        "round": obs.round,
        "to_move": obs.to_move if obs.HasField("to_move") else None,
        "points": list(obs.points),
        "bridges": dict(sorted((b.line, b.seat) for b in obs.bridges)),
        "controlled": dict(sorted((c.island, c.seat) for c in obs.controlled)),
        "supply": list(obs.supply),
        "hand": list(obs.hand),
        "opponent_hand_size": obs.opponent_hand_size,
        "open_cards": [list(cards.cards) for cards in obs.open_cards],
        "faceup": [card or None for card in obs.faceup],
        "deck_size": obs.deck_size,
        "played_cards": list(obs.played_cards),
        "own_facedown_discards": list(obs.own_facedown_discards),
        "opponent_facedown_count": obs.opponent_facedown_count,
        "final_turns": obs.final_turns,
        "opponent_passed": obs.opponent_passed,
        "turn_played_card": obs.turn_played_card,
        "turn_discarded": obs.turn_discarded,
        "history": list(history),
        "is_finished": obs.is_finished,
        "outcome": outcome_json(obs.outcome) if obs.HasField("outcome") else None,
    }


def legal_json(action: Action) -> Json:
    return {"text": action.text(), **action.to_json()}


def _raw(frame: bytes) -> bytes:
    return frame


class SeatLink:
    """The person's end of the seat's ``Play`` stream: Hello, then one reply per request.

    Runs in its own thread; the page reads ``snapshot`` and answers with ``play``.
    """

    def __init__(self, offer: SeatOffer, name: str, changed: Callable[[], None]) -> None:
        self.offer = offer
        self.name = name
        self._changed = changed
        self._lock = threading.Lock()
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self.seat: int | None = None
        self.history: list[Json] = []
        self.view: Json | None = None
        self.legal: dict[str, Action] = {}
        self.request_id: int | None = None
        self.deadline_ns = 0
        self.result: Json | None = None
        self.goodbye: str | None = None
        self._call: grpc.CallIterator[bytes] | None = None
        self._cut = False
        self._thread = threading.Thread(target=self._run, name="play-seat", daemon=True)
        self._thread.start()

    def _requests(self) -> Iterator[bytes]:
        while (frame := self._outbox.get()) is not None:
            yield frame

    def _run(self) -> None:
        hello = referee_pb2.Hello(
            token=self.offer.token, bot_name=self.name, protocol_version=PROTOCOL_VERSION
        )
        hello_frame = referee_pb2.PlayRequest(hello=hello)
        self._outbox.put(hello_frame.SerializeToString())
        channel = grpc.insecure_channel(f"unix:{self.offer.socket_path}")
        try:
            play = channel.stream_stream(PLAY_METHOD, _raw, _raw)
            call = play(self._requests())
            with self._lock:
                self._call = call
                if self._cut:  # cut before the call was made
                    call.cancel()  # type: ignore[no-untyped-call]
            for raw in call:
                self._take(referee_pb2.PlayResponse.FromString(raw))
        except grpc.RpcError as error:
            with self._lock:
                if self.result is None and self.goodbye is None:
                    self.goodbye = f"the seat's stream ended: {error.code().name}"
        finally:
            self._outbox.put(None)
            channel.close()
            self._changed()

    def _take(self, message: referee_pb2.PlayResponse) -> None:
        kind = message.WhichOneof("kind")
        with self._lock:
            if kind == "game_start":
                self.seat = message.game_start.seat
            elif kind == "action_request":
                request = message.action_request
                obs = request.observation
                del self.history[obs.history_start:]
                self.history.extend(event_json(event) for event in obs.history)
                self.view = seat_view(obs, self.history)
                actions = [action_from_pb(a) for a in request.legal_actions]
                self.legal = {action.text(): action for action in actions}
                self.request_id = request.request_id
                self.deadline_ns = time.monotonic_ns() + request.action_deadline_ms * 1_000_000
            elif kind == "game_over":
                over = message.game_over
                self.legal, self.request_id = {}, None
                self.result = {
                    "winner_seat": over.winner_seat if over.HasField("winner_seat") else None,
                    "reason": over.reason,
                    "points": list(over.outcome.points) if over.HasField("outcome") else None,
                    "your_status": referee_pb2.BotStatus.Name(over.your_status),
                    "opponent_status": referee_pb2.BotStatus.Name(over.opponent_status),
                }  # the record it carries is left for /games/ID, where it is public
            elif kind == "goodbye":
                self.legal, self.request_id = {}, None
                self.goodbye = message.goodbye.reason
        self._changed()

    def play(self, text: str, request_id: object) -> None:
        """Send the legal action ``text`` as the reply to the open request ``request_id``."""
        with self._lock:
            if self.request_id is None:
                raise PlayRefused(409, "it is not your turn")
            if request_id != self.request_id:
                raise PlayRefused(409, f"request {request_id!r} is not the open one "
                                       f"({self.request_id}): reload the table")  # fmt: skip
            action = self.legal.get(text)
            if action is None:
                raise PlayRefused(422, f"{text!r} is not a legal action here")
            reply = referee_pb2.ActionReply(request_id=self.request_id, action=action_to_pb(action))
            self.legal, self.request_id = {}, None
            self._outbox.put(referee_pb2.PlayRequest(action_reply=reply).SerializeToString())
        self._changed()

    def snapshot(self) -> Json:
        with self._lock:
            left_ms = max(0, (self.deadline_ns - time.monotonic_ns()) // 1_000_000)
            return {
                "seat": self.seat,
                "view": self.view,
                "request": self.request_id,
                "legal": [legal_json(a) for a in self.legal.values()],
                "clock_ms": left_ms if self.request_id is not None else None,
                "result": self.result,
                "goodbye": self.goodbye,
            }

    def close(self) -> None:
        self._outbox.put(None)

    def cut(self, record_words: str, goodbye: str) -> None:
        """End the seat's stream for the arena's reason: ``record_words`` go beside the
        seat's socket (the referee records them with the DISCONNECT), ``goodbye`` to the
        page."""
        write_cut_note(self.offer.socket_path, record_words)
        with self._lock:
            self._cut = True
            self.legal, self.request_id = {}, None
            if self.result is None:
                self.goodbye = goodbye
            if self._call is not None:
                self._call.cancel()  # type: ignore[no-untyped-call]
        self._changed()


class Table:
    """One game between a person and a bot: its match thread, its seat link, its outcome."""

    def __init__(
        self, table_id: str, user: str, bot: BotSpec, seat: int, variant: Variant,
        token: str | None = None,
    ) -> None:  # fmt: skip
        self.id = table_id
        self.user = user
        self.token = token
        """The bearer token that opened the table (kept in memory only): its game lasts
        while it stays live."""
        self.bot = bot
        self.seat = seat
        self.variant = variant
        self.link: SeatLink | None = None
        self.game_id: int | None = None
        self.reference: BotSpec | None = None  # duplicate mode: plays the deal from this seat
        self.unrated_reason: str | None = "not decided yet"  # None: rated in the people's pool
        self.duplicate: Json | None = None  # its result, once played
        self.duplicate_record: dict[str, object] | None = None  # kept here, never sent
        self.error: str | None = None
        self.done = threading.Event()
        self.finished_at = 0.0
        self.version = 0  # bumped after every change (for the page's polling)
        self._version_lock = threading.Lock()  # the seat's, the game's and a request's threads

    def changed(self) -> None:
        with self._version_lock:
            self.version += 1

    def to_json(self) -> Json:
        """The table as the page shows it; ``version`` is read first, so a change made while
        this is built is in a later version too (the page redraws at a new version only)."""
        version = self.version
        link = self.link.snapshot() if self.link is not None else None
        status = "starting"
        if link is not None:
            status = "your_turn" if link["request"] is not None else "waiting"
            if link["result"] is not None or link["goodbye"] is not None:
                status = "over"
        if self.done.is_set():
            status = "stored" if self.game_id is not None else "failed"
        return {
            "table": self.id, "bot": self.bot.name, "seat": self.seat,
            "variant": {"strategic": self.variant.strategic, "tactical": self.variant.tactical},
            "status": status, "game": self.game_id, "error": self.error,
            "version": version, "rated": self.unrated_reason is None,
            "unrated_reason": self.unrated_reason, "reference": None if self.reference is None
            else self.reference.name, "duplicate": self.duplicate, **({} if link is None else {
                k: link[k] for k in ("view", "request", "legal", "clock_ms", "result", "goodbye")}),
        }  # fmt: skip


class PlayTables:
    """The tables of one server: opened by signed-in users, each a match in a thread."""

    def __init__(self, store: Store, options: PlayOptions | None = None) -> None:
        self.store = store
        self.options = options or PlayOptions()
        self._lock = threading.Lock()
        self._tables: dict[str, Table] = {}
        self.log = get_logger(component="play")

    def bots(self) -> list[str]:
        """The bots a person may play: stored bots (not remote, not people) and the house bots."""
        names = [
            summary.name for summary in list_bots(self.store)
            if not summary.name.startswith(HUMAN_PREFIX)
            and bot_spec(self.store, summary.name).runtime != REMOTE_RUNTIME
        ]  # fmt: skip
        return sorted(set(names) | set(HOUSE_BOTS))

    def _bot(self, name: object) -> BotSpec:
        if not isinstance(name, str) or not name:
            raise PlayRefused(400, "name the bot to play: {\"bot\": NAME}")
        try:
            spec = bot_spec(self.store, name)
        except NotFoundError:
            if name not in HOUSE_BOTS:
                raise PlayRefused(404, f"no bot named {name[:60]!r}") from None
            # off the ladder: a person's game enters no bot there (the admin returns it)
            add_bot_version(self.store, load_bot(sample_bot(name)), off_ladder=True)
            spec = bot_spec(self.store, name)
        if spec.runtime == REMOTE_RUNTIME or name.startswith(HUMAN_PREFIX):
            raise PlayRefused(422, f"{name!r} is hosted by its owner or a person: pick another")
        try:
            check_stored_copy(spec)  # a damaged copy would crash, or be another program
        except MissingBotCopyError as damaged:  # the path and hash are the admin's to read
            self.log.error("play_bot_copy_refused", bot=name, reason=str(damaged))
            raise PlayRefused(503, f"{name[:60]!r} cannot be played now: its stored files are"
                                   " not the version stored (the arena's admin is told in"
                                   " the server's log); pick another") from None  # fmt: skip
        return spec

    def open(
        self, principal: Principal, request: Mapping[str, object], token: str | None = None
    ) -> Table:
        """Start a game of ``principal`` against ``request["bot"]`` from ``request["seat"]``;
        ``token``, the one the request carried, is watched while the game is played."""
        bot = self._bot(request.get("bot"))
        reference = request.get("reference")
        reference_spec = None if reference in (None, "") else self._bot(reference)
        seat = request.get("seat", 0)
        if seat not in (0, 1) or isinstance(seat, bool):
            raise PlayRefused(400, f"seat must be 0 or 1, not {seat!r}")
        flags = {name: request.get(name, False) for name in ("strategic", "tactical")}
        if any(not isinstance(value, bool) for value in flags.values()):
            raise PlayRefused(400, "strategic and tactical must be true or false")
        variant = Variant(**flags)  # type: ignore[arg-type]
        human = HUMAN_PREFIX + principal.user
        if len(human) > 40:
            raise PlayRefused(422, f"user name {principal.user!r} is too long to sit at a "
                                   f"table ({HUMAN_PREFIX}USER, the seat's name, has at most 40 "
                                   "characters)")  # fmt: skip
        unrated_reason = why_unrated(
            rated_play=self.options.rated_play(principal.user),
            duplicate=reference_spec is not None,
            own_bot=get_version(self.store, bot.name, bot.version).owner == principal.user,
        )  # decided now, shown before the first move
        with self._lock:
            self._forget_old()
            open_tables = [t for t in self._tables.values() if not t.done.is_set()]
            if len(open_tables) >= self.options.max_tables:
                raise PlayRefused(503, f"all {self.options.max_tables} tables of this server "
                                       "are in play (max_tables); try again later")  # fmt: skip
            mine = sum(t.user == principal.user for t in open_tables)
            if mine >= self.options.max_tables_per_user:
                raise PlayRefused(429, f"you have {self.options.max_tables_per_user} game(s) in "
                                       "play (max_tables_per_user): finish it first")  # fmt: skip
            table = Table(
                secrets.token_urlsafe(16), principal.user, bot, int(seat), variant, token
            )
            table.reference = reference_spec
            table.unrated_reason = unrated_reason
            self._tables[table.id] = table
        try:
            register_remote_bot(self.store, human, owner=principal.user,
                                description=f"{principal.user} playing from the web")  # fmt: skip
        except StoreError as error:
            with self._lock:
                del self._tables[table.id]
            raise PlayRefused(409, f"cannot seat you as {human!r}: {error}") from None
        thread = threading.Thread(target=self._play, args=(table, human), daemon=True,
                                  name=f"play-{table.id[:6]}")  # fmt: skip
        thread.start()
        if token is not None:
            threading.Thread(target=self._watch_token, args=(table, token), daemon=True,
                             name=f"play-token-{table.id[:6]}").start()  # fmt: skip
        self.log.info("play_table_opened", user=principal.user, bot=bot.name, seat=seat)
        return table

    def table(self, principal: Principal, table_id: str) -> Table:
        with self._lock:
            table = self._tables.get(table_id)
        if table is None or table.user != principal.user:
            raise PlayRefused(404, "no such table of yours (tables are kept "
                                   f"{self.options.kept_s:g} s after their game)")  # fmt: skip
        return table

    def _watch_token(self, table: Table, token: str) -> None:
        """Check ``token`` every ``TOKEN_RECHECK_S`` while ``table``'s game is played; once it
        is refused, end the person's seat (a forfeit, its reason recorded)."""
        wait_s = TOKEN_RECHECK_S
        while not table.done.wait(wait_s):
            try:
                authenticate(self.store, token)
                continue
            except TokenRefusedError as refused:
                refusal = str(refused)
            except Exception as error:  # the store failed to answer: not the person's fault
                self.log.warning("play_token_check_failed", error=repr(error))
                continue
            link = table.link
            if link is None:  # the seat is not offered yet: cut it as soon as it is
                wait_s = 0.05
                continue
            self.log.info("play_table_cut", table=table.id[:6], user=table.user, reason=refusal)
            try:
                link.cut(play_cut_reason(refusal), f"the arena ended your game: {refusal}")
            except OSError as error:  # the match is gone: its seat ends anyway
                self.log.info("play_cut_note_failed", error=str(error))
            return

    def _forget_old(self) -> None:
        now = time.monotonic()
        for table_id, table in list(self._tables.items()):
            if table.done.is_set() and now - table.finished_at > self.options.kept_s:
                del self._tables[table_id]

    def _play(self, table: Table, human_name: str) -> None:
        """Store the one-game tournament, play it, store its game unrated.

        The tournament's runner lease is held while its game is played, as any runner
        holds its tournament's: so it reads ``running`` (not ``interrupted``) and
        ``arena tournament resume`` cannot play the person's game at the same time."""
        tournament_id = None
        lease: TournamentLease | None = None
        try:
            human = bot_spec(self.store, human_name)
            first, second = (human, table.bot) if table.seat == 0 else (table.bot, human)
            config = TournamentConfig(  # one game, on a fresh deal (its record says so)
                games_per_match=1, time_control=self.options.time_control, variant=table.variant,
                fresh_deals=(first.name, second.name),
            )  # fmt: skip
            specs = {spec.name: spec for spec in (first, second)}
            entrants = {name: _version_id(self.store, specs[name])
                        for name in seeded(first.name, second.name)}  # fmt: skip
            seat = PlaySeat(table.user, entrants[table.bot.name], table.seat, table.unrated_reason)
            row = insert_play_tournament(
                self.store, f"{PLAY_PREFIX}{table.user}-{table.id[:8]}", entrants, config,
                [PlannedRound(1, (PlannedMatch(first.name, second.name, 1, 0),))], seat,
            )  # fmt: skip
            tournament_id = row.id
            lease = acquire_lease(self.store, row.id, name=row.name)
            set_status(self.store, row.id, TournamentStatus.RUNNING)
            match = list_matches(self.store, row.id)[0]
            match_config = MatchConfig(
                games=1, paired=False, variant=table.variant,
                time_control=self.options.time_control, unsafe=self.options.unsafe,
                secret=match_seed_material(tournament_secret(self.store, row.id),
                                           match_identity(match)),
            )  # fmt: skip

            def offered(offer: SeatOffer) -> None:
                table.link = SeatLink(offer, human_name, table.changed)
                table.changed()

            report = run_match(match_config, first, second, on_seat_offer=offered)
            game = report.games[0]
            rated_play = table.unrated_reason is None and self.options.rated_play(table.user)
            table.game_id, after = store_play_game(self.store, match.id, game, human_name,
                                                   rated_play=rated_play)  # fmt: skip
            if table.unrated_reason is None:
                table.unrated_reason = after
            set_status(self.store, row.id, TournamentStatus.FINISHED)
            if table.reference is not None:
                self._duplicate(table, match_config, game)
        except Exception as error:
            self.log.exception("play_table_failed", table=table.id[:6])
            table.error = f"the game could not be played: {error}"
            if tournament_id is not None:
                record_interruption(self.store, tournament_id, table.error)
        finally:
            if lease is not None:
                lease.release()
            if table.link is not None:
                table.link.close()
            table.finished_at = time.monotonic()
            table.done.set()
            table.changed()


    def _duplicate(self, table: Table, config: MatchConfig, played: GameReport) -> None:
        """Duplicate mode: the reference bot plays the same deal (the same seed material:
        the same deal and reshuffles) from the person's seat, against the same bot, after
        the person's game; the page compares the two results. Not stored: its deal is the
        person's game's, which the record of that game already holds."""
        assert table.reference is not None
        pair = (table.reference, table.bot) if table.seat == 0 else (table.bot, table.reference)
        game = run_match(config, *pair).games[0]
        table.duplicate_record = game.record
        result = game.record.get("result")
        points = result.get("points") if isinstance(result, dict) else None
        winner = None if game.winner is None else game.bots_by_seat.index(game.winner)
        person_winner = None if played.winner is None else played.bots_by_seat.index(played.winner)
        played_result = played.record.get("result")
        table.duplicate = {
            "bot": table.reference.name, "winner_seat": winner, "reason": game.reason,
            "points": points, "person_winner_seat": person_winner,
            "person_points": played_result.get("points") if isinstance(played_result, dict)
            else None,
        }  # fmt: skip
        table.changed()


def play_cut_reason(refusal: str) -> str:
    """The record's words for a person's seat ended because their token was refused (no
    date, no advice: the record is public)."""
    return cut_words(refusal, "the token the person played with")


def seeded(first: str, second: str) -> tuple[str, str]:
    """The two entrants in the seed order whose round robin (the schedule an audit checks)
    seats ``first`` in seat 0: the person's seat as they chose it."""
    for order in ((first, second), (second, first)):
        [pairing] = round_robin(order)[0].pairings
        if (pairing.first, pairing.second) == (first, second):
            return order
    raise AssertionError("a round robin of two seats one of them first")


def _version_id(store: Store, spec: BotSpec) -> int:
    from arena.store.tournaments import latest_version_ids

    get_version(store, spec.name, spec.version)
    return latest_version_ids(store, [spec.name])[spec.name]


def pool_json(pool: tuple[list[PoolEntry], list[PoolEntry]]) -> Json:
    """The people's pool (``people_pool``'s answer): each person's and each bot version's
    rating there, best first."""
    people, bots = pool
    return {"people": [entry.to_json() for entry in people],
            "bots": [entry.to_json() for entry in bots]}  # fmt: skip


def games_json(store: Store, user: str, rated_play: bool) -> Json:
    """``user``'s latest games at /play, newest first, and whether their next is rated
    (the admin's rated_play setting for them)."""
    games = play_games(store, user, limit=GAMES_LISTED)
    return {"user": user, "rated_play": rated_play,
            "games": [row.to_json() for row in games]}  # fmt: skip


def read_request(body: bytes, headers: Mapping[str, str]) -> Json:
    """A small JSON object sent as ``application/json`` (which no form of another site can send)."""
    media_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise PlayRefused(415, f"send JSON as Content-Type application/json, not {media_type!r}")
    if len(body) > MAX_BODY_BYTES:
        raise PlayRefused(413, f"the request is {len(body)} bytes; the limit is {MAX_BODY_BYTES}")
    try:
        obj = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PlayRefused(400, f"not JSON: {error}") from None
    if not isinstance(obj, dict):
        raise PlayRefused(400, "send a JSON object")
    return obj


def _bearer(headers: Mapping[str, str]) -> str | None:
    """The request's bearer token (``principal_of`` has accepted it), or None."""
    try:
        return bearer_token(headers)
    except RequestRefused:
        return None


_TABLE_PATH = re.compile(r"/api/play/([A-Za-z0-9_-]{1,64})(/action)?")


def play_api(
    tables: PlayTables,
    principal_of: Callable[[Mapping[str, str]], Principal],
    method: str,
    path: str,
    body: bytes,
    headers: Mapping[str, str],
    scheme: str,
    pool: Callable[[], tuple[list[PoolEntry], list[PoolEntry]]] | None = None,
) -> tuple[int, Json]:
    """One request under ``/api/play`` (status, JSON); PlayRefused names what is wrong.

    ``GET /api/play/bots``: the bots one may play, ``GET /api/play/ratings``: the people's
    pool (both public; ``pool`` gives it as the public sees it, the spectator delay's,
    else the store's now). With the token: ``GET /api/play/games``, the person's own games;
    ``POST /api/play`` ``{"bot", "seat", "strategic", "tactical"}`` opens a table,
    ``GET /api/play/ID`` is its state (the seat's view, the legal actions, the clock),
    ``POST /api/play/ID/action`` ``{"action": TEXT, "request": ID}`` plays.
    """
    if path in ("/api/play/bots", "/api/play/ratings"):
        if method not in ("GET", "HEAD"):
            raise PlayRefused(405, f"method {method} is not allowed here; use GET")
        if path == "/api/play/ratings":
            return 200, pool_json(pool() if pool is not None else people_pool(tables.store))
        return 200, {"bots": tables.bots()}
    posting = method == "POST"
    if not posting and method not in ("GET", "HEAD"):
        raise PlayRefused(405, f"method {method} is not allowed here")
    if posting:
        try:
            same_origin(headers, scheme)
        except RequestRefused as refused:
            raise PlayRefused(refused.status, refused.message) from None
    principal = principal_of(headers)
    if path == "/api/play/games":
        if posting:
            raise PlayRefused(405, "GET your games at /api/play/games")
        return 200, games_json(tables.store, principal.user,
                               tables.options.rated_play(principal.user))  # fmt: skip
    if path == "/api/play":
        if not posting:
            raise PlayRefused(405, "POST the table to open: {\"bot\": NAME, \"seat\": 0 or 1}")
        table = tables.open(principal, read_request(body, headers), _bearer(headers))
        return 201, table.to_json()
    match = _TABLE_PATH.fullmatch(path)
    if match is None:
        raise PlayRefused(404, f"no page at {path[:80]}")
    table = tables.table(principal, match.group(1))
    if match.group(2) is None:
        if posting:
            raise PlayRefused(405, "POST actions to /api/play/ID/action")
        return 200, table.to_json()
    if not posting:
        raise PlayRefused(405, "POST the action: {\"action\": TEXT, \"request\": ID}")
    move = read_request(body, headers)
    if table.link is None:
        raise PlayRefused(409, "the game has not started yet")
    text = move.get("action")
    if not isinstance(text, str):
        raise PlayRefused(400, "name the action: {\"action\": TEXT, \"request\": ID}")
    table.link.play(text, move.get("request"))
    return 200, table.to_json()
