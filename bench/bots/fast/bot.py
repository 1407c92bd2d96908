from protocol.bot import Bot, run


class Fast(Bot):
    name, version = "fast", "1.0.0"

    def decide(self, kind, view, legal):
        return legal[0]


run(Fast())
