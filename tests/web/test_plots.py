"""The rating-history plot: tick choice and the SVG's shape."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from arena.web.plots import PlotBox, RatingPoint, nice_ticks, rating_history_svg

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0.0, 10.0, [0, 2, 4, 6, 8, 10]),
        (-3.2, 47.9, [0, 20, 40]),
        (24.1, 25.9, [24.5, 25, 25.5]),
        (5.0, 5.0, [5.0]),
    ],
    ids=["unit-range", "trueskill-band", "narrow", "degenerate"],
)
def test_nice_ticks(low: float, high: float, expected: list[float]) -> None:
    assert nice_ticks(low, high) == pytest.approx(expected)


def parse(svg: str) -> ET.Element:
    # inline SVG carries no namespace; add it so ElementTree parses it as SVG
    return ET.fromstring(svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def points_of(element: ET.Element) -> list[tuple[float, float]]:
    pairs = element.get("points", "").split()
    return [(float(x), float(y)) for x, y in (p.split(",") for p in pairs)]


def test_band_spans_three_sigma_around_the_mean_line() -> None:
    history = [RatingPoint(25.0, 8.33), RatingPoint(27.0, 6.0), RatingPoint(29.5, 4.2)]
    box = PlotBox()
    root = parse(rating_history_svg(history, box))
    band = root.find(f"{SVG}polygon[@class='plot-band']")
    mean = root.find(f"{SVG}polyline[@class='plot-mean']")
    assert band is not None and mean is not None
    band_points = points_of(band)
    mean_points = points_of(mean)
    assert len(band_points) == 2 * len(history)
    assert len(mean_points) == len(history)
    for index, (x, y) in enumerate(mean_points):
        upper_y = band_points[index][1]
        lower_y = band_points[-1 - index][1]
        assert band_points[index][0] == x == band_points[-1 - index][0]
        assert upper_y < y < lower_y  # SVG y grows downwards
        # symmetric band: mean is the midpoint of mu - 3 sigma and mu + 3 sigma
        assert abs((upper_y + lower_y) / 2 - y) < 0.11
    assert mean_points[0][0] == box.left_px
    assert mean_points[-1][0] == box.width_px - box.right_px


def test_shrinking_sigma_narrows_the_band() -> None:
    history = [RatingPoint(25.0, 8.0), RatingPoint(25.0, 2.0)]
    root = parse(rating_history_svg(history))
    band = root.find(f"{SVG}polygon[@class='plot-band']")
    assert band is not None
    pts = points_of(band)
    first_height = pts[-1][1] - pts[0][1]
    last_height = pts[-2][1] - pts[1][1]
    assert last_height == pytest.approx(first_height / 4, rel=0.02)


def test_single_point_and_empty_history() -> None:
    one = parse(rating_history_svg([RatingPoint(20.0, 3.0)]))
    assert one.find(f"{SVG}polyline") is None
    assert len(one.findall(f"{SVG}circle")) == 1
    empty = rating_history_svg([])
    assert "no rated games yet" in empty


def test_labels_are_escaped() -> None:
    svg = rating_history_svg([RatingPoint(20.0, 3.0, label="<script>alert(1)</script>")])
    assert "<script>" not in svg
    assert re.search(r"&lt;script&gt;alert\(1\)&lt;/script&gt;: mu 20\.00", svg)


def test_long_histories_draw_the_line_without_a_dot_per_game() -> None:
    history = [RatingPoint(25.0 + i % 5, 8.0 / (1 + i / 100)) for i in range(1000)]
    root = parse(rating_history_svg(history))
    mean = root.find(f"{SVG}polyline[@class='plot-mean']")
    assert mean is not None and len(points_of(mean)) == 1000
    assert root.findall(f"{SVG}circle") == []


def test_llr_plot_draws_the_history_between_its_bounds() -> None:
    from arena.web.plots import llr_svg

    history = [0.3, 0.9, 1.7, 2.4, 3.1, 2.8]
    svg = llr_svg(history, -2.94, 2.94, decided_at=5)
    assert svg.count('class="plot-bound"') == 2 and "H1 2.94" in svg and "H0 -2.94" in svg
    line = svg.split('class="plot-mean plot-llr" points="')[1].split('"')[0]
    assert len(line.split()) == len(history)
    assert "after 5 pairs: LLR 3.100" in svg and 'class="plot-decided"' in svg
    assert "style=" not in svg and "<script" not in svg  # the page's CSP forbids both
    ys = [float(p.split(",")[1]) for p in line.split()]
    assert ys[4] < ys[0]  # a higher LLR is drawn higher (smaller y)
    assert "no pair played yet" in llr_svg([], -2.94, 2.94)
    undecided = llr_svg(history[:3], -2.94, 2.94)
    assert 'class="plot-decided"' not in undecided and "after 3 pairs" in undecided


def test_a_long_llr_history_is_thinned_but_keeps_its_ends() -> None:
    from arena.web.plots import MAX_LLR_POINTS, llr_svg

    history = [k / 1000 for k in range(5000)]
    svg = llr_svg(history, -2.94, 2.94)
    points = svg.split('points="')[1].split('"')[0].split()
    assert len(points) <= MAX_LLR_POINTS + 1
    assert points[-1].startswith(f"{960 - 12:.1f},")  # the last pair is drawn
