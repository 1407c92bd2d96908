"""A bot that searches with the SDK's rules (``protocol.nimmt_search``) runs in both
sandboxes as they are: the module is in the SDK every sandbox gives a Python bot."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ARENA = str(Path(sys.executable).parent / "arena")
ROOT = Path(__file__).resolve().parents[2]
SEARCHER = """
import random

from protocol.bot import Bot, run
from protocol.nimmt_search import Seen, Table, cheapest_row


class Searcher(Bot):
    name, version, games = "@NAME@", "0.1.0", ("nimmt",)

    def __init__(self):
        self.seen, self.rng = Seen(), random.Random(1)

    def events(self, events):
        self.seen.events(events)

    def decide(self, kind, view, legal):
        if kind != "play":
            return legal[0]
        table = Table.from_view(view, self.seen.cards)
        cost = {}
        for card in legal:
            cost[card] = 0
            for _ in range(20):
                trial = table.copy()
                trial.deal(self.rng)
                trial.play_turn(trial.chosen(view.seat, card, self.rng), cheapest_row)
                cost[card] += trial.playout(self.rng, cheapest_row, shuffled=True)[view.seat]
        return min(legal, key=cost.get)


run(Searcher())
"""


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_searching_bot_plays_with_the_sdks_rules(place: Path, sandbox: str) -> None:
    name = f"searcher-{uuid.uuid4().hex[:8]}"  # fresh code: no image of an earlier run serves it
    made = subprocess.run([ARENA, "bot", "new", name, "--dir", str(place)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    (place / name / "bot.py").write_text(SEARCHER.replace("@NAME@", name))
    played = subprocess.run(
        [ARENA, "play", str(place / name), str(ROOT / "sample_bots/random"), str(ROOT / "sample_bots/random"),
         "--sandbox", sandbox, "--strict", "--seed", "4"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert played.returncode == 0, played.stdout + played.stderr
    standings = played.stdout[played.stdout.index("Final standings") :]
    first = next(line for line in standings.splitlines() if line.startswith("│    1 │"))
    assert name in first, standings  # 20 playouts a card beat two random bots on this deal
    subprocess.run(["docker", "image", "rm", "-f", f"sixarena-bot-{name}"], capture_output=True, check=False)
