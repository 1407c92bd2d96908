"""Replays: written by a real match, re-simulated, and every kind of tampering caught."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from arena import replay
from arena.replay import ReplayError

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
