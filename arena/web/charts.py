"""Geometry of the inline SVG charts: numbers in, coordinates out (the templates draw)."""

from __future__ import annotations

import math
from typing import Any

from arena.web.axis_labels import label_width, spread

BAR_WIDTH = 100.0
"""An error bar is drawn in a 0-100 wide box stretched to its cell."""


def bar_x(value: float, scale: list[float]) -> float:
    """Where ``value`` sits on a board's error-bar scale, 0 to 100."""
    low, high = scale
    if high <= low or math.isnan(value):
        return BAR_WIDTH / 2
    return round(min(max((value - low) / (high - low), 0.0), 1.0) * BAR_WIDTH, 2)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def rated_at(row: dict[str, Any]) -> float:
    """Where a row's rating is drawn and sorted: its Elo, or for a bot with only a bound
    (no Elo: the fit would grow with every game it swept) the bound."""
    bound = row.get("bound", "")
    value = row["low"] if bound == ">" else row["high"] if bound == "<" else row["elo"]
    return float(value) if value is not None else math.nan


def errorbar(row: dict[str, Any], scale: list[float]) -> dict[str, Any]:
    """How a row's interval is drawn: ``kind`` ``two`` (both ends), ``lower`` (won every
    comparison: from its bound on, open to the right), ``upper`` (lost every one: open
    to the left) or ``none`` (no interval: the point alone); ``xl``/``xh`` the ends of
    the line, ``xe`` the Elo, ``text`` as the CLI writes it, ``label`` in words, ``width``
    to sort by."""
    elo, low, high, bound = row["elo"], row["low"], row["high"], row.get("bound", "")
    point = rated_at(row)
    shown = f"{elo:.0f}" if _finite(elo) else "none"
    xe = bar_x(point, scale) if _finite(point) else BAR_WIDTH / 2
    if bound == ">" and _finite(low):
        return {
            "kind": "lower", "xl": bar_x(low, scale), "xh": BAR_WIDTH, "xe": xe, "text": f"> {low:.0f}",
            "label": f"at least {low:.0f} Elo: it won every comparison, so only a lower bound",
            "width": "Infinity",
        }  # fmt: skip
    if bound == "<" and _finite(high):
        return {
            "kind": "upper", "xl": 0.0, "xh": bar_x(high, scale), "xe": xe, "text": f"< {high:.0f}",
            "label": f"at most {high:.0f} Elo: it lost every comparison, so only an upper bound",
            "width": "Infinity",
        }  # fmt: skip
    if _finite(low) and _finite(high):
        return {
            "kind": "two", "xl": bar_x(low, scale), "xh": bar_x(high, scale), "xe": xe,
            "text": f"{low:.0f}–{high:.0f}", "label": f"Elo {shown}, 95% interval {low:.0f} to {high:.0f}",
            "width": str(round(high - low, 1)),
        }  # fmt: skip
    reason = f": {row['note']}" if row.get("note") else ""
    return {
        "kind": "none", "xl": xe, "xh": xe, "xe": xe, "text": "—",
        "label": f"Elo {shown}, no interval{reason}", "width": "",
    }  # fmt: skip


