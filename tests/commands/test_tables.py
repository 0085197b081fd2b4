"""Tables fit the terminal: columns are dropped, least important first, and no name is cut.

The property: for any terminal width from 60 columns and any bot names (up to
the 40 characters a name may have), no line is wider than the terminal,
nothing is cut, and every name appears whole on one line wherever the columns
kept fit; where even they do not (a long name on a narrow terminal), the name
folds onto more lines of its cell. The caption names each column left out.
The commands' own tables (leaderboard, bot list, tournament list) at 80
columns, through the CLI with a real store.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table

from arena.cli import main
from arena.commands.leaderboard import DROP_ORDER
from arena.commands.tables import fit, fits
from arena.referee import load_bot
from arena.resources import sample_bots_dir
from arena.store import Store, TournamentConfig, TournamentFormat, add_bot_version
from arena.testing.examples import examples
from arena.tournament.policy.rounds import create_tournament

HEADERS = ("#", "bot", "version", "mu-3sigma", "mu", "sigma", "games", "W/D/L",
           "score (95%)", "Elo (95%)", "pairs", "timeouts", "crashes", "illegal")  # fmt: skip
NAME = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,39}", fullmatch=True)


def _leaderboard(names: list[str]) -> Table:
    table = Table(title="Leaderboard")
    for header in HEADERS:
        table.add_column(header)
    for rank, name in enumerate(names, 1):
        table.add_row(str(rank), name, "0123456789", "-3.21", "25.00", "8.33", "1234",
                      "600/34/600", "0.50 ± 0.04", "+0 [-28, +28]", "617", "0.0%", "0.1%",
                      "0.0%")  # fmt: skip
    return table


def _render(table: Table, width: int) -> tuple[list[str], bool]:
    """The rendered lines, and whether the columns kept fit the width unwrapped."""
    out = Console(width=width, file=io.StringIO(), color_system=None)
    fitted = fit(table, out, DROP_ORDER)
    out.print(fitted)
    assert isinstance(out.file, io.StringIO)
    return out.file.getvalue().splitlines(), fits(fitted, out)


@settings(max_examples=examples(60), deadline=None)
@given(width=st.integers(60, 220), names=st.lists(NAME, min_size=1, max_size=6))
@example(width=60, names=["0" * 33])  # too wide for the kept columns: folds, uncut
def test_every_name_is_whole_and_no_line_is_wider_than_the_terminal(
    width: int, names: list[str]
) -> None:
    lines, whole_rows = _render(_leaderboard(names), width)
    assert all(len(line) <= width for line in lines), (width, lines)
    assert not any("…" in line for line in lines), (width, lines)  # nothing cut
    if whole_rows:
        for name in names:
            assert any(name in line for line in lines), (name, width, lines)


@pytest.mark.parametrize("width", [60, 64])
def test_a_name_too_long_for_the_kept_columns_folds_onto_more_lines_uncut(width: int) -> None:
    name = "N" * 39 + "z"  # the longest name: with rank, rating and games, wider than 64
    lines, whole_rows = _render(_leaderboard([name]), width)
    assert not whole_rows
    assert all(len(line) <= width for line in lines), lines
    folded = "".join(
        cell.strip() for line in lines if "│" in line for cell in line.split("│")[2:3]
    )
    assert name in folded, lines


WIDTHS = [
    # (terminal width, columns that must be gone, columns that must stay)
    (220, (), HEADERS),
    (120, ("illegal", "crashes", "timeouts"), ("#", "bot", "mu-3sigma", "games", "W/D/L")),
    (80, ("illegal", "crashes", "timeouts", "pairs", "sigma", "mu"), ("#", "bot", "mu-3sigma",
                                                                       "games")),
]  # fmt: skip


@pytest.mark.parametrize(("width", "gone", "kept"), WIDTHS, ids=[str(w[0]) for w in WIDTHS])
def test_the_least_important_columns_go_first_and_the_caption_names_them(
    width: int, gone: tuple[str, ...], kept: tuple[str, ...]
) -> None:
    table = fit(_leaderboard(["python_random", "a" * 40]),
                Console(width=width, file=io.StringIO()), DROP_ORDER)  # fmt: skip
    headers = [str(column.header) for column in table.columns]
    assert not set(gone) & set(headers) and set(kept) <= set(headers), headers
    assert (table.caption is None) == (not gone)
    for header in gone:
        assert header in str(table.caption)


LONG = "a-bot-with-a-name-of-forty-characters-xx"


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    with Store.open(data) as store:
        for name in (LONG, "python_random", "9-Lives.v2"):
            bot = tmp_path / name
            shutil.copytree(sample_bots_dir() / "python_random", bot)
            (bot / "bot.toml").write_text((bot / "bot.toml").read_text().replace(
                'name = "python_random"', f'name = "{name}"'))  # fmt: skip
            add_bot_version(store, load_bot(bot), owner="someone-with-a-long-name")
        create_tournament(store, "a-tournament-with-a-long-name-too-0123456",
                          TournamentFormat.ROUND_ROBIN, [LONG, "python_random"],
                          TournamentConfig())  # fmt: skip
    return data


@pytest.mark.parametrize("command", [["leaderboard"], ["bot", "list"], ["tournament", "list"]],
                         ids=" ".join)  # fmt: skip
def test_the_commands_tables_fit_80_columns(
    store_dir: Path, command: list[str], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("COLUMNS", "80")
    assert main([*command, "--data-dir", str(store_dir)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines), "\n".join(lines)
    names = [LONG] if command[0] == "tournament" else [LONG, "python_random", "9-Lives.v2"]
    if command[0] == "tournament":
        names = ["a-tournament-with-a-long-name-too-0123456"]
    for name in names:
        assert any(name in line for line in lines), "\n".join(lines)


def test_a_crosstable_too_wide_for_the_terminal_is_left_out_saying_where_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    names = [f"bot-number-{index:02d}-of-a-big-field" for index in range(12)]
    with Store.open(tmp_path / "data") as store:
        for name in names:
            bot = tmp_path / name
            shutil.copytree(sample_bots_dir() / "python_random", bot)
            (bot / "bot.toml").write_text((bot / "bot.toml").read_text().replace(
                'name = "python_random"', f'name = "{name}"'))  # fmt: skip
            add_bot_version(store, load_bot(bot))
        create_tournament(store, "field", TournamentFormat.ROUND_ROBIN, names,
                          TournamentConfig())  # fmt: skip
    for width, shown in ((80, False), (220, True)):
        monkeypatch.setenv("COLUMNS", str(width))
        assert main(["tournament", "status", "field", "--data-dir", str(tmp_path / "data")]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert all(len(line) <= width for line in lines), "\n".join(lines)
        note = "crosstable left out at this width (12 bots): `arena tournament status field"
        assert (note in " ".join(line.strip() for line in lines)) != shown, "\n".join(lines)
        for name in names:
            assert any(name in line for line in lines), "\n".join(lines)


def test_the_remote_tables_fit_the_terminal_and_keep_every_column_in_a_pipe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from arena.commands import remote
    from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb

    bots = [pb.BotVersion(name=name, version="0123456789abcdef", owner="an-owner-named-at-length",
                          mu=25.0, sigma=8.333, conservative=-0.01, games=1234, wins=600,
                          draws=34, losses=600)
            for name in (LONG, "python_random")]  # fmt: skip
    board = pb.GetLeaderboardResponse(
        entries=[pb.LeaderboardEntry(rank=i + 1, bot=b) for i, b in enumerate(bots)]
    )
    listed = pb.ListBotsResponse(bots=bots)
    monkeypatch.delenv("COLUMNS", raising=False)  # pytest-xdist's workers may have it set
    for lines in (remote.leaderboard_lines(board), remote.bots_lines(listed)):
        assert len(lines[0].split()) >= 7  # COLUMNS unset and not a terminal: every column
    monkeypatch.setenv("COLUMNS", "80")
    for lines in (remote.leaderboard_lines(board), remote.bots_lines(listed)):
        assert all(len(line) <= 80 for line in lines), "\n".join(lines)
        assert LONG in lines[1] and "python_random" in lines[2]
        assert {"bot", "games", "W/D/L"} <= set(lines[0].split())
