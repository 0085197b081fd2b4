"""`arena stats` as a user runs it: a real process, its output and exit status."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from arena.tournament.statistics.sprt import EloModel, SprtParams, llr
from arena.tournament.statistics.stats import Pentanomial

pytestmark = pytest.mark.slow  # every test here starts a process or a server


def arena_stats(*args: str) -> subprocess.CompletedProcess[str]:
    # `python -m arena` runs this worktree's code (PYTHONPATH), like the `arena` script would
    return subprocess.run(
        [sys.executable, "-m", "arena", "stats", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


FISHTEST_LIKE = "461,7604,17562,7920,453"


@pytest.mark.parametrize("model", ["logistic", "normalized"])
def test_json_output_matches_the_library_and_the_definitions(model: str) -> None:
    done = arena_stats("--pentanomial", FISHTEST_LIKE, "--elo0", "0", "--elo1", "2",
                       "--model", model, "--json")  # fmt: skip
    assert done.returncode == 0 and done.stderr == ""
    out = json.loads(done.stdout)
    assert out["pentanomial"] == [461, 7604, 17562, 7920, 453]
    assert (out["pairs"], out["games"], out["model"]) == (34000, 68000, model)
    penta = Pentanomial((461, 7604, 17562, 7920, 453))
    assert out["llr"] == pytest.approx(llr(penta, SprtParams(0, 2, model=EloModel(model))))
    assert out["lower_bound"] == pytest.approx(math.log(0.05 / 0.95))
    assert out["upper_bound"] == pytest.approx(math.log(0.95 / 0.05))
    assert out["decision"] == "continue"
    mean = (7604 * 0.25 + 17562 * 0.5 + 7920 * 0.75 + 453) / 34000
    assert out["score"] == pytest.approx(mean)
    if model == "logistic":
        assert out["elo"] == pytest.approx(400 * math.log10(mean / (1 - mean)))
    assert out["elo_interval"][0] < out["elo"] < out["elo_interval"][1]
    assert 0.5 < out["los"] < 1


def test_text_output_names_every_figure() -> None:
    done = arena_stats("--pentanomial", "0,10,100,400,300", "--elo0", "0", "--elo1", "5",
                       "--alpha", "0.05", "--beta", "0.1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [
        "pairs", "SPRT", "LLR", "decision", "Elo", "score", "LOS",
    ]  # fmt: skip
    assert "decision  H1 accepted" in lines
    assert f"[{math.log(0.1 / 0.95):.4f}, {math.log(0.9 / 0.05):.4f}]" in done.stdout
    assert "normalized" in done.stdout  # the default model


@pytest.mark.parametrize(
    ("counts", "decision"),
    [("300,400,100,10,0", "H0 accepted"), ("10,10,10,10,10", "continue")],
    ids=["h0", "continue"],
)
def test_decisions(counts: str, decision: str) -> None:
    done = arena_stats("--pentanomial", counts, "--elo0", "0", "--elo1", "5", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["decision"] == decision


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--elo0", "0", "--elo1", "5"], "--pentanomial"),
        (["--pentanomial", "1,2,3,4", "--elo0", "0", "--elo1", "5"], "--pentanomial"),
        (["--pentanomial", "1,2,x,4,5", "--elo0", "0", "--elo1", "5"], "--pentanomial"),
        (["--pentanomial", "1,-2,3,4,5", "--elo0", "0", "--elo1", "5"], "--pentanomial"),
        (["--pentanomial", "0,0,0,0,0", "--elo0", "0", "--elo1", "5"], "--pentanomial"),
        (["--pentanomial", f"1,0,0,0,{10**300}", "--elo0", "0", "--elo1", "5"], "--pentanomial"),
        (["--pentanomial", f"1,0,0,0,{10**400}", "--elo0", "0", "--elo1", "5"], "--pentanomial"),
        (["--pentanomial", "500000000,0,0,0,500000001", "--elo0", "0", "--elo1", "5"],
         "--pentanomial"),
        (["--pentanomial", "1,2,3,4,5", "--elo1", "5"], "--elo0"),
        (["--pentanomial", "1,2,3,4,5", "--elo0", "zero", "--elo1", "5"], "--elo0"),
        (["--pentanomial", "1,2,3,4,5", "--elo0", "5", "--elo1", "0"], "--elo1"),
        (["--pentanomial", "1,2,3,4,5", "--elo0", "0", "--elo1", "nan"], "--elo1"),
        (["--pentanomial", "1,2,3,4,5", "--elo0", "0", "--elo1", "5", "--alpha", "0"], "--alpha"),
        (["--pentanomial", "1,2,3,4,5", "--elo0", "0", "--elo1", "5", "--beta", "1"], "--beta"),
        (["--pentanomial", "1,2,3,4,5", "--elo0", "0", "--elo1", "5", "--model", "bayes"],
         "--model"),
    ],
    ids=["no-counts", "four-counts", "not-a-number", "negative", "all-zero", "1e300-pairs",
         "1e400-pairs", "past-the-cap", "no-elo0",
         "bad-elo0", "reversed", "nan", "alpha-0", "beta-1", "bad-model"],
)  # fmt: skip
def test_bad_input_exits_2_with_one_line_naming_the_flag(args: list[str], flag: str) -> None:
    done = arena_stats(*args)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"arena stats: {flag}"), done.stderr


def test_pairs_all_alike_get_an_honest_interval_and_too_few_get_none() -> None:
    """Five drawn pairs get an interval as wide as five pairs warrant (below 0.3 to above
    0.7), not the zero width their equal scores would give; four get no interval at all."""
    done = arena_stats("--pentanomial", "0,0,5,0,0", "--elo0", "0", "--elo1", "5", "--json")
    out = json.loads(done.stdout)
    low, high = out["score_interval"]
    assert low < 0.3 and high > 0.7 and out["min_pairs"] == 5
    few = arena_stats("--pentanomial", "0,0,0,0,4", "--elo0", "0", "--elo1", "5",
                      "--model", "logistic")  # fmt: skip
    assert few.returncode == 0, few.stderr
    assert "too few pairs for a 95% interval: 4, it needs 5" in few.stdout
    assert "95%" not in few.stdout.replace("95% interval", "")
    as_json = json.loads(arena_stats("--pentanomial", "0,0,0,0,4", "--elo0", "0", "--elo1", "5",
                                     "--model", "logistic", "--json").stdout)  # fmt: skip
    assert as_json["score_interval"] is None and as_json["elo"] is None
