"""The ``arena`` command: the typer app and where each command group lives.

Each command group lives in a module of its own (``arena.cli.play``, ``arena.cli.bots``,
``arena.cli.tournaments`` ...), loaded only when its command is named: ``arena --help``
lists them from ``COMMANDS`` (their summaries, checked against the commands themselves
by ``tests/unit/test_cli_startup.py``) and imports none. A command module imports at its
top only typer and the standard library; what a command needs beyond that (rich,
trio, the referee, Docker, numpy, the web stack) it imports when it runs. No command
module imports this one.
"""

from __future__ import annotations

import typer

from arena.cli.lazy import ArenaGroup, Later

COMMANDS = (
    ("play", Later(
        "arena.cli.play:play",
        "Play one game between bots and print each round and the final standings. Exit status 3 when a seat was"
        " disqualified (with --strict: when any seat had a fault). With --human you take a seat at this terminal:"
        " shown what your seat sees and what you may answer, asked for your move, every seat given --human-time a"
        " move.",
    )),
    ("demo", Later(
        "arena.cli.play:demo",
        "A small demo tournament of the sample bots, then the leaderboard of every game stored.",
    )),
    ("replay", Later(
        "arena.cli.replay:replay_cmd",
        "Re-simulate a logged game through the rules and show it turn by turn; with --html, write it as a web page"
        " to open in any browser instead.",
    )),
    ("leaderboard", Later(
        "arena.cli.results:leaderboard_cmd",
        "Elo ratings with 95% intervals over every stored game (or one tournament), one board per game and rule set.",
    )),
    ("games", Later(
        "arena.cli.results:games_cmd",
        "List stored games, oldest first, or newest first with --newest (`arena replay GAME_ID` shows one),"
        " filtered as the web's games page filters them.",
    )),
    ("gauntlet", Later(
        "arena.cli.gauntlet:gauntlet_cmd",
        "Play NEW against the field in duplicate deals: with --sprt until the sequential test accepts H0 or H1"
        " (or --max-games), else --deals deals per table. Stored as a tournament: `arena games`,"
        " `arena leaderboard` and `--resume` work on it.",
    )),
    ("serve", Later(
        "arena.cli.web:serve",
        "Serve the leaderboards, tournaments, bots and replays as web pages and JSON.",
    )),
    ("scheduler", Later(
        "arena.cli.cluster:scheduler",
        "Run a Dask scheduler for arena workers (on loopback by default).",
    )),
    ("worker", Later(
        "arena.cli.cluster:worker",
        "Join a Dask cluster as a machine that plays matches.",
    )),
    ("submit", Later(
        "arena.cli.authors:submit_cmd",
        "Submit a bot to an arena: pack the folder, upload it, print where to follow it.",
    )),
    ("backup", Later(
        "arena.cli.upkeep:backup_cmd",
        "Back a database up with its bot snapshots, together, consistent (safe while a tournament, a ladder or"
        " `arena serve` writes to it). The copy is a database itself: `--db DEST` reads it; moved in place of the"
        " original, file and folder, it restores it.",
    )),
    ("check", Later(
        "arena.cli.upkeep:check_cmd",
        "Check a database (a backup, or the file after a crash): SQLite's integrity and foreign-key checks, its"
        " schema version, each bot's snapshot. Exit 1 on a problem. (A bot folder is checked with"
        " `arena bot check`.)",
    )),
    ("image", Later("arena.cli.images:image_app", "The base image bots run on (Docker).")),
    ("bot", Later(
        "arena.cli.bots:bot_app", "Bots: start one, check it, try it against a league; store, list and build them."
    )),
    ("tournament", Later("arena.cli.tournaments:tournament_app", "Round-robin tournaments with duplicate deals.")),
    ("author", Later("arena.cli.authors:author_app", "Authors: who may submit bots to `arena serve --submissions`.")),
    ("game", Later("arena.cli.games:game_app", "Games: check that a game keeps the contract.")),
    ("ladder", Later(
        "arena.cli.ladder:ladder_app",
        "The ladder: submitted bots, built, checked and rated continuously.",
    )),
)  # fmt: skip
"""Every command of ``arena``, in the order ``arena --help`` lists them: where it is
(a function, or the typer app of a command group) and the summary the list gives."""


class Arena(ArenaGroup):
    """The ``arena`` group: every command in ``COMMANDS``, loaded when named."""

    LATER = COMMANDS


app = typer.Typer(
    cls=Arena,
    help="Six Arena: referee bots written in any language, sandboxed and timed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
"""The ``arena`` command."""


@app.callback()
def arena() -> None:
    """Nothing to do before a command: the group is typer's, its commands ``COMMANDS``."""


def main() -> None:
    """``arena`` and ``python -m arena``, alike: both name themselves ``arena``."""
    app(prog_name="arena")
