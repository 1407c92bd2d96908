"""Fresh values on ``arena serve`` while games arrive: counts are the database's on the very
next request; a board is recomputed only when a game of its own kind arrives, marked stale
until it is. A real server over a real database file, written to while it runs."""

from __future__ import annotations

import time
import urllib.parse
from pathlib import Path
from typing import Any

from arena.store import FinishedGame, SeatResult, Store
from arena.web.board_stamps import BoardStamps, agrees, merged, read_after

from ..conftest import SAMPLES, serving
from .test_web import api, page

NIMMT = "/api/leaderboard?game=nimmt&variant=standard"
SIXES = "/api/leaderboard?game=sixes&variant=standard"


def store_game(db: Path, tournament: str, number: int) -> int:
    """One more game of ``tournament`` (its bots ranked in the order they were added); its id."""
    with Store(db) as store:
        t = store.get_tournament(tournament)
        assert t is not None
        names = ("random", "lowest", "heuristic") if t.game == "nimmt" else ("sixes-random", "sixes-heuristic")
        bots = [store.get_bot(f"{name}") for name in names]
        # The best seat varies, so that every bot has wins and losses and a finite Elo.
        order = bots[number % len(bots) :] + bots[: number % len(bots)]
        seats = [SeatResult(bot.id, rank, 10 * rank, "ok", {}) for rank, bot in enumerate(order, 1)]
        game = FinishedGame(
            t.id, number, 0, number, number, t.game, "standard", 1, 100.0, "2026-01-01T00:00:00+00:00", seats, b"{}"
        )
        return store.save_game(game)


def two_kinds(db: Path) -> None:
    """A 6 nimmt! tournament (``cup``, 6 games) and a Sixes one (``dice``, 4 games)."""
    with Store(db) as store:
        for name in ("random", "lowest", "heuristic", "sixes-random", "sixes-heuristic"):
            store.add_bot(SAMPLES / name)
        store.create_tournament("cup", "nimmt", "standard", {}, 1, {})
        store.create_tournament("dice", "sixes", "standard", {}, 1, {})
    for number in range(6):
        store_game(db, "cup", number)
    for number in range(4):
        store_game(db, "dice", number)


def counts(url: str) -> dict[str, Any]:
    """Every count the pages show of the tournaments and bots."""
    listed = {t["name"]: t["games_done"] for t in api(f"{url}/api/tournaments")["tournaments"]}
    bots = {b["bot"]: b["games"] for b in api(f"{url}/api/bots")["bots"]}
    index = api(f"{url}/api")
    return {
        "listed": listed,
        "cup": api(f"{url}/api/tournaments/cup")["games_done"],
        "bots": bots,
        "random": api(f"{url}/api/bots/random")["games"],
        "index": (index["games"], {k["key"]: k["games"] for k in index["kinds"]}, index["last_game"]),
    }


def rated_games(board: dict[str, Any]) -> int:
    return sum(row["games"] for row in board["rows"])