def board_parts(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A board's components, each drawn as a table of its own (one empty part for no rows)."""
    found: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        found.setdefault(int(row.get("component", 0)), []).append(row)
    return [found[c] for c in sorted(found)] or [[]]


def board_notes(rows: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Each note of a board once, with the bots it concerns (``every bot`` when all)."""
    by_note: dict[str, list[str]] = {}
    for row in rows:
        if row.get("note"):
            by_note.setdefault(row["note"], []).append(row["bot"])
    return [
        {"note": note, "bots": "every bot" if len(bots) == len(rows) > 1 else ", ".join(bots)}
        for note, bots in by_note.items()
    ]


def nice_step(span: float, steps: int = 4) -> float:
    """A round step (1, 2 or 5 times a power of ten) cutting ``span`` into about ``steps``."""
    raw = max(span / steps, 1e-9)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return float(factor * power)
    return float(10 * power)


LABEL_FONT = 12
"""The size of a rating chart's axis labels, in its units (about px on a desktop)."""
NARROW_LABEL_FONT = 20
"""Their size on a phone, where the chart is drawn at about half scale (site.css)."""


def _plot_area(width: int, height: int, left: int, right: int, top: int, bottom: int) -> dict[str, Any]:
    """A chart's size and the edges of its plot inside the margins, as its template reads them."""
    return {
        "width": width,
        "height": height,
        "left": left,
        "right": width - right,
        "top": top,
        "bottom": height - bottom,
    }


def rating_chart(points: list[dict[str, Any]], width: int = 640, height: int = 180) -> dict[str, Any]:
    """A bot's Elo after each tournament: a line through the points, a bar per interval, a
    label under as many points as fit (the newest always; every point has its tooltip),
    fewer and larger ones (``narrow``) for phones."""
    left, right, top, bottom = 52, 16, 14, 30
    plot_w, plot_h = width - left - right, height - top - bottom
    ends: list[Any] = [
        v
        for p in points
        for v in (
            p["elo"],
            math.nan if p.get("bound") == "<" else p["low"],
            math.nan if p.get("bound") == ">" else p["high"],
        )
    ]
    values = [float(v) for v in ends if _finite(v)]
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
        bar = errorbar(p, [low, high])
        # A bound is drawn to the edge of the plot (open); no interval, the point alone.
        y_elo = y(rated_at(p)) if _finite(rated_at(p)) else round(top + plot_h / 2, 1)
        y_low = {"two": None, "lower": None, "upper": top + plot_h, "none": y_elo}[bar["kind"]]
        y_high = {"two": None, "lower": top, "upper": None, "none": y_elo}[bar["kind"]]
        drawn.append(
            {
                **p,
                "x": x,
                "y": y_elo,
                "y_low": y(p["low"]) if y_low is None else y_low,
                "y_high": y(p["high"]) if y_high is None else y_high,
                "kind": bar["kind"],
                "text": bar["text"],
                "short": label if len(label) <= 14 else label[:13] + "…",
            }
        )
    ticks = []
    value = low
    while value <= high + 1e-9:
        ticks.append({"y": y(value), "label": f"{value:.0f}"})
        value += step
    return {
        **_plot_area(width, height, left, right, top, bottom),
        "points": drawn,
        "ticks": ticks,
        "line": " ".join(f"{p['x']},{p['y']}" for p in drawn),
        "labels": _axis_labels(drawn, LABEL_FONT, width),
        "narrow_labels": _axis_labels(drawn, NARROW_LABEL_FONT, width),
    }


def _axis_labels(drawn: list[dict[str, Any]], font: float, width: float) -> list[dict[str, Any]]:
    """The labels that fit under the points at ``font``, as ``x`` and ``text``."""
    widths = [label_width(p["short"], font) for p in drawn]
    return [{"x": x, "text": drawn[i]["short"]} for i, x in spread([p["x"] for p in drawn], widths, 0, width)]


def llr_chart(series: list[float], lower: float, upper: float, width: int = 640, height: int = 240) -> dict[str, Any]:
    """A sequential test's path: its LLR after each deal group (a point per group, joined
    by a line from 0 before the first) against the bounds where it stops (horizontal
    lines: H0 accepted at ``lower``, H1 at ``upper``)."""
    left, right, top, bottom = 52, 16, 14, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [lower, upper, 0.0, *series]
    step = nice_step(max(values) - min(values))
    low, high = math.floor(min(values) / step) * step, math.ceil(max(values) / step) * step
    n = max(len(series), 1)

    def x(groups: int) -> float:
        return round(left + groups / n * plot_w, 1)

    def y(value: float) -> float:
        return round(top + (high - value) / (high - low) * plot_h, 1)

    points = [{"group": i + 1, "llr": v, "x": x(i + 1), "y": y(v)} for i, v in enumerate(series)]
    x_step = max(1, int(nice_step(n, 5)))
    return {
        **_plot_area(width, height, left, right, top, bottom),
        "points": points,
        "radius": 3.5 if len(series) <= 60 else 1.5,
        "line": " ".join([f"{x(0)},{y(0.0)}", *(f"{p['x']},{p['y']}" for p in points)]),
        "lower": {"value": lower, "y": y(lower)},
        "upper": {"value": upper, "y": y(upper)},
        "zero": y(0.0),
        "ticks": [
            {"y": y(low + i * step), "label": f"{low + i * step:g}"} for i in range(round((high - low) / step) + 1)
        ],
        "x_ticks": [{"x": x(g), "label": str(g)} for g in range(0, n + 1, x_step)],
    }


def time_bins(bins: list[dict[str, Any]], width: int = 640, height: int = 150) -> dict[str, Any]:
    """A bot's moves per bin of time (``timing.summary``): a column per bin, its count
    above it, its name below."""
    left, right, top, bottom = 8, 8, 18, 36
    plot_w, plot_h = width - left - right, height - top - bottom
    most = max((b["moves"] for b in bins), default=0) or 1
    slot = plot_w / max(len(bins), 1)
    total = sum(b["moves"] for b in bins) or 1
    columns = []
    for i, b in enumerate(bins):
        tall = round(b["moves"] / most * plot_h, 1)
        columns.append(
            {
                **b,
                "index": i,
                "x": round(left + i * slot + slot * 0.15, 1),
                "w": round(slot * 0.7, 1),
                "y": round(top + plot_h - tall, 1),
                "h": tall,
                "mid": round(left + (i + 0.5) * slot, 1),
                "share": round(b["moves"] / total, 4),
            }
        )
    return {"width": width, "height": height, "bottom": top + plot_h, "columns": columns}


def time_series(seat: dict[str, Any], width: int = 640, height: int = 120) -> dict[str, Any]:
    """One seat's game (``timing.game_times``): a bar per move, its height the move's
    time as a share of the limit (clipped at the top of the plot), the limit as a line,
    and the bank left after each move as a line on its own scale (full at the top)."""
    left, right, top, bottom = 44, 60, 8, 18
    plot_w, plot_h = width - left - right, height - top - bottom
    move_ms, bank_ms, walls = seat["move_ms"], seat["bank_ms"], seat["wall_ms"]
    shares = [ms / move_ms for ms in walls]
    ceiling = max(1.25, min(max(shares, default=0) * 1.05, 3.0))
    base = top + plot_h

    def y(share: float) -> float:
        return round(base - min(share, ceiling) / ceiling * plot_h, 1)

    slot = plot_w / max(len(walls), 1)
    timeouts = set(seat["timeouts"])
    bars = [
        {
            "x": round(left + i * slot, 2),
            "w": round(max(slot * 0.8, 0.5), 2),
            "y": y(share),
            "h": round(base - y(share), 1),
            "ms": ms,
            "move": i + 1,
            "kind": "timeout" if i in timeouts else "over" if round(ms) > move_ms else "under",
        }
        for i, (ms, share) in enumerate(zip(walls, shares, strict=True))
    ]
    bank = ""
    if bank_ms > 0 and walls:
        points = [(left, top)] + [
            (round(left + (i + 1) * slot, 2), round(base - left_ms / bank_ms * plot_h, 1))
            for i, left_ms in enumerate(seat["bank_left_ms"])
        ]
        bank = " ".join(f"{px},{py}" for px, py in points)
    return {
        **_plot_area(width, height, left, right, top, bottom),
        "limit_y": y(1.0),
        "ceiling_ms": round(ceiling * move_ms),
        "bars": bars,
        "bank": bank,
    }
