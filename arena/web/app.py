"""Routing and rendering: a request (method, path, query) in, a ``Response`` out.

No sockets here, so every route can be exercised directly; ``arena.web.server``
puts this behind ``http.server``. HTML pages and JSON endpoints sit side by
side and are built from the same models (``/bots/x`` and ``/api/bots/x``).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import TypeVar
from urllib.parse import quote, unquote

import jinja2

from arena.kahuna import (
    ISLAND_POSITIONS,
    ISLANDS,
    LINE_ISLANDS,
    LINES,
    LINES_OF,
    MAJORITY,
    MalformedRecordError,
    parse_record,
)
from arena.logs import get_logger
from arena.store import (
    DAMAGED_ANSWER,
    DamagedDatabaseError,
    Principal,
    StoreError,
    TokenRefusedError,
)
from arena.store.play import PoolEntry, people_pool
from arena.tournament.policy.ladder_config import DEFAULT_NAME as DEFAULT_LADDER
from arena.tournament.policy.rounds import PLAY_PREFIX
from arena.tournament.view.ladder_view import LadderView
from arena.tournament.view.spectator_delay import MAX_VIEWS, NOT_PUBLIC, DelayLine
from arena.web.frames import (
    PERSPECTIVE_NAMES,
    PUBLIC,
    Frames,
    Perspective,
    PerspectiveError,
    game_frames,
    parse_perspective,
)
from arena.web.ladder import LadderSource, ladder_payload
from arena.web.live import (
    LIVE_LIST_POLL_MS,
    LIVE_POLL_MS,
    LiveSource,
    NoSuchGameError,
    PublicTimeline,
    SpectatorFeed,
)
from arena.web.live_answers import GameAnswer, LiveAnswers
from arena.web.models import (
    BotVersion,
    GameDetail,
    GameSummary,
    HeadToHead,
    LeaderboardRow,
    TournamentDetail,
    TournamentSummary,
    WebSource,
)
from arena.web.play import MAX_BODY_BYTES as PLAY_BODY_BYTES
from arena.web.play import PlayOptions, PlayRefused, PlayTables, play_api
from arena.web.plots import RatingPoint, llr_svg, rating_history_svg
from arena.web.source import game_summary
from arena.web.submit import (
    AccountSource,
    BotSubmitter,
    RequestRefused,
    bearer_token,
    same_origin,
    submission_content,
    token_refusal,
)
from arena.web.upload import (
    MAX_UPLOAD_BYTES,
    UploadError,
    bots_in,
    form_text,
    record_from_upload,
)

Json = dict[str, object]

STATIC_TYPES: Mapping[str, str] = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
LEADERBOARD_POLL_MS = 5000
FRAME_CACHE_SIZE = 64
DELAYED_KINDS = ("tournament", "ladder", "bot", "h2h")  # views keyed (kind, ...), kept apart


@dataclass(frozen=True)
class Response:
    status: int
    content_type: str
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)


class HttpError(Exception):
    """A request we refuse, with the status and a message naming the problem."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


MAX_HISTORY_POINTS = 2000  # a bot's whole rating history is thinned to this many points


def whole_history(versions: Sequence[BotVersion]) -> list[RatingPoint]:
    """Every rating of every version (``versions`` newest first), oldest first, each labelled
    with its version; evenly thinned to ``MAX_HISTORY_POINTS``, the latest always kept."""
    points = [
        RatingPoint(p.mu, p.sigma, label=f"version {v.version[:12]}, {p.label}")
        for v in reversed(versions)
        for p in v.history
    ]
    if len(points) <= MAX_HISTORY_POINTS:
        return points
    step = len(points) / (MAX_HISTORY_POINTS - 1)
    return [points[int(i * step)] for i in range(MAX_HISTORY_POINTS - 1)] + [points[-1]]


RECENT_FINISHED = 10  # finished games listed under the live ones on /live
HEAD_TO_HEAD_GAMES = 50  # the latest games of two bots listed on their head-to-head page


def json_response(payload: object, status: int = 200) -> Response:
    body = json.dumps(payload, separators=(",", ":"), sort_keys=False).encode()
    return Response(status, "application/json", body, {"Cache-Control": "no-store"})


