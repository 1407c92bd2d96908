"""The Monte Carlo reference bot: deal the unseen cards, play the round out, keep the best.

    python3 bot.py [--think 0.1] [--seed 1] [--playouts N] [--opponents infer|random|greedy]
                   [--rollout auto|random|greedy] [--objective auto|own|relative|close]
                   [--close-weight 1] [--even] [--flat] [--heads-only]
    python3 bot.py --bench 20      # playouts per second, then exit

For a ``"play"`` request every card in hand is a candidate. The search repeats, until
its time is up (or ``--playouts N`` times): deal the cards this seat has not seen to
the opponents (each gets as many as it holds), then for every candidate play this turn
with that card and the rest of the round with a cheap greedy policy for ourselves
(heads-up: our later cards in a random order; ``--rollout``), counting the heads every
seat takes. A playout costs our heads (heads-up: ours less the opponent's, the game
being zero-sum there; ``--objective``). Every candidate sees the same deals and the
same opponent plays (common random numbers), so their difference is measured far more
precisely than their means. The card with the least cost on average is played. A
``"row"`` request is searched the same way: take each row, place the rest of this
turn's cards (they are known), play the round out.

Opponents in the playouts are either random players (each plays its dealt cards in a
random order and takes a random row) or greedy ones (the same one-turn greedy policy as
ours, taking the cheapest row). Which one each opponent is gets inferred from what it
has done this game: the likelihood of each card it played and each row it chose under
both models (``Opponents``). Each deal draws every opponent's model from that belief.

The seat searches only the rest of the round: heads are counted per round, and a new
round is a fresh deal (with ``keep_rows`` the rows carry over, which is ignored).

Variants: standard, tactical, logical (whose hands are known from the draft),
professional (rows in table order, a card at either end: ``playout_pro``), keep_rows and
two cards a turn (every pair a candidate, searched in Python: ``playout_pairs``) are
searched. Shedding's cards are searched in Python too (``playout_shed``: taken rows go
into the taker's hand, up to ``SHED_HORIZON`` turns ahead, each opponent dealt the
cards it is known to have taken). Shedding's row choices and two cards a turn when
shedding or in the professional variant fall back to a one-turn heuristic like
``sample_bots/heuristic`` that understands their rules; the draft takes the card with
the fewest heads. Every answer is one of ``legal``.

The card search halves its field as it goes: after 40% and 70% of its time the worse
half of the candidates still in is dropped (at least two stay), so the close ones get
the deals the hopeless ones would have taken (``--flat``: every candidate to the end).

Near a game's end (``objective``) a card's or a row's playouts count the ranks the game
would end with too (``--heads-only``: not).

Time: ``--think`` seconds a move on average (default 0.1), spread over a round by how
much each turn has to choose: 1.8 times ``--think`` on the first of 10 turns, less on
each later one, nothing on the forced last (``--even``: ``--think`` on every turn); a
round takes what ``--think`` on each of its turns with a choice would. Never more than
a third of the game's ``move_ms``, checking the clock after each deal. The generator is seeded
from ``--seed``, the game number, the seat, the round, the turn and the request kind,
so with ``--playouts`` the same request always gets the same answer.
"""

from __future__ import annotations

import argparse
import ctypes
import math
import random
import sys
import time
from bisect import bisect_left, bisect_right
from functools import lru_cache
from pathlib import Path

from protocol.bot import Bot, run
from protocol.nimmt import DECK_SIZE, HAND_SIZE, HEADS, ROW_CAPACITY, ROWS, DraftStart, Pick, Place, Reveal, RoundStart

H = list(HEADS)
"""Heads per card, as a list (index 0 unused): the inner loop's table."""
FULL = ROW_CAPACITY
MOVE_FRACTION = 1 / 3
"""At most this share of ``move_ms`` is spent thinking."""
RANK_HEADS = 20
"""In a playout that ends the game, what each opponent ranked above us costs, in heads (``standing``)."""
ENDGAME_REACH = 30
"""Heads a seat might still take this round: within this of ``end_score``, the game may end."""
HEADS_A_ROUND = 7
"""About what a seat takes a round (and its spread): how far two scores may still move (``closeness``)."""
NEVER = 1 << 30
"""An end score no game reaches: ``objective``'s end when this round cannot end the game."""
HALVINGS = (0.4, 0.7)
"""The shares of a move's search after which the worse half of its candidates is dropped."""
LOW_PENALTY = 0.5
"""The greedy policy's extra cost for a card lower than every row end."""
SLIP = 0.1
"""In the greedy model of an opponent, the share of its moves that are random."""
MAX_EVIDENCE = 10.0
"""Bound on the log odds of an opponent being greedy (so new evidence still counts)."""


def top_card(settings: dict, players: int) -> int:
    """The highest card in play: 10 x players + 4 in the tactical and logical variants."""
    if settings.get("variant") in ("tactical", "logical"):
        return HAND_SIZE * players + ROWS
    return DECK_SIZE


def searchable(settings: dict) -> bool:
    """True for the settings the search plays: one card a turn, heads."""
    return settings.get("cards_per_turn", 1) == 1 and not settings.get("shedding", False)


# --- the greedy policy used inside playouts ---------------------------------------------


@lru_cache(maxsize=16)
def fill_costs(top: int, others: int) -> list[list[float]]:
    """``table[gap][n]``: the chance that, this turn, enough of ``others`` opponents'
    cards fall between a row's end and our card (``gap`` apart) to fill a row of ``n``
    cards before ours, each opponent's card taken as uniform on ``1..top``."""
    table = []
    for gap in range(DECK_SIZE + 1):
        p = min(1.0, gap / top)
        # P(at least k of `others` independent cards land in the gap), k = 0..others.
        binom = [0.0] * (others + 2)
        for k in range(others + 1):
            c = 1.0
            for j in range(k):
                c = c * (others - j) / (j + 1)
            binom[k] = c * p**k * (1 - p) ** (others - k)
        at_least = [sum(binom[k : others + 1]) for k in range(others + 2)]
        row = [0.0] * FULL
        for n in range(1, FULL):
            need = FULL - n
            row[n] = at_least[need] if need <= others else 0.0
        table.append(row)
    return table


def card_cost(ends: list[int], cnts: list[int], hds: list[int], c: int, fill: list[list[float]]) -> float:
    """The greedy policy's estimate of the heads card ``c`` risks now (``greedy_card``
    inlines it)."""
    i = bisect_left(ends, c)
    if i == 0:
        return min(hds) + LOW_PENALTY
    i -= 1
    n = cnts[i]
    if n == FULL:
        return hds[i] + 0.001 * c
    gap = c - ends[i]
    return fill[gap][n] * (hds[i] + FULL - n) + 0.0001 * gap


