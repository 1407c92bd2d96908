"""The options of every command that plays matches (``arena play``, ``tournament run``,
``gauntlet``, ``ladder run``): one typer type each, one set of defaults
(``MatchOptions``), and the game they play, chosen from the bots when ``--game`` is
not given.

Each option type is built once here, so that typer reads a name, not a fresh
``typer.Option(...)`` per command, when it lays out the commands (every ``arena``
command does, ``--help`` included). Like every command module this one imports only
typer and the standard library at its top; the games' registry loads when a game is
chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena.cli.common import err_console, fail, in_users_words, open_store

if TYPE_CHECKING:
    from arena.bots import Bot
    from arena.play.match import TimeLimits

SANDBOX_HELP = (
    "docker, local (bubblewrap), auto (docker when an engine answers and the base image is built, else local),"
    " or unsafe-local (plain processes: no protection at all; only on request)."
)
GAME_HELP = (
    "The game to play, by the name the bots' bot.toml lists (default: the game every bot lists; of several, the"
    " first the arena knows). ARENA_GAMES registers more (module:attribute of its record)."
)
"""No game named here: the help must not import the games to list them."""


@dataclass(frozen=True)
class MatchOptions:
    """What a command's options say of the matches it plays. Its defaults are every
    command's: each option below is declared with the default of this class."""

    game: str | None = None
    """``None``: the one the bots all play (``choose_game``)."""
    sets: tuple[str, ...] = ()
    """``--set KEY=VALUE``, applied over ``--variant`` and ``--settings``."""
    variant: str | None = None
    settings_file: Path | None = None
    move_time: float = 1.0
    time_bank: float = 10.0
    startup_time: float = 10.0
    sandbox: str = "auto"
    seed: int | None = None
    """``None``: a random one (and, for what is stored, a fresh secret the deals derive from)."""
    concurrency: int = 2
    deals: int = 4
    """Deals per table, each played once per seat rotation."""
    fair_time: bool = True
    """A bot thinks only on a slot of its own (one per core) and is frozen while others
    think (docs/design.md, Fair time)."""

    def settings(self) -> dict[str, Any]:
        """The game settings the options give, unchecked (the game's rules check them)."""
        return game_settings(list(self.sets), self.variant, self.settings_file)

    def limits(self) -> TimeLimits:
        """The time limits, in the milliseconds a match counts."""
        from arena.play.match import TimeLimits

        ms = round(self.move_time * 1000), round(self.time_bank * 1000), round(self.startup_time * 1000)
        return TimeLimits(*ms)


DEFAULTS = MatchOptions()

SandboxOption = Annotated[str, typer.Option("--sandbox", help=SANDBOX_HELP)]
MoveTimeOption = Annotated[float, typer.Option(help="Seconds per move.", min=0.001)]
TimeBankOption = Annotated[float, typer.Option(help="Extra seconds per game for moves that overrun.", min=0.0)]
StartupTimeOption = Annotated[float, typer.Option(help="Seconds a bot has to start and answer hello.", min=0.001)]
GameOption = Annotated[str | None, typer.Option("--game", help=GAME_HELP, show_default=False)]
SetOption = Annotated[
    list[str], typer.Option("--set", help="A game setting KEY=VALUE (repeatable).", show_default=False)
]
VariantOption = Annotated[
    str | None,
    typer.Option(
        help="The game's variant (default: its first; an unknown one is refused with the list).", show_default=False
    ),
]
SettingsFileOption = Annotated[
    Path | None, typer.Option("--settings", help="Game settings from a TOML or JSON file.", show_default=False)
]
SeedOption = Annotated[
    int | None, typer.Option(help="Seed of the deals and of a schedule (random if not given).", show_default=False)
]
ConcurrencyOption = Annotated[int, typer.Option(help="Matches played at once (on one machine).", min=1)]
DealsOption = Annotated[int, typer.Option(help="Deals per table; each is played once per seat rotation.", min=1)]
FairTimeOption = Annotated[
    bool,
    typer.Option(
        "--fair-time/--no-fair-time",
        help="Fair time: a bot thinks on a core of its own and is frozen while others think, so its clock counts"
        " its own thinking; --no-fair-time lets every bot run at once (a faster, noisier clock).",
    ),
]
NameOption = Annotated[str | None, typer.Option(help="Its name in the database (needed to --resume it).")]


