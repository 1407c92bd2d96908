"""The Sixes random bot: any legal answer, chosen by a generator seeded from the view.

Seeding from what it sees keeps it stateless and makes a game with a fixed seed
repeat exactly.
"""

import random

from protocol.bot import Bot, run


class SixesRandomBot(Bot):
    name = "sixes-random"
    version = "1.0.0"
    games = ("sixes",)

    def decide(self, kind, view, legal):
        table = sorted(view.table.items())
        rng = random.Random(f"{kind}/{view.round}/{view.turn}/{view.seat}/{view.hand}/{table}/{view.chips}")
        return rng.choice(legal)


if __name__ == "__main__":
    run(SixesRandomBot())