def greedy_card(ends: list[int], cnts: list[int], hds: list[int], hand: list[int], fill: list[list[float]]) -> int:
    """The card of ``hand`` (ascending) with the least ``card_cost`` on rows kept as
    sorted ends, counts and heads; the lowest card on a tie.

    Between two row ends the cost grows with the card, so only the lowest card of the
    hand in each gap needs weighing: at most five, whatever the hand."""
    best = hand[0]
    best_cost = min(hds) + LOW_PENALTY if best < ends[0] else 1e9
    size = len(hand)
    last = ROWS - 1
    for i in range(ROWS):
        end = ends[i]
        j = bisect_left(hand, end)
        if j == size:
            break
        c = hand[j]
        if i < last and c > ends[i + 1]:
            continue
        n = cnts[i]
        if n == FULL:
            cost = hds[i] + 0.001 * c
        else:
            gap = c - end
            cost = fill[gap][n] * (hds[i] + FULL - n) + 0.0001 * gap
        if cost < best_cost:
            best_cost = cost
            best = c
    return best


# --- playouts ----------------------------------------------------------------------------


def playout(
    ends: list[int],
    cnts: list[int],
    hds: list[int],
    first: int,
    hand: list[int],
    now: list[int],
    rplays: list[list[int]],
    ghands: list[list[int]],
    gflag: bytearray,
    fill: list[list[float]],
    rand: object,
    greedy: bool = True,
    heads: list[int] | None = None,
    owner: bytearray | None = None,
) -> int:
    """Our heads from the rest of the round, on rows kept as sorted ends with their
    counts and heads (changed in place, as are ``hand`` and ``ghands``).

    With ``first`` (a card; 0 for none) the playout starts with this turn: we play
    ``first`` and the opponents ``now``. Every later turn we play ``hand`` greedily (or
    at random), the random opponents play ``rplays[t]`` (their cards at turn t, counted
    from the playout's first turn) and each greedy opponent the greedy card of its hand
    in ``ghands``. A card lower than every row end takes the cheapest row if it is ours
    or a greedy opponent's (``gflag[card]``), a random row otherwise.

    With ``heads`` (one per seat, ours first) and ``owner`` (each opponent card's seat
    there), every seat's heads are added up in ``heads`` too (the endgame's objective).
    """
    taken = 0
    t = 0
    late = len(rplays)
    while True:
        if t == 0 and first:
            mine = first
            turn = now + [mine]
        else:
            if not hand:
                break
            if len(hand) == 1:
                mine = hand.pop()
            elif greedy:
                mine = greedy_card(ends, cnts, hds, hand, fill)
                hand.remove(mine)
            else:
                mine = hand.pop(int(rand() * len(hand)))
            turn = rplays[t] + [mine] if t < late else [mine]
            for other in ghands:
                if other:
                    card = greedy_card(ends, cnts, hds, other, fill) if len(other) > 1 else other[0]
                    other.remove(card)
                    turn.append(card)
        turn.sort()
        for x in turn:
            i = bisect_left(ends, x)
            if i == 0:
                if x == mine:
                    r = hds.index(min(hds))
                    taken += hds[r]
                elif gflag[x]:
                    r = hds.index(min(hds))
                else:
                    r = int(rand() * 4)
                if heads is not None:
                    heads[0 if x == mine else owner[x]] += hds[r]
                del ends[r]
                del cnts[r]
                del hds[r]
                ends.insert(0, x)
                cnts.insert(0, 1)
                hds.insert(0, H[x])
            else:
                i -= 1
                if cnts[i] == FULL:
                    if x == mine:
                        taken += hds[i]
                    if heads is not None:
                        heads[0 if x == mine else owner[x]] += hds[i]
                    cnts[i] = 1
                    hds[i] = H[x]
                else:
                    cnts[i] += 1
                    hds[i] += H[x]
                ends[i] = x
        t += 1
    return taken


def standing(base: list[int], heads: list[int], taken: int, end: int, weights: list[float] | None = None) -> float:
    """A playout's cost: our heads less each opponent's weighted by ``weights`` (each
    seat's heads this playout in ``heads``, ours first; the weights in the same order,
    ours left out) over the opponents' number, plus ``RANK_HEADS`` for each opponent
    finishing with fewer heads than ours (half for a tie) if some seat's total reaches
    ``end`` (the game is over). A game is won by having fewer heads than the others, so
    heads given to them count as heads avoided; near the end, who takes the heads
    matters as much as how many we take."""
    cost = float(taken)
    if weights:
        cost -= sum(w * h for w, h in zip(weights, heads[1:], strict=True)) / (len(heads) - 1)
    final = [b + h for b, h in zip(base, heads, strict=True)]
    if max(final) < end:
        return cost
    ours = final[0]
    above = sum(1 for f in final[1:] if f < ours) + 0.5 * sum(1 for f in final[1:] if f == ours)
    return cost + RANK_HEADS * above


def closeness(base: list[int], rounds_left: float) -> list[float]:
    """Each opponent's weight in a ``close`` objective: how likely its rank and ours may
    still swap, the normal density of the gap between its score and ours (``base``, ours
    first) spread by the rounds left, 1 at no gap. Heads given to a seat far ahead of us
    or far behind change no rank; to one beside us, a rank the rating counts."""
    spread = HEADS_A_ROUND * math.sqrt(2 * max(1.0, rounds_left))
    return [math.exp(-(((b - base[0]) / spread) ** 2) / 2) for b in base[1:]]


def place_known(ends: list[int], cnts: list[int], hds: list[int], cards: list[int]) -> None:
    """Place ``cards`` (ascending, none of ours, none lower than every row end)."""
    for x in cards:
        i = bisect_left(ends, x) - 1
        if cnts[i] == FULL:
            cnts[i] = 1
            hds[i] = H[x]
        else:
            cnts[i] += 1
            hds[i] += H[x]
        ends[i] = x


def sorted_rows(rows) -> tuple[list[int], list[int], list[int]]:
    """Rows as the playouts keep them: ends ascending, with each row's count and heads."""
    order = sorted(rows, key=lambda row: row[-1])
    return [row[-1] for row in order], [len(row) for row in order], [sum(H[c] for c in row) for row in order]


# --- the professional variant: a card at either end of a row ----------------------------
# Rows in table order, each with its first and last card, count and heads (a card placed
# at a left end leaves the order of the last cards, which the standard search keeps
# sorted, meaningless). The same playout and greedy policy otherwise.


def table_rows(rows) -> tuple[list[int], list[int], list[int], list[int]]:
    """Rows as the professional playouts keep them: first and last cards, counts, heads."""
    return [r[0] for r in rows], [r[-1] for r in rows], [len(r) for r in rows], [sum(H[c] for c in r) for r in rows]


def pro_spot(firsts: list[int], lasts: list[int], x: int) -> tuple[int, bool] | None:
    """Where the professional rule puts ``x``: (row, at its left end?), the closest end
    that can take it, an exact tie going to the right end; None when ``x`` lies inside
    every row (a row must be chosen)."""
    best = None
    for i in range(ROWS):
        if lasts[i] < x:
            key = (x - lasts[i], 0, i)
            if best is None or key < best:
                best = key
        if x < firsts[i]:
            key = (firsts[i] - x, 1, i)
            if best is None or key < best:
                best = key
    return None if best is None else (best[2], best[1] == 1)


