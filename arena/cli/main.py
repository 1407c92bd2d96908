"""The ``arena`` command: the typer app and where each command group is registered.

Each command group lives in a module of its own (``arena.cli.play``, ``arena.cli.bots``,
``arena.cli.tournaments`` ...), which imports at its top only typer, rich and the
standard library: ``arena --help`` reads them all, so whatever one imports at its top
is paid by every command. What a command needs beyond that (trio, the referee, Docker,
numpy, the web stack) it imports when it runs. No command module imports this one.
"""

from __future__ import annotations

import typer

from arena.cli.authors import author_app, submit_cmd
from arena.cli.bots import bot_app
from arena.cli.cluster import scheduler, worker
from arena.cli.games import game_app
from arena.cli.gauntlet import gauntlet_cmd
from arena.cli.images import image_app
from arena.cli.ladder import ladder_app
from arena.cli.play import demo, play
from arena.cli.replay import replay_cmd
from arena.cli.results import games_cmd, leaderboard_cmd
from arena.cli.tournaments import tournament_app
from arena.cli.upkeep import backup_cmd, check_cmd
from arena.cli.web import serve

app = typer.Typer(
    help="Six Arena: referee bots written in any language, sandboxed and timed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
"""The ``arena`` command; ``arena --help`` lists the commands in this order."""

app.command("play")(play)
app.command("demo")(demo)
app.command("replay")(replay_cmd)
app.command("leaderboard")(leaderboard_cmd)
app.command("games")(games_cmd)
app.command("gauntlet")(gauntlet_cmd)
app.command("serve")(serve)
app.command("scheduler")(scheduler)
app.command("worker")(worker)
app.command("submit")(submit_cmd)
app.command("backup")(backup_cmd)
app.command("check")(check_cmd)
app.add_typer(image_app, name="image")
app.add_typer(bot_app, name="bot")
app.add_typer(tournament_app, name="tournament")
app.add_typer(author_app, name="author")
app.add_typer(game_app, name="game")
app.add_typer(ladder_app, name="ladder")


def main() -> None:
    app()
