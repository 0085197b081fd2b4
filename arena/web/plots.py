"""Rating history drawn as inline SVG: the mean as a line, mu +/- 3 sigma as a band.

Pure: takes numbers, returns markup. No JavaScript, so the plot is there for
any browser and in screenshots.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from arena.store.models import CONSERVATIVE_SIGMAS, conservative_rating

MAX_DOTS = 200  # beyond this many updates the mean is drawn as a line only


@dataclass(frozen=True)
class RatingPoint:
    """One rating after an update: TrueSkill mean and standard deviation."""

    mu: float
    sigma: float
    label: str = ""  # shown as a tooltip (e.g. the tournament or the date)


@dataclass(frozen=True)
class PlotBox:
    width_px: int = 960
    height_px: int = 260
    left_px: int = 48
    right_px: int = 12
    top_px: int = 12
    bottom_px: int = 28

    @property
    def inner_width_px(self) -> int:
        return self.width_px - self.left_px - self.right_px

    @property
    def inner_height_px(self) -> int:
        return self.height_px - self.top_px - self.bottom_px


def nice_ticks(low: float, high: float, max_ticks: int = 6) -> list[float]:
    """Round tick values covering [low, high] (steps of 1, 2 or 5 times a power of ten)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else []
    raw_step = (high - low) / max(1, max_ticks - 1)
    magnitude = 10 ** math.floor(math.log10(raw_step))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw_step)
    first = math.ceil(low / step) * step
    ticks: list[float] = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def _fmt(value: float) -> str:
    return f"{value:.1f}"


