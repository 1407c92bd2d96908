"""The web replay viewer's data (``arena.web.viewer``), checked against real games.

Every game here is played by real bots through ``arena play`` (local sandbox); the
frames must agree with the rules' own states (``verify``), with the replay's events
and with its end line, and the standalone page must hold no external reference.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from arena.games import registry as catalog
from arena.play import replay
from arena.play.replay import DecisionLine, End, EventsLine
from arena.store import Store
from arena.web import viewer
from protocol.nimmt import HEADS
from protocol.sixes import DECK, RANKS

from ..conftest import SAMPLES
from ..integration.test_referee import raw_bot
from .test_cli import ARENA, assert_clean_error

RANDOM = str(SAMPLES / "random")
HEURISTIC = str(SAMPLES / "heuristic")
GAMES: dict[str, list[str]] = {
    "standard": [HEURISTIC, RANDOM, RANDOM, "--set", "rounds=3"],
    "logical": [HEURISTIC, RANDOM, RANDOM, "--set", "variant=logical", "--set", "rounds=2"],
    "professional": [HEURISTIC, RANDOM, RANDOM, RANDOM, "--set", "variant=professional", "--set", "rounds=3"],
    "two_cards": [HEURISTIC, RANDOM, RANDOM, "--set", "cards_per_turn=2", "--set", "rounds=3"],
    "keep_rows": [HEURISTIC, RANDOM, "--set", "keep_rows=true", "--set", "rounds=3"],
    "shedding": [HEURISTIC, RANDOM, RANDOM, "--set", "shedding=true"],
    "sixes": [
        "--game",
        "sixes",
        str(SAMPLES / "sixes-heuristic"),
        str(SAMPLES / "sixes-random"),
        str(SAMPLES / "sixes-random"),
        "--set",
        "chips=3",
    ],
}


FAULTY_BOT = raw_bot(
    'bad = msg["kind"] == "play" and msg["view"]["turn"] == 2\n'
    'answer = 999 if bad else msg["legal"][0]\n'
    'send({"type": "answer", "id": msg["id"], "answer": answer})'
)
"""Answers an illegal card on turn 2, and its first legal answer otherwise."""


def _faulty_bot(folder: Path) -> Path:
    """``FAULTY_BOT`` as a bot folder that a sandboxed bot (user nobody) can read."""
    bot = folder / "illegal"
    bot.mkdir()
    (bot / "bot.py").write_text(FAULTY_BOT)
    (bot / "bot.toml").write_text(
        'name = "illegal"\nversion = "0.1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
    )
    for path in (folder, bot, *bot.iterdir()):
        os.chmod(path, 0o755)
    return bot


@functools.cache
def _played() -> Path:
    """Every game of ``GAMES`` played once per test session, all at once (the bots
    mostly wait on each other), a game with a faulty bot, and a two-game tournament
    stored in ``arena.db``."""
    folder = Path(tempfile.mkdtemp(prefix="arena-viewer-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    games = {**GAMES, "faulty": [str(_faulty_bot(folder)), RANDOM, "--set", "rounds=1"]}
    runs = [
        subprocess.Popen(
            [ARENA, "play", *args, "--seed", "3", "--sandbox", "local", "--replay", str(folder / f"{kind}.jsonl")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for kind, args in games.items()
    ]
    tournament = [ARENA, "tournament", "run", RANDOM, HEURISTIC, "--deals", "1", "--name", "viewer"]
    tournament += ["--db", str(folder / "arena.db"), "--sandbox", "local", "--set", "rounds=1"]
    runs.append(subprocess.Popen(tournament, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for run in runs:
        _, err = run.communicate(timeout=180)
        assert run.returncode == 0, err
    return folder


def played(kind: str) -> Path:
    """The replay file of a real game of ``kind`` (a key of ``GAMES``)."""
    return _played() / f"{kind}.jsonl"


def stored_db() -> Path:
    """A database holding the games of a real (tiny) tournament."""
    return _played() / "arena.db"


def events_of(lines: list[Any]) -> list[Any]:
    return [event for line in lines if isinstance(line, EventsLine) for event in line.events]


def frames_of(kind: str) -> tuple[list[Any], dict[str, Any]]:
    lines = replay.read(played(kind))
    return lines, viewer.frames(lines, kind)


NIMMT = ["standard", "logical", "professional", "two_cards", "keep_rows", "shedding"]


@pytest.mark.parametrize("kind", [*NIMMT, "sixes"])
def test_a_frame_per_event_and_the_rules_state_after_every_step(kind: str) -> None:
    lines, data = frames_of(kind)
    frames = data["frames"]
    steps = list(replay.verify(lines, kind))
    assert len(frames) == sum(len(step.events) for step in steps), "one frame per event"
    assert [f["index"] for f in frames] == list(range(len(frames)))
    assert [f["kind"] for f in frames] == [e["type"].replace("draft_start", "draft") for e in events_of(lines)]
    last = -1
    for step in steps:
        last += len(step.events)
        frame, state = frames[last], step.state
        assert frame["hands"] == [list(hand) for hand in state.hands], f"hands after step ending at frame {last}"
        if data["game"] == "sixes":
            runs = [[r for r in RANKS if run is not None and run[0] <= r <= run[1]] for run in state.table]
            assert [[int(c[:-1]) for c in run] for run in frame["runs"]] == runs
            assert frame["chips"] == list(state.chips) == frame["scores"]
            assert state.over or frame["pot"] == state.pot
        else:
            assert frame["rows"] == [list(row) for row in state.rows], f"rows after step ending at frame {last}"
            if not data["settings"].get("shedding"):
                assert frame["scores"] == list(state.scores)
                assert state.over or frame["round_heads"] == list(state.round_heads)


@pytest.mark.parametrize("kind", NIMMT)
def test_nimmt_frames_keep_the_cards_and_heads_of_each_round(kind: str) -> None:
    """Within a round the cards on the table, in hands, in piles and face up are always
    the cards dealt; the heads this round are the heads in the piles; rows never pass 5."""
    lines, data = frames_of(kind)
    shedding = bool(data["settings"].get("shedding"))
    dealt: Counter[int] = Counter()
    for frame in data["frames"]:
        cards = Counter(c for row in frame["rows"] for c in row)
        cards += Counter(c for hand in frame["hands"] for c in hand)
        cards += Counter(c for pile in frame["piles"] for c in pile)
        cards += Counter(c for c, _ in frame["revealed"]) + Counter(frame["offer"])
        if frame["kind"] in ("deal", "draft"):
            dealt = cards
        assert cards == dealt, f"frame {frame['index']} ({frame['caption']})"
        assert all(len(row) <= 5 for row in frame["rows"])
        if shedding:
            assert frame["scores"] == [len(hand) for hand in frame["hands"]]
            assert not any(frame["piles"])
        elif frame["kind"] != "game_end":
            assert frame["round_heads"] == [sum(HEADS[c] for c in pile) for pile in frame["piles"]]


@pytest.mark.parametrize("kind", NIMMT)
def test_nimmt_frames_show_each_event_as_logged(kind: str) -> None:
    lines, data = frames_of(kind)
    frames = data["frames"]
    for frame, event in zip(frames, events_of(lines), strict=True):
        match event["type"]:
            case "reveal":
                assert frame["revealed"] == [list(p) for p in event["plays"]]
                assert (frame["round"], frame["turn"]) == (event["round"], event["turn"])
            case "place":
                row = frame["rows"][event["row"]]
                move = frame["move"]
                assert (move["seat"], move["card"], move["row"]) == (event["seat"], event["card"], event["row"])
                assert move["taken"] == event["taken"]
                if event["taken"]:
                    assert row == [event["card"]]
                    assert move["sixth"] is not event["chosen"]
                else:
                    assert row[0 if event["end"] == "left" else -1] == event["card"]
                assert [event["card"], event["seat"]] not in frame["revealed"]
            case "round_end":
                assert frame["scores"] == event["scores"] and frame["round_heads"] == event["heads"]
            case "pick":
                assert event["card"] in frame["hands"][event["seat"]]
                assert event["card"] not in frame["offer"]
            case "deal":
                assert frame["rows"] == event["rows"] and frame["hands"] == event["hands"]
    end = lines[-1]
    assert isinstance(end, End)
    assert frames[-1]["kind"] == "game_end"
    assert frames[-1]["scores"] == end.scores and frames[-1]["ranks"] == end.ranks
    assert data["result"]["scores"] == end.scores
    assert [r["frame"] for r in data["rounds"]] == [
        i
        for i, f in enumerate(frames)
        if f["kind"] == "draft" or (f["kind"] == "deal" and frames[i - 1]["kind"] != "pick")
    ]


def test_variant_specific_moments_are_there() -> None:
    kinds = {kind: Counter(f["kind"] for f in frames_of(kind)[1]["frames"]) for kind in NIMMT}
    assert kinds["logical"]["pick"] == 2 * 10 * 3 and kinds["logical"]["draft"] == 2
    assert kinds["two_cards"]["reveal"] == 3 * 5 and kinds["two_cards"]["place"] == 3 * 5 * 3 * 2
    assert kinds["standard"]["reveal"] == 3 * 10 and kinds["standard"]["round_end"] == 3
    assert kinds["shedding"]["round_end"] == 0 and kinds["shedding"]["deal"] == 1
    professional = frames_of("professional")[1]
    assert any(f["move"] and f["move"]["end"] == "left" for f in professional["frames"]), "a card placed left"
    keep = frames_of("keep_rows")[1]["frames"]
    deals = [i for i, f in enumerate(keep) if f["kind"] == "deal"]
    for i in deals[1:]:
        assert keep[i]["rows"] == keep[i - 1]["rows"], "the rows stay between rounds"
        assert "rows stay" in keep[i]["caption"]
    two = frames_of("two_cards")[1]["frames"]
    reveal = next(f for f in two if f["kind"] == "reveal")
    assert Counter(seat for _, seat in reveal["revealed"]) == {0: 2, 1: 2, 2: 2}
    shedding = frames_of("shedding")[1]["frames"]
    assert any(
        len(f["hands"][f["move"]["seat"]]) > len(shedding[i - 1]["hands"][f["move"]["seat"]])
        for i, f in enumerate(shedding)
        if f["kind"] == "place" and f["move"]["taken"]
    ), "a taken row grows the taker's hand"


def test_sixes_frames_follow_every_move() -> None:
    lines, data = frames_of("sixes")
    frames = data["frames"]
    assert [s["suit"] for s in data["suits"]] == ["o", "c", "e", "b"]
    for frame, event in zip(frames, events_of(lines), strict=True):
        table = [c for run in frame["runs"] for c in run]
        if frame["kind"] != "game_end":
            assert sorted(table + [c for hand in frame["hands"] for c in hand]) == sorted(DECK), "40 cards"
        match event["type"]:
            case "play":
                assert event["card"] in table and event["card"] not in frame["hands"][event["seat"]]
                assert frame["move"] == {"seat": event["seat"], "card": event["card"]}
            case "pass":
                assert frame["pot"] == event["pot"]
            case "round_end":
                assert frame["chips"] == event["chips"]
                assert frame["hands"][event["winner"]] == []
    end = lines[-1]
    assert isinstance(end, End)
    assert frames[-1]["scores"] == end.scores and frames[-1]["ranks"] == end.ranks


@pytest.mark.parametrize("kind", [*NIMMT, "sixes"])
def test_each_decision_time_shows_on_the_frame_it_caused(kind: str) -> None:
    lines, data = frames_of(kind)
    frames = iter(data["frames"])
    decision: DecisionLine | None = None
    for line in lines:
        if isinstance(line, DecisionLine):
            decision = line
        elif isinstance(line, EventsLine):
            first = next(frames)
            for _ in line.events[1:]:
                later = next(frames)
                assert later["times"] is None and later["notes"] == [] and later["defaulted"] == []
            if decision is None:
                assert first["times"] is None
            else:
                for seat, ms in zip(decision.seats, decision.wall_ms, strict=True):
                    assert first["times"][seat] == pytest.approx(ms, abs=0.01)
            decision = None


def test_the_data_is_json_and_describes_the_game() -> None:
    lines, data = frames_of("standard")
    assert json.loads(json.dumps(data)) == data
    assert data["format"] == viewer.FORMAT and data["game"] == "nimmt" and data["unit"] == "heads"
    assert [s["letter"] + " " + s["name"] for s in data["seats"]] == ["A heuristic", "B random", "C random"]
    assert all(s["isolation"] for s in data["seats"])
    assert data["heads"][55] == 7 and len(data["heads"]) == 105
    assert len(data["frames"]) < 400
    sixes = frames_of("sixes")[1]
    assert sixes["unit"] == "chips" and not sixes["lower_is_better"]
    assert json.loads(json.dumps(sixes)) == sixes


def test_faults_show_on_the_frame_where_they_happened() -> None:
    data = viewer.frames(replay.read(played("faulty")))
    noted = [f for f in data["frames"] if f["notes"]]
    assert len(noted) == 1
    frame = noted[0]
    assert (frame["kind"], frame["turn"]) == ("reveal", 2)
    assert frame["notes"][0]["seat"] == 0 and frame["notes"][0]["kind"] == "illegal"
    assert "999" in frame["notes"][0]["message"] and "999" in frame["notes"][0]["line"]
    assert frame["defaulted"] == [0]
    assert data["result"]["statuses"][0]["status"] == "faulty"


def test_a_tampered_replay_gives_no_frames(tmp_path: Path) -> None:
    text = played("standard").read_text().splitlines()
    number, line = next((i, line) for i, line in enumerate(text) if '"type":"place"' in line)
    text[number] = re.sub(r'"row":(\d)', lambda m: f'"row":{(int(m.group(1)) + 1) % 4}', line, count=1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(text) + "\n")
    with pytest.raises(replay.ReplayError, match=f"bad.jsonl:{number + 1}: events differ"):
        viewer.frames(replay.read(bad), "bad.jsonl")


EXTERNAL = re.compile(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/|\bsrc\s*=|\bhref\s*=|@import|url\(", re.IGNORECASE)


@pytest.mark.parametrize("kind", ["standard", "sixes"])
def test_the_standalone_page_embeds_everything(kind: str) -> None:
    lines = replay.read(played(kind))
    page = viewer.standalone_html(lines, "a <game> & more")
    assert EXTERNAL.search(page) is None, EXTERNAL.search(page)
    assert "<title>a &lt;game&gt; &amp; more</title>" in page
    assert page.count("<script") == 2 and "</script" not in page.split('id="replay-data">', 1)[1].split("</script>")[0]
    payload = page.split('<script type="application/json" id="replay-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(payload) == viewer.frames(lines)
    assert (viewer.STATIC / "viewer.js").read_text() in page
    assert (viewer.STATIC / "viewer.css").read_text() in page
    script = viewer.drawer_script(json.loads(payload)["game"])
    assert script is not None and script in page and "window.ArenaViewer.addStyle(" in script


GAME_WORDS = re.compile(r"nimmt|sixes|\bcards?\b|heads|\bchips?\b|\bsuits?\b|\bpot\b|bull", re.IGNORECASE)


def test_the_generic_viewer_and_site_name_no_game() -> None:
    """Each game's looks live in its folder (its record's ``drawer_css``), none in the
    site's own assets."""
    for asset in sorted(viewer.STATIC.glob("*.css")) + sorted(viewer.STATIC.glob("*.js")):
        assert GAME_WORDS.findall(asset.read_text()) == [], asset.name


