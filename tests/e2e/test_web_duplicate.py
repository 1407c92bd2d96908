"""The duplicate view: one deal in all its seat rotations, each bot's result with each
hand. The grouping is checked on its own, then ``arena serve`` over the database of a
real tournament (three sample bots, two deals, each played in its three rotations)."""

from __future__ import annotations

import html
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from arena.store import FinishedGame, SeatResult, Store, StoredGame, StoredSeat
from arena.web.duplicate import deal_group, short_names

from ..conftest import SAMPLES, serving
from .test_web import ARENA, api, fetch, page

# --- the grouping -------------------------------------------------------------------------


def stored(game_id: int, game_no: int, seats: list[tuple[str, int, int]]) -> StoredGame:
    """A game of match 0, deal 0: seats as (bot, score, rank), seat by seat."""
    found = [StoredSeat(seat, bot, rank, score, "ok", {}) for seat, (bot, score, rank) in enumerate(seats)]
    return StoredGame(game_id, "t", 0, game_no, 0, 99, "nimmt", "standard", 1, 1.0, "2026-01-01", found)


ROTATIONS = [
    stored(7, 0, [("a:1", 3, 1), ("b:1", 10, 2), ("c:1", 20, 3)]),
    stored(8, 1, [("c:1", 5, 1), ("a:1", 6, 2), ("b:1", 30, 3)]),
    stored(9, 2, [("b:1", 12, 2), ("c:1", 40, 3), ("a:1", 1, 1)]),
]
"""A full rotation of three bots over three hands: a holds hand 0, 1, 2 in games 7, 8, 9."""


def test_each_bot_gets_its_result_with_each_hand() -> None:
    group = deal_group(ROTATIONS[::-1], lower_is_better=True, unit="heads")
    assert [g["id"] for g in group["games"]] == [7, 8, 9]  # by game number, whatever the order given
    assert (group["hands"], group["rotations"], group["complete"]) == (3, 3, True)
    assert group["hand_mean"] == [round(20 / 3, 2), round(56 / 3, 2), 17.0]
    a = next(b for b in group["bots"] if b["bot"] == "a:1")
    assert [[r["score"] for r in results] for results in a["by_hand"]] == [[3], [6], [1]]
    assert [[r["game"] for r in results] for results in a["by_hand"]] == [[7], [8], [9]]
    assert (a["games"], a["total"], a["average_score"], a["average_rank"]) == (3, 10, 3.33, 1.33)
    # its score minus the hand's mean, averaged
    assert a["margin"] == round((3 - 20 / 3 + 6 - 56 / 3 + 1 - 17) / 3, 2)
    assert [b["name"] for b in group["bots"]] == ["a", "b", "c"]  # lower is better: a's margin is the best


def test_the_insight_names_the_best_and_the_worst_with_a_hand() -> None:
    lower = deal_group(ROTATIONS, lower_is_better=True, unit="heads")["insights"]
    assert lower[0] == "a scored 3 heads with hand 0 where b scored 12"
    assert lower[2] == "a scored 1 heads with hand 2 where b scored 30"
    higher = deal_group(ROTATIONS, lower_is_better=False, unit="chips")["insights"]
    assert higher[0] == "b scored 12 chips with hand 0 where a scored 3"
    assert higher[1] == "c scored 40 chips with hand 1 where a scored 6"
    even = [stored(1, 0, [("a:1", 4, 1), ("b:1", 4, 1)]), stored(2, 1, [("b:1", 4, 1), ("a:1", 4, 1)])]
    assert deal_group(even, True)["insights"] == [
        "every bot scored 4 points with hand 0",
        "every bot scored 4 points with hand 1",
    ]


def test_a_missing_rotation_is_said_and_a_lone_game_compares_nothing() -> None:
    partial = deal_group(ROTATIONS[:2], lower_is_better=True)
    assert (partial["rotations"], partial["complete"]) == (2, False)
    b = next(b for b in partial["bots"] if b["bot"] == "b:1")
    assert [len(results) for results in b["by_hand"]] == [0, 1, 1]
    lone = deal_group(ROTATIONS[:1], lower_is_better=True)
    assert (lone["rotations"], lone["insights"], lone["complete"]) == (1, [], False)


def test_a_disqualified_bot_is_never_above_one_with_a_better_average_rank() -> None:
    """d is thrown out early in every game with few heads (so the best margin), ranked last."""

    def game(game_id: int, game_no: int, seats: list[tuple[str, int, int, str]]) -> StoredGame:
        found = [
            StoredSeat(seat, bot, rank, score, status, {}) for seat, (bot, score, rank, status) in enumerate(seats)
        ]
        return StoredGame(game_id, "t", 0, game_no, 0, 99, "nimmt", "standard", 1, 1.0, "2026-01-01", found)

    games = [
        game(1, 0, [("d:1", 0, 3, "disqualified"), ("e:1", 20, 1, "ok"), ("f:1", 30, 2, "ok")]),
        game(2, 1, [("f:1", 25, 2, "ok"), ("d:1", 1, 3, "disqualified"), ("e:1", 22, 1, "ok")]),
        game(3, 2, [("e:1", 21, 1, "ok"), ("f:1", 28, 2, "ok"), ("d:1", 2, 3, "disqualified")]),
    ]
    bots = deal_group(games, lower_is_better=True)["bots"]
    assert [b["name"] for b in bots] == ["e", "f", "d"]
    assert bots[-1]["margin"] < bots[0]["margin"], "its margin alone would have put it first"
    assert [b["disqualified"] for b in bots] == [0, 0, 3]


def test_two_versions_of_one_bot_keep_their_versions() -> None:
    assert short_names(["x:1", "x:2", "y:1"]) == {"x:1": "x:1", "x:2": "x:2", "y:1": "y"}


