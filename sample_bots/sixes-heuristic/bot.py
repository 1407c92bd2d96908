"""The Sixes heuristic bot: open the way for its own cards, never for the others'.

A card in hand that can be played stays playable (nobody else holds it), so it is a
move kept in reserve. What a play changes is which cards it makes playable next: the
next rank outwards of its suit (both neighbours for a 6). Each card so opened is good
when it is ours (one more move for us later) and bad when it is not (one more move for
an opponent, who would otherwise have to pass and pay). A play that leads towards more
of our cards further along the suit is worth more, as the suit has to be opened for
them sooner or later; a blocking card (one that would open others' cards and leads
nowhere for us) is held back as long as there is anything else to play.
"""

from protocol.bot import Bot, run
from protocol.sixes import PASS, RANKS, SUITS, rank, suit

OWN_OPENED = 3.0
"""Worth of a card of ours that the play makes playable."""
OTHER_OPENED = -2.0
"""Worth of an opponent's card that the play makes playable."""
TOWARDS_OWN = 1.0
"""Worth of each card of ours further along the run the play extends."""
SPENDS_RESERVE = -0.5
"""Cost of a play that opens nothing (an ace or a king): a sure move used up."""


def outwards(card):
    """The ranks a played ``card`` makes reachable: both neighbours of a 6, else the next
    rank away from the 6, nothing past an ace or a king."""
    r = rank(card)
    i = RANKS.index(r)
    if r == 6:
        return [RANKS[i - 1], RANKS[i + 1]]
    step = 1 if r > 6 else -1
    return [RANKS[i + step]] if 0 <= i + step < len(RANKS) else []


def beyond(card, hand):
    """Our cards of ``card``'s suit further out than it (both ways for a 6)."""
    r = rank(card)
    s = suit(card)
    ours = [rank(c) for c in hand if suit(c) == s and c != card]
    if r == 6:
        return len(ours)
    return sum(1 for o in ours if (o > r if r > 6 else o < r))


def score(card, hand):
    s = suit(card)
    opened = [f"{r}{s}" for r in outwards(card)]
    if not opened:
        return SPENDS_RESERVE
    value = sum(OWN_OPENED if c in hand else OTHER_OPENED for c in opened)
    return value + TOWARDS_OWN * beyond(card, hand)


def choose(view, legal):
    """The legal answer with the best score; ties go to the suit we hold most of."""
    if legal == [PASS]:
        return PASS
    hand = list(view.hand)
    held = {s: sum(1 for c in hand if suit(c) == s) for s in SUITS}
    return max(legal, key=lambda card: (score(card, hand), held[suit(card)], -legal.index(card)))


class SixesHeuristicBot(Bot):
    name = "sixes-heuristic"
    version = "1.0.0"
    games = ("sixes",)

    def decide(self, kind, view, legal):
        return choose(view, legal)


if __name__ == "__main__":
    run(SixesHeuristicBot())
