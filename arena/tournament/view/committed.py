"""What a tournament's seed commitment binds, shown to its participants before play.

The commitment (``arena.referee.seeds.seed_commitment``) hashes the deal secret
with the parameters text (``arena.store.committed_parameters``): name, format,
config and entrants (name, version). The text holds nothing private (no owner,
no address, no secret; entrants and versions are public), so the web page, the
CLI and the API show it from creation: a participant sees what was committed
(the time control, who deals afresh) while it can still be questioned, and checks
the exact text against the commitment once the secret is revealed. A ladder's
parameters change as it runs and it is never audited: none are shown for it.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from typing import Any

from arena.store import Store, TournamentFormat, TournamentRow, tournament_parameters
from arena.tournament.policy.config import seeded_commitment


def shown_parameters(store: Store, row: TournamentRow) -> str | None:
    """The exact parameters text ``row``'s commitment binds (ASCII JSON); None for a
    ladder or a tournament that published no commitment."""
    if row.commitment is None or row.format is TournamentFormat.LADDER:
        return None
    return tournament_parameters(store, row.id).decode()


def parameter_fields(text: str, commitment: str | None = None) -> list[tuple[str, str]]:
    """The parameters ``text`` as (label, value) lines a person reads, every field of it.

    With its ``commitment``, the seed says when the deal secret is the one it gives
    (``seeded_commitment``: a tournament created with --seed): anyone can then compute
    every deal before play, an entrant's author too, and everyone is told so; otherwise
    it says no deal comes from it (the seed is then the matches' label alone). That
    takes only published things (the seed, the text, the commitment), so saying it
    tells nothing that is not already public. ValueError when ``text`` is not a
    parameters text (an arena's answer is read with this too).
    """
    try:
        fields = _fields(json.loads(text))
        seed = json.loads(text)["config"].get("seed")
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"not a parameters text ({type(error).__name__}: {error})") from None
    if commitment is not None and isinstance(seed, int):
        said = PREDICTABLE if seeded_commitment(seed, text, commitment) else LABEL_ONLY
        fields = [(label, f"{value} ({said})" if label == "seed" else value)
                  for label, value in fields]  # fmt: skip
    return fields


PREDICTABLE = "the deal secret is the one this seed gives: anyone can compute every deal in advance"
LABEL_ONLY = "the matches' label only: every deal comes from the secret the commitment fixes"


def _fields(parameters: Mapping[str, Any]) -> list[tuple[str, str]]:
    config: Mapping[str, Any] = parameters["config"]
    entrants = ", ".join(f"{name} ({version})" for name, version in parameters["entrants"])
    variant = [kind for kind in ("strategic", "tactical") if config.get(kind)]
    fields = [
        ("name", str(parameters["name"])),
        ("format", str(parameters["format"]).replace("_", " ")),
        ("entrants", entrants),
        ("games per match", str(config.get("games_per_match"))),
    ]
    if config.get("rounds") is not None:
        fields.append(("rounds", str(config["rounds"])))
    fields += [
        ("time control", f"{config.get('action_ms')} ms per action,"
                         f" {config.get('bank_ms')} ms bank"),
        ("variant", " and ".join(variant) if variant else "base game"),
        ("seed", str(config.get("seed"))),
    ]  # fmt: skip
    sprt = config.get("sprt")
    if isinstance(sprt, Mapping):
        fields.append(("SPRT", ", ".join(f"{key} {sprt[key]}" for key in sorted(sprt))))
    fields.append(("fresh deals", _fresh_deals(config)))
    return fields


def _fresh_deals(config: Mapping[str, Any]) -> str:
    """Whose matches deal afresh, in words (the rule ``TournamentConfig.deals_paired``)."""
    if "fresh_deals" not in config:
        return "no rule committed: the runner chooses which matches pair their deals"
    fresh = config["fresh_deals"]
    if not isinstance(fresh, list) or not all(isinstance(name, str) for name in fresh):
        raise TypeError(f"fresh_deals is {fresh!r}")
    if not fresh:
        return "none: every match pairs its deals (games 2k and 2k+1 share deal k)"
    return (f"{', '.join(fresh)}: their matches deal afresh every game;"
            " every other match pairs its deals")  # fmt: skip


def committed_lines(
    commitment: str, text: str, secret: str | None, width: int | None = None, too_wide: str = ""
) -> list[str]:
    """The seed commitment, the parameters it binds (field by field and the exact text) and
    the revealed secret, as `arena tournament status` and `arena remote tournament show`
    print them: within ``width`` columns when given (the exact text, too wide, replaced by
    its length and ``too_wide``, where to read it whole)."""
    lines = fitted("seed commitment   ", commitment, width, whole=True)
    lines.append("committed parameters:")
    try:
        fields = parameter_fields(text, commitment)
    except ValueError as error:  # an arena's answer that is no parameters text
        lines.append(f"  (the arena sent text that does not read as parameters: {error})")
    else:
        for label, value in fields:
            lines += fitted(f"  {label + ':':<17} ", value, width)
    lines += fitted("  exact text:       ", text, width, whole=True) or fitted(
        "  exact text:       ",
        f"{len(text)} characters, too wide to show at this width: {too_wide}", width,
    )  # fmt: skip
    if secret is None:
        return [*lines, "the secret is revealed once the tournament is finished"]
    return lines + fitted("revealed secret   ", secret, width, whole=True)


def fitted(label: str, value: str, width: int | None, *, whole: bool = False) -> list[str]:
    """``label`` and ``value`` in lines of at most ``width`` (one line when None): words
    wrapped under the value's start; a ``whole`` value (a hash, the exact text: copied as
    it is) on a line of its own when it does not fit beside its label, or no lines when it
    fits on none."""
    line = f"{label}{value}"
    if width is None or len(line) <= width:
        return [line]
    if whole:
        return [label.rstrip(), f"    {value}"] if len(value) + 4 <= width else []
    return textwrap.wrap(value, width, initial_indent=label, break_on_hyphens=False,
                         subsequent_indent=" " * len(label))  # fmt: skip