def test_a_drawer_is_sent_with_its_style_sheet() -> None:
    """``/drawers/GAME.js``'s body: the record's script, then the call handing the viewer
    its sheet as a string that cannot close the page's script element."""
    for game in ("nimmt", "sixes"):
        record = catalog.get_game(game)
        script, css = record.drawer_script(), record.drawer_stylesheet()
        assert script is not None and css is not None and ".rv-hand" in css
        sent = viewer.drawer_script(game)
        assert sent is not None and sent.startswith(script) and "</" not in sent[len(script) :]
        call = sent[len(script) :].strip()
        assert call == f"window.ArenaViewer.addStyle({json.dumps(game)}, {json.dumps(css, ensure_ascii=False)});"


def test_a_drawer_without_a_sheet_is_sent_alone_and_a_missing_sheet_is_named() -> None:
    nimmt = catalog.get_game("nimmt")
    with catalog.registered(dataclasses.replace(nimmt, drawer_css=None)):
        assert viewer.drawer_script("nimmt") == nimmt.drawer_script()
    for spec, said in (("arena.games.nimmt:gone.css", "gone.css"), ("viewer.css", "expected PACKAGE:FILE")):
        with catalog.registered(dataclasses.replace(nimmt, drawer_css=spec)):
            with pytest.raises(catalog.CatalogError, match=f"nimmt's drawer_css {spec!r}: .*{said}"):
                viewer.drawer_script("nimmt")


