"""Goofspiel as pure functions over an immutable state.

Each seat holds the bid cards ``1..cards``; the prize deck, the same cards, is shuffled
by the seed. Each turn a prize is turned up and every seat bids one of its cards at
once, hidden (kind ``"bid"``); the bids are revealed and the highest bid takes the
prize, worth its number. **A tie for the highest bid discards the prize**: nobody
scores it (splitting would need fractions, and discarding keeps a bid's worth whole).
Bid cards are spent either way. After ``cards`` turns the most points wins; equal
totals share a rank. A seat that fails bids its lowest card.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from arena.games.kit import Decision, IllegalAnswer, Outcome, SettingsError, competition_ranks, draw

from .wire import Bids, Event, GameEnd, Prize, View

MIN_PLAYERS = 2
MAX_PLAYERS = 6
MAX_CARDS = 20


class Settings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    cards: int = 8
    """Bid cards per seat, and prize cards: ``1..cards``."""


class State(msgspec.Struct, frozen=True):
    settings: Settings
    players: int
    seed: int
    turn: int
    deck: tuple[int, ...]
    """The prizes still face down, in the order they come: hidden from every seat."""
    prize: int
    hands: tuple[tuple[int, ...], ...]
    """Each seat's bid cards left, lowest first."""
    scores: tuple[int, ...]
    bids: tuple[tuple[int, ...], ...] = ()
    over: bool = False


def parse_settings(raw: Mapping[str, Any], players: int) -> Settings:
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise SettingsError(f"Goofspiel takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
    try:
        settings = msgspec.convert(dict(raw), Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise SettingsError(f"bad Goofspiel setting: {exc}") from None
    if not 1 <= settings.cards <= MAX_CARDS:
        raise SettingsError(f"cards must be 1 to {MAX_CARDS}, not {settings.cards}")
    return settings


def start(settings: Settings, players: int, seed: int) -> tuple[State, list[Event]]:
    deck = tuple(draw(f"goofspiel/{seed}", range(1, settings.cards + 1)))
    hand = tuple(range(1, settings.cards + 1))
    state = State(settings, players, seed, 1, deck[1:], deck[0], (hand,) * players, (0,) * players)
    return state, [Prize(1, deck[0])]


def decision(state: State) -> Decision | None:
    return None if state.over else Decision("bid", tuple(range(state.players)))


def view(state: State, seat: int) -> View:
    return View(
        seat,
        state.players,
        state.turn,
        state.prize,
        state.hands[seat],
        state.scores,
        tuple(sorted(state.deck)),
        state.bids,
    )


def legal(state: State, seat: int) -> list[int]:
    return list(state.hands[seat])


def default(state: State, seat: int) -> int:
    return state.hands[seat][0]


def apply(state: State, answers: Mapping[int, int]) -> tuple[State, list[Event]]:
    bids = []
    for seat in range(state.players):
        bid = answers.get(seat)
        if bid not in state.hands[seat]:
            raise IllegalAnswer(f"seat {seat} bids {bid!r}: not in its hand {list(state.hands[seat])}")
        bids.append(bid)
    top = max(bids)
    winner = bids.index(top) if bids.count(top) == 1 else None
    scores = tuple(s + (state.prize if seat == winner else 0) for seat, s in enumerate(state.scores))
    hands = tuple(tuple(c for c in hand if c != bid) for hand, bid in zip(state.hands, bids, strict=True))
    events: list[Event] = [Bids(state.turn, tuple(bids), state.prize, winner)]
    history = (*state.bids, tuple(bids))
    if not state.deck:
        ranks = tuple(competition_ranks(scores, lower_is_better=False))
        events.append(GameEnd(scores, ranks))
        return msgspec.structs.replace(state, hands=hands, scores=scores, bids=history, over=True), events
    turn = state.turn + 1
    events.append(Prize(turn, state.deck[0]))
    new = msgspec.structs.replace(
        state, turn=turn, deck=state.deck[1:], prize=state.deck[0], hands=hands, scores=scores, bids=history
    )
    return new, events


def observe(event: Event, seat: int) -> Event | None:
    return event


def outcome(state: State) -> Outcome | None:
    if not state.over:
        return None
    return Outcome(list(state.scores), competition_ranks(state.scores, lower_is_better=False))
