"""The reference bot against a plain Monte Carlo search, in one process, at fixed work a move.

    .venv/bin/python bench/mcs_duel.py [--players 2] [--deals 15] [--playouts 2000] [--sims 200]
                                       [--bot-args "--rollout greedy --objective own"] [--seed 1000]

The plain search is the textbook one (the MCS of Brehmer and Gutsche's rl-6nimmt, the
algorithm of ThingsAI-io/6-nimmt-agent's bot, here on the SDK's ``protocol.nimmt_search``):
for each card in hand, ``--sims`` deals of the unseen cards, the rest of the round played
in a random order by every seat, itself included, a card lower than every row taking
the row with the fewest heads; the card with the fewest heads on average. A row choice
is searched the same way from the row taken (the rest of that turn left out, as the
peer leaves it). ``sample_bots/montecarlo`` (its search in C, built by ``make`` if need
be) makes ``--playouts`` deals a move with its options ``--bot-args``. Seats beyond two
are ``sample_bots/heuristic`` and ``sample_bots/random``, as in bench/peer_strength.py.

Every deal is played in every seat rotation (duplicate games); the rules are the
referee's, in this process, no sandbox. Work a move is a number of deals, not seconds,
so the figures depend neither on the machine's speed nor on its load: what two versions
of the bot decide, not how fast. Reports each bot's wins and the reference bot's heads
less the plain search's, per game, with a 95% interval.
"""

from __future__ import annotations

import argparse
import random
import shlex
import subprocess
import time
from pathlib import Path

from rating_play import sample_module
from strength import mean_interval

from arena.env.seats import InProcess
from arena.games.nimmt import GAME
from protocol.bot import Bot
from protocol.nimmt import HEADS
from protocol.nimmt_search import Seen, Table, cheapest_row

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bots"


class PlainSearch(Bot):
    """Monte Carlo with random playouts for every seat, ``sims`` deals a candidate."""

    name = "plain-mcs"
    version = "1"

    def __init__(self, sims: int, seed: int) -> None:
        self.sims = sims
        self.rng = random.Random(seed)
        self.seen = Seen()

    def events(self, events):
        self.seen.events(events)

    def decide(self, kind, view, legal):
        if len(legal) == 1:
            return legal[0]
        rng, seat = self.rng, view.seat
        table = Table.from_view(view, self.seen.cards)
        if kind == "play":
            return min(legal, key=lambda card: self.card_cost(table, seat, card, rng))
        hand = [c for c in view.hand if c != view.card]
        table.hands[seat] = hand
        if not hand:
            return min(legal, key=lambda r: sum(HEADS[c] for c in view.rows[r]))
        return min(legal, key=lambda r: self.row_cost(table, seat, view.card, r, rng))

    def card_cost(self, table: Table, seat: int, card: int, rng: random.Random) -> float:
        total = 0
        for _ in range(self.sims):
            trial = table.copy()
            trial.deal(rng)
            trial.play_turn(trial.chosen(seat, card, rng), cheapest_row)
            total += trial.playout(rng, cheapest_row)[seat]
        return total / self.sims

    def row_cost(self, table: Table, seat: int, card: int, row: int, rng: random.Random) -> float:
        total = 0
        for _ in range(self.sims):
            trial = table.copy()
            trial.deal(rng)
            trial.place(card, seat, lambda t, s, c: t.positions.index(row))
            total += trial.playout(rng, cheapest_row)[seat]
        return total / self.sims


def play(bots: list, seed: int) -> tuple[list[int], list[int]]:
    """One game, the bots in seat order: the final scores and ranks."""
    rules = GAME.rules
    players = len(bots)
    seats = InProcess(GAME, {}, players, dict(enumerate(bots)))
    state, events = rules.start(rules.parse_settings({}, players), players, seed)
    seats.new_game(events)
    while (pending := rules.decision(state)) is not None:
        answers = {s: seats.answer(s, pending.kind, rules.view(state, s), rules.legal(state, s)) for s in pending.seats}
        state, events = rules.apply(state, answers)
        seats.events(events)
    outcome = rules.outcome(state)
    assert outcome is not None
    return list(outcome.scores), list(outcome.ranks)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--deals", type=int, default=15, help="deals, each played in every rotation")
    parser.add_argument("--playouts", type=int, default=2000, help="the reference bot's deals a move")
    parser.add_argument("--sims", type=int, default=200, help="the plain search's deals a candidate")
    parser.add_argument("--bot-args", default="", help="the reference bot's options, e.g. '--rollout greedy'")
    parser.add_argument("--seed", type=int, default=1000, help="deal d is game seed SEED + d")
    args = parser.parse_args()

    subprocess.run(["make", "-s", "-C", str(SAMPLES / "montecarlo")], check=True)
    mc, heuristic, random_bot = (sample_module(name) for name in ("montecarlo", "heuristic", "random"))
    native = mc.load_native()
    assert native is not None, "sample_bots/montecarlo: libsearch.so did not build"
    options = mc.parse_args(["--playouts", str(args.playouts), *shlex.split(args.bot_args)])
    fillers = [heuristic.HeuristicBot, random_bot.RandomBot][: args.players - 2]
    wins, diffs, started = [0, 0], [], time.perf_counter()
    for deal in range(args.deals):
        for rotation in range(args.players):
            ours = mc.bot_of(options, native)
            ours.forgiving = False
            plain = PlainSearch(args.sims, args.seed + deal * args.players + rotation)
            table = [ours, plain, *(make() for make in fillers)]
            order = table[rotation:] + table[:rotation]
            scores, ranks = play(order, args.seed + deal)
            me, them = order.index(ours), order.index(plain)
            wins[0] += ranks[me] == 1
            wins[1] += ranks[them] == 1
            diffs.append(scores[me] - scores[them])
        mean, low, high = mean_interval(diffs) if len(diffs) > 1 else (diffs[0], diffs[0], diffs[0])
        print(
            f"deal {deal + 1}/{args.deals}: games {len(diffs)}, wins montecarlo {wins[0]}, plain search {wins[1]};"
            f" heads a game, montecarlo less plain: {mean:+.1f} [{low:+.1f}, {high:+.1f}]"
            f" ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