def pro_cost(firsts, lasts, cnts, hds, c: int, fill) -> float:
    """``card_cost`` under the professional rule: the gap is to the end the card goes to."""
    spot = pro_spot(firsts, lasts, c)
    if spot is None:
        return min(hds) + LOW_PENALTY
    i, left = spot
    n = cnts[i]
    if n == FULL:
        return hds[i] + 0.001 * c
    gap = firsts[i] - c if left else c - lasts[i]
    return fill[gap][n] * (hds[i] + FULL - n) + 0.0001 * gap


def greedy_pro(firsts, lasts, cnts, hds, hand: list[int], fill) -> int:
    """The card of ``hand`` (ascending) with the least ``pro_cost``; the lowest on a tie.
    Every card is weighed: with left ends the cost is no longer monotone between ends."""
    best = hand[0]
    best_cost = pro_cost(firsts, lasts, cnts, hds, best, fill)
    for c in hand[1:]:
        cost = pro_cost(firsts, lasts, cnts, hds, c, fill)
        if cost < best_cost:
            best_cost = cost
            best = c
    return best


def playout_pro(
    firsts, lasts, cnts, hds, first, hand, now, rplays, ghands, gflag, fill, rand, greedy=True, heads=None, owner=None
) -> int:
    """``playout`` under the professional rule, on rows in table order (``table_rows``)."""
    taken = 0
    t = 0
    late = len(rplays)
    while True:
        if t == 0 and first:
            mine = first
            turn = now + [mine]
        else:
            if not hand:
                break
            if len(hand) == 1:
                mine = hand.pop()
            elif greedy:
                mine = greedy_pro(firsts, lasts, cnts, hds, hand, fill)
                hand.remove(mine)
            else:
                mine = hand.pop(int(rand() * len(hand)))
            turn = rplays[t] + [mine] if t < late else [mine]
            for other in ghands:
                if other:
                    card = greedy_pro(firsts, lasts, cnts, hds, other, fill) if len(other) > 1 else other[0]
                    other.remove(card)
                    turn.append(card)
        turn.sort()
        for x in turn:
            spot = pro_spot(firsts, lasts, x)
            if spot is None:
                r = hds.index(min(hds)) if x == mine or gflag[x] else int(rand() * 4)
                got = hds[r]
            else:
                r, left = spot
                if cnts[r] < FULL:
                    cnts[r] += 1
                    hds[r] += H[x]
                    if left:
                        firsts[r] = x
                    else:
                        lasts[r] = x
                    continue
                got = hds[r]
            if x == mine:
                taken += got
            if heads is not None:
                heads[0 if x == mine else owner[x]] += got
            firsts[r] = lasts[r] = x
            cnts[r] = 1
            hds[r] = H[x]
        t += 1
    return taken


def place_known_pro(firsts, lasts, cnts, hds, cards: list[int]) -> None:
    """``place_known`` under the professional rule (every card has an end to go to)."""
    for x in cards:
        r, left = pro_spot(firsts, lasts, x)
        if cnts[r] == FULL:
            firsts[r] = lasts[r] = x
            cnts[r] = 1
            hds[r] = H[x]
        else:
            cnts[r] += 1
            hds[r] += H[x]
            if left:
                firsts[r] = x
            else:
                lasts[r] = x


# --- two cards a turn (searched in Python only) ----------------------------------------


def greedy_pair(ends, cnts, hds, hand: list[int], fill) -> list[int]:
    """Two cards by the greedy policy: its card, then its card of the rest (on the same
    rows: both are placed in one turn), ascending."""
    a = greedy_card(ends, cnts, hds, hand, fill)
    b = greedy_card(ends, cnts, hds, [c for c in hand if c != a], fill)
    return [a, b] if a < b else [b, a]


def playout_pairs(
    ends, cnts, hds, first, hand, now, rplays, ghands, gflag, fill, rand, greedy=True, heads=None, owner=None
) -> int:
    """``playout`` with two cards a turn: ``first`` our pair this turn (empty: none),
    ``rplays[t]`` every random opponent's two cards of turn t, greedy players' pairs by
    ``greedy_pair``."""
    taken = 0
    t = 0
    late = len(rplays)
    while True:
        if t == 0 and first:
            mine = list(first)
            turn = now + mine
        else:
            if not hand:
                break
            if len(hand) <= 2:
                mine = hand[:]
                hand.clear()
            elif greedy:
                mine = greedy_pair(ends, cnts, hds, hand, fill)
                hand.remove(mine[0])
                hand.remove(mine[1])
            else:
                mine = [hand.pop(int(rand() * len(hand))) for _ in range(2)]
            turn = rplays[t] + mine if t < late else mine[:]
            for other in ghands:
                if other:
                    cards = greedy_pair(ends, cnts, hds, other, fill) if len(other) > 2 else other[:]
                    for card in cards:
                        other.remove(card)
                    turn += cards
        turn.sort()
        for x in turn:
            ours = x in mine
            i = bisect_left(ends, x)
            if i == 0:
                r = hds.index(min(hds)) if ours or gflag[x] else int(rand() * 4)
                got = hds[r]
                del ends[r]
                del cnts[r]
                del hds[r]
                ends.insert(0, x)
                cnts.insert(0, 1)
                hds.insert(0, H[x])
            else:
                i -= 1
                if cnts[i] < FULL:
                    cnts[i] += 1
                    hds[i] += H[x]
                    ends[i] = x
                    continue
                got = hds[i]
                cnts[i] = 1
                hds[i] = H[x]
                ends[i] = x
            if ours:
                taken += got
            if heads is not None:
                heads[0 if ours else owner[x]] += got
        t += 1
    return taken


# --- shedding: taken cards go into the hand, the first empty hand wins (Python only) -----

SHED_HORIZON = 12
"""Turns a shedding playout looks ahead, at most (the game may last hundreds)."""


def playout_shed(
    rows: list[list[int]], hands: list[list[int]], greedy: list[bool], first: int, fill, rand
) -> list[int]:
    """Shedding, from this turn: seat 0 (ours) plays ``first`` now (0: from its hand like
    the others), each seat its greedy card (cost: the cards a row would give it) or a
    random one; a row taken goes into the taker's hand (kept ascending). Until a hand is
    empty or ``SHED_HORIZON`` turns; the cards each seat holds then (rows, whose lists
    are sorted by their last card, and hands changed in place)."""
    for t in range(SHED_HORIZON):
        ends = [row[-1] for row in rows]
        cnts = [len(row) for row in rows]
        turn = []
        for seat, hand in enumerate(hands):
            if seat == 0 and t == 0 and first:
                card = first
            elif not hand:  # only a deal the rules cannot make: nobody can be out mid-game
                continue
            elif len(hand) == 1:
                card = hand.pop()
            elif greedy[seat]:
                card = greedy_card(ends, cnts, cnts, hand, fill)
                hand.remove(card)
            else:
                card = hand.pop(int(rand() * len(hand)))
            turn.append((card, seat))
        turn.sort()
        for x, seat in turn:
            i = bisect_left([row[-1] for row in rows], x)
            if i == 0:
                sizes = [len(row) for row in rows]
                r = sizes.index(min(sizes)) if greedy[seat] else int(rand() * 4)
                taken = rows.pop(r)
                rows.insert(0, [x])
            else:
                i -= 1
                if len(rows[i]) < FULL:
                    rows[i].append(x)
                    continue
                taken = rows[i]
                rows[i] = [x]
            hand = hands[seat]
            hand.extend(taken)
            hand.sort()
        if not all(hands):
            break
    return [len(hand) for hand in hands]