def rating_history_svg(points: Sequence[RatingPoint], box: PlotBox = PlotBox()) -> str:
    """An SVG element plotting ``points`` in order; a short note when there are none."""
    if not points:
        return (
            f'<svg class="rating-plot" viewBox="0 0 {box.width_px} 60" role="img" '
            f'aria-label="no rating history"><text x="{box.width_px // 2}" y="34" '
            f'text-anchor="middle" class="plot-empty">no rated games yet</text></svg>'
        )
    lows = [conservative_rating(p.mu, p.sigma) for p in points]
    highs = [p.mu + CONSERVATIVE_SIGMAS * p.sigma for p in points]
    y_low, y_high = min(lows), max(highs)
    if y_high - y_low < 1e-6:
        y_low, y_high = y_low - 1, y_high + 1
    pad = (y_high - y_low) * 0.05
    y_low, y_high = y_low - pad, y_high + pad

    def x_at(index: int) -> float:
        if len(points) == 1:
            return box.left_px + box.inner_width_px / 2
        return box.left_px + box.inner_width_px * index / (len(points) - 1)

    def y_at(value: float) -> float:
        return box.top_px + box.inner_height_px * (y_high - value) / (y_high - y_low)

    upper = [f"{_fmt(x_at(i))},{_fmt(y_at(v))}" for i, v in enumerate(highs)]
    lower = [f"{_fmt(x_at(i))},{_fmt(y_at(v))}" for i, v in reversed(list(enumerate(lows)))]
    mean = [f"{_fmt(x_at(i))},{_fmt(y_at(p.mu))}" for i, p in enumerate(points)]
    parts = [
        f'<svg class="rating-plot" viewBox="0 0 {box.width_px} {box.height_px}" role="img" '
        f'aria-label="rating history: mean and mu plus or minus 3 sigma">',
    ]
    parts.extend(_axes(box, nice_ticks(y_low, y_high), y_at, len(points), x_at))
    parts.append(f'<polygon class="plot-band" points="{" ".join(upper + lower)}"/>')
    if len(points) > 1:
        parts.append(f'<polyline class="plot-mean" points="{" ".join(mean)}"/>')
    for index, point in enumerate(points if len(points) <= MAX_DOTS else ()):
        tip = escape(
            f"{point.label + ': ' if point.label else ''}"
            f"mu {point.mu:.2f}, sigma {point.sigma:.2f}"
        )
        parts.append(
            f'<circle class="plot-dot" cx="{_fmt(x_at(index))}" cy="{_fmt(y_at(point.mu))}" '
            f'r="3"><title>{tip}</title></circle>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _axes(
    box: PlotBox,
    y_ticks: Sequence[float],
    y_at: Callable[[float], float],
    count: int,
    x_at: Callable[[int], float],
) -> list[str]:
    """Axis lines, horizontal grid with labels, and the update numbers along x."""
    bottom = box.top_px + box.inner_height_px
    parts = [
        f'<line class="plot-axis" x1="{box.left_px}" y1="{box.top_px}" '
        f'x2="{box.left_px}" y2="{bottom}"/>',
        f'<line class="plot-axis" x1="{box.left_px}" y1="{bottom}" '
        f'x2="{box.width_px - box.right_px}" y2="{bottom}"/>',
    ]
    for tick in y_ticks:
        y = _fmt(y_at(tick))
        parts.append(
            f'<line class="plot-grid" x1="{box.left_px}" y1="{y}" '
            f'x2="{box.width_px - box.right_px}" y2="{y}"/>'
            f'<text class="plot-label" x="{box.left_px - 6}" y="{y}" text-anchor="end" '
            f'dominant-baseline="middle">{tick:g}</text>'
        )
    for index in sorted({0, count - 1, (count - 1) // 2}):
        parts.append(
            f'<text class="plot-label" x="{_fmt(x_at(index))}" y="{bottom + 18}" '
            f'text-anchor="middle">{index + 1}</text>'
        )
    return parts


MAX_LLR_POINTS = 1000  # a longer history is drawn from every k-th pair (the ends kept)


def llr_svg(
    history: Sequence[float],
    lower: float,
    upper: float,
    decided_at: int | None = None,
    box: PlotBox = PlotBox(height_px=220),
) -> str:
    """An SPRT test's LLR after each pair (``history[k]``: after pair k + 1) as a line
    between its two bounds, with the pair that decided marked; a note when empty."""
    if not history:
        return (
            f'<svg class="rating-plot llr-plot" viewBox="0 0 {box.width_px} 60" role="img" '
            f'aria-label="no pair played yet"><text x="{box.width_px // 2}" y="34" '
            f'text-anchor="middle" class="plot-empty">no pair played yet</text></svg>'
        )
    y_low = min(lower, *history) * 1.08
    y_high = max(upper, *history) * 1.08
    count = len(history)
    step = max(1, math.ceil(count / MAX_LLR_POINTS))
    shown = sorted({*range(0, count, step), count - 1})

    def x_at(index: int) -> float:
        if count == 1:
            return box.left_px + box.inner_width_px / 2
        return box.left_px + box.inner_width_px * index / (count - 1)

    def y_at(value: float) -> float:
        return box.top_px + box.inner_height_px * (y_high - value) / (y_high - y_low)

    right = box.width_px - box.right_px
    parts = [
        f'<svg class="rating-plot llr-plot" viewBox="0 0 {box.width_px} {box.height_px}" '
        f'role="img" aria-label="LLR after each pair, between the bounds '
        f'{lower:.2f} and {upper:.2f}">',
    ]
    parts.extend(_axes(box, nice_ticks(y_low, y_high), y_at, count, x_at))
    for value, name in ((upper, "H1"), (lower, "H0"), (0.0, "")):
        y = _fmt(y_at(value))
        css = "plot-bound" if name else "plot-zero"
        parts.append(f'<line class="{css}" x1="{box.left_px}" y1="{y}" x2="{right}" y2="{y}"/>')
        if name:
            parts.append(
                f'<text class="plot-label" x="{right - 4}" y="{y}" text-anchor="end" '
                f'dy="-4">{name} {value:.2f}</text>'
            )
    line = " ".join(f"{_fmt(x_at(i))},{_fmt(y_at(history[i]))}" for i in shown)
    if count > 1:
        parts.append(f'<polyline class="plot-mean plot-llr" points="{line}"/>')
    last = decided_at - 1 if decided_at is not None else count - 1
    tip = escape(f"after {last + 1} pairs: LLR {history[last]:.3f}")
    css = "plot-decided" if decided_at is not None else "plot-dot"
    parts.append(
        f'<circle class="{css}" cx="{_fmt(x_at(last))}" cy="{_fmt(y_at(history[last]))}" '
        f'r="4"><title>{tip}</title></circle>'
    )
    parts.append("</svg>")
    return "".join(parts)
