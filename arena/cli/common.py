"""What every ``arena`` command shares: its consoles, its error line, its common options.

The main module (``arena.cli.main``) and the modules of its sub-apps all import this one and
never each other's commands, so there is no import cycle. It imports only typer
and the standard library at the top (rich when a command first prints): a command's
``--help`` reads its module, so whatever that imports at the top is paid by every use
of the command, however small.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, cast

import typer

from arena.text import shown

if TYPE_CHECKING:
    from rich.table import Table

    from arena.botcheck import Check
    from arena.cli.terminal import TerminalConsole
    from arena.store import Store


class MadeWhenUsed:
    """A console made when it is first used (``TerminalConsole(**settings)``): importing
    rich costs every command, ``--help`` included, as long as importing typer."""

    def __init__(self, **settings: Any) -> None:
        object.__setattr__(self, "_settings", settings)
        object.__setattr__(self, "_made", None)

    def made(self) -> TerminalConsole:
        made: TerminalConsole | None = object.__getattribute__(self, "_made")
        if made is None:
            from arena.cli.terminal import TerminalConsole

            made = TerminalConsole(**object.__getattribute__(self, "_settings"))
            object.__setattr__(self, "_made", made)
        return made

    def __getattr__(self, name: str) -> Any:
        return getattr(self.made(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.made(), name, value)

    def __enter__(self) -> Any:  # rich's Live holds its console's lock with ``with``
        return self.made().__enter__()

    def __exit__(self, *exc: object) -> None:
        self.made().__exit__(*exc)


console = cast("TerminalConsole", MadeWhenUsed(highlight=False))
"""Standard output's console (a ``TerminalConsole``, made when first used)."""
err_console = cast("TerminalConsole", MadeWhenUsed(stderr=True, highlight=False))
"""Standard error's console (a ``TerminalConsole``, made when first used)."""


def escape(markup: str) -> str:
    """``markup`` with rich's markup escaped (rich's ``escape``, imported when used)."""
    from rich.markup import escape as rich_escape

    return rich_escape(markup)


USER_ERRORS = (
    ("arena.bots", "BotError"),
    ("arena.games.base", "SettingsError"),
    ("arena.play.referee", "MatchError"),
    ("arena.sandbox.base", "StartError"),
    ("arena.play.replay", "ReplayError"),
    ("arena.sandbox.base", "ImageError"),
    ("arena.store", "StoreError"),
    ("arena.cluster.coordinator", "ClusterError"),
    ("arena.cluster.node", "NodeError"),
    ("arena.store.submissions", "SubmissionError"),
    ("arena.bots.uploads", "UploadError"),
)
"""The errors that are the user's to mend (a bad bot folder, setting, replay,
database...), as ``(defining module, class)``: shown as one line, never a traceback."""


def user_error_types() -> tuple[type[BaseException], ...]:
    """The user errors of the modules loaded so far: a module not loaded raised none of
    its errors, so they are found without importing it (the referee would bring trio,
    the images module Docker's SDK)."""
    return tuple(getattr(sys.modules[module], name) for module, name in USER_ERRORS if module in sys.modules)


def fail(message: str, code: int = 2) -> NoReturn:
    """One red line naming the problem, and a non-zero exit: never a traceback."""
    # The message as it is: a bracket or a ":name:" in it is no markup and no emoji.
    err_console.print(f"[bold red]error:[/] {escape(shown(message))}", markup=True, soft_wrap=True, emoji=False)
    raise typer.Exit(code)


_FOLDERS: list[tuple[str, Path]] = []
"""The bot folders a command was given, as ``(as the user wrote it, the folder read)``."""
_COPIES: dict[str, str] = {}
"""Copies of those folders (a stored snapshot), by path: each the folder it copies."""


