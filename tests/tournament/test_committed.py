"""The committed parameters shown before play: the exact text the seed commitment
hashes, every field of it in words, and nothing private (owners, a remote bot's
description) nor the secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena import store as st
from arena.referee.seeds import seed_commitment
from arena.referee.types import TimeControl
from arena.testing.demo_data import add_demo_bots
from arena.tournament.policy.rounds import create_tournament
from arena.tournament.view.committed import parameter_fields, shown_parameters

PRIVATE = ("owner-of-eve", "hosted at 10.9.8.7:4444")
"""The remote bot's owner and its description: neither is part of what is committed."""


def committed_cup(store: st.Store, work: Path) -> st.TournamentRow:
    """A created, unplayed round robin of two local bots and a remote one (whose matches
    deal afresh), with a time control other than the default."""
    add_demo_bots(store, work, ["ann", "bob"])
    st.register_remote_bot(store, "eve", owner=PRIVATE[0], description=PRIVATE[1])
    config = st.TournamentConfig(time_control=TimeControl(action_ms=750, bank_ms=9000))
    return create_tournament(store, "cup", "round_robin", ["ann", "bob", "eve"], config)


def test_the_shown_text_hashes_with_the_revealed_secret_to_the_commitment(
    tmp_path: Path,
) -> None:
    with st.Store.open(tmp_path / "data") as store:
        cup = committed_cup(store, tmp_path / "bots")
        text = shown_parameters(store, cup)
        assert text is not None and st.revealed_secret(store, cup.id) is None
        st.set_status(store, cup.id, st.TournamentStatus.FINISHED)
        secret = st.revealed_secret(store, cup.id)
    assert secret is not None
    assert seed_commitment(secret, text.encode()) == cup.commitment
    assert not any(private in text for private in PRIVATE)
    assert secret.hex() not in text


def test_every_field_is_shown_in_words_with_who_deals_afresh(tmp_path: Path) -> None:
    with st.Store.open(tmp_path / "data") as store:
        cup = committed_cup(store, tmp_path / "bots")
        text = shown_parameters(store, cup)
        versions = {row.name: row.latest.version for row in st.list_bots(store)}
    assert text is not None
    fields = dict(parameter_fields(text))
    assert fields["time control"] == "750 ms per action, 9000 ms bank"
    assert fields["fresh deals"].startswith("eve: their matches deal afresh every game")
    assert fields["entrants"] == ", ".join(f"{n} ({versions[n]})" for n in ("ann", "bob", "eve"))
    assert (fields["format"], fields["games per match"], fields["variant"]) == (
        "round robin", "2", "base game")
    config = json.loads(text)["config"]
    assert set(fields) >= {"name", "seed"} and config.keys() <= {
        "games_per_match", "rounds", "seed", "action_ms", "bank_ms", "strategic", "tactical",
        "sprt", "fresh_deals"}


@pytest.mark.parametrize(
    ("config", "shown"),
    [
        ({"fresh_deals": []}, "none: every match pairs its deals"),
        ({}, "no rule committed"),
        ({"fresh_deals": ["x", "y"]}, "x, y: their matches deal afresh"),
    ],
)
def test_the_fresh_deals_rule_in_words(config: dict[str, object], shown: str) -> None:
    text = json.dumps({"name": "t", "format": "swiss", "entrants": [], "config": config})
    assert dict(parameter_fields(text))["fresh deals"].startswith(shown)


@pytest.mark.parametrize(
    "text",
    ["", "[]", "{}", '{"name":"t","format":"f","entrants":[["a"]],"config":{}}',
     '{"name":"t","format":"f","entrants":[],"config":[]}',
     '{"name":"t","format":"f","entrants":[],"config":{"fresh_deals":"ann"}}'],
)
def test_a_text_that_is_not_parameters_is_a_value_error(text: str) -> None:
    """An arena's answer is read with this: it names the problem, never a traceback."""
    with pytest.raises(ValueError, match="not a parameters text"):
        parameter_fields(text)


def test_a_ladder_shows_no_parameters(tmp_path: Path) -> None:
    """Its parameters change as it runs and it is never audited."""
    with st.Store.open(tmp_path / "data") as store:
        cup = committed_cup(store, tmp_path / "bots")
        ladder = st.TournamentRow(**{**{f: getattr(cup, f) for f in cup.__slots__},
                                     "format": st.TournamentFormat.LADDER})
        assert shown_parameters(store, ladder) is None


@pytest.mark.parametrize(("seeded", "told"), [(True, True), (False, False)])
def test_a_seeded_tournament_says_that_anyone_can_compute_its_deals(
    tmp_path: Path, seeded: bool, told: bool
) -> None:
    """Created with --seed, its secret is the one the published seed gives: the seed line
    says so (from the text and the commitment alone); with a fresh secret it says that no
    deal comes from it."""
    with st.Store.open(tmp_path / "data") as store:
        add_demo_bots(store, tmp_path / "bots", ["ann", "bob"])
        cup = create_tournament(store, "cup", "round_robin", ["ann", "bob"],
                                st.TournamentConfig(seed=5), seeded=seeded)  # fmt: skip
        text = shown_parameters(store, cup)
    assert text is not None
    seed = dict(parameter_fields(text, cup.commitment))["seed"]
    assert seed.startswith("5") and ("anyone can compute every deal in advance" in seed) is told
    assert ("every deal comes from the secret the commitment fixes" in seed) is not told
    assert dict(parameter_fields(text))["seed"] == "5"  # without the commitment: not checked
