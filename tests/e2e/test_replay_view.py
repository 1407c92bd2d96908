"""``arena replay``: the terminal viewer, checked against the replay's own events."""

from __future__ import annotations

import io
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from arena.games.nimmt import render as view
from arena.play import replay
from protocol.nimmt import heads

from ..conftest import SAMPLES, MakeBot
from ..integration.test_referee import raw_bot
from .test_cli import ARENA, assert_clean_error

RANDOM = str(SAMPLES / "random")
HEURISTIC = str(SAMPLES / "heuristic")
LABELS = ["A heuristic", "B random", "C random"]


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    if args and args[0] == "play":
        args = (*args, "--sandbox", "local")
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real game of the sample bots, its replay written where only the arena reads it."""
    path = tmp_path_factory.mktemp("replays") / "game.jsonl"
    result = arena("play", HEURISTIC, RANDOM, RANDOM, "--seed", "3", "--replay", str(path))
    assert result.returncode == 0, result.stderr
    return path


@pytest.fixture(scope="module")
def shown(game: Path) -> str:
    """What ``arena replay`` prints for the whole game."""
    result = arena("replay", str(game))
    assert result.returncode == 0, result.stderr
    return result.stdout


def events(path: Path) -> list[dict[str, Any]]:
    """Every logged event, as the JSON the replay holds."""
    return [e for line in replay.read(path) if isinstance(line, replay.EventsLine) for e in line.events]


def turns(path: Path) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Each reveal with the placements that followed it."""
    current: tuple[dict[str, Any], list[dict[str, Any]]] | None = None
    for event in events(path):
        if event["type"] == "reveal":
            if current:
                yield current
            current = (event, [])
        elif event["type"] == "place":
            assert current is not None
            current[1].append(event)
    assert current is not None
    yield current


def block(output: str, start: str, end: str | None) -> list[str]:
    """The output lines from the line ``start`` up to (not including) the line ``end``."""
    lines = [line.rstrip() for line in output.splitlines()]
    first = lines.index(start)
    last = lines.index(end, first) if end in lines[first:] else len(lines)
    return lines[first:last]


def placement(place: dict[str, Any]) -> str:
    """The line the viewer writes for a placement."""
    who = f"{chr(65 + place['seat'])} {place['card']:>3}"
    taken = " ".join(map(str, place["taken"])) + f", {sum(heads(c) for c in place['taken'])} heads"
    if place["chosen"]:
        return f"{who} is lower than every row: chooses row {place['row']}, takes {taken}"
    if place["taken"]:
        return f"{who} → row {place['row']} (sixth card: takes {taken})"
    return f"{who} → row {place['row']}"


def test_header_names_seed_seats_and_sandbox(shown: str) -> None:
    assert "seed 3" in shown
    for label in LABELS:
        assert re.search(rf"^{label}\s+1\.0\.0\s+local: ", shown, re.M), shown[:800]


def test_each_round_ends_with_the_logged_heads_and_totals(game: Path, shown: str) -> None:
    round_ends = [e for e in events(game) if e["type"] == "round_end"]
    assert len(round_ends) >= 2
    for end in round_ends:
        table = block(shown, f"After round {end['round']}", "")
        for label, taken, total in zip(LABELS, end["heads"], end["scores"], strict=True):
            row = next(line for line in table if label in line)
            assert re.findall(r"\+?\d+", row.split(label)[1]) == [f"+{taken}", str(total)], row


def test_final_standings_match_the_end_line(game: Path, shown: str) -> None:
    end = replay.read(game)[-1]
    assert isinstance(end, replay.End)
    table = block(shown, "Final standings", None)
    for seat, label in enumerate(LABELS):
        row = next(line for line in table if label in line)
        assert re.findall(r"\d+", row.replace(label, "")) == [str(end.ranks[seat]), str(end.scores[seat])]
        assert end.statuses[seat].status in row


def test_every_reveal_and_placement_is_shown_in_its_turn(game: Path, shown: str) -> None:
    for reveal, places in turns(game):
        start = f"round {reveal['round']} · turn {reveal['turn']}"
        lines = [line.strip() for line in block(shown, start, "")]
        cards = " · ".join(f"{chr(65 + seat)} {card:>3}" for card, seat in reveal["plays"])
        assert f"revealed  {cards}" in lines, (start, lines)
        shown_places = [line for line in lines if line[:1] in "ABC" and line[1:2] == " "]
        assert len(shown_places) == len(places), (start, lines)
        for line, place in zip(shown_places, places, strict=True):
            assert line.startswith(placement(place)), (line, placement(place))


def test_each_turn_shows_the_seats_wall_times_and_banks_left(game: Path, shown: str) -> None:
    decision = next(line for line in replay.read(game) if isinstance(line, replay.DecisionLine))
    times = " · ".join(
        (f"{chr(65 + s)} {ms:.1f} ms" if ms < 10 else f"{chr(65 + s)} {ms:.0f} ms") + f", bank {bank / 1000:.2f} s"
        for s, ms, bank in zip(decision.seats, decision.wall_ms, decision.bank_ms, strict=True)
    )
    assert f"time      {times}" in [line.strip() for line in block(shown, "round 1 · turn 1", "")]