def board_geometry() -> Json:
    """Islands and lines of R1 with drawing positions, for templates and the viewer."""
    return {
        "islands": [
            {"name": name, "x": ISLAND_POSITIONS[name][0], "y": ISLAND_POSITIONS[name][1],
             "majority": MAJORITY[name], "degree": len(LINES_OF[name])}
            for name in ISLANDS
        ],
        "lines": [
            {"name": line, "a": LINE_ISLANDS[line][0], "b": LINE_ISLANDS[line][1],
             "x1": ISLAND_POSITIONS[LINE_ISLANDS[line][0]][0],
             "y1": ISLAND_POSITIONS[LINE_ISLANDS[line][0]][1],
             "x2": ISLAND_POSITIONS[LINE_ISLANDS[line][1]][0],
             "y2": ISLAND_POSITIONS[LINE_ISLANDS[line][1]][1]}
            for line in LINES
        ],
    }


def match_failures(record: object) -> list[dict[str, object]]:
    """The referee's failure notes (``extra["match"]["failures"]``) of a stored record."""
    match = record.get("match") if isinstance(record, dict) else None
    failures = match.get("failures") if isinstance(match, dict) else None
    if not isinstance(failures, list):
        return []
    return [
        {"seat": f.get("seat"), "bot": f.get("bot", ""), "status": f.get("status", ""),
         "detail": f.get("detail", "")}
        for f in failures
        if isinstance(f, dict)
    ]


def rules_note(record: object) -> str:
    """``"tactical variant · handicap: seat 1 ALOA-BARI"``, or "" for the plain game."""
    if not isinstance(record, dict):
        return ""
    variant = record.get("variant")
    parts = [
        f"{name} variant"
        for name in ("strategic", "tactical")
        if isinstance(variant, dict) and variant.get(name) is True
    ]
    handicap = record.get("handicap")
    if isinstance(handicap, list) and handicap:
        lines = [
            f"seat {h.get('seat')} {h.get('line')}" for h in handicap if isinstance(h, dict)
        ]
        parts.append("handicap: " + ", ".join(lines))
    return " · ".join(parts)


def deal_note(record: object) -> str:
    """``"paired deal 3 (games 6, 7)"`` or ``"unpaired: a fresh deal"``; "" when not recorded."""
    match = record.get("match") if isinstance(record, dict) else None
    if not isinstance(match, dict):
        return ""
    deal = match.get("deal_index")
    if match.get("paired") is False:
        return "unpaired: a fresh deal"
    if match.get("paired") is True and isinstance(deal, int):
        return f"paired deal {deal} (games {2 * deal}, {2 * deal + 1})"
    return ""


def _names_nothing(boxed: object) -> bool:
    """A boxed delayed answer of nothing (``(None,)``: no bot, tournament, ladder by that name)."""
    return isinstance(boxed, tuple) and boxed[0] is None


Route = tuple[re.Pattern[str], Callable[..., Response]]
T = TypeVar("T")