def remember_folder(given: str | Path, folder: str | Path, *copies: str | Path) -> None:
    """Bot folder ``given`` (read at ``folder``), and ``copies`` made of it (its stored
    snapshot): an error about a copy names the user's folder instead (``in_users_words``)."""
    _FOLDERS.append((str(given), Path(folder)))
    for copy in copies:
        if str(copy) != str(folder):
            _COPIES[str(copy)] = str(given)


def remember_folders(refs: list[str], stored: list[Any]) -> None:
    """Of the bots a command named (``refs``, as ``stored``), the folders and their snapshots."""
    for ref, bot in zip(refs, stored, strict=True):
        if Path(ref).is_dir():
            remember_folder(ref, Path(ref).resolve(), bot.path)


def in_users_words(message: str) -> str:
    """``message`` with each copy of a folder the user gave (its stored snapshot in
    ``<db>-bots/``, the sealed copy the local sandbox runs) named as the user's folder:
    a hash folder the user never made means nothing to them."""
    copies = dict(_COPIES)
    if "arena.sandbox.local" in sys.modules:  # a sandbox that made copies of its own
        from arena.bots import BotError, load_bot
        from arena.sandbox.base import StartError
        from arena.sandbox.local import prepared_dir

        for given, folder in _FOLDERS:
            try:
                copies.setdefault(str(prepared_dir(load_bot(folder))), given)
            except (BotError, StartError, OSError, ValueError):
                continue  # the folder is gone or unreadable now: its copy keeps its name
    for copy in sorted(copies, key=len, reverse=True):
        message = message.replace(copy, copies[copy])
    return message


@contextmanager
def user_errors() -> Iterator[None]:
    """A user error raised inside becomes :func:`fail`'s line; Ctrl-C, a word that every
    bot was stopped (exit 130)."""
    try:
        yield
    except KeyboardInterrupt:
        interrupted()
    except BaseExceptionGroup as group:  # Trio wraps what its nurseries raise
        if group.subgroup(KeyboardInterrupt) is not None:
            interrupted()
        user = group.subgroup(user_error_types())
        if user is not None:
            fail(in_users_words(str(_first(user))))
        raise
    except Exception as exc:
        if isinstance(exc, user_error_types()):
            fail(in_users_words(str(exc)))
        raise


def interrupted() -> NoReturn:
    err_console.print("[yellow]interrupted[/]: every bot was stopped")
    raise typer.Exit(130)


def _first(group: BaseExceptionGroup[Any]) -> BaseException:
    first: BaseException = group
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return first


DbOption = Annotated[Path, typer.Option("--db", help="The arena's database.")]
DEFAULT_DB = Path("arena.db")
FormatOption = Annotated[str, typer.Option("--format", help="table, json or csv.")]
"""``--format`` of a command that lists (one of ``FORMATS``)."""
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask (needed when not at a terminal).")]
FORMATS = ("table", "json", "csv")


def deal_source(seed: int | None) -> tuple[int, str | None]:
    """A new tournament's seed and the secret its deals derive from: a fresh secret (and a
    random seed for its tables) unless the organiser chose the seed, whose deals are then
    known, as the warning says (``arena.deals``)."""
    import random

    from arena.deals import KNOWN_SEED_WARNING, new_secret

    if seed is None:
        return random.randrange(2**31), new_secret()
    err_console.print(f"[yellow]warning:[/] {escape(KNOWN_SEED_WARNING.format(seed=seed))}", soft_wrap=True)
    return seed, None


def warn_about(isolations: list[str]) -> None:
    if any("UNSAFE" in i for i in isolations):
        from arena.sandbox.local import UNSAFE_WARNING

        err_console.print(f"[yellow]warning:[/] {UNSAFE_WARNING}")


def open_store(db: Path, must_exist: bool = True, read_only: bool = False) -> Store:
    """The database at ``db``; a missing one is an error where it must already exist.

    ``read_only`` for the commands that only read: they open the file read-only (no
    migration, no WAL switch, no cache writes), so they work without write access to
    it or its folder, and on a read-only file system."""
    from arena.store import Store

    if (must_exist or read_only) and not db.exists():
        fail(f"{db}: no such database (a tournament creates it; --db names another)")
    store = Store(db, read_only=read_only)
    if not _opened:
        import atexit

        atexit.register(close_stores)
    _opened.append(store)
    return store


