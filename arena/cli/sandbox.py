"""The sandbox a playing command runs its bots in: ``arena play``, ``bot check``,
``tournament run`` and ``gauntlet`` choose it, check it and build what it lacks alike.

Like every command module it imports only typer, rich and the standard library at its
top; the sandboxes (and with them trio and Docker's SDK) load when a command opens one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from arena.cli.common import DEFAULT_DB, console, err_console, fail, in_users_words, open_store, user_errors

if TYPE_CHECKING:
    from arena.bots import Bot
    from arena.sandbox.base import Sandbox


def check_games(bots: list[Bot], game: str) -> None:
    """Seat no bot in a game its manifest does not list: say so before anything starts."""
    for bot in bots:
        if game not in bot.manifest.games:
            listed = ", ".join(bot.manifest.games) or "no game"
            hint = f": to play it, --game {bot.manifest.games[0]}" if bot.manifest.games else ""
            fail(in_users_words(f"{bot.path}: {bot.name} does not play {game} (its bot.toml lists {listed}){hint}"))


def open_sandbox(name: str) -> Sandbox:
    """The sandbox for ``--sandbox NAME``, saying once why ``auto`` fell back to local,
    after a Python bot on the SDK answered in it."""
    from arena.sandbox import choose_sandbox, sandbox_name

    chosen = sandbox_name(name)
    if chosen is None:
        fail(f"--sandbox {name!r}: choose docker, local (bubblewrap), auto or unsafe-local")
    sandbox, note = choose_sandbox(chosen)
    if note:
        err_console.print(f"[yellow]note:[/] {note}")
    from arena.sandbox.runtime import check_python_bots

    check_python_bots(sandbox, progress=lambda line: err_console.print(f"[dim]{escape(line)}[/]"))
    return sandbox


def prepare(sandbox: Sandbox, bots: list[Bot]) -> None:
    """Build what is missing (bot images, sealed copies) before any clock runs."""
    for bot in bots:
        sandbox.prepare(bot, progress=lambda line: err_console.print(f"[dim]{line}[/]"))


def image_prune(
    dbs: Annotated[
        list[Path],
        typer.Option("--db", help="A database whose stored bots' images are kept (repeatable; default arena.db)."),
    ] = [],  # noqa: B006
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask (needed when not at a terminal).")] = False,
) -> None:
    """List the arena's images that are no longer current (bases of another SDK or other
    runtimes, runtime layers no base uses, bots built on an old base) and remove them once
    asked. Kept: the current base and its layers, the images of the bots stored in the
    databases, and every image a container uses (a running arena's)."""
    from arena.sandbox import images
    from arena.sandbox.outdated import outdated, prune

    with user_errors():
        stored: set[str] = set()
        for db in dbs or ([DEFAULT_DB] if DEFAULT_DB.exists() else []):
            store = open_store(db, read_only=True)
            try:
                stored |= {bot.hash for bot in store.list_bots()}
            finally:
                store.close()
        client = images.connect()
        try:
            current = images.base_tag(client)
        except images.ImageError:
            current = ""
        stale = outdated(client, current, stored)
        if not stale:
            console.print("no outdated arena image: nothing to remove", markup=False)
            return
        for tag, why in stale:
            console.print(f"outdated: {tag} ({why})", markup=False, soft_wrap=True)
        count = f"{len(stale)} image{'s' if len(stale) != 1 else ''}"
        if not yes:
            if not sys.stdin.isatty():
                fail(f"removing {count} needs a yes: not at a terminal, add --yes")
            if not typer.confirm(f"Remove these {count}?", default=False):
                fail("nothing removed")
        removed = prune(client, [tag for tag, _ in stale], progress=lambda line: console.print(line))
        console.print(f"removed {removed} of {count}", markup=False)
