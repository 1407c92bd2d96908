"""6 nimmt! as pure functions over an immutable state (RULES.md §1).

Every turn is one hidden simultaneous decision of all seats (kind ``"play"``); a card
lower than every row end pauses the turn for a one-seat decision (kind ``"row"``),
taken seeing the rows as they are at that moment. Deals derive from the seed and the
round number alone, so a seed plus the answers re-create a game exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from protocol.nimmt import (
    DECK_SIZE,
    HAND_SIZE,
    HEADS,
    ROW_CAPACITY,
    ROWS,
    Deal,
    Event,
    GameEnd,
    Place,
    Reveal,
    RoundEnd,
    RoundStart,
    View,
)

from .base import Decision, IllegalAnswer, Outcome, SettingsError, competition_ranks
from .chance import draw

NAME = "nimmt"
MIN_PLAYERS = 2
MAX_PLAYERS = 10
__all__ = ["Event", "NAME", "Settings", "State"]

Card = int
Row = tuple[Card, ...]
Play = tuple[Card, int]
"""A card and the seat that played it."""


class Settings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The options of a game, all recorded in its replay."""

    variant: Literal["standard"] = "standard"
    end_score: int = 66
    """The game ends after the round in which a total reaches this many heads."""
    rounds: int = 0
    """If above 0: play exactly this many rounds, ignoring ``end_score``."""


class State(msgspec.Struct, frozen=True):
    settings: Settings
    players: int
    seed: int
    round: int
    turn: int
    rows: tuple[Row, ...]
    hands: tuple[tuple[Card, ...], ...]
    scores: tuple[int, ...]
    """Totals from finished rounds."""
    round_heads: tuple[int, ...]
    revealed: tuple[tuple[Play, ...], ...]
    """This round's turns so far, each as its plays in placement order."""
    to_place: tuple[Play, ...] = ()
    """Plays of this turn still to place; non-empty only while a row choice is pending."""
    over: bool = False