def rows_before(path: Path, round_no: int, turn: int) -> list[list[int]]:
    """The rows as they stood before a turn's reveal, worked out from the events alone."""
    rows: list[list[int]] = []
    for event in events(path):
        if event["type"] == "deal":
            rows = [list(row) for row in event["rows"]]
        elif event["type"] == "reveal" and (event["round"], event["turn"]) == (round_no, turn):
            return rows
        elif event["type"] == "place":
            row = rows[event["row"]]
            rows[event["row"]] = [event["card"]] if event["taken"] or event["chosen"] else [*row, event["card"]]
    raise AssertionError(f"no turn {turn} in round {round_no}")


def test_round_and_turn_start_at_that_moment_with_its_rows(game: Path) -> None:
    result = arena("replay", str(game), "--round", "2", "--turn", "3")
    assert result.returncode == 0, result.stderr
    output = result.stdout
    assert "round 1 · turn" not in output
    assert "round 2 · turn 2\n" not in output
    assert "Round 2, from turn 3" in output
    turn_lines = [line for line in output.splitlines() if re.fullmatch(r"round \d+ · turn \d+", line.strip())]
    assert turn_lines[0] == "round 2 · turn 3"
    rows = block(output, "round 2 · turn 3", "")[1:5]
    shown_rows = [[int(t) for t in line.split()[2:-2]] for line in rows]
    assert shown_rows == rows_before(game, 2, 3)


def test_a_round_alone_starts_with_its_deal(game: Path) -> None:
    output = arena("replay", str(game), "--round", "2").stdout
    deal = next(e for e in events(game) if e["type"] == "deal" and e["round"] == 2)
    assert "round 1 · turn" not in output
    assert "round 2 · turn 1" in output
    for seat, hand in enumerate(deal["hands"]):
        assert re.search(rf"^\s*{chr(65 + seat)}\s+" + r"\s+".join(map(str, hand)) + "$", output, re.M)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--round", "99"], "round 99 does not exist: this game has {rounds} rounds"),
        (["--round", "2", "--turn", "11"], "turn 11 does not exist: round 2 has 10 turns"),
    ],
)
def test_a_moment_that_does_not_exist_is_one_error_line(game: Path, args: list[str], message: str) -> None:
    rounds = sum(1 for e in events(game) if e["type"] == "deal")
    result = arena("replay", str(game), *args)
    assert_clean_error(result, message.format(rounds=rounds))
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_changed_placement_names_its_line(game: Path, tmp_path: Path) -> None:
    lines = game.read_text().splitlines()
    number, record = next((i, json.loads(line)) for i, line in enumerate(lines, 1) if '"type":"place"' in line)
    place = next(e for e in record["events"] if e["type"] == "place")
    place["card"] += 1 if place["card"] < 104 else -1
    lines[number - 1] = json.dumps(record)
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join(lines) + "\n")
    assert_clean_error(arena("replay", str(tampered)), f"tampered.jsonl:{number}: events differ from the rules")


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.jsonl"
    result = arena("replay", str(missing))
    assert_clean_error(result, "nowhere.jsonl", "cannot read replay")
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_faults_are_marked_where_they_happened(make_bot: MakeBot, tmp_path: Path) -> None:
    illegal = make_bot(
        "illegal",
        raw_bot(
            'bad = msg["kind"] == "play" and msg["view"]["turn"] == 2\n'
            'answer = 999 if bad else msg["legal"][0]\n'
            'send({"type": "answer", "id": msg["id"], "answer": answer})'
        ),
    )
    path = tmp_path / "faulty.jsonl"
    played = arena("play", str(illegal), RANDOM, "--seed", "4", "--set", "rounds=1", "--replay", str(path))
    assert played.returncode == 0, played.stderr
    output = arena("replay", str(path)).stdout
    turn = [line.strip() for line in block(output, "round 1 · turn 2", "")]
    assert any(line.startswith("! A illegal (round 1, turn 2): illegal play answer 999") for line in turn), turn
    assert any(line.startswith("revealed") and "(default)" in line for line in turn), turn
    assert re.search(r"A illegal\s+│.*faulty \(illegal\)", output), output[-800:]


def show(game: Path, monkeypatch: pytest.MonkeyPatch, answers: list[str | type[EOFError]]) -> str:
    """The viewer in step mode, with ``answers`` typed at each pause."""
    typed = iter(answers)

    def fake_input(prompt: str = "") -> str:
        answer = next(typed)
        if answer is EOFError:
            raise EOFError
        assert isinstance(answer, str)
        return answer

    monkeypatch.setattr("builtins.input", fake_input)
    console = Console(file=io.StringIO(), width=100)
    lines = replay.read(game)
    view.show_replay(console, lines, list(replay.verify(lines)), None, None, True)
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


def test_step_waits_after_each_turn_and_q_quits(game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    output = show(game, monkeypatch, ["", "q"])
    assert "round 1 · turn 2" in output
    assert "round 1 · turn 3" not in output
    assert "Final standings" not in output


def test_step_stops_quietly_at_end_of_input(game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    output = show(game, monkeypatch, [EOFError])
    assert "round 1 · turn 1" in output
    assert "round 1 · turn 2" not in output
