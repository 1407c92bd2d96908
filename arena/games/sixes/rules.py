"""Sixes as pure functions over an immutable state (docs/rules.md §2).

A turn is a decision of one seat (kind ``"play"``): play a card, or pass when no card
of the hand can be played. All 40 cards are dealt each round, so some seat can always
play and every round ends. Deals derive from the seed and the round number alone, so
a seed plus the answers re-create a game exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from arena.games.base import Decision, IllegalAnswer, Outcome, SettingsError, competition_ranks
from arena.games.chance import draw
from protocol.sixes import (
    DECK,
    FIRST_CARD,
    PASS,
    RANKS,
    SUITS,
    Card,
    Deal,
    Event,
    GameEnd,
    Pass,
    Play,
    RoundEnd,
    RoundStart,
    View,
)

NAME = "sixes"
MIN_PLAYERS = 2
MAX_PLAYERS = 8
MAX_CHIPS = 100
MAX_ROUNDS = 10_000
__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "NAME",
    "Event",
    "Settings",
    "State",
    "apply",
    "decision",
    "default",
    "legal",
    "observe",
    "outcome",
    "parse_settings",
    "start",
    "view",
]
"""The rules (``arena.games.base.Rules``) and the types they speak of."""

Run = tuple[int, int]
"""The lowest and highest rank of a suit on the table; every rank between is there."""

_RANK = {card: int(card[:-1]) for card in DECK}
_SUIT = {card: SUITS.index(card[-1]) for card in DECK}
_ORDER = {card: i for i, card in enumerate(DECK)}
_ABOVE = dict(zip(RANKS, RANKS[1:], strict=False))
_BELOW = dict(zip(RANKS[1:], RANKS, strict=False))


class Settings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The options of a game, all recorded in its replay."""

    chips: int = 10
    """Chips each seat starts with."""
    max_rounds: int = 100
    """The game ends after this many rounds even if nobody has run out of chips."""


class State(msgspec.Struct, frozen=True):
    settings: Settings
    players: int
    seed: int
    round: int
    turn: int
    """The turn being decided in this round, from 1: every play or pass is a turn."""
    to_move: int
    hands: tuple[tuple[Card, ...], ...]
    """Each seat's cards in ``DECK`` order (by suit, then rank)."""
    table: tuple[Run | None, ...]
    """Per suit (``SUITS`` order): its run on the table, or None before its 6."""
    chips: tuple[int, ...]
    pot: int
    over: bool = False


def parse_settings(raw: Mapping[str, Any], players: int) -> Settings:
    """Validated settings for ``players`` seats, or ``SettingsError`` saying what is wrong."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise SettingsError(f"Sixes takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
    known = Settings.__struct_fields__
    for key in raw:
        if key not in known:
            raise SettingsError(f"unknown Sixes setting {key!r}: the settings are {', '.join(known)}")
    try:
        settings = msgspec.convert(dict(raw), Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise SettingsError(f"bad Sixes setting: {exc}") from None
    if not 1 <= settings.chips <= MAX_CHIPS:
        raise SettingsError(f"chips must be 1 to {MAX_CHIPS}, not {settings.chips}")
    if not 1 <= settings.max_rounds <= MAX_ROUNDS:
        raise SettingsError(f"max_rounds must be 1 to {MAX_ROUNDS}, not {settings.max_rounds}")
    return settings


def deal(seed: int, round_no: int, players: int) -> tuple[tuple[Card, ...], ...]:
    """Every seat's hand for one round: the shuffled deck dealt one card at a time in
    seat order from seat 0, so the first ``40 % players`` seats hold one card more."""
    cards = draw(f"sixes/{seed}/{round_no}", DECK)
    return tuple(tuple(sorted(cards[seat::players], key=_ORDER.__getitem__)) for seat in range(players))


def holder(hands: tuple[tuple[Card, ...], ...], card: Card) -> int:
    return next(seat for seat, hand in enumerate(hands) if card in hand)


def start(settings: Settings, players: int, seed: int) -> tuple[State, list[Event]]:
    chips = (settings.chips,) * players
    state = State(settings, players, seed, 0, 1, 0, (), (None,) * len(SUITS), chips, 0)
    return _new_round(state, chips)


def _new_round(state: State, chips: tuple[int, ...]) -> tuple[State, list[Event]]:
    round_no = state.round + 1
    hands = deal(state.seed, round_no, state.players)
    starter = holder(hands, FIRST_CARD)
    new = msgspec.structs.replace(
        state,
        round=round_no,
        turn=1,
        to_move=starter,
        hands=hands,
        table=(None,) * len(SUITS),
        chips=chips,
        pot=0,
    )
    return new, [Deal(round_no, hands, starter)]


def decision(state: State) -> Decision | None:
    if state.over:
        return None
    return Decision("play", (state.to_move,))


def playable(table: tuple[Run | None, ...], card: Card) -> bool:
    """Whether ``card`` may go on ``table``: the 6 of oros on an empty table; a 6 of a
    suit not yet there; the rank next to either end of its suit's run."""
    if table[0] is None:
        return card == FIRST_CARD
    run = table[_SUIT[card]]
    rank = _RANK[card]
    if run is None:
        return rank == 6
    low, high = run
    return rank == _ABOVE.get(high) or rank == _BELOW.get(low)


