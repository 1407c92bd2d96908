"""The heuristic bot: for each card, estimate the heads it risks taking, play the least.

A card lower than every row end costs the cheapest row. A card that lands as the sixth
card costs that row. Otherwise the risk grows with how many unseen cards could land on
the same row first (those between the row's end and our card) against the free slots.
Row choices take the row with the fewest heads.
"""

from protocol.bot import Bot, run
from protocol.nimmt import DECK_SIZE, HEADS, ROW_CAPACITY


def row_heads(row):
    return sum(HEADS[c] for c in row)


def cheapest_row(rows):
    return min(range(len(rows)), key=lambda i: (row_heads(rows[i]), len(rows[i]), i))


def risk(card, rows, unseen, others):
    """Expected heads from playing ``card`` now (a rough, fast estimate)."""
    below = [i for i, row in enumerate(rows) if row[-1] < card]
    if not below:
        return min(row_heads(r) for r in rows) + 0.5
    row = rows[max(below, key=lambda i: rows[i][-1])]
    if len(row) == ROW_CAPACITY:
        return row_heads(row) + 0.01 * card
    between = sum(1 for c in unseen if row[-1] < c < card)
    slots = ROW_CAPACITY - len(row)
    # Chance that enough other players hold and play cards in the gap before ours.
    p_each = min(1.0, between / max(1, len(unseen)) * 10 / max(1, 11 - len(row)))
    p_fill = min(1.0, (p_each * others / slots) ** slots) if slots else 1.0
    return p_fill * (row_heads(row) + 1) + 0.001 * (card - row[-1])


class HeuristicBot(Bot):
    name = "heuristic"
    version = "1.0.0"

    def decide(self, kind, view, legal):
        if kind == "row":
            return cheapest_row(view.rows)
        if kind == "draft":  # Logical: take the card that is safest to hold, a low-heads one
            return min(legal, key=lambda card: (HEADS[card], card))
        seen = set(view.hand)
        for row in view.rows:
            seen.update(row)
        for turn in view.revealed:
            seen.update(card for card, _ in turn)
        unseen = [c for c in range(1, DECK_SIZE + 1) if c not in seen]
        others = view.players - 1
        if legal and isinstance(legal[0], list):  # two cards a turn: the safest pair
            return min(legal, key=lambda pair: sum(risk(card, view.rows, unseen, others) for card in pair))
        return min(legal, key=lambda card: risk(card, view.rows, unseen, others))


if __name__ == "__main__":
    run(HeuristicBot())
