"""The sandbox a playing command runs its bots in: ``arena play``, ``bot check``,
``tournament run``, ``gauntlet`` and ``ladder run`` choose it, check it and build what
it lacks alike.

Like every command module it imports only typer, rich and the standard library at its
top; the sandboxes (and with them trio and Docker's SDK) load when a command opens one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.cli.common import err_console, escape, fail

if TYPE_CHECKING:
    from arena.bots import Bot
    from arena.sandbox.base import Sandbox


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