def parse_settings(raw: Mapping[str, Any], players: int) -> Settings:
    """Validated settings for ``players`` seats, or ``SettingsError`` saying what is wrong."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise SettingsError(f"6 nimmt! takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
    try:
        settings = msgspec.convert(dict(raw), Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise SettingsError(f"bad 6 nimmt! setting: {exc}") from None
    if settings.end_score < 1:
        raise SettingsError(f"end_score must be at least 1, not {settings.end_score}")
    if not 0 <= settings.rounds <= 1000:
        raise SettingsError(f"rounds must be 0 (play to end_score) to 1000, not {settings.rounds}")
    return settings


_DECK = range(1, DECK_SIZE + 1)


def deal(seed: int, round_no: int, players: int) -> tuple[tuple[Row, ...], tuple[Row, ...]]:
    """The rows and hands of one round: a pure function of seed and round."""
    cards = draw(f"nimmt/{seed}/{round_no}", _DECK, HAND_SIZE * players + ROWS)
    hands = tuple(tuple(sorted(cards[i * HAND_SIZE : (i + 1) * HAND_SIZE])) for i in range(players))
    rows = tuple((c,) for c in cards[HAND_SIZE * players :])
    return rows, hands


def start(settings: Settings, players: int, seed: int) -> tuple[State, list[Event]]:
    zero = (0,) * players
    state = State(settings, players, seed, 0, 1, (), (), zero, zero, ())
    return _new_round(state, zero)


def _new_round(state: State, scores: tuple[int, ...]) -> tuple[State, list[Event]]:
    round_no = state.round + 1
    rows, hands = deal(state.seed, round_no, state.players)
    new = msgspec.structs.replace(
        state,
        round=round_no,
        turn=1,
        rows=rows,
        hands=hands,
        scores=scores,
        round_heads=(0,) * state.players,
        revealed=(),
        to_place=(),
    )
    return new, [Deal(round_no, rows, hands)]


_ALL_SEATS = {n: Decision("play", tuple(range(n))) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}


def decision(state: State) -> Decision | None:
    if state.over:
        return None
    if state.to_place:
        return Decision("row", (state.to_place[0][1],))
    return _ALL_SEATS[state.players]


def legal(state: State, seat: int) -> list[Any]:
    if state.to_place:
        return list(range(ROWS))
    return list(state.hands[seat])


def default(state: State, seat: int) -> Any:
    """The documented move for a seat that failed: its lowest card; for a row choice,
    the row with the fewest heads (ties: fewest cards, then lowest index)."""
    if state.to_place:
        return cheapest_row(state.rows)
    return state.hands[seat][0]


def cheapest_row(rows: tuple[Row, ...] | list[list[int]]) -> int:
    return min(range(len(rows)), key=lambda i: (sum(HEADS[c] for c in rows[i]), len(rows[i]), i))


def view(state: State, seat: int) -> View:
    to_place = state.to_place
    return View(
        seat,
        state.players,
        state.round,
        state.turn,
        state.hands[seat],
        state.rows,
        state.scores,
        state.round_heads,
        state.revealed,
        to_place[0][0] if to_place else None,
    )


def observe(event: Event, seat: int) -> Event | None:
    """What ``seat`` is told of an event: a deal shows only its own hand."""
    if type(event) is Deal:
        return RoundStart(event.round, event.rows, event.hands[seat])
    return event


def apply(state: State, answers: Mapping[int, Any]) -> tuple[State, list[Event]]:
    """The state after the pending decision is answered, and the events it caused."""
    if state.over:
        raise IllegalAnswer("the game is over")
    events: list[Event] = []
    rows = list(state.rows)
    round_heads = list(state.round_heads)
    revealed = state.revealed
    hands = state.hands
    if state.to_place:
        card, seat = state.to_place[0]
        row = answers[seat]
        if type(row) is not int or not 0 <= row < ROWS:
            raise IllegalAnswer(f"row {row!r} does not exist: choose 0 to {ROWS - 1}")
        taken = rows[row]
        round_heads[seat] += sum(HEADS[c] for c in taken)
        rows[row] = (card,)
        events.append(Place(seat, card, row, taken, True))
        queue = state.to_place[1:]
    else:
        plays = []
        new_hands = list(hands)
        for seat, hand in enumerate(hands):
            card = answers[seat]
            if type(card) is not int:
                raise IllegalAnswer(f"a card is a whole number, not {card!r}")
            try:
                i = hand.index(card)
            except ValueError:
                raise IllegalAnswer(f"card {card!r} is not in your hand {list(hand)}") from None
            plays.append((card, seat))
            new_hands[seat] = hand[:i] + hand[i + 1 :]
        plays.sort()
        queue = tuple(plays)
        hands = tuple(new_hands)
        revealed = (*revealed, queue)
        events.append(Reveal(state.round, state.turn, queue))

    for i, (card, seat) in enumerate(queue):
        best = -1
        best_end = 0
        r = 0
        for cards in rows:  # the row whose end is the highest below the card
            end = cards[-1]
            if best_end < end < card:
                best = r
                best_end = end
            r += 1
        if best < 0:
            # Rule 5: lower than every row end; the seat chooses a row.
            pending = queue[i:]
            new = msgspec.structs.replace(
                state,
                rows=tuple(rows),
                hands=hands,
                round_heads=tuple(round_heads),
                revealed=revealed,
                to_place=pending,
            )
            return new, events
        cards = rows[best]
        if len(cards) == ROW_CAPACITY:
            round_heads[seat] += sum(HEADS[c] for c in cards)
            rows[best] = (card,)
            events.append(Place(seat, card, best, cards))
        else:
            rows[best] = (*cards, card)
            events.append(Place(seat, card, best, ()))

    if state.turn < HAND_SIZE:
        new = msgspec.structs.replace(
            state,
            turn=state.turn + 1,
            rows=tuple(rows),
            hands=hands,
            round_heads=tuple(round_heads),
            revealed=revealed,
            to_place=(),
        )
        return new, events
    return _end_round(state, round_heads, events)


def _end_round(state: State, round_heads: list[int], events: list[Event]) -> tuple[State, list[Event]]:
    scores = tuple(s + h for s, h in zip(state.scores, round_heads, strict=True))
    events.append(RoundEnd(state.round, tuple(round_heads), scores))
    settings = state.settings
    if settings.rounds:
        over = state.round >= settings.rounds
    else:
        over = max(scores) >= settings.end_score
    if over:
        ranks = competition_ranks(scores, lower_is_better=True)
        events.append(GameEnd(scores, tuple(ranks)))
        final = msgspec.structs.replace(
            state,
            scores=scores,
            round_heads=(0,) * state.players,
            hands=tuple(() for _ in range(state.players)),
            to_place=(),
            over=True,
        )
        return final, events
    new, deal_events = _new_round(state, scores)
    events.extend(deal_events)
    return new, events


def outcome(state: State) -> Outcome | None:
    if not state.over:
        return None
    return Outcome(list(state.scores), competition_ranks(state.scores, lower_is_better=True), state.round)
