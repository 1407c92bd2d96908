"""Liar's dice as pure functions over an immutable state.

Every seat starts with ``chips`` chips. Each round, every seat that still has chips
rolls ``dice`` six-sided dice from the seed, hidden from the others. From the round's
opener (the next seat in play after the last round's, seat 0 first) each seat in turn
either bids ``[quantity, face]``, a claim that at least that many of all the dice in
play show that face (no face is wild), higher than the last bid (more dice, or as
many of a higher face), or calls the last bid a lie (``"liar"``). On a call every die is
shown: if the claim holds the caller pays the bidder a chip, otherwise the bidder pays
the caller. The game ends after ``rounds`` rounds, or when one seat holds every chip;
more chips rank higher, equal counts share a rank. A seat that fails calls when it may,
and otherwise bids one die of its own lowest face.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from arena.games.kit import Decision, IllegalAnswer, Outcome, SettingsError, competition_ranks, draw

from .wire import Answer, Bid, Call, Event, GameEnd, Roll, View

MIN_PLAYERS = 2
MAX_PLAYERS = 6
CALL = "liar"


class Settings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    dice: int = 3
    """Dice per seat and round."""
    chips: int = 3
    """Chips per seat at the start."""
    rounds: int = 8
    """Rounds at most."""


class State(msgspec.Struct, frozen=True):
    settings: Settings
    players: int
    seed: int
    round: int
    chips: tuple[int, ...]
    dice: tuple[tuple[int, ...], ...]
    """Each seat's dice this round (empty for a seat out of chips): private."""
    opener: int
    turn: int
    """The seat to answer."""
    bids: tuple[tuple[int, int, int], ...] = ()
    over: bool = False


def parse_settings(raw: Mapping[str, Any], players: int) -> Settings:
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise SettingsError(f"Liar's dice takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
    try:
        settings = msgspec.convert(dict(raw), Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise SettingsError(f"bad Liar's dice setting: {exc}") from None
    for name, low, high in (("dice", 1, 6), ("chips", 1, 20), ("rounds", 1, 50)):
        value = getattr(settings, name)
        if not low <= value <= high:
            raise SettingsError(f"{name} must be {low} to {high}, not {value}")
    return settings


def _roll(settings: Settings, seed: int, round_no: int, chips: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Each die of each seat in play, one uniform draw of its own from the seed."""
    rolled = []
    for seat, held in enumerate(chips):
        faces = [draw(f"liars-dice/{seed}/{round_no}/{seat}/{die}", range(1, 7), 1)[0] for die in range(settings.dice)]
        rolled.append(tuple(sorted(faces)) if held else ())
    return tuple(rolled)


def _next_in_play(chips: tuple[int, ...], seat: int) -> int:
    players = len(chips)
    for step in range(1, players + 1):
        if chips[(seat + step) % players]:
            return (seat + step) % players
    return seat


def _begin(state: State, round_no: int, chips: tuple[int, ...], opener: int) -> tuple[State, list[Event]]:
    dice = _roll(state.settings, state.seed, round_no, chips)
    new = msgspec.structs.replace(state, round=round_no, chips=chips, dice=dice, opener=opener, turn=opener, bids=())
    return new, [Roll(round_no, dice)]


def start(settings: Settings, players: int, seed: int) -> tuple[State, list[Event]]:
    chips = (settings.chips,) * players
    empty = State(settings, players, seed, 0, chips, ((),) * players, 0, 0)
    return _begin(empty, 1, chips, 0)


def decision(state: State) -> Decision | None:
    return None if state.over else Decision("bid", (state.turn,))


def view(state: State, seat: int) -> View:
    in_play = sum(len(d) for d in state.dice)
    return View(seat, state.players, state.round, state.chips, state.dice[seat], in_play, state.bids)


def legal(state: State, seat: int) -> list[Answer]:
    in_play = sum(len(d) for d in state.dice)
    answers: list[Answer] = [CALL] if state.bids else []
    last = state.bids[-1][1:] if state.bids else (0, 6)
    for quantity in range(1, in_play + 1):
        for face in range(1, 7):
            if (quantity, face) > last:
                answers.append((quantity, face))
    return answers


def default(state: State, seat: int) -> Answer:
    if state.bids:
        return CALL
    return (1, state.dice[seat][0])


def _answer(raw: Any) -> Answer | None:
    if raw == CALL:
        return CALL
    if isinstance(raw, (list, tuple)) and len(raw) == 2 and all(type(x) is int for x in raw):
        return (raw[0], raw[1])
    return None


def apply(state: State, answers: Mapping[int, Answer]) -> tuple[State, list[Event]]:
    seat = state.turn
    answer = _answer(answers.get(seat))
    if answer is None or answer not in legal(state, seat):
        raise IllegalAnswer(f"seat {seat} answers {answers.get(seat)!r}: not a higher bid [quantity, face] or 'liar'")
    if answer != CALL:
        quantity, face = answer
        bids = (*state.bids, (seat, quantity, face))
        new = msgspec.structs.replace(state, bids=bids, turn=_next_in_play(state.chips, seat))
        return new, [Bid(state.round, seat, quantity, face)]
    bidder, quantity, face = state.bids[-1]
    count = sum(d.count(face) for d in state.dice)
    loser, winner = (seat, bidder) if count >= quantity else (bidder, seat)
    chips = tuple(c - (s == loser) + (s == winner) for s, c in enumerate(state.chips))
    events: list[Event] = [Call(state.round, seat, bidder, quantity, face, count, loser, state.dice)]
    if state.round >= state.settings.rounds or sum(1 for c in chips if c) == 1:
        ranks = tuple(competition_ranks(chips, lower_is_better=False))
        events.append(GameEnd(chips, ranks))
        return msgspec.structs.replace(state, chips=chips, over=True), events
    following, begun = _begin(state, state.round + 1, chips, _next_in_play(chips, state.opener))
    return following, events + begun


def observe(event: Event, seat: int) -> Event | None:
    if isinstance(event, Roll):
        return Roll(event.round, tuple(d if s == seat else () for s, d in enumerate(event.dice)))
    return event


def outcome(state: State) -> Outcome | None:
    if not state.over:
        return None
    return Outcome(list(state.chips), competition_ranks(state.chips, lower_is_better=False), rounds=state.round)
