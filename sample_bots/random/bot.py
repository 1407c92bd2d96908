"""The random bot: any legal answer, chosen by a generator seeded from the view.

Seeding from what it sees keeps it stateless and makes a game with a fixed seed
repeat exactly.
"""

import random

from protocol.bot import Bot, run


class RandomBot(Bot):
    name = "random"
    version = "1.0.0"

    def decide(self, kind, view, legal):
        rng = random.Random(f"{kind}/{view.round}/{view.turn}/{view.seat}/{view.hand}/{view.rows}")
        return rng.choice(legal)


if __name__ == "__main__":
    run(RandomBot())
