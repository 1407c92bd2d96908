"""Replays: written by a real match, re-simulated, and every kind of tampering caught."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from arena.play import replay
from arena.play.replay import ReplayError

from .test_referee import HEURISTIC, RANDOM, run_match


@pytest.fixture(scope="module")
def game_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import trio

    result = trio.run(run_match, [HEURISTIC, RANDOM, RANDOM], 12, 1000, 0, {})
    path = tmp_path_factory.mktemp("replay") / "game.jsonl"
    replay.write(path, result.games[0].replay)
    return path


def edited(source: Path, target: Path, edit: object) -> Path:
    lines = source.read_text().splitlines()
    lines = edit(lines)  # type: ignore[operator]
    target.write_text("\n".join(lines) + "\n")
    return target


def test_a_written_replay_reads_back_and_re_simulates(game_file: Path) -> None:
    lines = replay.read(game_file)
    header, end = lines[0], lines[-1]
    assert isinstance(header, replay.Header) and header.players == 3
    assert header.limits["max_line"] == 65536
    assert isinstance(end, replay.End)
    steps = list(replay.verify(lines))
    assert steps[-1].state.over
    assert end.scores == list(steps[-1].state.scores)


def test_dropping_the_last_events_is_caught(game_file: Path, tmp_path: Path) -> None:
    def drop_last_events(lines: list[str]) -> list[str]:
        last = max(i for i, line in enumerate(lines) if '"type":"events"' in line)
        return lines[:last] + lines[last + 1 :]

    path = edited(game_file, tmp_path / "cut.jsonl", drop_last_events)
    with pytest.raises(ReplayError, match="leaves out events"):
        list(replay.verify(replay.read(path), str(path)))


def test_errors_name_the_physical_line(game_file: Path, tmp_path: Path) -> None:
    path = edited(game_file, tmp_path / "blank.jsonl", lambda lines: [lines[0], "", *lines[1:]])
    with pytest.raises(ReplayError, match="blank.jsonl:2"):
        replay.read(path)


def test_changed_scores_are_caught(game_file: Path, tmp_path: Path) -> None:
    def lower_first_score(lines: list[str]) -> list[str]:
        end = msgspec.json.decode(lines[-1])
        end["scores"][0] -= 1
        return [*lines[:-1], msgspec.json.encode(end).decode()]

    path = edited(game_file, tmp_path / "scores.jsonl", lower_first_score)
    with pytest.raises(
        ReplayError, match=f"scores.jsonl:{len(game_file.read_text().splitlines())}: the standings differ"
    ):
        list(replay.verify(replay.read(path), str(path)))


def test_a_different_seed_is_caught_at_the_deal(game_file: Path, tmp_path: Path) -> None:
    path = edited(
        game_file, tmp_path / "seed.jsonl", lambda lines: [lines[0].replace('"seed":12', '"seed":13'), *lines[1:]]
    )
    with pytest.raises(ReplayError, match="seed.jsonl:2: events differ from the rules"):
        list(replay.verify(replay.read(path), str(path)))


def test_a_cut_file_is_caught(game_file: Path, tmp_path: Path) -> None:
    path = edited(game_file, tmp_path / "short.jsonl", lambda lines: lines[: len(lines) // 2])
    with pytest.raises(ReplayError, match="no end line"):
        list(replay.verify(replay.read(path), str(path)))


def test_not_a_replay(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"type":"end","scores":[],"ranks":[],"statuses":[],"stderr":[]}\n')
    with pytest.raises(ReplayError, match="no header"):
        replay.read(path)


def test_the_deals_docs_replay_md_gives_for_an_independent_tool() -> None:
    """docs/replay.md spells out every deck and deal so another tool can recompute them;
    its worked examples are what the rules deal."""
    import hashlib
    import math

    from arena.games.nimmt import rules as nimmt
    from arena.games.sixes import rules as sixes

    def draw(key: bytes, pool: list[object], count: int) -> list[object]:  # as the page describes it
        pool = list(pool)
        bits = math.ceil(math.log2(math.perm(len(pool), count))) + 128
        x = int.from_bytes(hashlib.shake_256(key).digest((bits + 7) // 8), "big")
        drawn = []
        for size in range(len(pool), len(pool) - count, -1):
            x, i = divmod(x, size)
            drawn.append(pool[i])
            pool[i] = pool[size - 1]
        return drawn

    tactical = draw(b"nimmt/4/1", list(range(1, 35)), 34)
    assert sorted(tactical[:10]) == [11, 13, 15, 17, 18, 25, 26, 30, 32, 34] == list(nimmt.deal(4, 1, 3, top=34)[1][0])
    assert [(c,) for c in tactical[30:]] == [(33,), (6,), (3,), (2,)] == list(nimmt.deal(4, 1, 3, top=34)[0])
    rows, _ = nimmt.deal(4, 1, 2)
    kept = sorted(set(range(1, 105)) - {c for row in rows for c in row})
    assert tuple(sorted(draw(b"nimmt/4/2", list(kept), 20)[:10])) == nimmt.deal(4, 2, 2, table=rows)[1][0]
    deck = [f"{rank}{suit}" for suit in "oceb" for rank in (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)]
    assert tuple(deck) == sixes.DECK
    cards = draw(b"sixes/4/1", deck, 40)
    assert " ".join(sorted(cards[0::3], key=deck.index)) == "2o 5o 4c 10c 11c 2e 4e 6e 7e 10e 12e 4b 6b 12b"
    assert tuple(sorted(cards[0::3], key=deck.index)) == sixes.deal(4, 1, 3)[0]
