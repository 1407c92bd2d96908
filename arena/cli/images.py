"""``arena image``: the base image bots run on (Docker), built and pruned."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from arena.cli.common import DEFAULT_DB, YesOption, console, fail, open_store, user_errors

image_app = typer.Typer(help="The base image bots run on (Docker).", no_args_is_help=True)


ForceOption = Annotated[bool, typer.Option(help="Rebuild every layer even if it is there.")]
WithOption = Annotated[
    str | None,
    typer.Option(
        "--with",
        help="Extra Debian packages for bots' runtimes, comma-separated (ruby,golang,lua5.4); +PACKAGES adds"
        " to the current base's, '' drops them. Without it, the current base's are kept.",
        show_default=False,
        metavar="PACKAGES",
    ),
]


def image_build(
    force: ForceOption = False,
    with_: WithOption = None,
) -> None:
    """Make the base image: its root file system from Debian's packages (debootstrap, then
    docker import; minutes, once), each extra runtime asked for with --with in a layer of
    its own, kept and reused when a set is switched to again (apt-get with the host's
    network; about 20-60 s a runtime), and the Python bot SDK on top (seconds, again
    whenever the SDK changes). It removes no image: `arena image prune` does, when asked."""
    from arena.sandbox import images, outdated

    with user_errors():
        adding = with_ is not None and with_.strip().startswith("+")
        packages = None if with_ is None else images.parse_packages(with_.strip().removeprefix("+"))
        client = images.connect()
        if adding and packages is not None:
            packages = sorted({*images.image_packages(client), *packages})
        with console.status("building the base image", spinner="dots") as status:

            def progress(line: str) -> None:
                status.update(line)
                if not line.startswith("I: "):
                    console.print(line)

            tag = images.build_base(client, force=force, progress=progress, packages=packages)
            note = outdated.stale_note(client, tag)
            if note:
                progress(note)


DbsOption = Annotated[
    list[Path],
    typer.Option("--db", help="A database whose stored bots' images are kept (repeatable; default arena.db)."),
]


def image_prune(
    dbs: DbsOption = [],  # noqa: B006
    yes: YesOption = False,
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


image_app.command("prune")(image_prune)
image_app.command("build")(image_build)
