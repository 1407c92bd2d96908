"""What a games list is asked for (bot, opponent, tournament, board, faults, days), the
store's filter of those games and the links of its pages: so the page, its JSON twin,
every paging link and ``arena games`` agree on one spelling and one reading of each
filter. Light on purpose: ``arena games`` imports it, not the rest of the web."""

from __future__ import annotations

import datetime as dt
import re
import urllib.parse
from typing import Any

import msgspec

from arena.games import registry
from arena.store import GameFilter, Store, StoreError, canonical_board
from arena.web.errors import WebError

FILTERS = ("tournament", "bot", "opponent", "board", "faults", "from", "to")
"""The filters of ``/games`` and ``/api/games``, in the order their links spell them."""

DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class GamesAsked(msgspec.Struct, frozen=True):
    """The filters as the user wrote them (None: not asked); checked against the store
    by ``GamePages.games``."""

    tournament: str | None = None
    bot: str | None = None
    opponent: str | None = None
    """A second bot that sat in the same games (needs ``bot``)."""
    board: str | None = None
    """``GAME/VARIANT`` (a game alone is its standard board)."""
    faults: bool = False
    """Only games with a faulty seat (that of ``bot`` when it is given)."""
    date_from: str | None = None
    """The first day (``YYYY-MM-DD``, UTC) of the games' starts."""
    date_to: str | None = None
    """The last day, included."""


def parse_day(name: str, text: str) -> dt.date:
    """A ``YYYY-MM-DD`` day, or 400 naming the parameter."""
    try:
        if not DAY.fullmatch(text):
            raise ValueError(text)
        return dt.date.fromisoformat(text)
    except ValueError:
        raise WebError(400, f"{name} must be a day as YYYY-MM-DD, not {text[:40]!r}") from None


def started_range(date_from: str | None, date_to: str | None) -> tuple[str | None, str | None]:
    """The bounds on ``started`` (stored as UTC ISO text, so compared as text) of the days
    from ``date_from`` to ``date_to``, both included: ``started >= low`` and ``started < high``."""
    first = None if date_from is None else parse_day("from", date_from)
    last = None if date_to is None else parse_day("to", date_to)
    if first is not None and last is not None and first > last:
        raise WebError(400, f"from={date_from} is after to={date_to}: no day is in between")
    low = None if first is None else first.isoformat()
    high = None if last is None or last == dt.date.max else (last + dt.timedelta(days=1)).isoformat()
    return low, high


def parse_faults(text: str | None) -> bool:
    if text is None or text == "0":
        return False
    if text in ("1", "on", "yes", "true"):
        return True
    raise WebError(400, f"faults must be 1 (only games with faults) or 0, not {text[:40]!r}")


def split_board(board: str) -> tuple[str, str]:
    """``GAME/VARIANT`` as its game and variant (``standard`` when only the game is named)."""
    game, _, variant = board.partition("/")
    return game, variant or "standard"


def page_offset(page: int, limit: int) -> int:
    """The offset of page ``page`` (from 1)."""
    return (page - 1) * limit


def page_numbers(total: int, limit: int, offset: int, around: int = 2) -> list[int | None]:
    """The pages (from 1) a pager links: the first, the last and those ``around`` the
    current one, None where pages are left out."""
    pages = max(total - 1, 0) // limit + 1
    current = min(offset // limit + 1, pages)
    shown = sorted({1, pages, *range(max(current - around, 1), min(current + around, pages) + 1)})
    numbers: list[int | None] = []
    for page in shown:
        if numbers and page - (numbers[-1] or 0) > 1:
            numbers.append(None)
        numbers.append(page)
    return numbers


def filter_params(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The filters of a games list (``GamesPage.link_values``) that are set, as parameters."""
    params = []
    for name in FILTERS:
        value = data.get(name)
        if value is True:
            params.append((name, "1"))
        elif value:
            params.append((name, str(value)))
    return params


def list_query(data: dict[str, Any]) -> str:
    """The query of a games list's links: its filters, order and limit (the page is added)."""
    params = [*filter_params(data), ("order", data["order"]), ("limit", str(data["limit"]))]
    return "&".join(f"{name}={urllib.parse.quote(value, safe=':/')}" for name, value in params)


def short_time(started: str) -> str:
    """``2026-11-30T14:02:11+00:00`` as ``2026-11-30 14:02``: what a table has room for."""
    return started[:16].replace("T", " ")


def check_board(game: str | None, variant: str | None) -> str | None:
    """A board's ``variant`` as the store writes it (``standard,shedding``: its settings in
    any order), or 400 for a game, variant or setting the arena does not know."""
    known = registry.games()
    if game is not None and game not in known:
        raise WebError(400, f"unknown game {game!r}: choose one of {', '.join(known)}")
    if variant is None:
        return None
    if game is None:
        raise WebError(400, f"variant={variant} needs a game= as well")
    try:
        return canonical_board(f"{game}/{variant}").partition("/")[2]
    except StoreError as exc:
        raise WebError(400, str(exc)) from None


def games_filter(store: Store, asked: GamesAsked) -> GameFilter:
    """The store's filter of the games ``asked`` for, each filter checked (404 for a bot
    or tournament not stored, 400 for a value that cannot be one): the one query behind
    the web's games list, its JSON twin and ``arena games``."""
    if asked.opponent is not None and asked.bot is None:
        raise WebError(400, f"opponent={asked.opponent} needs a bot= as well (the games both played)")
    game = variant = None
    if asked.board is not None:
        game, variant = split_board(asked.board)
        try:
            variant = check_board(game, variant)
        except WebError as exc:
            raise WebError(400, f"board={asked.board}: {exc.message}") from None
    started_from, started_before = started_range(asked.date_from, asked.date_to)
    tournament_id = None
    if asked.tournament is not None:
        t = store.get_tournament(asked.tournament)
        if t is None:
            raise WebError(404, f"no tournament {asked.tournament!r} (the tournaments page lists them)")
        tournament_id = t.id
    bot_id = None if asked.bot is None else _bot_id(store, "bot", asked.bot)
    opponent_id = None if asked.opponent is None else _bot_id(store, "opponent", asked.opponent)
    if opponent_id is not None and opponent_id == bot_id:
        raise WebError(400, f"opponent={asked.opponent} is bot={asked.bot} itself: name another bot")
    return GameFilter(
        tournament_id=tournament_id,
        bot_id=bot_id,
        opponent_id=opponent_id,
        game=game,
        variant=variant,
        faulty=asked.faults,
        started_from=started_from,
        started_before=started_before,
    )


def _bot_id(store: Store, name: str, ref: str) -> int:
    try:
        return store.get_bot(ref).id
    except StoreError:
        raise WebError(404, f"no bot {ref!r} for {name}= (the bots page lists them)") from None
