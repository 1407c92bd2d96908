"""What a spectator may see of a frame while its game is played, and the live folder's
files as the referee's side writes them (``arena.play.live``, ``Cut.public``)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from arena.play import replay
from arena.play.live import FINISHED, NAME, LiveFolder, Published, decode, folder_of
from arena.play.referee import Observer
from arena.play.replay import DroppedLine, End, EventsLine, Fault, FaultLine, Header, SeatInfo, SeatStatus
from arena.web.frames import GenericFrames
from arena.web.live import LiveGames
from arena.web.viewer import Cut, frames

HEADER = Header(
    format=replay.FORMAT,
    game="nimmt",
    settings={},
    seed=7,
    players=2,
    seats=[SeatInfo("a", "1", "test"), SeatInfo("b", "1", "test")],
    limits={"move_ms": 1000},
    game_no=0,
    started="2026-12-02T10:00:00+00:00",
)


def test_a_public_frame_hides_every_hand_card_by_card_and_every_faults_words() -> None:
    cut = Cut([HEADER])
    frame: dict[str, Any] = {
        "rows": [[3], [40]],
        "hands": [[5, 9, 11], [12]],
        "piles": [[7], []],
        "nested": {"hands": [[1, 2]]},
        "notes": [{"seat": 1, "kind": "illegal", "message": "legal answers are [12]", "line": '{"answer": 99}'}],
    }
    shown = cut.public(frame)
    assert shown["hands"] == [[None, None, None], [None]], "as many hidden cards as it holds"
    assert shown["nested"]["hands"] == [[None, None]], "at any depth"
    assert shown["notes"] == [{"seat": 1, "kind": "illegal"}], "the referee's words quote the hand"
    assert shown["rows"] == [[3], [40]] and shown["piles"] == [[7], []], "the table stays as it is"
    assert frame["hands"] == [[5, 9, 11], [12]] and "message" in frame["notes"][0], "the frame itself is untouched"


def test_the_generic_frames_show_no_answer_while_the_game_is_played() -> None:
    """A game without frames of its own shows the answers as given: a secret bid, say."""
    cut = Cut([HEADER])
    cut.part = GenericFrames()
    frame = {"asked": "bid", "answers": [{"seat": 0, "answer": 13}], "caption": "bid · A 13 → ...", "notes": []}
    shown = cut.public(frame)
    assert shown["answers"] == [{"seat": 0, "answer": None}]
    assert "13" not in shown["caption"]


def msgspec_replace(header: Header, **changes: object) -> Header:
    import msgspec

    return msgspec.structs.replace(header, **changes)


def test_a_game_is_cut_as_its_lines_arrive_exactly_as_when_it_is_whole(tmp_path: Path) -> None:
    """The live cut, fed a turn at a time, makes the frames the finished replay makes."""
    lines = _played_game()
    whole = frames(lines)
    cut = Cut(iter(lines))
    built = [frame for step in cut.steps() for frame in step]
    assert cut.data(built) == whole


def _played_game() -> list[replay.Line]:
    """A real game of the rules, as the referee would log it (every seat plays its lowest card)."""
    from arena.games.registry import get_game
    from arena.play.replay import DecisionLine

    rules = get_game("nimmt").rules
    settings = rules.parse_settings({"rounds": 1}, 2)
    state, events = rules.start(settings, 2, 7)
    header = msgspec_replace(HEADER, settings={"rounds": 1})
    lines: list[replay.Line] = [header, EventsLine(events)]
    while (decision := rules.decision(state)) is not None:
        answers = [rules.legal(state, seat)[0] for seat in decision.seats]
        state, events = rules.apply(state, dict(zip(decision.seats, answers, strict=True)))
        n = len(decision.seats)
        lines.append(DecisionLine(decision.kind, list(decision.seats), answers, [1.0] * n, [1.0] * n, [False] * n, []))
        lines.append(EventsLine(events))
    outcome = rules.outcome(state)
    assert outcome is not None
    lines.append(End(outcome.scores, outcome.ranks, [SeatStatus("ok", []), SeatStatus("ok", [])], ["", ""]))
    return lines


@pytest.fixture
def every_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each turn written as it ends (the referee waits ``WRITE_EVERY_S`` between writes)."""
    monkeypatch.setattr("arena.play.live.WRITE_EVERY_S", 0.0)


@pytest.mark.usefixtures("every_turn")
def test_the_live_folder_is_its_owners_alone_and_a_finished_game_is_marked(tmp_path: Path) -> None:
    folder = LiveFolder(folder_of(tmp_path / "arena.db"))
    assert folder.path == tmp_path / "arena.db-live"
    assert stat.S_IMODE(folder.path.stat().st_mode) == 0o700
    published = Published(Observer(), folder, "t3-m12")
    lines = _played_game()
    for line in lines[:3]:
        published.line(4, line)
    (path,) = folder.path.iterdir()
    assert NAME.fullmatch(path.name) is not None and path.name.startswith("t3-m12-g4.")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, "hands are in it: nobody else reads it"
    written = path.read_bytes().splitlines()
    assert len(written) == 2, "flushed with each events line: whole turns only"
    at, data = decode(written[0])
    assert at > 0 and replay.decode_line(data) == lines[0]
    for line in lines[3:]:
        published.line(4, line)
    assert stat.S_IMODE(path.stat().st_mode) == FINISHED
    assert len(path.read_bytes().splitlines()) == len(lines)