def place(table: tuple[Run | None, ...], card: Card) -> tuple[Run | None, ...]:
    """``table`` with ``card`` (a playable one) added to its suit's run."""
    i = _SUIT[card]
    rank = _RANK[card]
    run = table[i]
    grown = (rank, rank) if run is None else (min(run[0], rank), max(run[1], rank))
    return (*table[:i], grown, *table[i + 1 :])


def playable_cards(state: State, seat: int) -> list[Card]:
    """The cards of ``seat``'s hand it may play now, in hand order."""
    return [card for card in state.hands[seat] if playable(state.table, card)]


def legal(state: State, seat: int) -> list[Any]:
    """The playable cards in hand order, or ``["pass"]`` when there are none."""
    return playable_cards(state, seat) or [PASS]


def default(state: State, seat: int) -> Any:
    """The documented move for a seat that failed: its first legal answer, i.e. the
    playable card that comes first in ``DECK`` order (oros, copas, espadas, bastos; by
    rank within a suit), or ``"pass"`` when it has none."""
    return legal(state, seat)[0]


def view(state: State, seat: int) -> View:
    return View(
        seat,
        state.players,
        state.round,
        state.turn,
        state.hands[seat],
        dict(zip(SUITS, state.table, strict=True)),
        state.chips,
        state.pot,
        tuple(len(hand) for hand in state.hands),
        state.to_move,
    )


def observe(event: Event, seat: int) -> Event | None:
    """What ``seat`` is told of an event: a deal shows only its own hand."""
    if type(event) is Deal:
        sizes = tuple(len(hand) for hand in event.hands)
        return RoundStart(event.round, event.hands[seat], event.starter, sizes)
    return event


def apply(state: State, answers: Mapping[int, Any]) -> tuple[State, list[Event]]:
    """The state after the seat to move has answered, and the events it caused."""
    if state.over:
        raise IllegalAnswer("the game is over")
    seat = state.to_move
    answer = answers[seat]
    if answer == PASS:
        return _pass(state, seat)
    if type(answer) is not str:
        raise IllegalAnswer(f"a card is a string like {FIRST_CARD!r}, or {PASS!r}: not {answer!r}")
    hand = state.hands[seat]
    if answer not in hand:
        raise IllegalAnswer(f"card {answer!r} is not in your hand {list(hand)}")
    if not playable(state.table, answer):
        raise IllegalAnswer(f"card {answer!r} cannot be played now: legal answers are {legal(state, seat)}")
    return _play(state, seat, answer)


def _pass(state: State, seat: int) -> tuple[State, list[Event]]:
    can_play = playable_cards(state, seat)
    if can_play:
        raise IllegalAnswer(f"{PASS!r} is not allowed while you can play: legal answers are {can_play}")
    paid = 1 if state.chips[seat] > 0 else 0
    chips = list(state.chips)
    chips[seat] -= paid
    pot = state.pot + paid
    new = _next_turn(state, chips=tuple(chips), pot=pot)
    return new, [Pass(seat, paid, pot)]


def _play(state: State, seat: int, card: Card) -> tuple[State, list[Event]]:
    hands = list(state.hands)
    hands[seat] = tuple(c for c in hands[seat] if c != card)
    new = _next_turn(state, hands=tuple(hands), table=place(state.table, card))
    events: list[Event] = [Play(seat, card)]
    if new.hands[seat]:
        return new, events
    return _end_round(new, seat, events)


def _next_turn(state: State, **changes: Any) -> State:
    return msgspec.structs.replace(state, turn=state.turn + 1, to_move=(state.to_move + 1) % state.players, **changes)


def _end_round(state: State, winner: int, events: list[Event]) -> tuple[State, list[Event]]:
    chips = list(state.chips)
    chips[winner] += state.pot
    final = tuple(chips)
    events.append(RoundEnd(state.round, winner, state.pot, final))
    if min(final) > 0 and state.round < state.settings.max_rounds:
        new, deal_events = _new_round(state, final)
        return new, events + deal_events
    events.append(GameEnd(final, tuple(competition_ranks(final, lower_is_better=False))))
    over = msgspec.structs.replace(state, chips=final, pot=0, over=True)
    return over, events


def outcome(state: State) -> Outcome | None:
    if not state.over:
        return None
    return Outcome(list(state.chips), competition_ranks(state.chips, lower_is_better=False), state.round)