# --- served, over a real tournament --------------------------------------------------------------


def play_tournament(db: Path) -> None:
    """The tournament of the issue: three sample bots, two deals, three rotations each."""
    bots = [str(SAMPLES / name) for name in ("heuristic", "random", "lowest")]
    command = [ARENA, "tournament", "run", *bots, "--deals", "2", "--seed", "5", "--sandbox", "local"]
    played = subprocess.run([*command, "--db", str(db), "--name", "t"], capture_output=True, text=True, timeout=300)
    assert played.returncode == 0, played.stderr


@pytest.fixture(scope="module")
def duplicate_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tournament, and beside it one game alone in its deal."""
    db = tmp_path_factory.mktemp("duplicate") / "arena.db"
    play_tournament(db)
    with Store(db) as store:
        t = store.get_tournament("t")
        assert t is not None
        data = store.replay(store.find_games(t.id, limit=1)[0].id)
        lone = store.create_tournament("lone", "nimmt", "standard", {}, 1, {})
        seat = SeatResult(store.get_bot("heuristic").id, 1, 0, "ok", {})
        store.save_game(
            FinishedGame(lone.id, 0, 0, 0, 1, "nimmt", "standard", 1, 1.0, "2026-01-01T00:00:00+00:00", [seat], data)
        )
    return db


@pytest.fixture(scope="module")
def site(duplicate_db: Path) -> Iterator[str]:
    with serving(duplicate_db) as url:
        yield url


def stored_games(db: Path, tournament: str) -> list[StoredGame]:
    with Store(db) as store:
        found = store.get_tournament(tournament)
        assert found is not None
        return store.find_games(found.id, limit=100)


def test_the_duplicate_api_lists_exactly_the_group_as_stored(site: str, duplicate_db: Path) -> None:
    games = stored_games(duplicate_db, "t")
    assert len(games) == 6  # 2 deals x 3 rotations
    for game in games:
        group = [g for g in games if (g.match_no, g.deal) == (game.match_no, game.deal)]
        got = api(f"{site}/api/games/{game.id}/duplicate")
        assert [g["id"] for g in got["games"]] == [g.id for g in group]
        seats = [[{k: v for k, v in msgspec.to_builtins(s).items() if k != "faults"} for s in g.seats] for g in group]
        assert got["games"] == [
            {"id": g.id, "game_no": g.game_no, "seats": s} for g, s in zip(group, seats, strict=True)
        ]
        assert (got["deal"], got["seed"], got["rotations"], got["complete"]) == (game.deal, game.seed, 3, True)
        for bot in got["bots"]:  # each bot held each hand once: its score there is the store's
            mine = {s.seat: (g.id, s.score, s.rank) for g in group for s in g.seats if s.bot == bot["bot"]}
            assert [[(r["game"], r["score"], r["rank"]) for r in results] for results in bot["by_hand"]] == [
                [mine[hand]] for hand in range(3)
            ]
            assert bot["total"] == sum(score for _, score, _ in mine.values())
        assert len(got["insights"]) == 3


def test_the_duplicate_page_shows_each_seat_and_links_each_replay(site: str, duplicate_db: Path) -> None:
    games = stored_games(duplicate_db, "t")
    group = [g for g in games if g.deal == games[-1].deal]
    text = page(f"{site}/games/{group[1].id}/duplicate")
    for g in group:
        assert f'<a href="/games/{g.id}">game #{g.id}</a>' in text
        for s in g.seats:
            cell = re.search(rf'<tr data-hand="{s.seat}">.*?<td data-game="{g.id}"[^>]*>(.*?)</td>', text, re.S)
            assert cell is not None, (g.id, s.seat)
            name = s.bot.split(":")[0]
            assert re.sub(r"<[^>]+>", "", cell.group(1)).startswith(f"{name}:"), cell.group(1)
            assert f'<span class="score">{s.score}</span>' in cell.group(1)
    group_data = api(f"{site}/api/games/{group[0].id}/duplicate")
    for line in group_data["insights"]:
        assert f"<li>{html.escape(line)}</li>" in text
    game_page = page(f"{site}/games/{group[0].id}")
    assert f'href="/games/{group[0].id}/duplicate"' in game_page and "this deal in every rotation" in game_page


def test_a_game_alone_in_its_deal_says_so(site: str, duplicate_db: Path) -> None:
    (lone,) = stored_games(duplicate_db, "lone")
    text = page(f"{site}/games/{lone.id}/duplicate")
    assert f"Game #{lone.id} is the only game of its deal stored" in text
    assert "duplicate-games" not in text
    assert api(f"{site}/api/games/{lone.id}/duplicate")["rotations"] == 1
    assert "this deal in every rotation" not in page(f"{site}/games/{lone.id}")


def test_an_unknown_game_is_a_404_naming_it(site: str) -> None:
    status, kind, body = fetch(f"{site}/api/games/999999/duplicate")
    assert (status, kind) == (404, "application/json") and b"no game 999999" in body
    status, _, body = fetch(f"{site}/games/abc/duplicate")
    assert status == 400 and b"not &#39;abc&#39;" in body


def test_the_replay_downloads_as_a_file(site: str, duplicate_db: Path) -> None:
    game = stored_games(duplicate_db, "t")[0]
    import urllib.request

    with urllib.request.urlopen(f"{site}/api/games/{game.id}/replay?download=1") as got:
        disposition, body = got.headers["content-disposition"], got.read()
    assert disposition == f'attachment; filename="game-{game.id}.jsonl"'
    assert body == fetch(f"{site}/api/games/{game.id}/replay")[2]
    assert fetch(f"{site}/api/games/{game.id}/replay?download=2")[0] == 400
    assert f'href="/api/games/{game.id}/replay?download=1" download=' in page(f"{site}/games/{game.id}")
