"""@NAME@: a Six Arena bot for @TITLE@, in Python.

``decide`` is asked for every move: ``kind`` says what is asked, ``view`` is everything
this seat may see (typed: ``view.hand``, ``view.scores``...; docs/protocol.md lists the
fields), ``legal`` every answer the referee takes. It plays the first legal answer:
make it better.
"""

from typing import Any

from protocol.bot import Bot, run


class MyBot(Bot):
    name = "@NAME@"
    version = "0.1.0"

    def decide(self, kind: str, view: Any, legal: list[Any]) -> Any:
        return legal[0]


if __name__ == "__main__":
    run(MyBot())
