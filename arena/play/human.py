"""A person's seat: the program ``arena play --human`` starts for whoever sits at the
terminal, a bot like any other to the referee (the protocol on its stdin and stdout),
that asks the person.

    python -m arena.play.human --game nimmt --read FD --write FD

It talks to the person through the terminal's descriptors it was given (``--read``,
``--write``: ``arena play`` passes its own): on each request it shows the seat's view as
the game's terminal pictures draw it (the renderer's ``seat_view``, else the view as
JSON) and what may be answered, and reads a line until it is a legal answer, refusing
anything else with one line. It is the arena's own code, run as its user beside the
sandboxed bots; what it is sent is what that seat may see, nothing more.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
from collections.abc import Sequence
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from protocol.bot import Bot, run

NAME = "you"
"""The seat's name in replays and standings."""


def parse(typed: str, legal: Sequence[Any]) -> tuple[bool, Any]:
    """``(True, answer)`` for the legal answer ``typed`` names: as JSON (``34``, ``[3, 17]``,
    ``"10c"``), a string as it is (``10c``), or a list as its items (``3 17``)."""
    words = typed.split()
    for answer in legal:
        if typed == json.dumps(answer, separators=(", ", ": ")) or typed == json.dumps(answer):
            return True, answer
        if isinstance(answer, str) and typed.lower() == answer.lower():
            return True, answer
        if isinstance(answer, list) and [str(a) for a in answer] == words:
            return True, answer
    return False, None


def shown(answer: Any) -> str:
    """An answer as a person types it."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, list):
        return " ".join(shown(a) for a in answer)
    return json.dumps(answer)


class Person(Bot):
    """Asks the person at the terminal."""

    name, version = NAME, "1"

    def __init__(self, game: str, read: TextIO, console: Console) -> None:
        self.read = read
        self.console = console
        from arena.games.registry import get_game

        record = get_game(game)
        self.seat_view = getattr(record.terminal(), "seat_view", None)
        self.answer_names = dict(record.answer_names)

    def decide(self, kind: str, view: Any, legal: list[Any]) -> Any:
        if self.seat_view is not None:
            for part in self.seat_view(view, kind, legal):
                self.console.print(part)
        else:
            self.console.print(Text(json.dumps(_plain(view), ensure_ascii=False)))
        what = self.answer_names.get(kind, "an answer")
        choices = " ".join(shown(a) for a in legal)
        self.console.print(Text(f"legal: {choices}"))
        while True:
            self.console.print(Text(f"{kind}: {what}> "), end="")
            line = self.read.readline()
            if not line:  # the terminal is gone: the seat gives up (the referee plays its default)
                raise SystemExit(0)
            ok, answer = parse(line.strip(), legal)
            if ok:
                return answer
            self.console.print(Text(f"{line.strip()[:40]!r} is not {what} you may play here: legal: {choices}"))

    def game_over(self, message: Any) -> None:
        self.console.print(Text(f"game over: scores {message.scores}, ranks {message.ranks}", style="bold"))


def _plain(value: Any) -> Any:
    import msgspec

    return msgspec.to_builtins(value)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m arena.play.human")
    parser.add_argument("--game", required=True)
    parser.add_argument("--read", type=int, required=True, help="the terminal's descriptor to read the person from")
    parser.add_argument("--write", type=int, required=True, help="the terminal's descriptor to write to")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the arena's: it stops every seat
    read = os.fdopen(args.read, "r", encoding="utf-8", errors="replace")
    console = Console(file=os.fdopen(args.write, "w", encoding="utf-8"), force_terminal=True, highlight=False)
    run(Person(args.game, read, console))


if __name__ == "__main__":
    main()
