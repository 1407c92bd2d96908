"""Which games share a leaderboard: a board's key (``GAME/VARIANT[,SETTING...]``), the
settings it names, and its label in words, all asked of the game's record in the
registry (``arena.games.registry``): the store names no game itself."""

from __future__ import annotations

from typing import Any

from arena.games.registry import AnyGame, find_game
from arena.store.errors import StoreError


def _game(game: str) -> AnyGame | None:
    """The registry's record of ``game`` (None for a game the arena does not know)."""
    return find_game(game)


def setting_defaults(game: str) -> dict[str, Any] | None:
    """The settings that make a board of ``game``, at their defaults, in its order; None
    for a game the arena does not know."""
    record = _game(game)
    return None if record is None else record.board_defaults()


def _variants(game: str) -> tuple[str, ...]:
    """A game's variants; ``("standard",)`` for a game without any."""
    record = _game(game)
    return ("standard",) if record is None else record.variants


PEOPLE = "people"
"""The last part of a board of games with a person at the table (``arena serve --play``):
such games are rated on a board of their own, never on the bots' board of their rules."""


def with_people(variant: str) -> tuple[str, bool]:
    """A board's ``variant`` without its people mark, and whether it had one."""
    head, comma, last = variant.rpartition(",")
    return (head, True) if comma and last == PEOPLE else (variant, False)


def _setting_text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def board_variant(game: str, settings: dict[str, Any]) -> str:
    """The board of a game's rule set, as the ``variant`` columns hold it: the variant
    (``standard`` for a game without variants), then, joined by commas in the order the
    game lists its settings, every other setting that is not at its default: ``name``
    for a switch that is on, else ``name=value`` (``standard,fast``,
    ``tactical,target=50``). A setting the record says another overrides
    (``overridden_by``) is left out while that one is set, since the game then ignores
    it. At their defaults the settings leave just the variant, so the default board
    keeps the key it always had."""
    base = str(settings.get("variant", "standard"))
    defaults = setting_defaults(game)
    if defaults is None:
        return base
    record = _game(game)
    overridden_by = record.overridden_by if record is not None else {}
    parts = [base]
    for name, default in defaults.items():
        value = settings.get(name, default)
        if name == "variant" or value == default or settings.get(overridden_by.get(name, "")):
            continue
        parts.append(name if value is True else f"{name}={_setting_text(value)}")
    return ",".join(parts)


def board_key(game: str, settings: dict[str, Any]) -> str:
    """Which games share a leaderboard: ``GAME/`` and ``board_variant`` (``GAME/standard``,
    ``GAME/standard,fast``, ``GAME/standard,target=50``). Settings that change neither
    play nor scoring do not exist: every setting of a game counts."""
    return f"{game}/{board_variant(game, settings)}"


def board_settings(game: str, variant: str) -> dict[str, Any]:
    """The settings a board's ``variant`` names (those not named are at their defaults),
    or ``StoreError`` saying what is wrong with it."""
    defaults = setting_defaults(game)
    if defaults is None:
        raise StoreError(f"unknown game {game!r} in board {game}/{variant}")
    base, *parts = with_people(variant)[0].split(",")
    if "=" in base or base in defaults:  # "GAME/target=50": the variant left out
        base, parts = "standard", [base, *parts]
    variants = _variants(game)
    if base not in variants:
        raise StoreError(
            f"unknown variant {base!r} of {game} in board {game}/{variant}: choose one of {', '.join(variants)}"
        )
    settings: dict[str, Any] = {"variant": base} if "variant" in defaults else {}
    for part in parts:
        name, equals, text = part.partition("=")
        if name not in defaults or name == "variant":
            known = ", ".join(n for n in defaults if n != "variant")
            raise StoreError(f"unknown setting {name!r} of {game} in board {game}/{variant}: the settings are {known}")
        default = defaults[name]
        if isinstance(default, bool) and text.lower() in ("", "true", "false"):
            settings[name] = not equals or text.lower() == "true"
        elif not isinstance(default, bool) and isinstance(default, int) and text.isdigit():
            settings[name] = int(text)
        else:
            kind = "on (bare name) or name=false" if isinstance(default, bool) else "a whole number"
            raise StoreError(f"setting {part!r} in board {game}/{variant}: {name} is {kind}")
    return settings


def canonical_board(key: str) -> str:
    """``key`` (``GAME/VARIANT[,SETTING...]``, a bare ``GAME/VARIANT`` or ``GAME``, the
    settings in any order) as ``board_key`` writes it, or ``StoreError``."""
    game, _, variant = key.partition("/")
    rules, people = with_people(variant or "standard")
    return board_key(game, board_settings(game, rules)) + f",{PEOPLE}" * people


def board_label(key: str) -> str:
    """A board's key in words: the game's title, its variant when it has several or this
    is not ``standard``, then each setting as the record words it (``setting_words``),
    joined by `` · `` (``Title standard · end at 50``)."""
    game, _, variant = key.partition("/")
    rules, people = with_people(variant or "standard")
    base, *parts = rules.split(",")
    record = _game(game)
    title = game if record is None else record.title
    words = [f"{title} {base}" if len(_variants(game)) > 1 or base != "standard" else title]
    for part in parts:
        name, equals, value = part.partition("=")
        say = None if record is None else record.setting_words.get(name)
        words.append(part if say is None else say(value if equals else "true"))
    return " · ".join(words + ["with people"] * people)
