"""6 nimmt! as pure functions over an immutable state (docs/rules.md §1), with its variants.

Every turn is one hidden simultaneous decision of all seats (kind ``"play"``); a card
that no row can take pauses the turn for a one-seat decision (kind ``"row"``), taken
seeing the rows as they are at that moment. A logical round starts with a draft of
one-seat decisions (kind ``"draft"``). Deals derive from the seed and the round number
alone (key ``nimmt/{seed}/{round}``), so a seed plus the answers re-create a game exactly.

The settings (``Settings``) and the choices this module makes where the printed rules
leave room (docs/rules.md states each for players):

- ``variant="tactical"``: the deck is ``1..10 x players + 4``; every card is dealt.
- ``variant="logical"``: the same deck, all face up, drafted one card at a time. Round
  ``r`` (numbered from 1, as everywhere in the protocol) starts with seat
  ``(r - 1) mod players``. The seats follow in seat order, wrapping, until each holds 10; the 4
  cards left start the rows, lowest card in row 0. A seat that fails to pick gets the
  lowest card on offer. 2 to 6 players.
- ``variant="professional"``: a card goes to the closest of all ends that can take it
  (after a row's last card, or before its first); an exact tie goes to the right end,
  then to the lower row. Only a card that no end can take asks for a row choice.
- ``keep_rows``: from round 2 on the rows stay, and 10 cards each are dealt from the
  deck less the cards on the table. Up to 20 cards may stay, so the deck must hold
  ``10 x players + 20``: 8 players at most, and never with tactical or logical, whose
  deck has no spare card.
- ``cards_per_turn=2``: a seat plays a pair ``(a, b)``, ``a < b``; all played cards
  are placed lowest first; a round has 5 turns. A shedding seat left with one card
  plays it alone.
- ``shedding``: heads do not count; taken cards go into the taker's hand (sorted); one
  deal; the game ends after the first turn that leaves a hand empty, or after
  ``SHEDDING_TURN_LIMIT`` turns (a game that could otherwise cycle for ever). The
  score is the cards left in hand, fewer is better; empty hands share first place. A
  row choice that fails defaults to the row with the fewest cards (then the lower
  row). No ``RoundEnd`` event: the ``GameEnd`` carries the scores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from operator import add
from typing import Any, Literal, NamedTuple

import msgspec

from arena.games.base import Decision, IllegalAnswer, Outcome, SettingsError, competition_ranks
from arena.games.chance import draw
from protocol.nimmt import (
    DECK_SIZE,
    HAND_SIZE,
    HEADS,
    ROW_CAPACITY,
    ROWS,
    Deal,
    DraftStart,
    Event,
    GameEnd,
    Pick,
    Place,
    Reveal,
    RoundEnd,
    RoundStart,
    View,
)

NAME = "nimmt"
MIN_PLAYERS = 2
MAX_PLAYERS = 10
LOGICAL_MAX_PLAYERS = 6
"""Seed 002: the drafted game is for 2 to 6 players."""
VARIANTS = ("standard", "tactical", "logical", "professional")
END_SCORE = 66
"""The default ``end_score``."""
SHEDDING_TURN_LIMIT = 500
"""Shedding ends after this many turns even if no hand is empty (ranked as usual)."""
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

Card = int
Row = tuple[Card, ...]
Play = tuple[Card, int]
"""A card and the seat that played it."""
End = Literal["right", "left"]


class Settings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, dict=True):
    """The options of a game, all recorded in its replay (see the module docstring)."""

    variant: Literal["standard", "tactical", "logical", "professional"] = "standard"
    end_score: int = END_SCORE
    """The game ends after the round in which a total reaches this many heads."""
    rounds: int = 0
    """If above 0: play exactly this many rounds, ignoring ``end_score``."""
    keep_rows: bool = False
    """Rows stay on the table between rounds; hands are dealt from the other cards."""
    cards_per_turn: int = 1
    """1, or 2: each seat plays a pair of cards per turn, and a round has 5 turns."""
    shedding: bool = False
    """Heads do not count, taken cards go into the hand, the first empty hand wins."""

    @cached_property
    def turn_rules(self) -> TurnRules:
        """What these settings decide about every turn: worked out at the first turn and
        kept with the settings (``dict=True`` gives them room for it), not in any state."""
        return TurnRules(
            professional=self.variant == "professional",
            shedding=self.shedding,
            read_plays=_read_pairs if self.cards_per_turn == 2 else _read_cards,
        )


class State(msgspec.Struct, frozen=True):
    settings: Settings
    players: int
    seed: int
    round: int
    turn: int
    rows: tuple[Row, ...]
    hands: tuple[tuple[Card, ...], ...]
    scores: tuple[int, ...]
    """Totals from finished rounds (shedding: 0 until the end, then cards left)."""
    round_heads: tuple[int, ...]
    revealed: tuple[tuple[Play, ...], ...]
    """This round's turns so far, each as its plays in placement order."""
    to_place: tuple[Play, ...] = ()
    """Plays of this turn still to place; non-empty only while a row choice is pending."""
    over: bool = False
    offer: tuple[Card, ...] = ()
    """Logical: the cards still on offer, lowest first; non-empty only during the draft."""
    picks: tuple[Play, ...] = ()
    """Logical: this round's draft so far, ``(card, seat)`` in pick order."""


