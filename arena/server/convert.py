"""Store rows -> ``kahuna.v1.ArenaService`` messages: one converter per concept.

The web pages have their own models (``arena.web.models``); every protobuf
the arena API answers with is made here, once.
"""

from __future__ import annotations

from arena.conformance import CheckReport
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.server.seats import PublishedSeat
from arena.store import BotVersionRow, LiveGameRow, TokenRow, TournamentFormat, TournamentRow
from arena.tournament.policy.audit import AuditReport
from arena.tournament.policy.sprt_format import SprtProgress
from arena.tournament.rating.standings import Standing
from arena.tournament.statistics.intervals import ScoreInterval

FORMAT_NAMES = {
    pb.TOURNAMENT_FORMAT_ROUND_ROBIN: TournamentFormat.ROUND_ROBIN,
    pb.TOURNAMENT_FORMAT_SWISS: TournamentFormat.SWISS,
    pb.TOURNAMENT_FORMAT_SPRT: TournamentFormat.SPRT,
    pb.TOURNAMENT_FORMAT_GAUNTLET: TournamentFormat.GAUNTLET,
    pb.TOURNAMENT_FORMAT_LADDER: TournamentFormat.LADDER,
}
FORMAT_VALUES = {name: value for value, name in FORMAT_NAMES.items()}
ARCHIVE_NAMES = {pb.ARCHIVE_FORMAT_TAR_GZ: "tar.gz", pb.ARCHIVE_FORMAT_ZIP: "zip"}


def bot_pb(row: BotVersionRow) -> pb.BotVersion:
    return pb.BotVersion(
        name=row.bot, version=row.version, owner=row.owner or "", mu=row.mu, sigma=row.sigma,
        conservative=row.conservative, games=row.games, wins=row.wins, draws=row.draws,
        losses=row.losses, timeout_rate=row.rate(row.timeouts), crash_rate=row.rate(row.crashes),
        illegal_action_rate=row.rate(row.illegal_actions),
    )  # fmt: skip


def tournament_pb(
    row: TournamentRow, revealed_seed: bytes | None = None, sprt: SprtProgress | None = None,
    parameters: str | None = None, audit_digest: str | None = None,
) -> pb.Tournament:
    """``revealed_seed``: the deal secret, given only for a finished tournament;
    ``sprt``: an SPRT test's progress; ``parameters``: the text its commitment binds;
    ``audit_digest``: its audit bundle's digest, once finished."""
    return pb.Tournament(
        id=row.id, name=row.name, format=FORMAT_VALUES[row.format], status=row.status,
        entrants=list(row.entrants), games_played=row.games_played,
        games_scheduled=row.games_scheduled, seed_commitment=row.commitment or "",
        revealed_seed="" if revealed_seed is None else revealed_seed.hex(),
        interrupted_reason=row.interrupted_reason or "",
        sprt=None if sprt is None else sprt_pb(sprt), committed_parameters=parameters or "",
        audit_digest=audit_digest or "",
    )  # fmt: skip


def sprt_pb(progress: SprtProgress) -> pb.SprtStatus:
    p = progress.params
    return pb.SprtStatus(
        elo0=p.elo0, elo1=p.elo1, alpha=p.alpha, beta=p.beta, model=str(p.model),
        max_pairs=progress.max_pairs, pairs_scheduled=progress.scheduled,
        pairs_complete=progress.complete, llr=progress.llr, lower_bound=progress.lower_bound,
        upper_bound=progress.upper_bound, verdict=progress.verdict,
        decided_at=progress.decided_at or 0, llr_history=[h.llr for h in progress.history],
        pentanomial=list(progress.pentanomial),
    )  # fmt: skip


def interval_pb(interval: ScoreInterval | None) -> pb.ScoreInterval | None:
    if interval is None:
        return None
    i = interval
    return pb.ScoreInterval(
        kind=i.kind, games=i.games, pairs=i.pairs, unpaired=i.unpaired, score=i.score,
        score_low=i.low, score_high=i.high, elo=i.elo, elo_low=i.elo_low, elo_high=i.elo_high,
        normalized_elo=i.normalized_elo, los=i.los,
    )  # fmt: skip


def standing_pb(
    standing: Standing, interval: ScoreInterval | None = None, separated_from_next: bool = False
) -> pb.Standing:
    s = standing
    return pb.Standing(
        rank=s.rank, bot=s.bot, points=s.points, games=s.games, wins=s.wins, draws=s.draws,
        losses=s.losses, byes=s.byes, buchholz=s.buchholz, sonneborn_berger=s.sonneborn_berger,
        interval=interval_pb(interval), separated_from_next=separated_from_next,
    )  # fmt: skip


def audit_pb(report: AuditReport) -> pb.AuditTournamentResponse:
    return pb.AuditTournamentResponse(
        ok=report.ok, games=report.games, seed_commitment=report.commitment or "",
        revealed_seed=report.revealed_secret or "", problem=report.problem or "",
        text=report.text(),
    )  # fmt: skip


def seat_pb(seat: PublishedSeat) -> pb.WaitForSeatsResponse:
    offer = seat.offer
    return pb.WaitForSeatsResponse(
        bot=offer.bot, version=offer.version, match_id=offer.referee_match,
        seat_token=seat.token, deadline_unix_ms=offer.expires_at_ms,
        tournament_match_id=offer.match_id or 0,
    )  # fmt: skip


def token_pb(row: TokenRow) -> pb.UserToken:
    """A stored token as the API shows it: never the token, only the start of its hash."""
    return pb.UserToken(
        id=row.id, user=row.user, role=row.role, state=row.state(),
        created_at=row.created_at, expires_at=row.expires_at or "",
        revoked_at=row.revoked_at or "", sha256_prefix=row.shown_digest,
    )  # fmt: skip


def live_game_pb(live: LiveGameRow) -> pb.LiveGame:
    match = live.head.get("match")
    bots = match.get("bots", []) if isinstance(match, dict) else []
    names = [str(b.get("name", "")) for b in bots if isinstance(b, dict)]
    return pb.LiveGame(
        match_id=live.match_id, game_index=live.game_index,
        tournament_id=live.tournament_id, bots=names, actions=live.actions,
    )  # fmt: skip


def conformance_to_pb(report: CheckReport) -> pb.ConformanceReport:
    timing = report.timing()
    message = pb.ConformanceReport(
        scenarios=[
            pb.ConformanceScenario(
                name=result.name, what=result.what, passed=result.passed,
                problem=result.problem, summary=result.summary(),
            )
            for result in report.results
        ],
        launches=len(report.launch_ms),
        decisions=len(report.decision_wall_ms),
    )  # fmt: skip
    for name in (
        "launch_ms_median", "launch_ms_max", "decision_ms_median", "decision_ms_p99",
        "decision_ms_max", "cpu_ms_per_decision_median", "cpu_ms_per_decision_p99",
    ):  # fmt: skip
        value = timing[name]
        if value is not None:
            setattr(message, name, float(value))
    return message
