"""Tournament policy: which configurations can be played, Swiss round limits, match seeds.

One source for every default and range: the time control's are the
referee's (``arena.referee.types``: ``TimeControl``, ``ACTION_MS_RANGE``,
``BANK_MS_RANGE``), the rest are here. ``build_config`` is the one place a
``TournamentConfig`` is made from loose values (CLI flags, an API request):
a value left out (None) takes its default, a value out of range is refused
naming the field.
"""

from __future__ import annotations

import math
import re

from arena.kahuna import Variant
from arena.referee.seeds import MatchIdentity, secret_from_seed, seed_commitment
from arena.referee.types import ACTION_MS_RANGE, BANK_MS_RANGE, TimeControl
from arena.store.models import MatchRow, SprtConfig, TournamentConfig, TournamentFormat
from arena.tournament.statistics.sprt import ELO_LIMITS, PRESETS, EloModel, SprtParams

GAMES_PER_MATCH_RANGE = (1, 100)
SEED_RANGE = (0, 2**31 - 1)
ROUNDS_RANGE = (1, 1000)
MAX_PAIRS_RANGE = (1, 100_000)
DEFAULT_MAX_PAIRS = 2000
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,59}")
FORMATS = tuple(TournamentFormat)


class TournamentError(ValueError):
    """A tournament that cannot be created or played as asked; the message names the field."""


def _check_whole(field: str, value: object, bounds: tuple[int, int]) -> int:
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TournamentError(f"{field} must be a whole number from {low} to {high}, got {value!r}")
    return value


def build_config(
    *,
    games_per_match: int | None = None,
    rounds: int | None = None,
    seed: int | None = None,
    action_ms: int | None = None,
    bank_ms: int | None = None,
    strategic: bool = False,
    tactical: bool = False,
    sprt: SprtConfig | None = None,
) -> TournamentConfig:
    """A checked ``TournamentConfig``; None takes the default (rounds: ceil(log2 n) + 1).

    ``sprt`` (format ``sprt`` only) is made by ``build_sprt``."""
    config = TournamentConfig(
        games_per_match=_check_whole(
            "games_per_match",
            TournamentConfig.games_per_match if games_per_match is None else games_per_match,
            GAMES_PER_MATCH_RANGE,
        ),
        rounds=None if rounds is None else _check_whole("rounds", rounds, ROUNDS_RANGE),
        seed=_check_whole("seed", TournamentConfig.seed if seed is None else seed, SEED_RANGE),
        time_control=TimeControl(
            action_ms=_check_whole(
                "action_ms",
                TimeControl.action_ms if action_ms is None else action_ms,
                ACTION_MS_RANGE,
            ),
            bank_ms=_check_whole(
                "bank_ms", TimeControl.bank_ms if bank_ms is None else bank_ms, BANK_MS_RANGE
            ),
        ),
        variant=Variant(strategic=strategic, tactical=tactical),
        sprt=None if sprt is None else check_sprt(sprt),
    )
    return config