def top_card(settings: Settings, players: int) -> int:
    """The highest card in the game: cards ``1..top_card`` make the deck."""
    if settings.variant in ("tactical", "logical"):
        return HAND_SIZE * players + ROWS
    return DECK_SIZE


def parse_settings(raw: Mapping[str, Any], players: int) -> Settings:
    """Validated settings for ``players`` seats, or ``SettingsError`` saying what is wrong."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise SettingsError(f"6 nimmt! takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
    variant = raw.get("variant", "standard")
    if variant not in VARIANTS:
        raise SettingsError(f"variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
    try:
        settings = msgspec.convert(dict(raw), Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise SettingsError(f"bad 6 nimmt! setting: {exc}") from None
    if settings.end_score < 1:
        raise SettingsError(f"end_score must be at least 1, not {settings.end_score}")
    if not 0 <= settings.rounds <= 1000:
        raise SettingsError(f"rounds must be 0 (play to end_score) to 1000, not {settings.rounds}")
    if settings.cards_per_turn not in (1, 2):
        raise SettingsError(f"cards_per_turn must be 1 or 2, not {settings.cards_per_turn}")
    if variant == "logical" and players > LOGICAL_MAX_PLAYERS:
        raise SettingsError(f"the logical variant takes 2 to {LOGICAL_MAX_PLAYERS} players, not {players}")
    if settings.shedding:
        if settings.rounds:
            raise SettingsError("shedding plays one deal: drop rounds")
        if settings.keep_rows:
            raise SettingsError("shedding plays one deal, so no rows are kept: drop keep_rows")
        if settings.end_score != END_SCORE:
            raise SettingsError("shedding ignores heads, so end_score means nothing: drop end_score")
    if settings.keep_rows:
        if variant in ("tactical", "logical"):
            raise SettingsError(
                f"keep_rows needs spare cards, and the {variant} variant uses exactly 10 x players + 4: drop keep_rows"
            )
        if HAND_SIZE * players + ROWS * ROW_CAPACITY > DECK_SIZE:
            raise SettingsError(
                f"keep_rows takes at most 8 players, not {players}: up to 20 cards may stay in the rows, "
                f"and {DECK_SIZE} cards less those cannot deal 10 to each"
            )
    return settings


def deal(
    seed: int, round_no: int, players: int, top: int = DECK_SIZE, table: tuple[Row, ...] = ()
) -> tuple[tuple[Row, ...], tuple[Row, ...]]:
    """The rows and hands of one round: a pure function of seed and round (and, with
    ``keep_rows``, of the rows left on the ``table``, which stay as the rows).

    The deck is ``1..top``; hands are dealt from it less the ``table`` cards, and when
    there is no table the 4 cards after the hands start the rows."""
    key = f"nimmt/{seed}/{round_no}"
    dealt = HAND_SIZE * players
    if table:
        on_table = {c for row in table for c in row}
        cards = draw(key, sorted(set(range(1, top + 1)) - on_table), dealt)  # ascending: a fixed order to shuffle
        rows = table
    else:
        cards = draw(key, range(1, top + 1), dealt + ROWS)
        rows = tuple(zip(cards[dealt:]))  # a one-card row per card
    hands = tuple([tuple(sorted(cards[i : i + HAND_SIZE])) for i in range(0, dealt, HAND_SIZE)])
    return rows, hands


def start(settings: Settings, players: int, seed: int) -> tuple[State, list[Event]]:
    zero = (0,) * players
    state = State(settings, players, seed, 0, 1, (), (), zero, zero, ())
    return _new_round(state, zero)


def _new_round(state: State, scores: tuple[int, ...]) -> tuple[State, list[Event]]:
    round_no = state.round + 1
    settings = state.settings
    players = state.players
    top = top_card(settings, players)
    if settings.variant == "logical":
        offer = tuple(range(1, top + 1))
        first = (round_no - 1) % players
        rows: tuple[Row, ...] = ()
        hands: tuple[Row, ...] = ((),) * players
        events: list[Event] = [DraftStart(round_no, offer, first)]
    else:
        offer = ()
        rows, hands = deal(state.seed, round_no, players, top, state.rows if settings.keep_rows else ())
        events = [Deal(round_no, rows, hands)]
    new = msgspec.structs.replace(
        state,
        round=round_no,
        turn=1,
        rows=rows,
        hands=hands,
        scores=scores,
        round_heads=(0,) * players,
        revealed=(),
        to_place=(),
        offer=offer,
        picks=(),
    )
    return new, events


_ALL_SEATS = {n: Decision("play", tuple(range(n))) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}
_ROW_CHOICE = tuple(Decision("row", (seat,)) for seat in range(MAX_PLAYERS))
_DRAFT = tuple(Decision("draft", (seat,)) for seat in range(MAX_PLAYERS))
_ROW_NUMBERS = tuple(range(ROWS))


def drafter(state: State) -> int:
    """The seat to pick next in a logical draft: round ``r`` starts with seat
    ``(r - 1) mod players``, then seat order, wrapping."""
    return (state.round - 1 + len(state.picks)) % state.players


def decision(state: State) -> Decision | None:
    if state.to_place:
        return _ROW_CHOICE[state.to_place[0][1]]
    if state.offer:
        return _DRAFT[drafter(state)]
    if state.over:
        return None
    return _ALL_SEATS[state.players]


def legal(state: State, seat: int) -> list[Any]:
    """Rows 0-3 for a row choice; the cards on offer in a draft; else the cards in hand,
    or with ``cards_per_turn=2`` every ascending pair of them (``[c]`` for a last card)."""
    if state.to_place:
        return list(_ROW_NUMBERS)
    if state.offer:
        return list(state.offer)
    if state.settings.cards_per_turn == 1:
        return list(state.hands[seat])
    return pairs(state.hands[seat])


def pairs(hand: tuple[Card, ...]) -> list[list[Card]]:
    """Every pair ``[a, b]`` of cards in ``hand``, ``a < b``; ``[[c]]`` for a last card."""
    if len(hand) == 1:
        return [[hand[0]]]
    return [[a, b] for i, a in enumerate(hand) for b in hand[i + 1 :]]


def default(state: State, seat: int) -> Any:
    """The documented move for a seat that failed: its lowest card (the two lowest with
    ``cards_per_turn=2``); in a draft, the lowest card on offer; for a row choice, the
    row with the fewest heads (ties: fewest cards, then lowest index), or when shedding
    the row with the fewest cards (ties: lowest index)."""
    if state.to_place:
        if state.settings.shedding:
            return smallest_row(state.rows)
        return cheapest_row(state.rows)
    if state.offer:
        return state.offer[0]
    hand = state.hands[seat]
    if state.settings.cards_per_turn == 1:
        return hand[0]
    return list(hand[:2])


def cheapest_row(rows: tuple[Row, ...] | list[list[int]]) -> int:
    return min(range(len(rows)), key=lambda i: (sum(HEADS[c] for c in rows[i]), len(rows[i]), i))


def smallest_row(rows: tuple[Row, ...] | list[list[int]]) -> int:
    """Shedding's default row: fewest cards (they go into the hand), then lowest index."""
    return min(range(len(rows)), key=lambda i: (len(rows[i]), i))


