"""What a bot or an upload writes reaches the organiser's terminal shown, never obeyed.

A hostile bot (its manifest's fields, its stderr, the lines it sends) and a hostile
submission carry OSC 52 (writes the clipboard), OSC 0 (the window title), CSI 2J 3J
(clears the screen and its scrollback), colours that fake an arena line, 8-bit CSI,
bidi overrides and rich markup. Each ``arena`` command that shows them runs for real,
and its output bytes must hold no control character (but newline and tab) and no bidi
control, while the bot's words are still there, escaped (``\\x1b``, ``\\u202e``).
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.store import Store
from arena.store.submissions import Submissions
from arena.text import shown

from ..conftest import SAMPLES, MakeBot, serving

ARENA = str(Path(sys.executable).parent / "arena")
EVIL = (
    "\x1b]52;c;SGFja2Vk\x07\x1b]0;pwned\x07\x1b[2J\x1b[3J\x1b[1;31merror: FAKE\x1b[0m \x9b2J"
    " \u202eevil\u202c \u2066iso\u2069 \u200f [bold red]markup[/] \x7f\r"
)
"""What the bot writes: every kind of byte a terminal would obey, and rich markup."""
EVIL_TOML = "".join(ch if ch.isprintable() and ch != '"' else f"\\u{ord(ch):04x}" for ch in EVIL)
"""The same in a TOML string (whose control characters must be escapes)."""
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
VISIBLE = ("\\x1b]52;c;SGFja2Vk\\x07", "\\x1b[2J\\x1b[3J", "\\x9b2J", "\\u202eevil\\u202c", "[bold red]markup[/]")
"""The bot's words as the organiser must see them: escaped, and the markup as text."""

HOSTILE = f"""
import sys
from protocol.bot import Bot, run

EVIL = {EVIL!r}
sys.stderr.write(EVIL + "\\n")
sys.stderr.flush()


class Hostile(Bot):
    sent = False

    def decide(self, kind, view, legal):
        if not self.sent:  # a malformed line first: the fault's evidence
            self.sent = True
            sys.stdout.write(EVIL + "\\n")
            sys.stdout.flush()
        return min(legal)


run(Hostile())
"""


def manifest(name: str, games: str = '["nimmt"]') -> str:
    return (
        f'name = "{name}"\nversion = "0.1"\nlanguage = "py{EVIL_TOML}"\nrun = "python3 bot.py"\n'
        f'games = {games}\ndescription = "{EVIL_TOML}"\n'
    )