def parse_sets(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` pairs to settings; values are read as JSON when they parse as such."""
    import msgspec

    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            fail(f"--set {pair!r}: write it as KEY=VALUE (the game's rules name its settings)")
        try:
            settings[key] = msgspec.json.decode(value)
        except msgspec.DecodeError:
            settings[key] = value
    return settings


def game_settings(pairs: list[str], variant: str | None, settings_file: Path | None) -> dict[str, Any]:
    """Settings from a file (TOML or JSON), then ``--variant``, then ``--set`` on top."""
    import tomllib

    import msgspec

    settings: dict[str, Any] = {}
    if settings_file is not None:
        try:
            text = settings_file.read_text(encoding="utf-8")
        except OSError as exc:
            fail(f"{settings_file}: cannot read the settings file: {exc.strerror}")
        try:
            loaded = msgspec.json.decode(text) if settings_file.suffix == ".json" else tomllib.loads(text)
        except (msgspec.DecodeError, tomllib.TOMLDecodeError) as exc:
            fail(f"{settings_file}: not valid {'JSON' if settings_file.suffix == '.json' else 'TOML'}: {exc}")
        if not isinstance(loaded, dict):
            fail(f"{settings_file}: settings must be a table of KEY = VALUE")
        settings.update(loaded)
    if variant is not None:
        settings["variant"] = variant
    settings.update(parse_sets(pairs))
    return settings


# --- the game the bots play ------------------------------------------------------------


@dataclass(frozen=True)
class Plays:
    """A bot, as far as choosing its game goes: its name, where it was read (for the
    message), and the games its bot.toml lists."""

    name: str
    where: str
    games: tuple[str, ...]


def plays(bot: Bot) -> Plays:
    """What a bot read from its folder (or its stored snapshot) plays."""
    return Plays(bot.name, str(bot.path), tuple(bot.manifest.games))


def choose_game(asked: str | None, bots: Sequence[Plays], why: str = "a table seats the bots of one game") -> str:
    """The game to seat ``bots`` in: ``asked`` (``--game``) when every bot plays it, else
    the game every bot plays (of several, the first in the registry's order, said in a
    note; with no bot, the registry's first). A bot that does not play it, or bots with
    no game in common, are refused in one line naming what each plays (and ``why`` that
    is refused), before anything is stored or started."""
    from arena.games.registry import games, get_game

    if asked is not None:
        get_game(asked)  # an unknown game: the line lists the known ones
        for bot in bots:
            if asked not in bot.games:
                listed = ", ".join(bot.games) or "no game"
                hint = f": to play it, --game {bot.games[0]}" if bot.games else ""
                fail(
                    in_users_words(f"{bot.where}: {bot.name} does not play {asked} (its bot.toml lists {listed}){hint}")
                )
        return asked
    known = games()
    shared = [name for name in known if all(name in bot.games for bot in bots)]
    if not shared:
        each = {bot.name: ", ".join(bot.games) or "no game" for bot in bots}
        unknown = [g for g in (bots[0].games if bots else ()) if all(g in bot.games for bot in bots)]
        if unknown:
            fail(
                f"the bots all play {', '.join(unknown)}, which this arena does not know (known: {', '.join(known)};"
                " ARENA_GAMES registers a game: module:attribute of its record)"
            )
        fail(
            "the bots have no game in common: "
            + "; ".join(f"{name} plays {listed}" for name, listed in each.items())
            + f" ({why})"
        )
    if not bots:
        err_console.print(
            f"note: no bot to choose the game from: playing {shared[0]}, the first the arena knows"
            f" (--game chooses another of {', '.join(shared)})",
            markup=False,
            soft_wrap=True,
        )
    elif len(shared) > 1:
        err_console.print(
            f"note: the bots all play {', '.join(shared)}: playing {shared[0]} (--game chooses another)",
            markup=False,
            soft_wrap=True,
        )
    return shared[0]


def named_bots(refs: Sequence[str], db: Path) -> list[Bot]:
    """The bots ``refs`` name, folders or bots stored in ``db`` (``NAME[:VERSION]``), read
    without writing anything: a command refused after this leaves the database as it was."""
    from arena.bots import BotError, load_bot

    found: list[Bot] = []
    store = None
    for ref in refs:
        if Path(ref).is_dir():
            found.append(load_bot(ref))
            continue
        if "/" in ref or Path(ref).exists():
            raise BotError(f"{ref}: no such bot folder")
        if store is None:
            if not db.exists():
                fail(f"no bot {ref!r}: {db} does not exist yet (a folder path adds a bot)")
            store = open_store(db)  # writable: an older file is migrated as the run would
        found.append(store.get_bot(ref).load())
    if store is not None:
        store.close()
    return found


def title_of(game: str) -> str:
    """The name people read of ``game`` (its record's title), for a header; the name
    itself for a game this arena does not know."""
    from arena.games.registry import find_game

    record = find_game(game)
    return game if record is None else record.title
