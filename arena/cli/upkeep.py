"""``arena backup`` and ``arena check``: the organiser's care of a database."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.cli.common import DEFAULT_DB, DbOption, console, escape, fail, open_store, user_errors
from arena.text import shown

DestArgument = Annotated[
    Path,
    typer.Argument(help="The backup's file (new); its snapshots go to <DEST>-bots/ beside it.", metavar="DEST"),
]


def backup_cmd(
    dest: DestArgument,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Back a database up with its bot snapshots, together, consistent (safe while a
    tournament, a ladder or `arena serve` writes to it). The copy is a database itself:
    `--db DEST` reads it; moved in place of the original, file and folder, it restores it."""
    from arena.store.upkeep import backup

    with user_errors():
        open_store(db, read_only=True).close()  # the one-line error of a missing file
        done = backup(db, dest)
    console.print(
        shown(
            f"backed up {db} to {done.path} ({done.size / 1e6:.1f} MB: {done.tournaments} tournament"
            f"{'s' * (done.tournaments != 1)}, {done.games} game{'s' * (done.games != 1)}) and its {done.bots}"
            f" bot snapshot{'s' * (done.bots != 1)} to {done.snapshots}/"
        ),
        markup=False,
        soft_wrap=True,
    )


SnapshotsOption = Annotated[bool, typer.Option(help="Also check each bot's snapshot folder against its stored hash.")]


def check_cmd(
    db: DbOption = DEFAULT_DB,
    snapshots: SnapshotsOption = True,
) -> None:
    """Check a database (a backup, or the file after a crash): SQLite's integrity and
    foreign-key checks, its schema version, each bot's snapshot. Exit 1 on a problem.
    (A bot folder is checked with `arena bot check`.)"""
    from arena.store.upkeep import check

    if not db.exists():
        fail(f"{db}: no such database (--db names another)")
    with user_errors():
        findings = list(check(db, snapshots))
    for finding in findings:
        label = "[green]ok[/]  " if finding.ok else "[bold red]FAIL[/]"
        console.print(f"{label} {escape(finding.what)}: {escape(shown(finding.detail))}", soft_wrap=True)
    bad = [f for f in findings if not f.ok]
    if bad:
        fail(f"{db}: {len(bad)} problem{'s' * (len(bad) != 1)}: restore it from a backup (`arena backup`)", code=1)
    console.print(shown(f"{db}: sound"), markup=False)
