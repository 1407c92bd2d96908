"""The Sixes search bot: deal the hidden cards as they may lie, play the round out, keep the best.

    python3 bot.py [--think 0.1] [--seed 1] [--playouts N]

For a ``"play"`` request with more than one legal card, the search repeats until its
time is up (or ``--playouts N`` times): deal the cards it has not seen to the other
seats, as many as each holds and none a seat cannot hold (a seat that passed held no
card playable then, and cards never enter a hand during a round); then, for every
candidate on that same deal, play it and the rest of the round out with every seat
following the one-move policy of ``sample_bots/sixes-heuristic`` (open the way for its
own cards, not for others'), slipping to a random legal card one time in ``SLIP``.
A playout is worth the chips we end the round with: the pot if we empty our hand first,
less a chip for every pass. The card with the most chips on average is played; every
candidate sees the same deals (common random numbers).

The generator is seeded from ``--seed``, the game, the round and the turn, so with
``--playouts`` the same request always gets the same answer.
"""

from __future__ import annotations

import argparse
import random
import time

from protocol.bot import Bot, run
from protocol.sixes import DECK, PASS, RANKS, SUITS, Pass, Play, RoundStart

SIX = RANKS.index(6)
"""The rank index of a 6: a suit's run starts there."""
ID = {card: SUITS.index(card[-1]) * len(RANKS) + RANKS.index(int(card[:-1])) for card in DECK}
"""A card as a number: suit x 10 + rank index, so a suit's cards are consecutive."""
CARD = {n: card for card, n in ID.items()}
OWN_OPENED, OTHER_OPENED, TOWARDS_OWN, SPENDS_RESERVE = 3.0, -2.0, 1.0, -0.5
"""The one-move policy's weights, as sample_bots/sixes-heuristic has them."""
SLIP = 10
"""In playouts, one move in this many is a random legal card (the policy is a model, not a certainty)."""
MOVE_FRACTION = 1 / 3
"""At most this share of ``move_ms`` is spent thinking."""


def playable(card: int, lo: list[int], hi: list[int]) -> bool:
    """Whether ``card`` may be played on runs ``lo``/``hi`` (rank indexes per suit, -1: none yet)."""
    s, i = divmod(card, 10)
    if lo[s] < 0:
        return i == SIX
    return i == lo[s] - 1 or i == hi[s] + 1


def worth(card: int, hand: list[int]) -> float:
    """sample_bots/sixes-heuristic's score: the cards the play opens (ours good, others'
    bad) and ours further out along its run."""
    s, i = divmod(card, 10)
    if i == SIX:
        opened = (card - 1, card + 1)
    elif i > SIX:
        opened = (card + 1,) if i < 9 else ()
    else:
        opened = (card - 1,) if i > 0 else ()
    if not opened:
        return SPENDS_RESERVE
    value = sum(OWN_OPENED if c in hand else OTHER_OPENED for c in opened)
    base = s * 10
    if i == SIX:
        further = sum(1 for c in hand if base <= c < base + 10 and c != card)
    elif i > SIX:
        further = sum(1 for c in hand if card < c < base + 10)
    else:
        further = sum(1 for c in hand if base <= c < card)
    return value + TOWARDS_OWN * further


