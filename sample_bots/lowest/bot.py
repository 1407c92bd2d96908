"""The lowest bot: its lowest card every turn, the cheapest row when it must take one."""

from protocol.bot import Bot, run
from protocol.nimmt import HEADS


class Lowest(Bot):
    name = "lowest"
    version = "1.0.0"

    def decide(self, kind, view, legal):
        if kind == "row":
            return min(legal, key=lambda i: (sum(HEADS[c] for c in view.rows[i]), len(view.rows[i]), i))
        return min(legal)


if __name__ == "__main__":
    run(Lowest())