def professional_place(rows: tuple[Row, ...] | list[Row], card: Card) -> tuple[int, End] | None:
    """The professional variant's place for ``card``: the closest end of any row that
    can take it (after a last card lower than it, before a first card higher than it),
    an exact tie going to the right end, then to the lower row; ``None`` when no end
    can (the card lies inside every row), which calls for a row choice."""
    places = []
    for i, row in enumerate(rows):
        if row[-1] < card:
            places.append((card - row[-1], 0, i))
        if card < row[0]:
            places.append((row[0] - card, 1, i))
    if not places:
        return None
    _, left, i = min(places)
    return i, "left" if left else "right"


def view(state: State, seat: int) -> View:
    to_place = state.to_place
    settings = state.settings
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
        variant=settings.variant,
        top_card=top_card(settings, state.players),
        cards_per_turn=settings.cards_per_turn,
        keep_rows=settings.keep_rows,
        shedding=settings.shedding,
        hand_sizes=tuple(map(len, state.hands)),
        offer=state.offer,
        picks=state.picks,
    )


def observe(event: Event, seat: int) -> Event | None:
    """What ``seat`` is told of an event: a deal shows only its own hand."""
    if type(event) is Deal:
        return RoundStart(event.round, event.rows, event.hands[seat])
    return event


