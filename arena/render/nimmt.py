"""6 nimmt! in the terminal: live round summaries and the replay viewer's pictures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

from protocol.nimmt import HEADS, GameEnd, RoundEnd


def card(c: int) -> Text:
    """A card with its heads as a colour: the more heads, the hotter."""
    style = {1: "", 2: "cyan", 3: "yellow", 5: "bold red", 7: "bold magenta"}[HEADS[c]]
    return Text(f"{c:>3}", style=style)


def live(events: Sequence[Any], labels: Sequence[str]) -> list[Any]:
    """What ``arena play`` prints as a game goes: a line per finished round."""
    out: list[Any] = []
    for event in events:
        if isinstance(event, RoundEnd):
            parts = [f"{label.split()[0]} +{h:<2} = {t:<3}" for label, h, t in zip(labels, event.heads, event.scores, strict=True)]
            out.append(Text(f"round {event.round:>2}  " + "  ".join(parts)))
        elif isinstance(event, GameEnd):
            out.append(Text("game over", style="bold"))
    return out


def rows_table(rows: Sequence[Sequence[int]], title: str | None = None) -> Table:
    table = Table(title=title, show_header=False, box=None, pad_edge=False)
    table.add_column("row", style="dim")
    for _ in range(6):
        table.add_column(justify="right")
    table.add_column("heads", style="dim")
    for i, row in enumerate(rows):
        heads = sum(HEADS[c] for c in row)
        table.add_row(f"row {i}", *[card(c) for c in row], *[""] * (6 - len(row)), f"{heads} heads")
    return table