def test_replay_html_writes_the_page_and_prints_its_path(tmp_path: Path) -> None:
    out = tmp_path / "game.html"
    result = subprocess.run(
        [ARENA, "replay", str(played("standard")), "--html", str(out)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(out)
    assert 'id="replay-data"' in out.read_text()


def test_replay_html_of_a_stored_game(tmp_path: Path) -> None:
    out = tmp_path / "stored.html"
    args = ["replay", "1", "--db", str(stored_db()), "--html", str(out)]
    result = subprocess.run([ARENA, *args], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    page = out.read_text()
    assert "Six Arena replay · game 1" in page
    with Store(stored_db()) as store:
        header = replay.loads(store.replay(1))[0]
    assert isinstance(header, replay.Header)
    payload = page.split('id="replay-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(payload)["seed"] == str(header.seed), "a seed past 2**53 stays exact, as text"


def test_replay_html_errors_are_one_clear_line(tmp_path: Path) -> None:
    source = str(played("standard"))
    cases = [
        ([source, "--html", str(tmp_path / "missing" / "x.html")], ["cannot write the page", "No such file"]),
        ([source, "--html", str(tmp_path)], ["cannot write the page"]),
        ([str(tmp_path / "none.jsonl"), "--html", str(tmp_path / "x.html")], ["cannot read replay"]),
    ]
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(played("standard").read_text().splitlines(keepends=True)[:-1]))
    cases.append(([str(cut), "--html", str(tmp_path / "x.html")], ["no end line"]))
    runs = [
        subprocess.Popen([ARENA, "replay", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for args, _ in cases
    ]
    for run, (args, needles) in zip(runs, cases, strict=True):
        out, err = run.communicate(timeout=60)
        result = subprocess.CompletedProcess(args, run.returncode, out, err)
        assert_clean_error(result, *needles)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "x.html").exists()