_opened: list[Store] = []
"""The stores the command opened, closed when it ends (``close_stores``)."""


def close_stores() -> None:
    """Close every store the command opened, readers first: the last writer to close then
    folds the ``-wal`` into the file and SQLite removes the ``-wal`` and ``-shm``, so that
    once a command has finished the database file alone holds everything."""
    from arena.store import tidy_wal

    for store in sorted(_opened, key=lambda s: not s.read_only):
        try:
            store.close()
        except Exception:  # a store that fails to close at exit has nothing left to lose
            pass
    for path in {store.path for store in _opened if store.read_only}:
        tidy_wal(path)
    _opened.clear()


def fit_width() -> int | None:
    """The width tables must fit: the terminal's, or ``COLUMNS`` when it is set. None into
    a file or a pipe: there a table keeps its natural width, and nothing is cut."""
    if console.is_terminal or os.environ.get("COLUMNS", "").strip().isdigit():
        return console.width
    return None


def print_table(table: Table) -> None:
    """``table`` on stdout: fitted to the terminal, or whole into a file or a pipe."""
    import io

    from rich.cells import cell_len
    from rich.console import Console

    from arena.cli.terminal import TerminalConsole

    if fit_width() is None:
        title = cell_len(str(table.title or ""))
        # Its natural width, measured here rather than by arena.boards.show: that one
        # loads the boards, which `arena games` has no use for.
        natural = Console(width=100_000, file=io.StringIO(), highlight=False).measure(table).maximum
        TerminalConsole(file=sys.stdout, width=max(natural, title), highlight=False).print(table)
    else:
        console.print(table)


def print_board(rows: list[Any], title: str, game: str | None = None) -> None:
    """A board as ``arena leaderboard`` shows it: a table per part, then its notes
    (``title`` is text, not markup: it holds names); its score column headed as
    ``game``'s record says."""
    from arena.boards.show import render_board

    for part in render_board(rows, escape(shown(title)), fit_width(), game):
        if isinstance(part, str):
            print_line(part)
        else:
            print_table(part)


def print_check(check: Check, verbose: bool = False) -> None:
    """One check of the conformance battery as ``arena bot check`` shows it, and ``arena
    submit --wait`` for each check of a submission's report: its verdict, and for a
    failure the evidence (sent, got, expected, fix, the bot's stderr), each through ``shown``."""
    label = "[yellow]SKIP[/]" if check.skipped else "[green]PASS[/]" if check.ok else "[bold red]FAIL[/]"
    timing = f" [dim]· {check.timing}[/]" if check.timing else ""
    name, detail = escape(shown(check.name)), escape(shown(check.detail))
    console.print(f" {label}  [bold]{name}[/]  {detail}{timing}", soft_wrap=True)
    if not check.ok and not check.skipped:
        evidence = [("sent", check.sent), ("got", check.got), ("expected", check.expected), ("fix", check.fix)]
        if check.stderr:
            evidence.append(("stderr", check.stderr.replace("\n", "\n" + " " * 17)))  # shown below
        for key, value in evidence:
            if value:
                console.print(f"        {key:<9}{escape(shown(value, lines=key == 'stderr'))}", soft_wrap=True)
    if verbose and check.times_ms:
        console.print("        [dim]ms: " + " ".join(f"{ms:.1f}" for ms in check.times_ms) + "[/]")


def print_line(line: str) -> None:
    """A line of text under a table: wrapped to the terminal, whole into a file or a pipe."""
    if fit_width() is None:
        print(shown(line, lines=True))
    else:
        console.print(line, markup=False, highlight=False, emoji=False)
