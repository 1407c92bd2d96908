"""A tournament's plan as its stored config states it: the schedule it derives, and the
gauntlet's default cap.

It imports only the standard library at its top, so that ``arena --help`` (the gauntlet's
help states the cap) and the commands that only show tournaments (``arena tournament
list`` and ``show``) use it without the machinery that plays them (trio, the referee,
the sandboxes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypedDict

if TYPE_CHECKING:
    from arena.store import Tournament
    from arena.tournaments.schedule import Match

DEFAULT_MAX_GAMES = 40_000
"""The cap of a sequential gauntlet without ``--max-games``."""


class Shape(TypedDict):
    """The fields of a tournament's config (``roundrobin.TournamentConfig``) that make its
    schedule; the others (time limits, fair time) change how it is played, not what."""

    bots: list[str]
    table_size: int
    deals: int
    grown: NotRequired[list[int]]


def shape_of(tournament: Tournament) -> Shape:
    """The fields of the tournament's config that make its schedule, checked
    (``msgspec.ValidationError`` for a config without them)."""
    import msgspec

    return msgspec.convert(tournament.config, Shape)


def schedule_of(tournament: Tournament) -> list[Match]:
    """Every match of the tournament's schedule, derived from its seed (the tables), its
    deal key (the deals: its secret, else its seed) and config: a round
    robin (grown as its league grew), or a gauntlet's tables (NEW, bot 0, at each). Raises
    ``msgspec.ValidationError`` for a config that is neither, ``ValueError`` for one whose
    numbers make no schedule."""

    # arena.tournaments.schedule loads msgspec and the match types: only when a schedule is made.
    from arena.tournaments.schedule import gauntlet, round_robin

    shape = shape_of(tournament)
    bots, size, deals = len(shape["bots"]), shape["table_size"], shape["deals"]
    if "gauntlet" in tournament.config:  # arena gauntlet: NEW (bot 0) against the others
        chunk = int(tournament.config["gauntlet"]["chunk"])
        return gauntlet(bots - 1, size, deals, chunk, tournament.deal_key)
    return round_robin(bots, size, deals, tournament.seed, shape.get("grown", []), tournament.deal_key)


def resume_command(tournament: Tournament, db: object) -> str:
    """The command that goes on with an interrupted tournament (the CLI and the web say it)."""
    if "ladder" in tournament.config:
        return f"arena ladder run --name {tournament.name} --db {db}"
    command = "arena gauntlet" if "gauntlet" in tournament.config else "arena tournament run"
    return f"{command} --resume --name {tournament.name} --db {db}"


def deals_of(tournament: Tournament) -> tuple[dict[str, object], str]:
    """What anyone may know of the tournament's deals, as data and in words
    (``deals.public``, ``deals.describe``): a ladder's by the epochs of its chain."""
    from arena.deals import describe, public

    ladder = tournament.config.get("ladder")
    epochs = None
    if isinstance(ladder, dict) and tournament.secret is not None:
        epochs = (int(ladder.get("reveal_every", 100)), tournament.revealed_epochs, tournament.revealed_key)
    args = (tournament.seed, tournament.commitment, tournament.revealed, epochs)
    return public(*args), describe(*args)