def shed_standing(left: list[int]) -> float:
    """A shedding playout's cost: our cards left less the opponents' mean, and once a
    hand is empty (the game over) ``RANK_HEADS`` for each opponent holding fewer than
    us (half for a tie)."""
    ours, others = left[0], left[1:]
    cost = ours - sum(others) / len(others)
    if min(left) == 0:
        cost += RANK_HEADS * (sum(1 for o in others if o < ours) + 0.5 * sum(1 for o in others if o == ours))
    return cost


# --- what the seat knows and believes -------------------------------------------------------


class Opponents:
    """What this game's events tell: the table, the cards seen this round, and for each
    opponent the log odds that it plays like the greedy policy rather than at random.

    A card ``c`` an opponent played, with ``h`` cards in hand and ``U`` the cards it
    could have held (unseen by us, or its known hand in the logical variant): a random
    player shows it with chance 1/|U|; a greedy one only if every other card of its
    hand costs more, chance (h/|U|) q^(h-1) where q is the share of ``U`` costing more
    than ``c``. The greedy model slips to a random move with chance ``SLIP``. A row
    choice is the cheapest row for a greedy player, any row for a random one.
    """

    def __init__(self, seat: int, players: int, settings: dict) -> None:
        self.seat = seat
        self.players = players
        self.top = top_card(settings, players)
        self.watch = searchable(settings)
        self.professional = settings.get("variant") == "professional"
        self.fill = fill_costs(self.top, players - 1)
        self.log_odds = [0.0] * players
        self.round = 0
        self.start_rows: set[int] = set()
        self.rows: list[list[int]] = []
        self.seen: set[int] = set()
        self.hand: list[int] = []
        self.known: dict[int, set[int]] = {}
        """Logical variant: each seat's cards, from the draft's picks."""
        self.holds: dict[int, set[int]] = {}
        """Each seat's cards taken from rows and not played since (in its hand when shedding)."""

    def greedy_chance(self, seat: int) -> float:
        return 1 / (1 + math.exp(-self.log_odds[seat]))

    def add(self, seat: int, likelihood_ratio: float) -> None:
        odds = self.log_odds[seat] + math.log(likelihood_ratio)
        self.log_odds[seat] = max(-MAX_EVIDENCE, min(MAX_EVIDENCE, odds))

    def event(self, event) -> None:
        if isinstance(event, RoundStart):
            self.round = event.round
            self.rows = [list(row) for row in event.rows]
            self.start_rows = {c for row in event.rows for c in row}
            self.hand = list(event.hand)
            self.seen = self.start_rows | set(event.hand)
            self.holds = {}
        elif isinstance(event, DraftStart):
            self.known = {s: set() for s in range(self.players)}
        elif isinstance(event, Pick):
            self.known.setdefault(event.seat, set()).add(event.card)
        elif isinstance(event, Reveal):
            if self.watch and self.rows and len(self.hand) > 1:
                self.turn_evidence(event.plays)
            for card, seat in event.plays:
                self.seen.add(card)
                if seat == self.seat and card in self.hand:
                    self.hand.remove(card)
                if seat in self.known:
                    self.known[seat].discard(card)
                if seat in self.holds:
                    self.holds[seat].discard(card)
        elif isinstance(event, Place):
            if not self.rows:
                return
            row = self.rows[event.row]
            if event.chosen and event.seat != self.seat and self.watch:
                costs = [sum(H[c] for c in r) for r in self.rows]
                cheapest = min(costs)
                ties = costs.count(cheapest)
                greedy = (1 - SLIP) / ties if costs[event.row] == cheapest else 0.0
                self.add(event.seat, (greedy + SLIP / ROWS) * ROWS)
            if event.taken and event.seat != self.seat:  # shedding: into the taker's hand
                self.holds.setdefault(event.seat, set()).update(event.taken)
            if event.taken or event.chosen:
                self.rows[event.row] = [event.card]
            elif event.end == "left":
                row.insert(0, event.card)
            else:
                row.append(event.card)

    def turn_evidence(self, plays) -> None:
        rows = table_rows(self.rows) if self.professional else sorted_rows(self.rows)
        fill = self.fill
        price = pro_cost if self.professional else card_cost
        h = len(self.hand)
        unseen = [c for c in range(1, self.top + 1) if c not in self.seen]
        shared = sorted(price(*rows, c, fill) for c in unseen)
        for card, seat in plays:
            if seat == self.seat:
                continue
            if self.known.get(seat):
                costs = sorted(price(*rows, c, fill) for c in self.known[seat])
                hold = len(costs)
            else:
                costs = shared
                hold = h
            if hold < 2 or len(costs) < 2:
                continue
            cost = price(*rows, card, fill)
            above = len(costs) - bisect_right(costs, cost)
            ties = bisect_right(costs, cost) - bisect_left(costs, cost) - 1
            q = (above + 0.5 * ties) / (len(costs) - 1)
            self.add(seat, (1 - SLIP) * hold * q ** (hold - 1) + SLIP)


class Deals:
    """Random deals of the hidden cards, one per call, and each opponent's model."""

    def __init__(
        self,
        rng: random.Random,
        unseen: list[int],
        sizes: list[int],
        known: list[list[int]] | None,
        greedy: list[float],
        top: int,
        held: list[list[int]] | None = None,
    ) -> None:
        self.rng = rng
        self.held = held
        """Shedding: the cards each opponent is known to hold (taken from rows), dealt to it
        beside its share of ``unseen``."""
        self.unseen = unseen
        self.sizes = sizes
        self.known = known
        """Logical variant: the opponents' hands are public (the draft)."""
        self.greedy = greedy
        """For each opponent, the chance that it plays greedily."""
        self.top = top
        self.owner = bytearray(top + 1)
        """Each card's opponent in the last deal."""

    def deal(
        self, turns: int, owners: bool = False, per: int = 1
    ) -> tuple[list[list[int]], list[list[int]], bytearray]:
        """A deal: the random opponents' cards by turn (``rplays[t]``), the greedy
        opponents' hands, and the flags of the greedy opponents' cards. With ``owners``,
        ``owner`` then holds each dealt card's opponent (1 for the first, in seat order
        after ours). ``per``: cards a turn."""
        rng = self.rng
        hands = self.draw()
        if owners:
            owner = self.owner
            for n, hand in enumerate(hands, 1):
                for c in hand:
                    owner[c] = n
        sequences = []
        ghands = []
        gflag = bytearray(self.top + 1)
        for hand, chance in zip(hands, self.greedy, strict=True):
            if chance and rng.random() < chance:
                hand.sort()
                ghands.append(hand)
                for c in hand:
                    gflag[c] = 1
            else:
                sequences.append(hand)
        if per == 1:
            rplays = [[hand[t] for hand in sequences if t < len(hand)] for t in range(turns)]
        else:  # two cards a turn: each random opponent's next two
            rplays = [[c for hand in sequences for c in hand[per * t : per * t + per]] for t in range(turns)]
        return rplays, ghands, gflag

    def draw(self) -> list[list[int]]:
        """Every opponent's hand, in a random order: the known hands (logical) shuffled,
        or ``unseen`` shuffled and cut by ``sizes``."""
        shuffle = self.rng.shuffle
        if self.known is not None:
            hands = []
            for hand in self.known:
                hand = hand[:]
                shuffle(hand)
                hands.append(hand)
            return hands
        cards = self.unseen[:]
        shuffle(cards)
        hands = []
        start = 0
        for size in self.sizes:
            hands.append(cards[start : start + size])
            start += size
        return hands

    def hands(self) -> tuple[list[list[int]], list[bool]]:
        """Shedding's deal: every opponent's whole hand, ascending (its share of the
        unseen cards and the cards it is known to hold), and whether it plays greedily."""
        hands = self.draw()
        if self.held is not None:
            hands = [sorted(hand + held) for hand, held in zip(hands, self.held, strict=True)]
        rng = self.rng
        return hands, [bool(chance and rng.random() < chance) for chance in self.greedy]


