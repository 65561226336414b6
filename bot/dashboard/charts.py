"""Inline SVG line charts, drawn on the server: no script, no image file, no outside resource.

A chart is a list of series over the same points (one point per ingested report, oldest left);
each mark carries a `<title>` naming the PR and head sha it came from, which a browser shows on
hover. Text goes through `html.escape`, so a hostile repository or op name stays text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 560, 180
LEFT, RIGHT, TOP, BOTTOM = 52, 12, 12, 28
COLOURS = ("#0969da", "#bf3989", "#1a7f37", "#9a6700")


@dataclass(frozen=True)
class Point:
    """One mark: its value (None: not measured there), the x label and the hover text."""

    value: float | None
    label: str
    title: str


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[Point]


def _scale(values: list[float], reference: float | None,
           fixed: tuple[float, float] | None) -> tuple[float, float]:
    if fixed is not None:
        return fixed
    low = min([*values, *([reference] if reference is not None else [])])
    high = max([*values, *([reference] if reference is not None else [])])
    if high - low < 1e-9:
        low, high = low - 0.5, high + 0.5
    pad = (high - low) * 0.08
    return low - pad, high + pad


def line_chart(series: Sequence[Series], *, caption: str, unit: str = "",
               reference: float | None = None, fixed: tuple[float, float] | None = None,
               digits: int = 2) -> str:
    """An `<svg>` with one polyline and its marks per series, and a dashed line at `reference`;
    the y axis spans the values (with a margin) or `fixed`."""
    values = [p.value for s in series for p in s.points if p.value is not None]
    count = max((len(s.points) for s in series), default=0)
    if not values or count == 0:
        return ""
    low, high = _scale(values, reference, fixed)
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i: int) -> float:
        return LEFT + (inner_w * (i + 0.5) / count)

    def y(v: float) -> float:
        return TOP + inner_h * (1 - (v - low) / (high - low))

    out = [f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
           f'role="img" aria-label="{escape(caption)}" xmlns="http://www.w3.org/2000/svg">',
           f"<title>{escape(caption)}</title>",
           f'<rect x="{LEFT}" y="{TOP}" width="{inner_w}" height="{inner_h}" class="plot"/>']
    for v in (low, (low + high) / 2, high):
        out.append(f'<text x="{LEFT - 4}" y="{y(v) + 4:.1f}" class="tick" text-anchor="end">'
                   f"{v:.{digits}f}{escape(unit)}</text>")
    if reference is not None:
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(reference):.1f}" '
                   f'y2="{y(reference):.1f}" class="reference"/>')
    step = max(1, count // 8)
    labels = next(s.points for s in series if len(s.points) == count)
    for i in range(0, count, step):
        out.append(f'<text x="{x(i):.1f}" y="{HEIGHT - 8}" class="tick" text-anchor="middle">'
                   f"{escape(labels[i].label)}</text>")
    for n, s in enumerate(series):
        colour = COLOURS[n % len(COLOURS)]
        marks = [(x(i), y(p.value), p) for i, p in enumerate(s.points) if p.value is not None]
        if len(marks) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _ in marks)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for px, py, p in marks:
            out.append(f'<circle class="mark" cx="{px:.1f}" cy="{py:.1f}" r="4" fill="{colour}">'
                       f"<title>{escape(s.name)}: {escape(p.title)}</title></circle>")
    out.append("</svg>")
    return "".join(out)