class TurnRules(NamedTuple):
    """What the settings decide about every turn of a game: derived once per settings
    (``Settings.turn_rules``), so that no state carries it and no turn works it out again."""

    professional: bool
    """A card goes to the closest end of any row (``professional_place``), not after
    the highest row end below it."""
    shedding: bool
    """A taken row goes into the taker's hand, not into heads; one deal."""
    read_plays: Callable[[list[Row], Mapping[int, Any]], list[Play]]
    """Each seat's card (``_read_cards``) or pair (``_read_pairs``), out of its hand."""


_heads = HEADS.__getitem__


def apply(state: State, answers: Mapping[int, Any]) -> tuple[State, list[Event]]:
    """The state after the pending decision is answered, and the events it caused.

    Every turn, whatever the settings, goes through the same steps: read the answers
    (the plays, or the row a seat chose), place the cards left to place lowest first
    (``_place``), then end the turn, the round or the game."""
    if state.over:
        raise IllegalAnswer("the game is over")
    if state.offer:
        return _pick(state, answers)
    rules = state.settings.turn_rules
    rows = list(state.rows)
    hands = list(state.hands)
    round_heads = list(state.round_heads)
    revealed = state.revealed
    if state.to_place:
        card, seat = state.to_place[0]
        row = answers[seat]
        if type(row) is not int or not 0 <= row < ROWS:
            raise IllegalAnswer(f"row {row!r} does not exist: choose 0 to {ROWS - 1}")
        taken = rows[row]
        if rules.shedding:
            hands[seat] = tuple(sorted(hands[seat] + taken))
        else:
            round_heads[seat] += sum(map(_heads, taken))
        rows[row] = (card,)
        events: list[Event] = [Place(seat, card, row, taken, True)]
        queue = state.to_place[1:]
    else:
        plays = rules.read_plays(hands, answers)
        plays.sort()
        queue = tuple(plays)
        revealed = (*revealed, queue)
        events = [Reveal(state.round, state.turn, queue)]

    pending = _place(queue, rows, hands, round_heads, rules, events) if queue else -1
    if pending >= 0:
        # Rule 5: no row can take queue[pending]; its seat chooses a row.
        new = msgspec.structs.replace(
            state,
            rows=tuple(rows),
            hands=tuple(hands),
            round_heads=tuple(round_heads),
            revealed=revealed,
            to_place=queue[pending:],
        )
        return new, events
    if rules.shedding:
        if all(hands) and state.turn < SHEDDING_TURN_LIMIT:
            new = msgspec.structs.replace(
                state, turn=state.turn + 1, rows=tuple(rows), hands=tuple(hands), revealed=revealed, to_place=()
            )
            return new, events
        return _end_shedding(state, rows, hands, revealed, events)
    if hands[0]:  # every hand holds as many cards: the round goes on
        new = msgspec.structs.replace(
            state,
            turn=state.turn + 1,
            rows=tuple(rows),
            hands=tuple(hands),
            round_heads=tuple(round_heads),
            revealed=revealed,
            to_place=(),
        )
        return new, events
    ended = msgspec.structs.replace(state, rows=tuple(rows), hands=tuple(hands), revealed=revealed, to_place=())
    return _end_round(ended, round_heads, events)