class WebApp:
    """The web interface over one ``WebSource``."""

    def __init__(
        self,
        source: WebSource,
        *,
        poll_ms: int = LEADERBOARD_POLL_MS,
        live_poll_ms: int = LIVE_POLL_MS,
        spectator_delay_s: float = 0.0,
        submitter: BotSubmitter | None = None,
        clock: Callable[[], float] = time.time,
        tables: PlayTables | None = None,
        live_answer_s: float = 0.0,
    ) -> None:
        self.source = source
        self.submitter = submitter
        self.tables = tables  # people playing bots (arena.web.play)
        self.poll_ms = poll_ms
        self.live_poll_ms = live_poll_ms
        self.clock = clock
        self.answers = LiveAnswers(live_answer_s, clock)  # the live JSON, shared per interval
        self.live = (
            SpectatorFeed(source, spectator_delay_s, self._stored_frames)
            if isinstance(source, LiveSource) else None
        )  # fmt: skip
        # One delay for every public view: the aggregate pages as of now - delay
        # (arena.tournament.view.spectator_delay), games and live lists by their times.
        # Each kind of view keeps its answers apart (``self.delay``: the leaderboard and the
        # tournament list), so a flood of one kind's views (bots that do not exist, every
        # pair of bots) pushes out only that kind's history, never the front page's.
        self.timeline = source if isinstance(source, PublicTimeline) else None
        self.delay: DelayLine[object] | None = None
        self._delay_lines: dict[str, DelayLine[object]] = {}
        if spectator_delay_s > 0 and self.timeline is not None:
            first_event_after = self.timeline.first_event_after
            self.delay = DelayLine(spectator_delay_s, first_event_after, clock=clock)
            views_each = MAX_VIEWS // len(DELAYED_KINDS)
            self._delay_lines = {
                kind: DelayLine(
                    spectator_delay_s, first_event_after, clock=clock, max_views=views_each
                )
                for kind in DELAYED_KINDS
            }
        self.log = get_logger(component="web")
        self.templates = jinja2.Environment(
            loader=jinja2.PackageLoader("arena.web", "templates"),
            autoescape=jinja2.select_autoescape(["html"]),
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.globals["board"] = board_geometry()
        self.templates.globals["play_prefix"] = PLAY_PREFIX  # a /play game's tournament's name
        # a stored game's frames per perspective, built once however many ask at once
        self._frames = LiveAnswers(math.inf, clock, max_answers=FRAME_CACHE_SIZE)
        self.routes: list[Route] = [
            (re.compile(r"/"), self.leaderboard_page),
            (re.compile(r"/api/leaderboard"), self.leaderboard_json),
            (re.compile(r"/tournaments/(\d{1,18})"), self.tournament_page),
            (re.compile(r"/api/tournaments"), self.tournaments_json),
            (re.compile(r"/api/tournaments/(\d{1,18})"), self.tournament_json),
            (re.compile(r"/bots/([^/]+)"), self.bot_page),
            (re.compile(r"/h2h"), self.head_to_head_page),
            (re.compile(r"/api/h2h"), self.head_to_head_json),
            (re.compile(r"/api/bots/([^/]+)"), self.bot_json),
            (re.compile(r"/games/(\d{1,18})"), self.game_page),
            (re.compile(r"/api/games/(\d{1,18})"), self.game_json),
            (re.compile(r"/api/games/(\d{1,18})/record"), self.game_record),
            (re.compile(r"/api/games/(\d{1,18})/frames"), self.game_frames_json),
            (re.compile(r"/static/([a-z0-9_.-]+)"), self.static_file),
            (re.compile(r"/replay"), self.replay_form),
            (re.compile(r"/ladder"), self.ladder_page),
            (re.compile(r"/ladder/([A-Za-z0-9_.-]+)"), self.ladder_page),
            (re.compile(r"/api/ladder"), self.ladder_json),
            (re.compile(r"/api/ladder/([A-Za-z0-9_.-]+)"), self.ladder_json),
            (re.compile(r"/submit"), self.submit_page),
            (re.compile(r"/play"), self.play_page),
            (re.compile(r"/play/ratings"), self.play_ratings_page),
            (re.compile(r"/live"), self.live_list_page),
            (re.compile(r"/api/live"), self.live_list_json),
            (re.compile(r"/live/(\d{1,18})/(\d{1,4})"), self.live_page),
            (re.compile(r"/api/live/(\d{1,18})/(\d{1,4})"), self.live_json),
            (re.compile(r"/healthz"), lambda query: json_response({"ok": True})),
        ]

    # --- dispatch ---------------------------------------------------------

    def handle(
        self,
        method: str,
        path: str,
        query: Mapping[str, str],
        body: bytes = b"",
        content_type: str = "",
        headers: Mapping[str, str] | None = None,
        scheme: str = "http",
    ) -> Response:
        """Route one request; every failure becomes a page naming the problem.

        ``headers``: the request's, names lower-cased (only the submission and
        account endpoints read them); ``scheme``: ``http`` or ``https``.
        """
        wants_json = path.startswith("/api/")
        headers = headers or {}
        try:
            if method == "POST" and path == "/replay":
                return self.replay_upload(body, content_type)
            if path == "/api/submit":
                if method != "POST":
                    raise HttpError(405, "method GET is not allowed here; POST the archive")
                return self.submit_upload(body, headers, scheme)
            if method == "GET" and path == "/api/me":
                return self.me_json(headers)
            if path == "/api/play" or path.startswith("/api/play/"):
                return self.play_json(method, path, body, headers, scheme)
            if method not in ("GET", "HEAD"):
                raise HttpError(405, f"method {method} is not allowed here; use GET")
            for pattern, view in self.routes:
                match = pattern.fullmatch(path)
                if match:
                    return view(query, *(unquote(group) for group in match.groups()))
            raise HttpError(404, f"no page at {path}")
        except HttpError as err:
            return self.error(err.status, err.message, wants_json)
        except DamagedDatabaseError as damaged:  # its file named in the log, not to visitors
            self.log.error("database_damaged", path=path, error=damaged.stopped("the request"))
            return self.error(500, DAMAGED_ANSWER, wants_json)
        except Exception:
            self.log.exception("web_request_failed", path=path)
            return self.error(500, "internal error; the server log has the details", wants_json)

    def body_limit(self, path: str) -> int:
        """The largest request body taken at ``path`` (an archive may be larger than a record)."""
        if path == "/api/submit" and self.submitter is not None:
            return self.submitter.max_bytes
        if path == "/api/play" or path.startswith("/api/play/"):
            return PLAY_BODY_BYTES  # a table to open or a move
        return MAX_UPLOAD_BYTES

    def body_holder(self, authorization: str) -> str | None:
        """The user a large request body is counted against (``arena.web.body_budget``): the
        one a valid bearer token in ``authorization`` names, or None for anyone else."""
        try:
            return self._principal({"authorization": authorization}).user
        except (HttpError, StoreError, DamagedDatabaseError):  # then the body is anyone's
            return None

    def error(self, status: int, message: str, wants_json: bool) -> Response:
        if wants_json:
            return json_response({"error": message, "status": status}, status)
        return self.page("error.html", status=status, title=f"Error {status}", message=message)

    def page(self, template: str, status: int = 200, **context: object) -> Response:
        html = self.templates.get_template(template).render(**context)
        return Response(status, "text/html; charset=utf-8", html.encode())

    # --- leaderboard and tournaments ---------------------------------------

    def _delayed(self, view: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``'s view as of the spectator delay's cut (HttpError 503 when no answer
        old enough is kept yet: the page's history starts with its first visit). The answer
        is boxed, so that a view of nothing (None: no bot of that name) is told apart from
        no answer yet, and is answered at once (its 404) without taking a view's room."""
        if self.delay is None:
            return compute()
        line = self._delay_lines.get(view[0], self.delay) if isinstance(view, tuple) else self.delay
        found = line.answer(view, lambda: (compute(),), absent=_names_nothing)
        if found is None:
            raise HttpError(
                503, f"{NOT_PUBLIC}: the pages show the arena as it was"
                f" {self.delay.delay_s:g} s ago, and games have started or ended since this"
                " page was first asked for; try again later",
            )  # fmt: skip
        assert isinstance(found, tuple)
        return found[0]  # type: ignore[no-any-return]

    def _leaderboard(self) -> Sequence[LeaderboardRow]:
        return self._delayed("leaderboard", self.source.leaderboard)

    def _tournaments(self) -> Sequence[TournamentSummary]:
        return self._delayed("tournaments", self.source.tournaments)

    def leaderboard_page(self, query: Mapping[str, str]) -> Response:
        return self.page(
            "leaderboard.html",
            title="Leaderboard",
            rows=self._leaderboard(),
            tournaments=self._tournaments(),
            poll_ms=self.poll_ms,
        )

    def leaderboard_json(self, query: Mapping[str, str]) -> Response:
        return json_response(
            {
                "leaderboard": [row.to_json() for row in self._leaderboard()],
                "tournaments": [t.to_json() for t in self._tournaments()],
            }
        )

    def tournaments_json(self, query: Mapping[str, str]) -> Response:
        return json_response({"tournaments": [t.to_json() for t in self._tournaments()]})

    def _tournament(self, tournament_id: str) -> TournamentDetail:
        number = int(tournament_id)
        detail = self._delayed(("tournament", number), lambda: self.source.tournament(number))
        if detail is None:
            raise HttpError(404, f"no tournament with id {tournament_id}")
        return detail

    def tournament_page(self, query: Mapping[str, str], tournament_id: str) -> Response:
        ladder = next(
            (t.name for t in self._tournaments()
             if t.id == int(tournament_id) and t.format == "ladder"),
            None,
        )  # fmt: skip
        if ladder is not None:  # its page (a tournament's would read every game it ever played)
            location = f"/ladder/{quote(ladder)}"
            return Response(303, "text/plain; charset=utf-8", location.encode(),
                            {"Location": location})  # fmt: skip
        detail = self._tournament(tournament_id)
        s = detail.sprt
        llr_plot = (
            "" if s is None else llr_svg(s.history, s.lower_bound, s.upper_bound, s.decided_at)
        )
        return self.page(
            "tournament.html", title=detail.summary.name, t=detail, poll_ms=self.poll_ms,
            live_games=self._live_games(detail.summary.id), llr_plot=llr_plot,
        )  # fmt: skip

    def tournament_json(self, query: Mapping[str, str], tournament_id: str) -> Response:
        return json_response(self._tournament(tournament_id).to_json())

    # --- the ladder (arena.web.ladder) -----------------------------------------

    def _ladder(self, name: str | None) -> LadderView:
        name = name or DEFAULT_LADDER
        source = self.source
        view = (self._delayed(("ladder", name), lambda: source.ladder(name))
                if isinstance(source, LadderSource) else None)  # fmt: skip
        if view is None:
            raise HttpError(404, f"no ladder named {name!r} (arena serve --ladder runs one)")
        return view

    def ladder_page(self, query: Mapping[str, str], name: str | None = None) -> Response:
        view = self._ladder(name)
        return self.page(
            "ladder.html", title=f"Ladder {view.ladder.name}", view=view,
            recent_games=[game_summary(g) for g in view.recent_games],  # in words, as elsewhere
            live_games=self._live_games(view.ladder.id),
        )  # fmt: skip

    def ladder_json(self, query: Mapping[str, str], name: str | None = None) -> Response:
        return json_response(ladder_payload(self._ladder(name)))

    # --- bots -----------------------------------------------------------------

    def bot_page(self, query: Mapping[str, str], name: str) -> Response:
        bot = self._delayed(("bot", name), lambda: self.source.bot(name))
        if bot is None:
            raise HttpError(404, f"no bot named {name!r}")
        plots = [rating_history_svg(version.history) for version in bot.versions]
        if plots:  # the first: every version's ratings in the order they were rated
            plots[0] = rating_history_svg(whole_history(bot.versions))
        others = [n for n in self.source.bot_names() if n != bot.name]
        return self.page("bot.html", title=bot.name, bot=bot, plots=plots, others=others)

    def _head_to_head(self, query: Mapping[str, str]) -> HeadToHead:
        bot, opponent = query.get("a", ""), query.get("b", "")
        if not bot or not opponent:
            raise HttpError(400, "name two bots: ?a=BOT&b=OTHER_BOT")
        if bot == opponent:
            raise HttpError(400, f"pick two different bots, not {bot!r} twice")
        found = self._delayed(  # results: as of the spectator delay's cut, as every page
            ("h2h", bot, opponent),
            lambda: self.source.head_to_head(bot, opponent, HEAD_TO_HEAD_GAMES),
        )
        if found is None:  # name the one not stored (the other may be)
            stored = set(self.source.bot_names())
            missing = [name for name in (bot, opponent) if name not in stored] or [bot, opponent]
            raise HttpError(404, "no bot named " + " or ".join(map(repr, missing)))
        return found

    def head_to_head_page(self, query: Mapping[str, str]) -> Response:
        h2h = self._head_to_head(query)
        return self.page("h2h.html", title=f"{h2h.bot} vs {h2h.opponent}", h2h=h2h)

    def head_to_head_json(self, query: Mapping[str, str]) -> Response:
        return json_response(self._head_to_head(query).to_json())

    def bot_json(self, query: Mapping[str, str], name: str) -> Response:
        bot = self._delayed(("bot", name), lambda: self.source.bot(name))
        if bot is None:
            raise HttpError(404, f"no bot named {name!r}")
        return json_response(bot.to_json())

    # --- games ----------------------------------------------------------------

    def finished_game(self, game_id: str) -> GameDetail:
        """The game if it is over; records are revealed only after the game (R9)."""
        if self.delay is not None and self.timeline is not None:
            ended = self.timeline.game_finished_at(int(game_id))
            if ended is not None and ended > self.delay.cut():  # not over for the public yet:
                raise HttpError(404, f"no game with id {game_id}")  # as if it were not stored
        game = self.source.game(int(game_id))
        if game is None:
            raise HttpError(404, f"no game with id {game_id}")
        if not game.summary.finished:
            raise HttpError(
                403, f"game {game_id} is not over yet; its record is revealed only after the game"
            )
        return game

    def revealed_game(self, game_id: str, perspective: Perspective = None) -> GameDetail:
        """The game if what is asked of it is public: the full record (and every perspective
        but ``public``) only once no game of its deal is still to be played."""
        game = self.finished_game(game_id)
        if game.withheld is not None and perspective != PUBLIC:
            raise HttpError(403, game.withheld)
        return game

    def game_page(self, query: Mapping[str, str], game_id: str) -> Response:
        game = self.finished_game(game_id)
        record = json.loads(game.record_json)
        failures = match_failures(record)
        if game.withheld is not None:  # a failure's detail may name a card the bot held
            failures = [{**failure, "detail": ""} for failure in failures]
        return self.page(
            "game.html",
            title=f"Game {game.summary.id}",
            game=game.summary,
            failures=failures,
            rules=" · ".join(note for note in (rules_note(record), deal_note(record)) if note),
            withheld=game.withheld,
        )

    def game_json(self, query: Mapping[str, str], game_id: str) -> Response:
        game = self.finished_game(game_id)
        payload = game.summary.to_json()
        payload["withheld"] = game.withheld
        payload["record"] = None if game.withheld else json.loads(game.record_json)
        return json_response(payload)

    def game_record(self, query: Mapping[str, str], game_id: str) -> Response:
        game = self.revealed_game(game_id)
        return Response(
            200,
            "application/json",
            game.record_json.encode(),
            {"Content-Disposition": f'attachment; filename="game-{game.summary.id}.json"'},
        )

    def game_frames_json(self, query: Mapping[str, str], game_id: str) -> Response:
        try:
            perspective = parse_perspective(query.get("perspective"))
        except PerspectiveError as err:
            raise HttpError(400, str(err)) from None
        game = self.revealed_game(game_id, perspective)
        frames = self._cached_frames(game, perspective)
        payload = frames.to_json(perspective)
        payload["game"] = game.summary.to_json()
        return json_response(payload)

    def _cached_frames(self, game: GameDetail, perspective: Perspective) -> Frames:
        def build(now: float) -> Frames:
            try:
                record = parse_record(game.record_json)
            except MalformedRecordError as err:
                raise HttpError(
                    500, f"game {game.summary.id} has a malformed record: {err}"
                ) from None
            return game_frames(record, perspective)

        return self._frames.get((game.summary.id, perspective), build)

    # --- public live games (arena.web.live) -------------------------------------

    def _feed(self) -> SpectatorFeed:
        if self.live is None:
            raise HttpError(404, "this server shows no live games")
        return self.live

    def _live_games(self, tournament_id: int | None = None) -> list[Json]:
        """Games in play (of one tournament), for the lists; none without a live source."""
        if self.live is None:
            return []
        names = {t.id: t.name for t in self.source.tournaments()}
        if self.delay is not None and self.timeline is not None:  # in play as of the cut
            live_bots = {(g.match_id, g.game_index): list(bots_in(g.head))
                         for g in self.live.live_games()}  # fmt: skip
            return [
                {"match_id": g.match_id, "game_index": g.game_index,
                 "tournament_id": g.tournament_id, "started_at": g.started_at,
                 "tournament": names.get(g.tournament_id, f"tournament {g.tournament_id}"),
                 "bots": live_bots.get((g.match_id, g.game_index))
                         or self._stored_bots(g.match_id, g.game_index),
                 "url": f"/live/{g.match_id}/{g.game_index}"}
                for g in self.timeline.in_play_at(self.delay.cut(), tournament_id)
            ]  # fmt: skip
        return [
            {"match_id": g.match_id, "game_index": g.game_index,
             "tournament_id": g.tournament_id, "started_at": g.started_at,
             "tournament": names.get(g.tournament_id, f"tournament {g.tournament_id}"),
             "bots": list(bots_in(g.head)), "actions": g.actions,
             "url": f"/live/{g.match_id}/{g.game_index}"}
            for g in self.live.live_games()
            if tournament_id is None or g.tournament_id == tournament_id
        ]  # fmt: skip

    def _stored_bots(self, match_id: int, game_index: int) -> list[str]:
        """The seats of a game in play at the delay's cut that is no longer live (stored
        since: as its live list showed them then), else "seat 0", "seat 1"."""
        assert self.live is not None
        stored = self.live.source.stored_game(match_id, game_index)
        game = None if stored is None else self.source.game(stored[0])
        return ["seat 0", "seat 1"] if game is None else list(game.summary.bots)

    def live_list_page(self, query: Mapping[str, str]) -> Response:
        return self.page(
            "live_list.html", title="Live games", games=self._live_games(),
            delay_s=self._feed().delay_s, poll_ms=LIVE_LIST_POLL_MS,
            recent=self._recent_finished(),
        )  # fmt: skip

    def _recent_finished(self) -> list[GameSummary]:
        """The latest finished games, newest first: as of the spectator delay's cut."""
        if self.delay is None:
            return list(self.source.recent_games(RECENT_FINISHED))
        cut = self.delay.cut()[:19].replace("T", " ")  # as GameSummary.played_at is written
        recent = self.source.recent_games(RECENT_FINISHED * 4)
        return [g for g in recent if g.played_at and g.played_at < cut][:RECENT_FINISHED]

    def live_list_json(self, query: Mapping[str, str]) -> Response:
        feed = self._feed()

        def answer(now: float) -> Response:
            return json_response({"games": self._live_games(), "delay_s": feed.delay_s})

        return self.answers.get("list", answer)

    def _stored_frames(self, game_id: int) -> tuple[Frames, tuple[str, str]]:
        """A stored game's public frames and bots (a delayed live page of a game that ended)."""
        game = self.source.game(game_id)
        if game is None:
            raise HttpError(404, f"no game with id {game_id}")
        return self._cached_frames(game, PUBLIC), game.summary.bots

    def _live_poll(
        self, match_id: str, game_index: str, after: int, now_s: float | None = None
    ) -> Json:
        try:
            now = self.clock() if now_s is None else now_s
            return self._feed().poll(int(match_id), int(game_index), after, now)
        except NoSuchGameError as err:
            raise HttpError(404, str(err)) from None

    def live_page(self, query: Mapping[str, str], match_id: str, game_index: str) -> Response:
        state = self._live_poll(match_id, game_index, after=1 << 30)  # status and bots only
        if state["status"] == "finished":
            location = f"/games/{state['game_id']}"
            return Response(303, "text/plain; charset=utf-8", location.encode(),
                            {"Location": location})  # fmt: skip
        return self.page(
            "live.html", title=f"Live: game {game_index} of match {match_id}",
            live=state, bots=state["bots"], poll_ms=self.live_poll_ms,
        )  # fmt: skip

    def live_json(self, query: Mapping[str, str], match_id: str, game_index: str) -> Response:
        text = query.get("after", "-1")
        try:
            after = int(text)
        except ValueError:
            raise HttpError(400, f"after must be a step number, not {text!r}") from None
        answer = self.answers.get(
            (int(match_id), int(game_index)),
            lambda now: GameAnswer.of(self._live_poll(match_id, game_index, -1, now)),
        )
        return Response(200, "application/json", answer.body(after), {"Cache-Control": "no-store"})

    # --- submitting a bot (arena.web.submit) ------------------------------------

    def submit_page(self, query: Mapping[str, str]) -> Response:
        return self.page("submit.html", title="Submit a bot", enabled=self.submitter is not None)

    def _principal(self, headers: Mapping[str, str]) -> Principal:
        if not isinstance(self.source, AccountSource):
            raise HttpError(404, "this server takes no submissions")
        try:
            token = bearer_token(headers)
        except RequestRefused as refused:
            raise HttpError(refused.status, refused.message) from None
        try:
            principal = self.source.principal(token)
        except TokenRefusedError as refused:  # revoked or expired: it says which, and whom
            raise HttpError(401, token_refusal(str(refused))) from None  # to ask
        if principal is None:
            raise HttpError(401, token_refusal("unknown token"))
        return principal

    def submit_upload(self, body: bytes, headers: Mapping[str, str], scheme: str) -> Response:
        if self.submitter is None:
            raise HttpError(404, "this server takes no submissions (arena serve --web-port does)")
        try:
            same_origin(headers, scheme)
            archive_format = submission_content(headers)
        except RequestRefused as refused:
            raise HttpError(refused.status, refused.message) from None
        principal = self._principal(headers)
        status, payload = self.submitter(principal, body, archive_format)
        response = json_response(payload, status)
        retry_after_s = payload.get("retry_after_s")
        if status == 429 and isinstance(retry_after_s, int):  # past a limit waiting lifts
            headers = {**response.headers, "Retry-After": str(retry_after_s)}
            return Response(response.status, response.content_type, response.body, headers)
        return response

    def me_json(self, headers: Mapping[str, str]) -> Response:
        principal = self._principal(headers)
        assert isinstance(self.source, AccountSource)
        bots = [self.source.bot(name) for name in self.source.owned_bots(principal.user)]
        return json_response({
            "user": principal.user, "role": principal.role,
            "bots": [bot.to_json() for bot in bots if bot is not None],
        })  # fmt: skip

    def play_page(self, query: Mapping[str, str]) -> Response:
        return self.page("play.html", title="Play a bot", enabled=self.tables is not None,
                         poll_ms=(self.tables.options if self.tables else PlayOptions()).poll_ms)

    def play_ratings_page(self, query: Mapping[str, str]) -> Response:
        if self.tables is None:
            raise HttpError(404, "this server seats no people (arena serve --web-port does)")
        people, bots = self._people_pool()
        return self.page("play_ratings.html", title="The people's ratings", people=people,
                         bots=bots)  # fmt: skip

    def _people_pool(self) -> tuple[list[PoolEntry], list[PoolEntry]]:
        """The people's pool as of the spectator delay's cut: its ratings and W-D-L are the
        results of games at /play, whose ends show late as every game's do."""
        assert self.tables is not None
        store = self.tables.store
        return self._delayed("people", lambda: people_pool(store))

    def play_json(
        self, method: str, path: str, body: bytes, headers: Mapping[str, str], scheme: str
    ) -> Response:
        if self.tables is None:
            raise HttpError(404, "this server seats no people (arena serve --web-port does)")
        try:
            status, payload = play_api(
                self.tables, self._principal, method, path, body, headers, scheme,
                pool=self._people_pool,
            )
        except PlayRefused as refused:
            raise HttpError(refused.status, refused.message) from None
        return json_response(payload, status)

    # --- replaying a record someone has --------------------------------------

    def replay_form(self, query: Mapping[str, str]) -> Response:
        return self.page("replay_form.html", title="Replay a record", error=None, text="")

    def replay_upload(self, body: bytes, content_type: str) -> Response:
        """Show any kahuna-record/1 the visitor posts (they hold it already: no secrecy)."""
        try:
            upload = record_from_upload(body, content_type)
        except UploadError as err:
            text = body.decode("utf-8", "replace") if len(body) <= MAX_UPLOAD_BYTES else ""
            return self.page(
                "replay_form.html", status=err.status, title="Replay a record",
                error=str(err), text=form_text(text),
            )  # fmt: skip
        frames = {
            name: game_frames(upload.record, perspective).to_json(perspective)
            for name, perspective in PERSPECTIVE_NAMES.items()
        }
        return self.page(
            "replay_view.html", title="Replay of an uploaded record",
            bots=upload.bots, frames_json=json.dumps(frames, separators=(",", ":")),
            result=upload.result_text,
        )  # fmt: skip

    # --- static -----------------------------------------------------------------

    def static_file(self, query: Mapping[str, str], name: str) -> Response:
        suffix = name[name.rfind("."):] if "." in name else ""
        if suffix not in STATIC_TYPES:
            raise HttpError(404, f"no static file {name}")
        resource = resources.files("arena.web").joinpath("static", name)
        if not resource.is_file():
            raise HttpError(404, f"no static file {name}")
        return Response(
            200, STATIC_TYPES[suffix], resource.read_bytes(), {"Cache-Control": "max-age=60"}
        )
