"""Geometry of the inline SVG charts: numbers in, coordinates out (the templates draw)."""

from __future__ import annotations

import math
from typing import Any

BAR_WIDTH = 100.0
"""An error bar is drawn in a 0-100 wide box stretched to its cell."""


def bar_x(value: float, scale: list[float]) -> float:
    """Where ``value`` sits on a board's error-bar scale, 0 to 100."""
    low, high = scale
    if high <= low or math.isnan(value):
        return BAR_WIDTH / 2
    return round(min(max((value - low) / (high - low), 0.0), 1.0) * BAR_WIDTH, 2)


def nice_step(span: float, steps: int = 4) -> float:
    """A round step (1, 2 or 5 times a power of ten) cutting ``span`` into about ``steps``."""
    raw = max(span / steps, 1e-9)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return float(factor * power)
    return float(10 * power)


def rating_chart(points: list[dict[str, Any]], width: int = 640, height: int = 240) -> dict[str, Any]:
    """A bot's Elo after each tournament: a line through the points, a bar per interval."""
    left, right, top, bottom = 52, 16, 14, 58
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for p in points for v in (p["low"], p["elo"], p["high"]) if v is not None and not math.isnan(v)]
    low, high = (min(values), max(values)) if values else (1400.0, 1600.0)
    step = nice_step(max(high - low, 40.0))
    low, high = math.floor(low / step) * step, math.ceil(high / step) * step
    if high - low < step:
        high = low + step

    def y(value: float) -> float:
        return round(top + (high - value) / (high - low) * plot_h, 1)

    n = max(len(points), 1)
    drawn = []
    for i, p in enumerate(points):
        x = round(left + (i + 0.5) * plot_w / n, 1)
        label = p["tournament"]
        drawn.append(
            {
                **p,
                "x": x,
                "y": y(p["elo"]),
                "y_low": y(p["low"]),
                "y_high": y(p["high"]),
                "short": label if len(label) <= 14 else label[:13] + "…",
            }
        )
    ticks = []
    value = low
    while value <= high + 1e-9:
        ticks.append({"y": y(value), "label": f"{value:.0f}"})
        value += step
    return {
        "width": width,
        "height": height,
        "left": left,
        "right": width - right,
        "top": top,
        "bottom": top + plot_h,
        "points": drawn,
        "ticks": ticks,
        "line": " ".join(f"{p['x']},{p['y']}" for p in drawn),
    }