def policy(hand: list[int], moves: list[int]) -> int:
    """The heuristic's card of ``moves`` (ascending): best score, then the suit held most, then the lowest."""
    if len(moves) == 1:
        return moves[0]
    return max(moves, key=lambda c: (worth(c, hand), sum(1 for h in hand if h // 10 == c // 10), -c))


def place(card: int, lo: list[int], hi: list[int]) -> None:
    s, i = divmod(card, 10)
    if lo[s] < 0:
        lo[s] = hi[s] = i
    elif i < lo[s]:
        lo[s] = i
    else:
        hi[s] = i


def playout(
    hands: list[list[int]], lo: list[int], hi: list[int], seat: int, me: int, chips: list[int], pot: int, rand
) -> int:
    """Play the round out from ``seat``'s turn, every seat by ``policy`` with slips (all
    changed in place); the chips ``me`` ends the round with."""
    players = len(hands)
    while True:
        hand = hands[seat]
        moves = [c for c in hand if playable(c, lo, hi)]
        if moves:
            card = moves[int(rand() * len(moves))] if rand() * SLIP < 1 else policy(hand, moves)
            hand.remove(card)
            place(card, lo, hi)
            if not hand:
                return chips[me] + (pot if seat == me else 0)
        elif chips[seat] > 0:
            chips[seat] -= 1
            pot += 1
        seat = (seat + 1) % players


class Knowledge:
    """What the round's events tell: the runs on the table and, for each seat, the cards
    it cannot hold (every card that was playable when it passed)."""

    def __init__(self, players: int) -> None:
        self.players = players
        self.lo = [-1] * len(SUITS)
        self.hi = [-1] * len(SUITS)
        self.played: set[int] = set()
        self.lacks: list[set[int]] = [set() for _ in range(players)]

    def event(self, event) -> None:
        if isinstance(event, RoundStart):
            self.__init__(self.players)
        elif isinstance(event, Play):
            card = ID[event.card]
            self.played.add(card)
            place(card, self.lo, self.hi)
        elif isinstance(event, Pass):
            self.lacks[event.seat].update(c for c in range(40) if playable(c, self.lo, self.hi))


def deal(unseen: list[int], sizes: dict[int, int], lacks: list[set[int]], rng: random.Random) -> dict[int, list[int]]:
    """The unseen cards dealt to the seats of ``sizes``, as many each, none a seat lacks:
    the most constrained cards first, each to a seat that may hold it, chosen by the room
    it has left; after 20 failed tries the constraints are dropped (they came from a
    seat's passes, which a broken opponent could contradict)."""
    seats = list(sizes)
    for _ in range(20):
        cards = unseen[:]
        rng.shuffle(cards)
        cards.sort(key=lambda c: sum(1 for s in seats if c not in lacks[s]))
        room = dict(sizes)
        hands: dict[int, list[int]] = {s: [] for s in seats}
        for card in cards:
            open_seats = [s for s in seats if room[s] and card not in lacks[s]]
            if not open_seats:
                break
            pick = rng.random() * sum(room[s] for s in open_seats)
            for s in open_seats:
                pick -= room[s]
                if pick < 0:
                    break
            hands[s].append(card)
            room[s] -= 1
        else:
            return hands
    cards = unseen[:]
    rng.shuffle(cards)
    hands, at = {}, 0
    for s in seats:
        hands[s] = cards[at : at + sizes[s]]
        at += sizes[s]
    return hands


class SixesMonteCarloBot(Bot):
    name = "sixes-montecarlo"
    version = "1.0.0"
    games = ("sixes",)

    def __init__(self, think: float = 0.1, seed: int = 1, playouts: int = 0) -> None:
        self.think = think
        self.seed = seed
        self.playouts = playouts
        self.move_ms = 1000
        self.game_no = 0
        self.known: Knowledge | None = None
        self.last_playouts = 0
        """Deals searched for the last answer (for tests and benchmarks)."""

    def hello(self, hello):
        self.move_ms = hello.limits.move_ms
        return super().hello(hello)

    def new_game(self, message):
        self.game_no = message.game_no
        self.known = Knowledge(message.players)

    def events(self, events):
        if self.known is not None:
            for event in events:
                self.known.event(event)

    def decide(self, kind, view, legal):
        self.last_playouts = 0
        if len(legal) == 1 or legal == [PASS]:
            return legal[0]
        started = time.perf_counter()
        deadline = started + min(self.think, MOVE_FRACTION * self.move_ms / 1000)
        rng = random.Random(f"{self.seed}/{self.game_no}/{view.round}/{view.turn}")
        known = self.known if self.known is not None and self.known.players == view.players else Knowledge(view.players)
        lo, hi = [-1] * len(SUITS), [-1] * len(SUITS)
        for s, letter in enumerate(SUITS):
            run_ = view.table.get(letter)
            if run_ is not None:
                lo[s], hi[s] = RANKS.index(run_[0]), RANKS.index(run_[1])
        hand = sorted(ID[c] for c in view.hand)
        candidates = sorted(ID[c] for c in legal)
        on_table = {s * 10 + i for s in range(len(SUITS)) if lo[s] >= 0 for i in range(lo[s], hi[s] + 1)}
        unseen = [c for c in range(40) if c not in on_table and c not in hand]
        sizes = {s: view.hand_sizes[s] for s in range(view.players) if s != view.seat}
        if sum(sizes.values()) != len(unseen):  # cannot happen by the rules; keep the deal possible
            sizes = dict.fromkeys(sizes, len(unseen) // max(1, len(sizes)))
        totals = [0] * len(candidates)
        rand = rng.random
        nxt = (view.seat + 1) % view.players
        done = 0
        while done < self.playouts if self.playouts else done == 0 or time.perf_counter() < deadline:
            dealt = deal(unseen, sizes, known.lacks, rng)
            for k, card in enumerate(candidates):
                hands = [[] for _ in range(view.players)]
                for s, cards in dealt.items():
                    hands[s] = cards[:]
                mine = [c for c in hand if c != card]
                hands[view.seat] = mine
                rows_lo, rows_hi = lo[:], hi[:]
                place(card, rows_lo, rows_hi)
                chips = list(view.chips)
                if not mine:
                    totals[k] += chips[view.seat] + view.pot
                    continue
                totals[k] += playout(hands, rows_lo, rows_hi, nxt, view.seat, chips, view.pot, rand)
            done += 1
        self.last_playouts = done
        best = max(range(len(candidates)), key=lambda k: (totals[k], -k))
        return CARD[candidates[best]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--think", type=float, default=0.1, help="seconds to think per move (default 0.1)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the search (default 1)")
    parser.add_argument("--playouts", type=int, default=0, help="deals per move instead of a time limit")
    args = parser.parse_args(argv)
    run(SixesMonteCarloBot(args.think, args.seed, args.playouts))


if __name__ == "__main__":
    main()