def arena(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[bytes]:
    environment = {k: v for k, v in os.environ.items() if k != "ARENA_TOKEN"} | {"COLUMNS": "1000"} | (env or {})
    return subprocess.run([ARENA, *args], capture_output=True, env=environment, timeout=timeout)


def safe(done: subprocess.CompletedProcess[bytes], *visible: str) -> str:
    """Its stdout and stderr: UTF-8 without a character a terminal obeys, holding each of
    ``visible``; returned as text."""
    output = done.stdout.decode("utf-8") + done.stderr.decode("utf-8")
    found = UNSAFE.search(output)
    assert found is None, f"{found.group()!r} reached the terminal in {output!r}"
    assert "Traceback" not in output, output
    for words in visible:
        assert words in output, (words, output)
    return output


def test_shown_escapes_what_a_terminal_obeys_and_keeps_the_rest() -> None:
    assert shown(EVIL) == (
        "\\x1b]52;c;SGFja2Vk\\x07\\x1b]0;pwned\\x07\\x1b[2J\\x1b[3J\\x1b[1;31merror: FAKE\\x1b[0m \\x9b2J"
        " \\u202eevil\\u202c \\u2066iso\\u2069 \\u200f [bold red]markup[/] \\x7f\\x0d"
    )
    assert shown("a\tb\nc") == "a\\x09b\\x0ac" and shown("a\tb\nc", lines=True) == "a\tb\nc"
    assert shown("ünïcode ♠ 6 nimmt! C:\\bots") == "ünïcode ♠ 6 nimmt! C:\\bots"
    assert UNSAFE.search(shown("".join(map(chr, range(0x2100))))) is None


def test_a_hostile_bot_through_every_command_is_shown_not_obeyed(make_bot: MakeBot, tmp_path: Path) -> None:
    name = f"hostile-{secrets.token_hex(4)}"  # fresh: no build or cache reused
    bot = make_bot(name, HOSTILE, manifest=manifest(name))
    lowest = str(SAMPLES / "lowest")
    replay = tmp_path / "game.jsonl"
    played = arena("play", str(bot), lowest, "--sandbox", "local", "--seed", "3", "--replay", str(replay))
    safe(played)
    assert replay.exists(), played.stderr
    safe(arena("replay", str(replay), "--stderr"), *VISIBLE, "\\u2066iso\\u2069")
    safe(arena("replay", str(replay)), *VISIBLE)
    checked = arena("bot", "check", str(bot), "--sandbox", "local")
    safe(checked, *VISIBLE)
    assert checked.returncode == 1, "its malformed line fails the battery"

    db = tmp_path / "arena.db"
    safe(arena("bot", "add", str(bot), "--db", str(db)))
    safe(arena("bot", "list", "--db", str(db)), *VISIBLE)
    tournament = f"t{EVIL}"  # the organiser's words, through the same function
    ran = arena(
        "tournament", "run", str(bot), lowest, "--db", str(db), "--sandbox", "local", "--name", tournament,
        "--deals", "1", "--table-size", "2",
    )  # fmt: skip
    safe(ran, "\\x1b]52;c;SGFja2Vk\\x07")
    for fmt in ("table", "json", "csv"):
        safe(arena("games", "--db", str(db), "--tournament", tournament, "--format", fmt), "52;c;SGFja2Vk")
        safe(arena("tournament", "list", "--db", str(db), "--format", fmt), "52;c;SGFja2Vk")
        safe(arena("leaderboard", "--db", str(db), "--tournament", tournament, "--format", fmt))
    safe(arena("tournament", "show", tournament, "--db", str(db)), "\\x1b]52;c;SGFja2Vk\\x07")
    safe(arena("tournament", "show", tournament, "--db", str(db), "--format", "json"), "\\u001b]52;c;SGFja2Vk")
    ids = [row[0] for row in sqlite3.connect(db).execute("SELECT id FROM games")]
    stored = [safe(arena("replay", str(i), "--stderr", "--db", str(db))) for i in ids]
    assert any(all(words in said for words in VISIBLE) for said in stored), stored
    refused = arena("replay", str(tmp_path / f"no{EVIL}.jsonl"))
    assert refused.returncode != 0
    safe(refused, "\\x1b]52;c;SGFja2Vk\\x07")


def test_a_hostile_submission_is_shown_not_obeyed_by_submit_and_the_ladder(make_bot: MakeBot, tmp_path: Path) -> None:
    """`arena submit --wait` and `arena ladder run` of two submissions: one whose
    manifest lists a hostile game (its reason quotes it), one whose lines fail the
    battery (its report quotes them); then `arena ladder show` and `arena author list`."""
    tag = secrets.token_hex(4)
    games = f'["nimmt", "ni{EVIL_TOML}mmt"]'
    listing = make_bot(f"lister-{tag}", HOSTILE, manifest=manifest(f"lister-{tag}", games))
    talker = make_bot(f"talker-{tag}", HOSTILE, manifest=manifest(f"talker-{tag}"))
    db = tmp_path / "arena.db"
    with Store(db) as store:
        token = Submissions(store).add_author("ada")[1]
    ladder_log = tmp_path / "ladder.log"
    with serving(db, extra=("--submissions",)) as url, open(ladder_log, "wb") as log:
        ladder = subprocess.Popen(
            [ARENA, "ladder", "run", "--db", str(db), "--sandbox", "local", "--seed", "5"],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "COLUMNS": "1000"},
        )
        try:
            env = {"ARENA_TOKEN": token}
            listed = arena("submit", str(listing), "--server", url, "--wait", env=env)
            talked = arena("submit", str(talker), "--server", url, "--wait", env=env)
            deadline = time.monotonic() + 60
            while "rejected" not in ladder_log.read_text(errors="replace").split(f"talker-{tag}", 1)[-1]:
                assert time.monotonic() < deadline, ladder_log.read_text(errors="replace")
                time.sleep(0.2)
        finally:
            ladder.send_signal(signal.SIGINT)
            try:
                ladder.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(ladder.pid, signal.SIGKILL)
                ladder.wait()
    assert listed.returncode == 1 and talked.returncode == 1, (listed.stdout, talked.stdout)
    safe(listed, "rejected", "ni\\x1b]52;c;SGFja2Vk\\x07")
    safe(talked, "rejected", "FAIL", "\\x1b]52;c;SGFja2Vk\\x07")
    ran = subprocess.CompletedProcess([], 0, ladder_log.read_bytes(), b"")
    safe(ran, f"lister-{tag}:0.1 rejected", "ni\\x1b]52;c;SGFja2Vk\\x07", f"talker-{tag}:0.1 rejected")
    safe(arena("ladder", "show", "--db", str(db)))
    safe(arena("author", "list", "--db", str(db)), "ada")


