"""A game of another shape than Goofspiel, Liar's dice (``tests/games/liars_dice/``),
registered only through ``ARENA_GAMES``: one seat answers at a time, dice are private,
a round takes as many decisions as its bids, and the score is in chips. It plays
through the commands a game goes through (play, replay, bot check, tournament,
leaderboard, games), each a real ``arena`` process with real bot processes in the local
sandbox and a real SQLite file; and its rules keep the contract the referee relies on."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from pathlib import Path

import pytest

from arena.games.registry import ENV, games
from arena.play import replay

from ..games.liars_dice import rules
from ..games.liars_dice.helpers import arena, liars_bots
from ..games.liars_dice.record import ENV_VALUE
from ..games.liars_dice.wire import Call, GameEnd, Roll


@pytest.fixture(scope="module")
def bots(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return liars_bots(tmp_path_factory.mktemp("liars") / "bots")


def test_random_games_keep_the_contract_and_the_chips() -> None:
    """Random legal answers through 200 games of 2 to 6 seats: the default is always
    legal, one seat answers at a time, a seat out of chips never answers, every Roll
    shows each seat its own dice only, and the chips are conserved."""
    for seed in range(200):
        players = 2 + seed % 5
        settings = rules.parse_settings({}, players)
        state, events = rules.start(settings, players, seed)
        pick = random.Random(seed)
        while (decision := rules.decision(state)) is not None:
            (seat,) = decision.seats
            assert state.chips[seat] > 0
            legal = rules.legal(state, seat)
            assert rules.default(state, seat) in legal
            answer = pick.choice(legal[:6])
            state, events = rules.apply(state, {seat: list(answer) if isinstance(answer, tuple) else answer})
            for event in events:
                if isinstance(event, Roll):
                    for viewer in range(players):
                        seen = rules.observe(event, viewer)
                        assert isinstance(seen, Roll)
                        assert all(d == () for s, d in enumerate(seen.dice) if s != viewer)
        outcome = rules.outcome(state)
        assert outcome is not None and sum(outcome.scores) == settings.chips * players


def test_a_call_shows_every_die_and_pays_a_chip() -> None:
    state, _ = rules.start(rules.parse_settings({"dice": 2, "chips": 2}, 2), 2, 11)
    state, _ = rules.apply(state, {0: [4, 6]})  # four sixes among four dice: a lie unless all show six
    state, events = rules.apply(state, {1: "liar"})
    call = next(e for e in events if isinstance(e, Call))
    assert call.bidder == 0 and call.count == sum(d.count(6) for d in call.dice)
    assert call.loser == (0 if call.count < 4 else 1)
    with pytest.raises(rules.IllegalAnswer, match="not a higher bid"):
        rules.apply(state, {state.turn: [0, 3]})


def test_play_replay_and_bot_check(bots: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`arena play` writes a replay whose events re-verify through the rules here (bids,
    a call showing every die, the end in chips), `arena replay` shows it, and `arena bot
    check` passes the bot through the generic battery."""
    out = tmp_path / "game.jsonl"
    played = arena("play", *map(str, bots), "--game", "liars-dice", "--sandbox", "local", "--seed", "3",
                   "--replay", str(out))  # fmt: skip
    assert played.returncode == 0, played.stderr
    monkeypatch.setenv(ENV, ENV_VALUE)
    events = [e for step in replay.verify(replay.read(out)) for e in step.events]
    assert any(isinstance(e, Call) for e in events) and isinstance(events[-1], GameEnd)
    shown = arena("replay", str(out))
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    checked = arena("bot", "check", str(bots[0]), "--game", "liars-dice")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_tournament_its_leaderboard_and_its_games(bots: list[Path], tmp_path: Path) -> None:
    db = tmp_path / "liars.db"
    ran = arena("tournament", "run", *map(str, bots), "--game", "liars-dice", "--table-size", "2", "--deals", "2",
                "--sandbox", "local", "--db", str(db), "--name", "dice", "--seed", "9")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    board = arena("leaderboard", "--game", "liars-dice", "--db", str(db), "--format", "json")
    assert board.returncode == 0, board.stderr
    rows = json.loads(board.stdout)["liars-dice/standard"]
    assert sorted(r["bot"] for r in rows) == ["liar-bold:1.0.0", "liar:1.0.0"]
    assert sum(r["games"] for r in rows) == 2 * 4  # 1 table x 2 deals x 2 rotations, two seats each
    table = arena("leaderboard", "--game", "liars-dice", "--db", str(db))
    assert table.returncode == 0 and "Liar's dice (liars-dice/standard)" in table.stdout, table.stdout
    listed = arena("games", "--tournament", "dice", "--db", str(db))
    assert listed.returncode == 0 and listed.stdout.count("liar-bold") >= 4, listed.stdout


def test_bot_check_names_a_bid_in_the_games_words(bots: list[Path], tmp_path: Path) -> None:
    """Was: any illegal answer got 6 nimmt!'s words ("a card is a JSON number")."""
    quoted = tmp_path / "quoted"
    shutil.copytree(bots[0], quoted)
    manifest = (quoted / "bot.toml").read_text().replace('"python3 bot.py"', '"python3 bot.py quoted"')
    (quoted / "bot.toml").write_text(manifest.replace('name = "liar"', 'name = "quoted"'))
    for path in (tmp_path, quoted, *quoted.iterdir()):
        os.chmod(path, 0o755)
    checked = arena("bot", "check", str(quoted), "--game", "liars-dice", "--sandbox", "local")
    assert checked.returncode != 0, checked.stdout
    assert re.search(r'a bid is a list of JSON numbers, not of strings: answer \[\d+,\d+\], not \["\d+","\d+"\]',
                     checked.stdout), checked.stdout  # fmt: skip
    assert not re.search(r"\b(card|row|pair|nimmt)\b", checked.stdout.split("FAIL", 1)[1]), checked.stdout


def test_it_is_registered_from_outside_only(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "liars-dice" not in games()
    monkeypatch.setenv(ENV, ENV_VALUE)
    assert "liars-dice" in games()