def _place(
    queue: tuple[Play, ...],
    rows: list[Row],
    hands: list[Row],
    round_heads: list[int],
    rules: TurnRules,
    events: list[Event],
) -> int:
    """Place ``queue`` in order, changing ``rows`` and the takers' heads (or hands),
    and log each card's ``Place``; the index of the first card no row can take (its
    seat must choose a row), or -1 when all are placed.

    The standard rule (after the highest row end below the card) is written out for
    the 4 rows, without a loop: it is the inner loop of every simulation (bench/rules.py)."""
    professional = rules.professional
    for card, seat in queue:
        if professional:
            spot = professional_place(rows, card)
            if spot is None:
                return queue.index((card, seat))
            best, end = spot
        else:
            first, second, third, fourth = rows
            best, best_end = -1, 0
            if first[-1] < card:
                best, best_end = 0, first[-1]
            if best_end < second[-1] < card:
                best, best_end = 1, second[-1]
            if best_end < third[-1] < card:
                best, best_end = 2, third[-1]
            if best_end < fourth[-1] < card:
                best = 3
            if best < 0:
                return queue.index((card, seat))
            end = "right"
        cards = rows[best]
        if len(cards) == ROW_CAPACITY:  # the 6th card takes the row
            if rules.shedding:
                hands[seat] = tuple(sorted(hands[seat] + cards))
            else:
                a, b, c, d, e = cards
                round_heads[seat] += HEADS[a] + HEADS[b] + HEADS[c] + HEADS[d] + HEADS[e]
            rows[best] = (card,)
            events.append(Place(seat, card, best, cards, False, end))
        else:
            rows[best] = (*cards, card) if end == "right" else (card, *cards)
            events.append(Place(seat, card, best, (), False, end))
    return -1


def _read_cards(hands: list[Row], answers: Mapping[int, Any]) -> list[Play]:
    """Each seat's card, taken out of ``hands``; ``IllegalAnswer`` quoting a bad one."""
    plays = []
    for seat, hand in enumerate(hands):
        card = answers[seat]
        if type(card) is not int:
            raise IllegalAnswer(f"a card is a whole number, not {card!r}")
        try:
            i = hand.index(card)
        except ValueError:
            raise IllegalAnswer(f"card {card!r} is not in your hand {list(hand)}") from None
        plays.append((card, seat))
        hands[seat] = hand[:i] + hand[i + 1 :]
    return plays


def _read_pairs(hands: list[Row], answers: Mapping[int, Any]) -> list[Play]:
    """``cards_per_turn=2``: each seat's pair ``[a, b]``, ``a < b`` (``[c]`` for a last
    card), taken out of ``hands``; ``IllegalAnswer`` quoting a bad one."""
    plays = []
    for seat, hand in enumerate(hands):
        answer = answers[seat]
        count = min(2, len(hand))
        if (
            not isinstance(answer, list | tuple)
            or len(answer) != count
            or any(type(c) is not int for c in answer)
            or (count == 2 and not answer[0] < answer[1])
        ):
            shape = "2 cards as [a, b] with a < b" if count == 2 else "your last card as [c]"
            raise IllegalAnswer(f"play {shape}, not {answer!r}")
        for card in answer:
            if card not in hand:
                raise IllegalAnswer(f"card {card!r} is not in your hand {list(hand)}")
            plays.append((card, seat))
        hands[seat] = tuple(c for c in hand if c not in answer)
    return plays


def _pick(state: State, answers: Mapping[int, Any]) -> tuple[State, list[Event]]:
    """A logical draft's pick; the last one lays the 4 cards left out as the rows."""
    seat = drafter(state)
    card = answers[seat]
    if type(card) is not int:
        raise IllegalAnswer(f"a card is a whole number, not {card!r}")
    offer = state.offer
    try:
        i = offer.index(card)
    except ValueError:
        raise IllegalAnswer(f"card {card!r} is not on offer {list(offer)}") from None
    offer = offer[:i] + offer[i + 1 :]
    hands = list(state.hands)
    hands[seat] = tuple(sorted((*hands[seat], card)))
    picks = (*state.picks, (card, seat))
    events: list[Event] = [Pick(state.round, seat, card)]
    if len(picks) < HAND_SIZE * state.players:
        return msgspec.structs.replace(state, offer=offer, hands=tuple(hands), picks=picks), events
    rows = tuple((c,) for c in offer)  # the 4 cards left, lowest first
    events.append(Deal(state.round, rows, tuple(hands)))
    return msgspec.structs.replace(state, offer=(), rows=rows, hands=tuple(hands), picks=picks), events


def _end_shedding(
    state: State, rows: list[Row], hands: list[Row], revealed: tuple[tuple[Play, ...], ...], events: list[Event]
) -> tuple[State, list[Event]]:
    """Shedding's end: the score is the cards left in hand; empty hands share first."""
    left = tuple(len(hand) for hand in hands)
    events.append(GameEnd(left, tuple(competition_ranks(left, lower_is_better=True))))
    final = msgspec.structs.replace(
        state, rows=tuple(rows), hands=tuple(hands), scores=left, revealed=revealed, to_place=(), over=True
    )
    return final, events


def _end_round(state: State, round_heads: list[int], events: list[Event]) -> tuple[State, list[Event]]:
    scores = tuple(map(add, state.scores, round_heads))
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