# --- the search in C ------------------------------------------------------------------------

LIBRARY = Path(__file__).with_name("libsearch.so")
"""search.c, built by ``make`` (bot.toml's ``build``)."""


def ints(values) -> ctypes.Array:
    values = list(values)
    return (ctypes.c_int * max(1, len(values)))(*values)


def doubles(values) -> ctypes.Array:
    values = list(values)
    return (ctypes.c_double * max(1, len(values)))(*values)


HEADS_OF = ints(H)


class Native:
    """The deals, playouts and halving of ``search_play`` and ``search_row`` in C
    (search.c): the same answers from the same generator, some 50 times the deals.
    ``tick`` > 0 (tests): its clock moves on ``tick`` seconds a reading."""

    def __init__(self, library: Path = LIBRARY) -> None:
        lib = ctypes.CDLL(str(library))
        n, x, p, u64 = ctypes.c_int, ctypes.c_double, ctypes.c_void_p, ctypes.c_uint64
        lib.mc_search_play.restype = lib.mc_search_row.restype = n
        lib.mc_search_play.argtypes = [
            p,
            p,
            p,
            p,
            p,
            n,
            n,
            p,
            n,
            p,
            p,
            p,
            p,
            p,
            n,
            p,
            n,
            x,
            p,
            n,
            x,
            x,
            x,
            p,
            n,
            u64,
            p,
            p,
        ]
        lib.mc_search_row.argtypes = [p, p, p, p, p, n, p, n, n, p, n, p, p, p, p, p, n, p, n, x, p, n, x, x, x, u64, p]
        self.lib = lib
        self.tick = 0.0
        self.fills: dict[tuple[int, int], ctypes.Array] = {}

    def fill(self, top: int, others: int) -> ctypes.Array:
        key = (top, others)
        if key not in self.fills:
            self.fills[key] = doubles(x for row in fill_costs(top, others) for x in row)
        return self.fills[key]

    @staticmethod
    def dealer(deals: Deals) -> tuple:
        """``deals`` as search.c takes them: opponents, pool, its size, sizes, known hands."""
        if deals.known is not None:
            known = [c for hand in deals.known for c in hand]
            return len(deals.known), ints([]), 0, ints(len(h) for h in deals.known), ints(known)
        return len(deals.sizes), ints(deals.unseen), len(deals.unseen), ints(deals.sizes), None

    def search(self, deals, fill, greedy, ending, deals_wanted, budget, spent) -> tuple:
        """The arguments both entry points take, in their order: the deals, the tables,
        the rollout, the objective (``ending``: see ``MonteCarloBot.objective``), when to stop."""
        base, end, weights = ending if ending else (None, 0, None)
        return (
            *self.dealer(deals),
            doubles(deals.greedy),
            HEADS_OF,
            fill,
            greedy,
            ints(base) if base else None,
            end,
            float(RANK_HEADS),
            doubles(weights) if weights else None,
            deals_wanted,
            budget,
            spent,
            self.tick,
        )

    def play(self, rows, cards, deals, fill, greedy, ending, deals_wanted, budget, spent, cuts, seed):
        """``search_play``'s loop: each candidate's total, which were kept, the deals.
        ``rows``: ``sorted_rows`` (standard), or ``table_rows`` (professional)."""
        firsts, (ends, cnts, hds) = (rows[0], rows[1:]) if len(rows) == 4 else (None, rows)
        n = len(cards)
        totals = doubles([0.0] * n)
        kept = ints([0] * n)
        search = self.search(deals, fill, greedy, ending, deals_wanted, budget, spent)
        done = self.lib.mc_search_play(
            ints(ends),
            ints(cnts),
            ints(hds),
            ints(firsts) if firsts else None,
            ints(cards),
            n,
            *search,
            doubles(cuts),
            len(cuts),
            seed,
            totals,
            kept,
        )
        if done < 0:
            raise ValueError("search.c refused the position")
        return list(totals[:n]), [k for k in range(n) if kept[k]], done

    def row(self, starts, hand, deals, fill, greedy, ending, deals_wanted, budget, spent, seed):
        """``search_row``'s loop: each start's total (its row's heads included), and the deals."""
        n = len(starts)
        parts = len(starts[0]) - 1  # 3 (sorted_rows) or 4 (table_rows: firsts first)
        flat = [ints(x for _, *rows in starts for x in rows[part]) for part in range(parts)]
        firsts, (ends, cnts, hds) = (flat[0], flat[1:]) if parts == 4 else (None, flat)
        costs = ints(cost for cost, *_ in starts)
        totals = doubles([0.0] * n)
        search = self.search(deals, fill, greedy, ending, deals_wanted, budget, spent)
        done = self.lib.mc_search_row(
            ends,
            cnts,
            hds,
            firsts,
            costs,
            n,
            ints(hand),
            len(hand),
            *search,
            seed,
            totals,
        )
        if done < 0:
            raise ValueError("search.c refused the position")
        return list(totals[:n]), done


def load_native() -> Native | None:
    """The C search if it has been built, else None (the search stays in Python)."""
    try:
        return Native()
    except OSError:
        return None


# --- the bot -----------------------------------------------------------------------------


