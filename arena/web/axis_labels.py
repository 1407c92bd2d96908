"""Which points of a chart's axis get a label: as many as fit side by side without
touching, the newest always. Widths are estimated from the text (the SVG is drawn on
the server, which cannot measure it), generously, so an estimate errs towards fewer
labels rather than overlapping ones."""

from __future__ import annotations

EM_PER_CHAR = 0.68
"""The average advance of a character of a sans-serif label in em (DejaVu Sans, the
widest usual fallback, averages about 0.6 over lower case, digits and '-')."""
GAP_EM = 0.8
"""The least space between two labels, in em."""


def label_width(text: str, font_size: float) -> float:
    """The room a label needs on the axis: its estimated width and a gap."""
    return (len(text) * EM_PER_CHAR + GAP_EM) * font_size


def spread(centres: list[float], widths: list[float], low: float, high: float) -> list[tuple[int, float]]:
    """Labels to draw, as (index, x): from the last (the newest) back, each label centred on
    its point but kept within ``low``..``high``, drawn when it clears the label after it.
    ``widths`` include the gap, so two drawn labels are never closer than their widths."""
    placed: list[tuple[int, float]] = []
    limit = high
    for i in reversed(range(len(centres))):
        half = widths[i] / 2
        x = min(max(centres[i], low + half), high - half)
        if x + half <= limit + 1e-9 and x - half >= low - 1e-9:
            placed.append((i, round(x, 1)))
            limit = x - half
    return placed[::-1]