@pytest.mark.parametrize("field", ["name", "unknown"])
def test_a_bad_manifest_is_one_escaped_line(make_bot: MakeBot, field: str) -> None:
    """A manifest the arena refuses is named in one line, the bot's words in it escaped."""
    name = f"bad-{secrets.token_hex(3)}"
    text = 'version = "0.1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
    if field == "unknown":
        text += f'name = "{name}"\n"x{EVIL_TOML}" = 1\n'
    else:
        text += f'name = "{name}{EVIL_TOML}"\n'
    bot = make_bot(name, "", manifest=text)
    for args in (["bot", "add", str(bot), "--db", str(bot.parent / "a.db")], ["bot", "check", str(bot)]):
        done = arena(*args)
        assert done.returncode != 0
        safe(done, "52;c;SGFja2Vk")


def test_the_consoles_net_escapes_a_bots_bytes_and_keeps_the_arenas_styles() -> None:
    """Whatever reaches the CLI's console unescaped (a table cell, a rule, a markup
    line) is escaped at its render; rich's own colours still reach a real terminal."""
    import io

    from rich.markup import escape
    from rich.table import Table

    from arena.cli.terminal import TerminalConsole

    out = io.StringIO()
    terminal = TerminalConsole(file=out, force_terminal=True, color_system="standard", width=500, highlight=False)
    table = Table(title="bots")
    table.add_column("language")
    table.add_row(escape(EVIL))
    terminal.print(table)
    terminal.rule(escape(EVIL))
    terminal.print(f"[bold red]error:[/] {escape(EVIL)}")
    written = out.getvalue()
    assert "\x1b]" not in written and "\x1b[2J" not in written and "\x9b" not in written and "\u202e" not in written
    assert written.count("\\x1b]52;c;SGFja2Vk") == 3 and written.count("[bold red]markup[/]") == 3
    assert "\x1b[1;31merror:" in written, "the arena's own style is still drawn"


def test_the_servers_log_lines_are_shown_not_obeyed() -> None:
    """`arena serve` logs through ``ShownFormatter``: a request path or an exception's
    message that quotes a client or a bot is escaped, its traceback too."""
    import logging

    from arena.text import ShownFormatter

    try:
        raise ValueError(EVIL)
    except ValueError as exc:
        record = logging.LogRecord("arena.web", logging.ERROR, __file__, 1, "error answering %s", (EVIL,), None)
        record.exc_info = (type(exc), exc, exc.__traceback__)
    line = ShownFormatter("%(levelname)s %(message)s").format(record)
    assert UNSAFE.search(line) is None and line.count("\\x1b]52;c;SGFja2Vk\\x07") == 2
    assert line.startswith("ERROR error answering") and "\nTraceback" in line, "its lines are kept"


def test_a_hostile_game_list_is_shown_not_obeyed_and_nothing_is_stored(make_bot: MakeBot, tmp_path: Path) -> None:
    """The game is chosen from what the bots' manifests list, so those names reach the
    refusal line: escaped there, and refused before any bot or database file is stored."""
    name = f"games-{secrets.token_hex(3)}"
    bot = make_bot(name, HOSTILE, manifest=manifest(name, games=f'["{EVIL_TOML}"]'))
    other = str(SAMPLES / "random")
    db = tmp_path / "never.db"
    for args in (
        ["tournament", "run", other, str(bot), "--db", str(db), "--sandbox", "local"],
        ["gauntlet", str(bot), other, "--db", str(db), "--sandbox", "local"],
        ["play", other, str(bot), "--sandbox", "local"],
    ):
        done = arena(*args)
        assert done.returncode != 0
        assert "no game in common" in safe(done, "52;c;SGFja2Vk")
    assert not list(tmp_path.glob("never*")), "a refused run stored something"