class MonteCarloBot(Bot):
    name = "montecarlo"
    version = "1.4.0"

    def __init__(
        self,
        think: float = 0.1,
        seed: int = 1,
        playouts: int = 0,
        rollout: str = "auto",
        opponents: str = "infer",
        spread: bool = True,
        halve: bool = True,
        ranked: bool = True,
        native: Native | None = None,
        objective: str = "auto",
        close_weight: float = 1.0,
    ) -> None:
        self.native = native
        """The search in C, or None: in Python (``--engine``)."""
        self.think = think
        self.spread = spread
        """Spread ``think`` over a round's turns by how much each has to choose (``budget``)."""
        self.halve = halve
        """Drop the worse candidates as the search goes (``search_play``)."""
        self.ranked = ranked
        """Near the end of a game, count the ranks it ends with, not only heads (``objective``)."""
        self.objective_name = objective
        """``"own"``: a playout costs our heads; ``"relative"``: ours less the opponents'
        mean; ``"close"``: less each opponent's weighted by how close its score is to
        ours (``closeness``); ``"auto"``: relative heads-up, our own at larger tables."""
        self.close_weight = close_weight
        """``"close"``: the weight of an opponent's heads at no gap between our scores."""
        self.seed = seed
        self.playouts = playouts
        self.rollout = rollout
        """Our own policy in playouts: ``"greedy"``, ``"random"`` or ``"auto"`` (random
        heads-up, greedy at larger tables: ``greedy_rollout``)."""
        self.opponents = opponents
        """How playouts model the opponents: ``"infer"`` (from their play), ``"random"``
        or ``"greedy"``."""
        self.move_ms = 1000
        self.game_no = 0
        self.settings: dict = {}
        self.table: Opponents | None = None
        self.failed = False
        self.forgiving = True
        """False (in tests): a failing search or event raises instead of being logged."""
        self.clock = 0.0
        """The search's last reading of the clock."""
        self.last_playouts = 0
        """Deals searched for the last answer (for tests and benchmarks)."""
        self.last_kept = 0
        """Candidates the last card search kept to its end (successive halving)."""
        self.last_totals: list[float] = []
        """Each candidate's total over the last search's deals (for tests)."""

    # --- hooks ---

    def hello(self, hello):
        self.move_ms = hello.limits.move_ms
        return super().hello(hello)

    def new_game(self, message):
        self.game_no = message.game_no
        self.settings = message.settings
        self.failed = False
        self.table = Opponents(message.seat, message.players, message.settings)

    def events(self, events):
        if self.table is None or self.failed:
            return
        try:
            for event in events:
                self.table.event(event)
        except Exception as exc:  # a bug here must not cost the game: stop listening
            if not self.forgiving:
                raise
            print(f"montecarlo: events failed ({exc!r}); opponents taken as random", file=sys.stderr)
            self.failed = True
            self.table = None

    def decide(self, kind, view, legal):
        started = time.perf_counter()
        budget = min(self.budget(kind, view), MOVE_FRACTION * self.move_ms / 1000)
        deadline = started + budget
        rng = random.Random(f"{self.seed}/{self.game_no}/{view.seat}/{view.round}/{view.turn}/{kind}/{view.card}")
        self.last_playouts = 0
        if len(legal) == 1:
            return legal[0]
        if kind == "draft":
            return min(legal, key=lambda card: (H[card], card))
        if view.shedding and view.cards_per_turn == 1 and view.variant != "professional" and kind == "play":
            return self.search_shed(view, legal, rng, deadline)
        if view.shedding or (view.cards_per_turn != 1 and view.variant == "professional"):
            return fallback(kind, view, legal)
        try:
            if kind == "play":
                return self.search_play(view, legal, rng, started, deadline)
            if kind == "row":
                return self.search_row(view, legal, rng, started, deadline)
        except Exception as exc:  # never lose a move to a bug: log it, answer the heuristic's way
            if not self.forgiving:
                raise
            print(f"montecarlo: search failed ({exc!r}), falling back", file=sys.stderr)
        return fallback(kind, view, legal)

    def budget(self, kind, view) -> float:
        """Seconds for this answer: ``think`` on average over a round's choices, spread
        by how much there is to choose (unless ``--even``).

        A turn with ``h`` turns left of a round of ``n`` gets ``2 (h - 1) / n`` times
        ``think``: 1.8 times on the first turn of 10, nothing on the last, where the
        card is forced, so a round's turns together take ``(n - 1) * think``, as
        ``think`` on each turn with a choice would. A row choice takes ``think``.
        """
        if not self.spread or kind != "play":
            return self.think
        per = view.cards_per_turn
        left = -(-len(view.hand) // per)
        return self.think * 2 * (left - 1) / (left + len(view.revealed))

    # --- searches ---

    def deals(self, view, rng: random.Random) -> Deals:
        """The hidden cards, who holds how many of them, and how each plays."""
        seat = view.seat
        others = [s for s in range(view.players) if s != seat]
        table = self.table
        if self.opponents == "random":
            greedy = [0.0] * len(others)
        elif self.opponents == "greedy":
            greedy = [1.0] * len(others)
        elif table is not None and table.players == view.players:
            greedy = [table.greedy_chance(s) for s in others]
        else:
            greedy = [0.5] * len(others)
        if view.picks:  # logical: the draft is public, so every hand is known
            played: dict[int, set[int]] = {s: set() for s in range(view.players)}
            for turn in view.revealed:
                for card, s in turn:
                    played[s].add(card)
            known = [[c for c, p in view.picks if p == s and c not in played[s]] for s in others]
            return Deals(rng, [], [], known, greedy, view.top_card)
        seen = set(view.hand)
        for row in view.rows:
            seen.update(row)
        for turn in view.revealed:
            seen.update(card for card, _ in turn)
        if table is not None and table.round == view.round:
            seen |= table.start_rows
        unseen = [c for c in range(1, view.top_card + 1) if c not in seen]
        if view.hand_sizes:
            sizes = [view.hand_sizes[s] for s in others]
        else:
            sizes = [len(view.hand)] * len(others)
        held = None
        if view.shedding and table is not None and table.round == view.round:
            held = [sorted(table.holds.get(s, ())) for s in others]
            sizes = [max(0, size - len(cards)) for size, cards in zip(sizes, held, strict=True)]
        if sum(sizes) > len(unseen):  # cannot happen by the rules; keep the deal possible
            sizes = [len(unseen) // len(others)] * len(others)
        return Deals(rng, unseen, sizes, None, greedy, view.top_card, held)

    def spend(self, deadline: float, done: int) -> bool:
        """True while the search may deal again."""
        if self.playouts:
            return done < self.playouts
        if done == 0:
            return True
        self.clock = time.perf_counter()
        return self.clock < deadline

    def progress(self, started: float, deadline: float, done: int) -> float:
        """The share of this answer's search spent by the last deal (its clock read
        by ``spend``, one reading a deal)."""
        if self.playouts:
            return done / self.playouts
        return (self.clock - started) / max(1e-9, deadline - started)

    def search_play(self, view, legal, rng, started, deadline):
        """The candidate with the fewest heads over the deals, by successive halving:
        at ``HALVINGS`` of the search the worse half of the candidates still in is
        dropped (at least 2 stay), so the close ones get the deals the hopeless ones
        would have taken."""
        deals = self.deals(view, rng)
        fill = fill_costs(view.top_card, view.players - 1)
        professional = view.variant == "professional"
        per = view.cards_per_turn
        rows0 = table_rows(view.rows) if professional else sorted_rows(view.rows)
        pick, play_out = (greedy_pro, playout_pro) if professional else (greedy_card, playout)
        if per == 2:
            pick, play_out = greedy_pair, playout_pairs
        turns = -(-len(view.hand) // per)
        cards = sorted(tuple(pair) for pair in legal) if per == 2 else sorted(legal)
        greedy = self.greedy_rollout(view)
        ending = self.objective(view)
        cuts = list(HALVINGS) if self.halve else []
        if self.native is not None and per == 1 and cards == sorted(view.hand):
            spent = time.perf_counter() - started
            totals, active, done = self.native.play(
                rows0,
                cards,
                deals,
                self.native.fill(view.top_card, view.players - 1),
                greedy,
                ending,
                self.playouts,
                deadline - started,
                spent,
                cuts,
                rng.getrandbits(64),
            )
            return self.chosen(cards, totals, active, done)
        hand = sorted(view.hand)
        rests = [[c for c in hand if c not in (card if per == 2 else (card,))] for card in cards]
        totals = [0.0] * len(cards)
        rand = rng.random
        done = 0
        active = list(range(len(cards)))
        base, end, weights = ending if ending else ([], 0, None)
        owner = deals.owner
        self.clock = started
        while self.spend(deadline, done):
            rplays, ghands, gflag = deals.deal(turns, owners=bool(base), per=per)
            now = rplays[0][:] if rplays else []
            for other in ghands:  # this turn's greedy cards do not depend on ours
                if other:
                    chosen = pick(*rows0, other, fill)
                    for card in chosen if per == 2 else (chosen,):
                        other.remove(card)
                        now.append(card)
            for k in active:
                heads = [0] * view.players if base else None
                taken = play_out(
                    *[part[:] for part in rows0],
                    cards[k],
                    rests[k][:],
                    now,
                    rplays,
                    [other[:] for other in ghands],
                    gflag,
                    fill,
                    rand,
                    greedy,
                    heads,
                    owner,
                )
                totals[k] += standing(base, heads, taken, end, weights) if heads else taken
            done += 1
            if cuts and self.progress(started, deadline, done) >= cuts[0]:
                cuts.pop(0)
                if len(active) > 2:
                    active.sort(key=lambda k: (totals[k], k))
                    active = sorted(active[: max(2, (len(active) + 1) // 2)])
        return self.chosen(cards, totals, active, done)

    def chosen(self, cards: list[int], totals: list[float], active: list[int], done: int) -> int:
        """The candidate still in with the least total (the lowest card on a tie)."""
        self.last_playouts = done
        self.last_kept = len(active)
        self.last_totals = totals
        best = min(active, key=lambda k: (totals[k], k))
        return list(cards[best]) if isinstance(cards[best], tuple) else cards[best]

    def greedy_rollout(self, view) -> bool:
        """Whether we play the greedy policy in playouts (else a random order). Heads-up a
        plain random-rollout search beat the greedy rollouts (docs/performance.md); at
        larger tables the two were level and the greedy ones stay."""
        return self.rollout == "greedy" or (self.rollout == "auto" and view.players > 2)

    def objective(self, view) -> tuple[list[int], int, list[float]] | None:
        """What a playout costs (``standing``): every seat's heads so far (ours first,
        then the others in seat order), the total that ends the game if this round may
        (0: this round does, being the last of a fixed number; ``NEVER`` when it cannot)
        and the weight of each opponent's heads. None for our heads alone."""
        name = self.objective_name
        if name == "auto":
            name = "relative" if view.players == 2 else "own"
        order = [view.seat] + [s for s in range(view.players) if s != view.seat]
        base = [view.scores[s] + view.round_heads[s] for s in order]
        rounds = self.settings.get("rounds", 0)
        end_score = self.settings.get("end_score", 66)
        end = NEVER
        if self.ranked:
            if rounds:
                end = 0 if view.round >= rounds else NEVER
            else:
                end = end_score if max(base) + ENDGAME_REACH >= end_score else NEVER
        if name == "own":
            if end == NEVER:
                return None
            weights = [0.0] * (view.players - 1)
        elif name == "relative":
            weights = [1.0] * (view.players - 1)
        else:
            left = rounds - view.round + 1 if rounds else (end_score - max(base)) / HEADS_A_ROUND
            weights = [self.close_weight * w for w in closeness(base, left)]
        return base, end, weights

    def search_shed(self, view, legal, rng, deadline):
        """Shedding's card: every card in hand a candidate, each played out on the same
        deals (``playout_shed``); the least ``shed_standing`` on average."""
        deals = self.deals(view, rng)
        fill = fill_costs(view.top_card, view.players - 1)
        rows = sorted((list(row) for row in view.rows), key=lambda row: row[-1])
        cards = sorted(legal)
        hand = sorted(view.hand)
        totals = [0.0] * len(cards)
        ours = self.greedy_rollout(view)
        rand = rng.random
        done = 0
        while self.spend(deadline, done):
            others, greedy = deals.hands()
            for k, card in enumerate(cards):
                hands = [[c for c in hand if c != card], *(other[:] for other in others)]
                left = playout_shed([row[:] for row in rows], hands, [ours, *greedy], card, fill, rand)
                totals[k] += shed_standing(left)
            done += 1
        return self.chosen(cards, totals, list(range(len(cards))), done)

    def search_row(self, view, legal, rng, started, deadline):
        card = view.card
        current = view.revealed[-1]
        at = [c for c, _ in current].index(card)
        rest = sorted(c for c, _ in current[at + 1 :])
        deals = self.deals(view, rng)
        fill = fill_costs(view.top_card, view.players - 1)
        per = view.cards_per_turn
        turns = -(-len(view.hand) // per)
        professional = view.variant == "professional"
        layout, place, play_out = (
            (table_rows, place_known_pro, playout_pro) if professional else (sorted_rows, place_known, playout)
        )
        if per == 2:
            play_out = playout_pairs
        starts = []
        for r in legal:
            rows = [list(row) for row in view.rows]
            cost = sum(H[c] for c in rows[r])
            rows[r] = [card]
            start = layout(rows)
            place(*start, rest)  # the rest of this turn: known, higher than ours
            starts.append((cost, *start))
        totals = [0.0] * len(starts)
        done = 0
        greedy = self.greedy_rollout(view)
        ending = self.objective(view)
        base, end, weights = ending if ending else ([], 0, None)
        if turns and self.native is not None and per == 1:
            totals, done = self.native.row(
                starts,
                sorted(view.hand),
                deals,
                self.native.fill(view.top_card, view.players - 1),
                greedy,
                ending,
                self.playouts,
                deadline - started,
                time.perf_counter() - started,
                rng.getrandbits(64),
            )
        elif turns:
            rand = rng.random
            while self.spend(deadline, done):
                rplays, ghands, gflag = deals.deal(turns, owners=bool(base), per=per)
                for k, (cost, *start) in enumerate(starts):
                    heads = [cost] + [0] * (view.players - 1) if base else None
                    taken = cost + play_out(
                        *[part[:] for part in start],
                        0,
                        sorted(view.hand),
                        [],
                        rplays,
                        [other[:] for other in ghands],
                        gflag,
                        fill,
                        rand,
                        greedy,
                        heads,
                        deals.owner,
                    )
                    totals[k] += standing(base, heads, taken, end, weights) if heads else taken
                done += 1
        if done:
            expected = [total / done for total in totals]
        else:  # nothing left to play: this row is the round's last word
            expected = [
                standing(base, [cost] + [0] * (view.players - 1), cost, end, weights) if base else cost
                for cost, *_ in starts
            ]
        self.last_playouts = done
        self.last_totals = totals
        best = min(range(len(legal)), key=lambda k: (expected[k], len(view.rows[legal[k]]), k))
        return legal[best]


# --- the fallback: one-turn risk, for the variants the search does not cover -----------


def fallback(kind, view, legal):
    """A heuristic answer for any request: pairs, shedding (and professional placement,
    should the search fail)."""
    shedding = view.shedding

    def cost_of(row) -> float:
        return len(row) if shedding else sum(H[c] for c in row)

    if kind == "row":
        return min(legal, key=lambda r: (cost_of(view.rows[r]), len(view.rows[r]), r))
    if kind == "draft":
        return min(legal, key=lambda card: (H[card], card))
    seen = set(view.hand)
    for row in view.rows:
        seen.update(row)
    for turn in view.revealed:
        seen.update(card for card, _ in turn)
    unseen = [c for c in range(1, view.top_card + 1) if c not in seen]
    others = view.players - 1
    professional = view.variant == "professional"

    def risk(card: int, rows) -> float:
        place = spot(rows, card, professional)
        if place is None:
            return min(cost_of(r) for r in rows) + 0.5
        i, left = place
        row = rows[i]
        if len(row) == FULL:
            return cost_of(row) + 0.01 * card
        lo, hi = (card, row[0]) if left else (row[-1], card)
        between = sum(1 for c in unseen if lo < c < hi)
        slots = FULL - len(row)
        p_each = min(1.0, between / max(1, len(unseen)) * 10 / max(1, 11 - len(row)))
        p_fill = min(1.0, (p_each * others / slots) ** slots)
        return p_fill * (cost_of(row) + 1) + 0.001 * (hi - lo)

    if isinstance(legal[0], list):  # two cards a turn: the lower one lands first

        def pair_risk(pair: list[int]) -> float:
            total = 0.0
            rows = [list(row) for row in view.rows]
            for card in pair:
                total += risk(card, rows)
                place = spot(rows, card, professional)
                if place is None:
                    i = min(range(len(rows)), key=lambda r: cost_of(rows[r]))
                    rows[i] = [card]
                else:
                    i, left = place
                    if len(rows[i]) == FULL:
                        rows[i] = [card]
                    elif left:
                        rows[i] = [card, *rows[i]]
                    else:
                        rows[i] = [*rows[i], card]
            return total

        return min(legal, key=pair_risk)
    return min(legal, key=lambda card: risk(card, view.rows))


def spot(rows, card: int, professional: bool) -> tuple[int, bool] | None:
    """Where ``card`` goes: (row, at the left end?), or None when a row must be chosen."""
    places = []
    for i, row in enumerate(rows):
        if row[-1] < card:
            places.append((card - row[-1], 0, i))
        if professional and card < row[0]:
            places.append((row[0] - card, 1, i))
    if not places:
        return None
    _, left, i = min(places)
    return i, bool(left)


def bench(positions: int, think: float, native: Native | None) -> None:
    """Print playouts per second on random first-turn positions of a 4-player standard
    game (a playout is the whole round, 10 turns), for each opponent model."""
    from protocol.nimmt import View

    players = 4
    for model in ("random", "greedy", "infer"):
        rng = random.Random(0)
        deals = playouts = 0
        seconds = 0.0
        for n in range(positions):
            cards = rng.sample(range(1, DECK_SIZE + 1), HAND_SIZE * players + ROWS)
            hand = tuple(sorted(cards[:HAND_SIZE]))
            rows = tuple((c,) for c in cards[-ROWS:])
            zeros = (0,) * players
            view = View(0, players, 1, 1, hand, rows, zeros, zeros, (), hand_sizes=(HAND_SIZE,) * players)
            bot = MonteCarloBot(think=think, seed=n, opponents=model, native=native)
            started = time.perf_counter()
            bot.decide("play", view, list(hand))
            seconds += time.perf_counter() - started
            deals += bot.last_playouts
            playouts += bot.last_playouts * len(hand)
        print(
            f"opponents {model:6}  {playouts / seconds:8.0f} playouts/s  {deals / positions:6.0f} deals"
            f" ({playouts / positions:.0f} playouts) per {1000 * seconds / positions:.0f} ms move"
            + ("  (infer: no evidence yet, half greedy)" if model == "infer" else "")
        )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--think", type=float, default=0.1, help="seconds to think per move (default 0.1)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the search (default 1)")
    parser.add_argument("--playouts", type=int, default=0, help="deals per move instead of a time limit")
    parser.add_argument(
        "--rollout",
        choices=("auto", "greedy", "random"),
        default="auto",
        help="our policy in playouts (default auto: random heads-up, greedy at larger tables)",
    )
    parser.add_argument(
        "--opponents",
        choices=("infer", "random", "greedy"),
        default="infer",
        help="the opponents' policy in playouts (default: inferred from their play)",
    )
    parser.add_argument(
        "--even",
        action="store_true",
        help="think the same time on every turn, not more on early turns (default: spread)",
    )
    parser.add_argument(
        "--heads-only", action="store_true", help="near the end, still count only heads (not the final ranks)"
    )
    parser.add_argument(
        "--objective",
        choices=("auto", "own", "relative", "close"),
        default="auto",
        help="a playout's cost: our heads, or ours less the opponents' mean, or less each opponent's weighted "
        "by how close its score is to ours (default auto: relative heads-up, own at larger tables)",
    )
    parser.add_argument(
        "--close-weight",
        type=float,
        default=1.0,
        help="--objective close: the weight of an opponent's heads when its score is ours (default 1)",
    )
    parser.add_argument("--flat", action="store_true", help="search every candidate to the end (no halving)")
    parser.add_argument(
        "--engine",
        choices=("auto", "c", "python"),
        default="auto",
        help="search in C (libsearch.so, made by `make`) or in Python (default: C if it is built)",
    )
    parser.add_argument("--bench", type=int, default=0, metavar="N", help="measure playouts/s on N positions, exit")
    return parser.parse_args(argv)


def engine(name: str) -> Native | None:
    """The search ``--engine`` names: C (``auto``: if built) or Python (None)."""
    if name == "python":
        return None
    native = load_native()
    if native is None and name == "c":
        sys.exit(f"montecarlo: --engine c: {LIBRARY} is not built (run `make` in {LIBRARY.parent})")
    return native


def bot_of(args: argparse.Namespace, native: Native | None) -> MonteCarloBot:
    """The bot the command line ``args`` (``parse_args``) describes, searching with ``native``."""
    return MonteCarloBot(
        args.think,
        args.seed,
        args.playouts,
        args.rollout,
        args.opponents,
        spread=not args.even,
        halve=not args.flat,
        ranked=not args.heads_only,
        native=native,
        objective=args.objective,
        close_weight=args.close_weight,
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    native = engine(args.engine)
    if args.bench:
        bench(args.bench, args.think, native)
        return
    run(bot_of(args, native))


if __name__ == "__main__":
    main()