def test_a_new_game_is_counted_at_once_and_only_its_board_is_recomputed(tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    two_kinds(db)
    with serving(db) as url:
        deadline = time.monotonic() + 60
        while not api(f"{url}/api/health")["warm"]:
            assert time.monotonic() < deadline, "the server warmed up its boards"
            time.sleep(0.2)
        before = counts(url)
        assert before["listed"] == {"cup": 6, "dice": 4} and before["cup"] == 6
        assert before["index"] == (10, {"nimmt/standard": 6, "sixes/standard": 4}, 10)
        nimmt, sixes = api(url + NIMMT)["boards"][0], api(url + SIXES)["boards"][0]
        assert (nimmt["stamp"], nimmt["stale"], rated_games(nimmt)) == (6, False, 18)
        assert (sixes["stamp"], sixes["stale"], rated_games(sixes)) == (10, False, 8)

        new = store_game(db, "cup", 6)  # a game of kind nimmt/standard while the server runs
        assert new == 11

        # The board of its kind: the last value, marked, until the new one is computed.
        shown = api(url + NIMMT)["boards"][0]
        assert (shown["stamp"], shown["stale"], rated_games(shown)) == (6, True, 18)
        # The other kind's board: not stale, not recomputed (its stamp is the same).
        other = api(url + SIXES)["boards"][0]
        assert (other["stamp"], other["stale"]) == (10, False) and other["rows"] == sixes["rows"]
        assert "(updating" not in page(f"{url}/leaderboard?game=sixes&variant=standard")
        # The counts: the database's, on the very next request.
        after = counts(url)
        assert after["listed"] == {"cup": 7, "dice": 4} and after["cup"] == 7
        assert after["index"] == (11, {"nimmt/standard": 7, "sixes/standard": 4}, 11)
        assert after["random"] == before["random"] + 1 == 7
        grown = {bot: n - before["bots"][bot] for bot, n in after["bots"].items()}
        assert grown == {"random:1.0.0": 1, "lowest:1.0.0": 1, "heuristic:1.0.0": 1, "sixes-random:1.0.0": 0,
                         "sixes-heuristic:1.0.0": 0}  # fmt: skip
        assert '<td class="num" data-value="7">7</td>' in page(f"{url}/tournaments")
        assert '<td class="num" data-value="7">7</td>' in page(f"{url}/bots")
        assert "11 games stored" in page(f"{url}/")

        deadline = time.monotonic() + 60
        while (shown := api(url + NIMMT)["boards"][0])["stale"]:
            assert time.monotonic() < deadline, "the board was recomputed"
            time.sleep(0.2)
        assert (shown["stamp"], rated_games(shown)) == (11, 21), "the new game is rated"
        assert "(updating" not in page(f"{url}/leaderboard?game=nimmt&variant=standard")
        assert api(url + SIXES)["boards"][0]["stamp"] == 10
        history = api(f"{url}/api/bots/random")
        assert history["updating"] == [] and not history["ratings"][0]["stale"]
        assert history["ratings"][0]["points"][0]["games"] == 7


def test_a_tournament_board_is_stale_only_for_its_own_games(tmp_path: Path) -> None:
    db = tmp_path / "standings.db"
    two_kinds(db)
    with Store(db) as store:
        store.create_tournament("cup2", "nimmt", "standard", {}, 2, {})
    with serving(db) as url:
        standings = api(f"{url}/api/tournaments/cup")["standings"]
        assert (standings["stamp"], standings["stale"]) == (6, False)
        store_game(db, "cup2", 0)  # the same kind, another tournament
        again = api(f"{url}/api/tournaments/cup")["standings"]
        assert (again["stamp"], again["stale"], again["rows"]) == (6, False, standings["rows"])
        query = urllib.parse.urlencode({"game": "nimmt", "variant": "standard", "tournament": "cup"})
        assert api(f"{url}/api/leaderboard?{query}")["boards"][0]["stale"] is False
        assert api(f"{url}/api/tournaments/cup2")["games_done"] == 1


# --- the stamps, as pure functions ---------------------------------------------------------


def test_stamps_advance_by_the_new_games_only() -> None:
    known = merged(None, [("nimmt", "standard", 6, 6), ("sixes", "standard", 10, 4)])
    assert known == BoardStamps({("nimmt", "standard"): 6, ("sixes", "standard"): 10},
                               {("nimmt", "standard"): 6, ("sixes", "standard"): 4}, 10, 10)  # fmt: skip
    assert read_after(None, 10, 10) == 0, "nothing known: every game"
    assert read_after(known, 10, 10) is None, "current"
    assert read_after(known, 12, 12) == 10, "two new games: those above 10"
    assert read_after(known, 10, 9) == 0, "a game went away: every game again"
    assert read_after(known, 8, 8) == 0, "the newest went away"
    grown = merged(known, [("nimmt", "standard", 12, 2)])
    assert (grown.of(("nimmt", "standard")), grown.of(("sixes", "standard")), grown.games) == (12, 10, 12)
    assert grown.counts[("nimmt", "standard")] == 8 and grown.of(("nimmt", "sixes")) == 0
    assert agrees(grown, 12, 12) and agrees(grown, 11, 11), "a game stored between the readings is counted"
    assert not agrees(grown, 12, 11), "a game deleted meanwhile: read again"
    assert merged(known, [("bagels", "standard", 11, 1)]).played_boards()[0] == ("bagels", "standard")