@pytest.mark.usefixtures("every_turn")
def test_a_game_cut_short_is_marked_finished_without_an_end(tmp_path: Path) -> None:
    folder = LiveFolder(tmp_path / "x.db-live")
    published = Published(Observer(), folder, "t1-m0")
    for line in _played_game()[:4]:
        published.line(0, line)
    published.close()
    (path,) = folder.path.iterdir()
    assert stat.S_IMODE(path.stat().st_mode) == FINISHED
    assert not isinstance(replay.decode_line(decode(path.read_bytes().splitlines()[-1])[1]), End)


@pytest.mark.usefixtures("every_turn")
def test_a_listing_shows_only_games_being_played_by_a_living_process(tmp_path: Path) -> None:
    live = tmp_path / "a.db-live"
    folder = LiveFolder(live)
    playing = Published(Observer(), folder, "t2-m1")
    playing.line(3, HEADER)
    playing.line(3, _played_game()[1])
    over = Published(Observer(), folder, "t2-m1")
    over.line(4, HEADER)
    over.close()
    dead = live / "t2-m1-g5.999999999.jsonl"  # no such process
    dead.write_bytes((live / f"t2-m1-g3.{os.getpid()}.jsonl").read_bytes())
    os.symlink("/etc/passwd", live / f"t2-m1-g6.{os.getpid()}.jsonl")
    games = LiveGames(tmp_path / "a.db").games()
    assert [g.key for g in games] == ["t2-m1-g3"]
    assert games[0].seats == ["a", "b"] and games[0].tournament_id == 2 and games[0].game == "nimmt"
    assert LiveGames(tmp_path / "a.db").games(tournament_id=9) == []
    playing.close()
    assert LiveGames(tmp_path / "a.db").games() == [], "finished: no longer listed"


def test_opening_a_folder_removes_what_gone_processes_left(tmp_path: Path) -> None:
    live = tmp_path / "a.db-live"
    live.mkdir()
    left = live / "t1-m0-g0.999999999.jsonl"
    left.write_text("")
    mine = live / f"t1-m0-g1.{os.getpid()}.jsonl"
    mine.write_text("")
    LiveFolder(live)
    assert not left.exists() and mine.exists()


@pytest.mark.parametrize("line", [FaultLine(0, Fault("illegal", "legal answers are [5, 9]")), DroppedLine(1, "9", "x")])
@pytest.mark.usefixtures("every_turn")
def test_a_faults_line_is_published_as_it_is_logged(tmp_path: Path, line: replay.Line) -> None:
    """The file holds what the referee logged (the web hides it): a reader needs it to cut frames."""
    folder = LiveFolder(tmp_path / "f.db-live")
    published = Published(Observer(), folder, "t1-m0")
    published.line(0, HEADER)
    published.line(0, line)
    published.line(0, _played_game()[1])
    published.close()
    (path,) = folder.path.iterdir()
    assert replay.decode_line(decode(path.read_bytes().splitlines()[1])[1]) == line


def test_a_game_over_before_its_first_write_is_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bots that answer at once: the whole game is played before a write is due, and the
    referee opens no file for it (it is stored a moment later)."""
    monkeypatch.setattr("arena.play.live.WRITE_EVERY_S", 3600.0)
    folder = LiveFolder(tmp_path / "q.db-live")
    published = Published(Observer(), folder, "t1-m0")
    for line in _played_game():
        published.line(0, line)
    assert list(folder.path.iterdir()) == []


@pytest.mark.usefixtures("every_turn")
def test_the_lines_kept_between_writes_go_out_in_order_with_their_own_times(tmp_path: Path) -> None:
    folder = LiveFolder(tmp_path / "o.db-live")
    published = Published(Observer(), folder, "t1-m0")
    lines = _played_game()
    for line in lines:
        published.line(0, line)
    (path,) = folder.path.iterdir()
    written = [decode(raw) for raw in path.read_bytes().splitlines()]
    assert [data for _, data in written] == [replay.dumps([line]).rstrip(b"\n") for line in lines]
    times = [at for at, _ in written]
    assert times == sorted(times)


async def test_too_many_games_or_streams_are_refused_with_503(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The caps: games read at once, streams open at once; past them a 503 in words."""
    import trio

    from arena.web.errors import WebError

    monkeypatch.setattr("arena.play.live.WRITE_EVERY_S", 0.0)
    monkeypatch.setattr("arena.web.live.MAX_GAMES", 1)
    monkeypatch.setattr("arena.web.live.MAX_STREAMS", 3)
    folder = LiveFolder(tmp_path / "c.db-live")
    writers = [Published(Observer(), folder, "t1-m0") for _ in range(2)]
    for game_no, writer in enumerate(writers):
        writer.line(game_no, HEADER)
        writer.line(game_no, _played_game()[1])
    live = LiveGames(tmp_path / "c.db")
    async with trio.open_nursery() as nursery:
        live.attach(nursery)
        first = await live.stream("t1-m0-g0")
        with pytest.raises(WebError) as missing:
            await live.stream("t1-m0-g7")
        assert missing.value.status == 404
        second = await live.stream("t1-m0-g0")  # the same game: read once
        with pytest.raises(WebError) as games:
            await live.stream("t1-m0-g1")
        assert games.value.status == 503 and "1 live games" in games.value.message
        third = await live.stream("t1-m0-g0")
        assert live.watching("t1-m0-g0") == 3
        with pytest.raises(WebError) as streams:
            await live.stream("t1-m0-g0")
        assert streams.value.status == 503 and "3 people" in streams.value.message
        for events in (first, second, third):
            assert (await events.__anext__()).startswith(b"event: meta")
            await events.aclose()
        assert live.watching("t1-m0-g0") == 0 and live.streams == 0
        nursery.cancel_scope.cancel()
    for writer in writers:
        writer.close()