def _real(field: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TournamentError(f"{field} must be a finite number, got {value!r}")
    return float(value)


def build_sprt(
    *,
    preset: str | None = None,
    elo0: float | None = None,
    elo1: float | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    model: str | None = None,
    max_pairs: int | None = None,
) -> SprtConfig:
    """The hypotheses of an SPRT test from loose values: a preset (``PRESETS``) or both
    of elo0 and elo1; a value given beside a preset overrides it. TournamentError
    naming the field for a value out of range."""
    if preset is not None and preset not in PRESETS:
        raise TournamentError(f"sprt must be one of {', '.join(PRESETS)}, got {preset!r}")
    base = PRESETS[preset] if preset is not None else None
    if elo0 is None and base is not None:
        elo0 = base.elo0
    if elo1 is None and base is not None:
        elo1 = base.elo1
    if elo0 is None or elo1 is None:
        raise TournamentError("an sprt test needs elo0 and elo1, or a preset (nonreg, gain)")
    return check_sprt(
        SprtConfig(
            elo0=elo0,
            elo1=elo1,
            alpha=alpha if alpha is not None else (base or SprtParams).alpha,
            beta=beta if beta is not None else (base or SprtParams).beta,
            model=model if model is not None else str((base or SprtParams).model),
            max_pairs=DEFAULT_MAX_PAIRS if max_pairs is None else max_pairs,
        )
    )


def check_sprt(sprt: SprtConfig) -> SprtConfig:
    """``sprt`` when every field is in range, else TournamentError naming the field:
    bounds within ``ELO_LIMITS`` of the model, so the LLR exists for any counts and
    a test never stops on a bound it cannot compute."""
    if sprt.model not in {str(m) for m in EloModel}:
        raise TournamentError(f"model must be logistic or normalized, got {sprt.model!r}")
    elo0, elo1 = _real("elo0", sprt.elo0), _real("elo1", sprt.elo1)
    alpha, beta = _real("alpha", sprt.alpha), _real("beta", sprt.beta)
    limit = ELO_LIMITS[EloModel(sprt.model)]
    for field, value in (("elo0", elo0), ("elo1", elo1)):
        if abs(value) > limit:
            raise TournamentError(
                f"{field} must lie within [-{limit:g}, {limit:g}] ({sprt.model} Elo), got {value:g}"
            )
    if not elo0 < elo1:
        raise TournamentError(f"elo1 must be above elo0, got [{elo0:g}, {elo1:g}]")
    for field, value in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < value < 0.5:
            raise TournamentError(f"{field} must lie strictly between 0 and 0.5, got {value:g}")
    _check_whole("max_pairs", sprt.max_pairs, MAX_PAIRS_RANGE)
    return SprtConfig(elo0, elo1, alpha, beta, sprt.model, sprt.max_pairs)


def sprt_params(sprt: SprtConfig) -> SprtParams:
    """The test's hypotheses as the SPRT module takes them (``sprt`` is checked)."""
    return SprtParams(sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta, EloModel(sprt.model))


def validate_config(config: TournamentConfig) -> None:
    """Refuse a configuration that cannot be played, naming the field (TournamentError)."""
    _check_whole("games_per_match", config.games_per_match, GAMES_PER_MATCH_RANGE)
    _check_whole("seed", config.seed, SEED_RANGE)
    _check_whole("action_ms", config.time_control.action_ms, ACTION_MS_RANGE)
    _check_whole("bank_ms", config.time_control.bank_ms, BANK_MS_RANGE)
    if config.rounds is not None:
        _check_whole("rounds", config.rounds, ROUNDS_RANGE)
    if config.sprt is not None:
        check_sprt(config.sprt)


def parse_format(value: str) -> TournamentFormat:
    """The format named ``value`` (TournamentError listing the formats)."""
    try:
        return TournamentFormat(value)
    except ValueError:
        raise TournamentError(
            f"format must be one of {', '.join(FORMATS)}, got {value!r}"
        ) from None


def max_swiss_rounds(bots: int) -> int:
    """The most Swiss rounds ``bots`` bots may play: a round robin's. Past it a rematch is
    certain; near it one may be too, where the rounds before left no rematch-free pairing."""
    return max(1, bots - 1 if bots % 2 == 0 else bots)


def match_seed(tournament_seed: int, round_no: int, first_id: int, second_id: int) -> int:
    """A stored match's label (``matches.seed``): no deal depends on it; its deals come
    from the tournament's secret and ``match_identity`` alone."""
    low, high = sorted((first_id, second_id))
    return (tournament_seed * 1_000_003 + round_no * 10_007 + low * 101 + high) % 2**31


def match_identity(match: MatchRow) -> MatchIdentity:
    """What a match's seed material is derived from (``arena.referee.seeds``): its round
    and its two bots by name and version, ``first`` being seat 0 of game 0."""
    return MatchIdentity(
        match.round, (match.first, match.first_version), (match.second, match.second_version)
    )


def seeded_commitment(seed: int, parameters_text: str, commitment: str) -> bool:
    """Whether ``commitment`` binds ``parameters_text`` with the secret ``seed`` gives (a
    tournament created with --seed): anyone who knows the seed can compute its deals."""
    if seed < 0:
        return False
    return seed_commitment(secret_from_seed(seed), parameters_text.encode()) == commitment
