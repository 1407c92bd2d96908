"""The contract a game keeps, checked by playing it: ``check(record)``.

Modelled on OpenSpiel's ``random_sim_test``: seeded random games (uniform among the
legal answers) at the smallest, a middle and the largest table of every variant, each
through every member of ``Rules`` and every part of the record, as the arena will use
them. What is checked, by name (a problem names its check):

- the record and its settings: players bounds, defaults that parse back to themselves
  (a replay stores settings as JSON and parses them again), an unknown setting or a
  table size out of range refused with ``SettingsError``, board settings, overrides and
  label words naming settings, the variants;
- each game: ``start`` and ``apply`` are deterministic, ``apply`` leaves the state and
  the answers passed in as they were, ``decision`` asks valid seats, ``legal`` is never
  empty and holds ``default``, an answer as a bot sends it (JSON) is judged legal and
  plays as the legal answer does, an answer the rules refuse raises ``IllegalAnswer``,
  ``outcome`` is ``None`` until the game is over and then ranks by the scores, the game
  ends;
- privacy: shuffling the other seats' entries of each ``private`` field never changes a
  seat's ``view`` or what ``observe`` tells it, and the shuffle does change something;
- the wire: views and events (and what each seat is told of them) encode and decode
  through the record's ``view`` and ``event`` types unchanged;
- the replay: written as the referee writes it, it re-simulates through
  ``arena.play.replay.verify``, and one answer changed is caught;
- the parts: the terminal renderer draws each variant's game at the largest table, the
  web frames and page build, the bot-check battery builds and each of its games plays
  to the end;
- the environment's part (``arena.env``), for a record that names one: every view of a
  random game at each table is an observation of ``observation_size`` whole numbers of 0
  to ``HIGH``, every legal answer has an action of its own that turns back into it, and
  the standing at the end is the outcome's scores (so a game's rewards add up to them).

The check needs no bot, no sandbox and no clock. ``arena game check MODULE:ATTR`` runs it
from the command line; a game's own tests call it (``arena.games.kit.check``).
"""

from __future__ import annotations

import importlib
import io
import random
import string
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec

from arena.games.base import IllegalAnswer, SettingsError, competition_ranks
from arena.games.private import PrivateFields
from arena.games.registry import AnyGame, CatalogError, GameRecord, get_game, registered
from arena.play import replay
from arena.play.simulate import Policy, random_policy, replay_of

T = TypeVar("T")
Replayed = tuple[list[replay.Line], list[replay.Step]]
"""A replay's lines as read back, and the steps ``verify`` made of them."""

MAX_DECISIONS = 100_000
"""A random game that asks more decisions than this is taken never to end."""
NOT_AN_ANSWER: dict[str, str] = {"not": "an answer"}
"""An answer no game allows: what a tampered replay may hold."""
UNKNOWN_SETTING = "no_such_setting"
TAMPERINGS = 5
"""Logged answers changed, one at a time, to see ``verify`` catch it."""

RECORD = "the record"
SETTINGS = "settings"
START = "start is a pure function of settings, players and seed"
DECISION = "decision asks valid seats"
LEGAL = "legal holds the default"
WIRE_ANSWER = "an answer as a bot sends it (JSON) is legal and plays alike"
REFUSED = "an answer the rules refuse raises IllegalAnswer"
DETERMINISTIC = "apply is deterministic"
UNTOUCHED = "apply leaves its input unchanged"
OBSERVE = "observe tells a seat an event or nothing"
PRIVATE = "no seat sees another seat's private fields"
VIEW_WIRE = "views encode and decode through the record's view type"
EVENT_WIRE = "events encode and decode through the record's event type"
OUTCOME = "outcome ranks by the scores once the game is over"
ENDS = "the game ends"
REPLAY = "the replay re-simulates"
TERMINAL = "the terminal renderer draws the game"
WEB = "the web frames build"
BATTERY = "the bot-check battery builds and plays"
ENV = "the environment's arrays encode every view and legal answer"
NAME_CHARACTERS = frozenset(string.ascii_letters + string.digits + "_.-")


@dataclass(frozen=True)
class Problem:
    """One way a game breaks its contract: the check, where it first failed, what was
    wrong, and how many times in all (a broken ``apply`` breaks at every decision)."""

    check: str
    where: str
    detail: str
    times: int = 1

    def __str__(self) -> str:
        where = f"{self.where}: " if self.where else ""
        more = f" (and {self.times - 1} more)" if self.times > 1 else ""
        return f"{self.check}: {where}{self.detail}{more}"


@dataclass
class _Report:
    """The problems found: of those met in play, the first of each check kept whole and
    the rest counted; those of the record itself (no ``where``) each kept."""

    found: dict[tuple[str, str], Problem] = field(default_factory=dict)

    def add(self, check: str, where: str, detail: str) -> None:
        detail = _one_line(detail)
        key = (check, "" if where else detail)
        first = self.found.get(key)
        if first is None:
            self.found[key] = Problem(check, where, detail)
        else:
            self.found[key] = Problem(first.check, first.where, first.detail, first.times + 1)

    def failed(self, check: str) -> bool:
        return any(found == check for found, _ in self.found)

    def attempt(self, check: str, where: str, run: Callable[..., T], *args: Any) -> T | None:
        """``run(*args)``, or ``None`` with its exception recorded as a problem of ``check``."""
        try:
            return run(*args)
        except Exception as exc:
            self.add(check, where, _raised(exc))
            return None


def check(record: AnyGame, games: int = 3, seed: int = 0) -> list[Problem]:
    """Every problem with ``record``: ``games`` random games (seeds ``seed``, ``seed + 1``...)
    at the smallest, a middle and the largest table of each variant, each through the
    rules and every part of the record; an empty list when the game keeps the contract.

    The record is registered for the check's duration (a replay names its game)."""
    report = _Report()
    if not isinstance(record, GameRecord):
        return [Problem(RECORD, "", f"{record!r} is not a GameRecord")]
    report.attempt(RECORD, "", _check_record, record, report)
    report.attempt(SETTINGS, "", _check_settings, record, report)
    cases = report.attempt(SETTINGS, "", _listed, table_cases(record)) or []
    if not cases and not report.failed(SETTINGS):
        report.add(SETTINGS, "", "no variant's settings parse at the smallest, a middle or the largest table")
    privacy = PrivateFields(record.private)
    with registered(record):
        found = report.attempt(RECORD, "", get_game, record.name)
        if found is not None and found is not record:
            report.add(RECORD, "", f"another game named {record.name!r} is registered (ARENA_GAMES): replays find it")
        widest: dict[str, tuple[Replayed, str]] = {}
        for settings, players in cases:
            ended = [_play(record, settings, players, seed + number, privacy, report) for number in range(games)]
            if not ended or not ended[0]:
                continue  # the replay plays the first game again: not one that never ends
            where = _where(settings, players, seed)
            replayed = report.attempt(REPLAY, where, _check_replay, record, settings, players, seed, report)
            if replayed is not None:
                widest[_json(settings)] = replayed, where  # the cases come smallest table first
        for (lines, steps), where in widest.values():
            _check_parts(record, lines, steps, where, report)
        report.attempt(BATTERY, "", _check_battery, record, report)
        if record.env is not None:
            report.attempt(ENV, "", _check_env, record, cases, seed, report)
    _conclude_privacy(privacy, report)
    return list(report.found.values())


# --- the record and its settings -------------------------------------------------------------


def _check_record(record: AnyGame, report: _Report) -> None:
    rules = record.rules
    if not record.name or not set(record.name) <= NAME_CHARACTERS:
        report.add(
            RECORD, "", f"name {record.name!r}: letters, digits, '_', '.' and '-' only (a board is NAME/VARIANT)"
        )
    if not record.title:
        report.add(RECORD, "", "the title is empty")
    if not record.score.unit:
        report.add(RECORD, "", "the score's unit is empty")
    fewest, most = getattr(rules, "MIN_PLAYERS", None), getattr(rules, "MAX_PLAYERS", None)
    if type(fewest) is not int or type(most) is not int or not 1 <= fewest <= most:
        report.add(RECORD, "", f"MIN_PLAYERS {fewest!r} and MAX_PLAYERS {most!r}: whole numbers, 1 <= MIN <= MAX")
    for wire, kind in ((record.view, "view"), (list[record.event], "event")):  # type: ignore[name-defined]
        try:
            msgspec.json.Decoder(wire)
        except Exception as exc:
            report.add(RECORD, "", f"the {kind} type {wire!r} is not a msgspec type: {_raised(exc)}")


def _check_settings(record: AnyGame, report: _Report) -> None:
    rules = record.rules
    fewest, most = rules.MIN_PLAYERS, rules.MAX_PLAYERS
    for players in sorted({fewest, most}):
        parsed = rules.parse_settings({}, players)
        again = rules.parse_settings(_builtins(parsed), players)
        if again != parsed:
            report.add(SETTINGS, f"{players} players", f"the defaults {_builtins(parsed)} parse to {_builtins(again)}")
    for players in (fewest - 1, most + 1):
        _refused(report, f"{players} players", rules.parse_settings, {}, players)
    _refused(report, f"an unknown setting {UNKNOWN_SETTING!r}", rules.parse_settings, {UNKNOWN_SETTING: 1}, fewest)
    defaults = record.default_settings()
    names = set(defaults)
    for what, named in (
        ("board_settings", set(record.board_settings or ())),
        ("overridden_by", {*record.overridden_by, *record.overridden_by.values()}),
        ("setting_words", set(record.setting_words)),
    ):
        if named - names:
            report.add(SETTINGS, "", f"{what} names {sorted(named - names)}, not settings of {sorted(names)}")
    record.board_defaults()
    for name, words in record.setting_words.items():
        if name in defaults and not isinstance(words(_text(defaults[name])), str):
            report.add(SETTINGS, "", f"setting_words[{name!r}] gives no text for {defaults[name]!r}")
    variants = record.variants
    if not variants or len(set(variants)) != len(variants):
        report.add(SETTINGS, "", f"variants {variants!r}: one or more, each once")
    elif "variant" in defaults and defaults["variant"] != variants[0]:
        report.add(SETTINGS, "", f"the default variant {defaults['variant']!r} is not the first of {variants!r}")
    elif "variant" not in defaults and tuple(variants) != ("standard",):
        report.add(SETTINGS, "", f"variants {variants!r} without a 'variant' setting: leave the default ('standard',)")


def _refused(report: _Report, what: str, parse: Callable[..., Any], *args: Any) -> None:
    try:
        parse(*args)
    except SettingsError:
        return
    except Exception as exc:
        report.add(SETTINGS, "", f"{what}: parse_settings {_raised(exc)}, not SettingsError")
        return
    report.add(SETTINGS, "", f"{what}: parse_settings accepted it; it should raise SettingsError")


def table_sizes(record: AnyGame) -> list[int]:
    """The smallest, a middle and the largest table."""
    fewest, most = record.rules.MIN_PLAYERS, record.rules.MAX_PLAYERS
    return sorted({fewest, (fewest + most) // 2, most})


def variant_settings(record: AnyGame) -> list[dict[str, Any]]:
    """Each variant's settings (``{}`` for a game without the ``variant`` setting)."""
    if "variant" not in record.default_settings():
        return [{}]
    return [{"variant": variant} for variant in record.variants]


def table_cases(record: AnyGame) -> Iterator[tuple[dict[str, Any], int]]:
    """Each variant at each table size it takes (a variant may take fewer seats)."""
    for settings in variant_settings(record):
        for players in table_sizes(record):
            try:
                record.rules.parse_settings(settings, players)
            except SettingsError:
                continue
            yield settings, players


# --- one random game -------------------------------------------------------------------------


def policies(players: int, seed: int) -> list[Policy]:
    """Seeded random play: each seat uniform among its legal answers."""
    return [random_policy(random.Random(f"{seed}/{seat}")) for seat in range(players)]


def _play(
    record: AnyGame, settings: dict[str, Any], players: int, seed: int, privacy: PrivateFields, report: _Report
) -> bool:
    """One seeded random game to its end, each state and step through the checks; whether
    it got there (a problem may stop it first)."""
    rules = record.rules
    table = _where(settings, players, seed)
    chosen = policies(players, seed)
    phase, where, step = START, table, 0
    try:
        views = msgspec.json.Decoder(record.view)
        events_type = msgspec.json.Decoder(list[record.event])  # type: ignore[name-defined]
        parsed = rules.parse_settings(settings, players)
        if rules.parse_settings(_builtins(parsed), players) != parsed:
            report.add(SETTINGS, table, f"{_builtins(parsed)} parse to other settings")
        state, events = rules.start(parsed, players, seed)
        if _encode(rules.start(parsed, players, seed)) != _encode((state, events)):
            report.add(START, table, "two starts with the same seed differ")
        while True:
            _check_events(record, state, players, events, events_type, privacy, where, report)
            phase = DECISION
            pending = rules.decision(state)
            phase = OUTCOME
            outcome = rules.outcome(state)
            if pending is None:
                _check_outcome(record, outcome, players, where, report)
                return True
            if outcome is not None:
                report.add(OUTCOME, where, "outcome is not None while a decision is pending")
            phase = DECISION
            seats = list(pending.seats)
            if not isinstance(pending.kind, str) or not pending.kind:
                report.add(DECISION, where, f"kind {pending.kind!r}: a word (the request's kind)")
            if (
                not seats
                or len(set(seats)) != len(seats)
                or not all(type(s) is int and 0 <= s < players for s in seats)
            ):
                report.add(
                    DECISION, where, f"seats {pending.seats!r}: one or more distinct seats of 0 to {players - 1}"
                )
                return False
            report.attempt(VIEW_WIRE, where, _check_views, record, state, players, views, privacy, where, report)
            step += 1
            if step > MAX_DECISIONS:
                report.add(ENDS, table, f"still going after {MAX_DECISIONS} decisions of random play")
                return False
            where = f"{table}, decision {step}"
            phase = LEGAL
            answers = _answers(record, state, seats, chosen, where, report)
            if answers is None:
                return False
            phase = REFUSED
            _check_refused(record, state, answers, where, report)
            phase = UNTOUCHED
            before, asked, shown = _encode(state), _encode(answers), _short(answers)
            result = rules.apply(state, answers)
            if _encode(state) != before:
                report.add(UNTOUCHED, where, "apply changed the state passed in")
            if _encode(answers) != asked:
                report.add(UNTOUCHED, where, f"apply changed the answers passed in, {shown}, to {_short(answers)}")
                return False
            phase = DETERMINISTIC
            if _encode(rules.apply(state, dict(answers))) != _encode(result):
                report.add(DETERMINISTIC, where, "the same state and answers gave two different results")
            phase = WIRE_ANSWER
            _check_wire_answers(record, state, answers, result, where, report)
            phase = START
            state, events = result
    except Exception as exc:
        report.add(phase, where, _raised(exc))
        return False


def _answers(
    record: AnyGame, state: Any, seats: list[int], chosen: Sequence[Policy], where: str, report: _Report
) -> dict[int, Any] | None:
    """Each asked seat's random legal answer, once its legal list and default are checked."""
    rules = record.rules
    answers = {}
    for seat in seats:
        legal = rules.legal(state, seat)
        if not legal:
            report.add(LEGAL, where, f"seat {seat} has no legal answer")
            return None
        default = rules.default(state, seat)
        if default not in legal:
            report.add(
                LEGAL, where, f"seat {seat}'s default {default!r} is not among its legal answers {_short(legal)}"
            )
        answers[seat] = chosen[seat](state, seat, legal)
    return answers


def _check_refused(record: AnyGame, state: Any, answers: dict[int, Any], where: str, report: _Report) -> None:
    seat = next(iter(answers))
    try:
        record.rules.apply(state, {**answers, seat: NOT_AN_ANSWER})
    except IllegalAnswer:
        return
    except Exception as exc:
        report.add(REFUSED, where, f"seat {seat} answers {NOT_AN_ANSWER!r}: apply {_raised(exc)}, not IllegalAnswer")
        return
    report.add(REFUSED, where, f"seat {seat} answers {NOT_AN_ANSWER!r}: apply accepted it")


def _check_wire_answers(
    record: AnyGame, state: Any, answers: dict[int, Any], result: Any, where: str, report: _Report
) -> None:
    """The referee hands ``apply`` what the bot sent (JSON: a tuple arrives as a list),
    once ``is_legal`` found it among the legal answers."""
    from arena.play.session import is_legal  # the referee's own judge (it brings trio: not at import)

    rules = record.rules
    sent = {seat: msgspec.json.decode(msgspec.json.encode(answer)) for seat, answer in answers.items()}
    for seat, answer in sent.items():
        if not is_legal(answer, rules.legal(state, seat)):
            report.add(
                WIRE_ANSWER,
                where,
                f"seat {seat}'s legal answer {answers[seat]!r}, sent as {_json(answer)}, is judged illegal",
            )
            return
    try:
        played = rules.apply(state, sent)
    except IllegalAnswer as exc:
        report.add(WIRE_ANSWER, where, f"the legal answers as a bot sends them, {_json(sent)}, are refused: {exc}")
        return
    if _encode(played) != _encode(result):
        report.add(WIRE_ANSWER, where, f"the answers as JSON {_json(sent)} play differently from {_short(answers)}")


def _check_views(
    record: AnyGame,
    state: Any,
    players: int,
    views: msgspec.json.Decoder[Any],
    privacy: PrivateFields,
    where: str,
    report: _Report,
) -> None:
    rules = record.rules
    for seat in range(players):
        view = rules.view(state, seat)
        encoded = msgspec.json.encode(view)
        try:
            back = views.decode(encoded)
        except msgspec.DecodeError as exc:
            report.add(VIEW_WIRE, where, f"seat {seat}'s view does not decode as {record.view!r}: {exc}")
            return
        if msgspec.json.encode(back) != encoded:
            report.add(VIEW_WIRE, where, f"seat {seat}'s view {_short(view)} decodes as {_short(back)}")
        other = privacy.shuffled(state, seat)
        if other is not state and rules.view(other, seat) != view:
            report.add(
                PRIVATE,
                where,
                f"seat {seat}'s view changes when the other seats' {privacy.private_of(state)} are shuffled",
            )


def _check_events(
    record: AnyGame,
    state: Any,
    players: int,
    events: list[Any],
    decoder: msgspec.json.Decoder[list[Any]],
    privacy: PrivateFields,
    where: str,
    report: _Report,
) -> None:
    """The events of one step: through the wire type as a replay holds them, and as each
    seat is told them (``observe``), unchanged by shuffling the others' private entries."""
    rules = record.rules
    privacy.saw(state, events)
    if not isinstance(events, list):
        report.add(EVENT_WIRE, where, f"events {events!r}: a list")
        return
    report.attempt(EVENT_WIRE, where, _through, decoder, events, "the events", where, report)
    for seat in range(players):
        for event in events:
            told = report.attempt(OBSERVE, where, rules.observe, event, seat)
            if told is None:
                continue
            report.attempt(EVENT_WIRE, where, _through, decoder, [told], f"what seat {seat} is told", where, report)
            other = privacy.shuffled(event, seat)
            if other is not event and rules.observe(other, seat) != told:
                kind = type(event).__name__
                report.add(
                    PRIVATE,
                    where,
                    f"what seat {seat} is told of {kind} changes with the other seats' {privacy.private_of(event)}"
                    f" (if {kind} shows them on purpose, name the private fields by type, TYPE.FIELD, and leave"
                    f" {kind} out)",
                )


def _through(
    decoder: msgspec.json.Decoder[list[Any]], events: list[Any], what: str, where: str, report: _Report
) -> None:
    encoded = msgspec.json.encode(events)
    try:
        back = decoder.decode(encoded)
    except msgspec.DecodeError as exc:
        report.add(EVENT_WIRE, where, f"{what} {_short(events)} do not decode: {exc}")
        return
    if back != events:
        report.add(EVENT_WIRE, where, f"{what} {_short(events)} decode as {_short(back)}")


def _check_outcome(record: AnyGame, outcome: Any, players: int, where: str, report: _Report) -> None:
    if outcome is None:
        report.add(OUTCOME, where, "no outcome once decision is None")
        return
    scores, ranks = list(outcome.scores), list(outcome.ranks)
    if len(scores) != players or len(ranks) != players:
        report.add(OUTCOME, where, f"scores {scores} and ranks {ranks}: one per seat of {players}")
        return
    if ranks != competition_ranks(ranks, lower_is_better=True):
        report.add(OUTCOME, where, f"ranks {ranks}: 1 + the seats strictly ahead (1, 2, 2, 4)")
    sign = 1 if record.score.lower_is_better else -1
    for a in range(players):
        for b in range(players):
            if sign * scores[a] < sign * scores[b] and ranks[a] > ranks[b]:
                better = "lower" if record.score.lower_is_better else "higher"
                report.add(
                    OUTCOME,
                    where,
                    f"seat {a} scores {scores[a]}, {better} than seat {b}'s {scores[b]}, yet ranks behind it",
                )
                return
    if type(outcome.rounds) is not int or outcome.rounds < 1:
        report.add(OUTCOME, where, f"rounds {outcome.rounds!r}: a whole number, at least 1")


def _conclude_privacy(privacy: PrivateFields, report: _Report) -> None:
    unseen = privacy.unseen()
    if unseen:
        report.add(PRIVATE, "", f"private {unseen}: no field of the state or of an event")
    elif privacy.names and privacy.could_change and not privacy.changed:
        report.add(
            PRIVATE, "", f"shuffling the private {list(privacy.names)} never changed anything: the check proved nothing"
        )


# --- the replay and the parts ----------------------------------------------------------------


def _check_replay(record: AnyGame, settings: dict[str, Any], players: int, seed: int, report: _Report) -> Replayed:
    """The game as the referee logs it, written and read back: it must re-simulate, and
    one answer changed must be caught. Returns the lines read back and their steps."""
    where = _where(settings, players, seed)
    lines = replay.loads(replay.dumps(replay_of(record, settings, players, seed, policies(players, seed))), "replay")
    steps = list(replay.verify(lines))
    end = lines[-1]
    outcome = record.rules.outcome(steps[-1].state) if steps else None
    if not isinstance(end, replay.End) or outcome is None or outcome.scores != end.scores:
        report.add(REPLAY, where, "the re-simulated game does not end with the logged standings")
    _check_tampering(record, lines, steps, where, report)
    return lines, steps


def _check_tampering(
    record: AnyGame, lines: list[replay.Line], steps: list[replay.Step], where: str, report: _Report
) -> None:
    """A logged answer changed to another legal one must make ``verify`` refuse the log.
    Up to ``TAMPERINGS`` decisions are tried (two answers may happen to play alike)."""
    events_seen = 0
    tried: list[str] = []
    for number, line in enumerate(lines):
        if isinstance(line, replay.EventsLine):
            events_seen += 1
        if not isinstance(line, replay.DecisionLine) or len(tried) == TAMPERINGS:
            continue
        legal = record.rules.legal(steps[events_seen - 1].state, line.seats[0])
        other = next((answer for answer in legal if _json(answer) != _json(line.answers[0])), None)
        if other is None:
            continue
        changed = msgspec.structs.replace(line, answers=[other, *line.answers[1:]])
        try:
            list(replay.verify([*lines[:number], changed, *lines[number + 1 :]]))
        except replay.ReplayError:
            return
        tried.append(f"line {number + 1}: seat {line.seats[0]}'s answer changed to {_short(other)}")
    if not tried:
        report.add(REPLAY, where, "no decision had a second legal answer to change: nothing proved a change is caught")
    else:
        report.add(REPLAY, where, f"a changed answer re-simulates too ({'; '.join(tried)})")


def _check_parts(
    record: AnyGame, lines: list[replay.Line], steps: list[replay.Step], where: str, report: _Report
) -> None:
    """The terminal renderer and the web viewer, each on the verified replay."""
    report.attempt(TERMINAL, where, _draw_terminal, record, lines, steps, where, report)
    report.attempt(WEB, where, _build_page, lines, where, report)


def _draw_terminal(
    record: AnyGame, lines: list[replay.Line], steps: list[replay.Step], where: str, report: _Report
) -> None:
    from rich.console import Console  # the kit is imported by rules: rich loads when a check draws

    from arena.render import seat_labels

    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None, force_terminal=False)
    renderer = record.terminal()
    header = lines[0]
    assert isinstance(header, replay.Header)
    labels = seat_labels([seat.name for seat in header.seats])
    for step in steps:
        for renderable in renderer.live(step.events, labels):
            console.print(renderable)
    renderer.show_replay(console, lines, steps)
    if not out.getvalue().strip():
        report.add(TERMINAL, where, "show_replay printed nothing")


def _build_page(lines: list[replay.Line], where: str, report: _Report) -> None:
    from arena.web import viewer  # the web stack loads when a check builds a page

    data = viewer.frames(lines)
    if not data["frames"] or not isinstance(data["drawer"], str) or not data["drawer"]:
        report.add(WEB, where, f"no frames, or no drawer named ({data['drawer']!r})")
    viewer.standalone_html(lines)


def _check_battery(record: AnyGame, report: _Report) -> None:
    """Each scenario of ``arena bot check``'s battery: its settings parse, its seats
    exist, and each of its games, from its opening, plays to the end at random."""
    rules = record.rules
    battery = record.battery()
    if not battery:
        report.add(BATTERY, "", "the battery has no scenario")
    names = [scenario.name for scenario in battery]
    if len(set(names)) != len(names):
        report.add(BATTERY, "", f"scenario names repeat: {names}")
    for scenario in battery:
        where = f"scenario {scenario.name!r}"
        settings = rules.parse_settings(scenario.settings, scenario.players)
        for game_no, (seat, opening) in enumerate(scenario.games, 1):
            if not 0 <= seat < scenario.players:
                report.add(BATTERY, where, f"game {game_no} seats the bot at {seat} of {scenario.players} seats")
            if isinstance(opening, int):
                state, _ = rules.start(settings, scenario.players, opening)
            else:
                state, _ = opening(settings, scenario.players)
            if rules.decision(state) is None:
                report.add(BATTERY, where, f"game {game_no} opens on a finished game: nothing to ask")
            rng = random.Random(f"{scenario.name}/{game_no}")
            for _ in range(MAX_DECISIONS):
                pending = rules.decision(state)
                if pending is None:
                    break
                state, _ = rules.apply(state, {s: rng.choice(rules.legal(state, s)) for s in pending.seats})
            if rules.outcome(state) is None:
                report.add(BATTERY, where, f"game {game_no} does not end")


def _check_env(record: AnyGame, cases: list[tuple[dict[str, Any], int]], seed: int, report: _Report) -> None:
    """The environment's part on one random game of each table its encoding takes."""
    from protocol.arrays import HIGH

    part = record.env_part()
    encoding: Any = importlib.import_module(part.arrays)
    rules = record.rules
    for settings, players in cases:
        parsed = rules.parse_settings(settings, players)
        if encoding.refuse(_builtins(parsed)) is not None:
            continue
        table = _where(settings, players, seed)
        size = encoding.observation_size(players)
        rng = random.Random(seed)
        state, _ = rules.start(parsed, players, seed)
        for step in range(1, MAX_DECISIONS):
            pending = rules.decision(state)
            if pending is None:
                break
            where = f"{table}, decision {step}"
            answers = {}
            for seat in pending.seats:
                observation = encoding.observation(pending.kind, msgspec.to_builtins(rules.view(state, seat)))
                if len(observation) != size or not all(type(v) is int and 0 <= v <= HIGH for v in observation):
                    report.add(
                        ENV,
                        where,
                        f"seat {seat}'s observation has {len(observation)} entries (observation_size: {size}),"
                        f" each to be a whole number of 0 to {HIGH}: {_short(observation)}",
                    )
                    return
                legal = rules.legal(state, seat)
                actions = [encoding.action(pending.kind, answer) for answer in legal]
                back = [encoding.answer(i) if 0 <= i < encoding.ACTIONS else None for i in actions]
                if len(set(actions)) != len(actions) or _json(back) != _json(legal):
                    report.add(ENV, where, f"legal {_short(legal)} are actions {actions}, which answer {_short(back)}")
                    return
                answers[seat] = rng.choice(legal)
            state, _ = rules.apply(state, answers)
        outcome = rules.outcome(state)
        standing = part.standing(state)
        if outcome is not None and list(standing) != list(outcome.scores):
            report.add(
                ENV,
                table,
                f"the standing at the end, {standing}, is not the scores {outcome.scores}: rewards miss them",
            )


# --- small helpers -----------------------------------------------------------------------------


def _listed(items: Iterator[T]) -> list[T]:
    return list(items)


_encode = msgspec.msgpack.Encoder().encode


def _builtins(value: Any) -> Mapping[str, Any]:
    built = msgspec.to_builtins(value)
    return built if isinstance(built, dict) else {}


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def _text(value: Any) -> str:
    """A setting's value as a board label has it (``true``, ``66``)."""
    return _json(value).strip('"')


def _short(value: Any, limit: int = 160) -> str:
    try:
        text = _json(value)
    except Exception:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _raised(exc: BaseException) -> str:
    return f"raised {type(exc).__name__}: {exc}"


def _one_line(text: str, limit: int = 400) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _where(settings: Mapping[str, Any], players: int, seed: int) -> str:
    words = ", ".join(f"{k}={v}" for k, v in settings.items())
    return f"{players} players{', ' + words if words else ''}, seed {seed}"


# --- naming a record -------------------------------------------------------------------------


def record_named(entry: str) -> AnyGame:
    """The record ``entry`` names: ``MODULE:ATTRIBUTE`` as an ``ARENA_GAMES`` entry, or the
    name of a game the registry knows; ``CatalogError`` in one line otherwise."""
    module_name, colon, attribute = entry.partition(":")
    if not colon:
        try:
            return get_game(entry)
        except CatalogError as exc:
            raise CatalogError(f"{exc}; or name a record as MODULE:ATTRIBUTE (mygames.tiles:GAME)") from None
    if not module_name or not attribute:
        raise CatalogError(f"{entry!r}: expected MODULE:ATTRIBUTE (e.g. mygames.tiles:GAME) or a game's name")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CatalogError(f"{entry!r}: cannot import {module_name} ({exc}): is its folder on PYTHONPATH?") from None
    except Exception as exc:
        raise CatalogError(f"{entry!r}: importing {module_name} {_raised(exc)}") from None
    record = getattr(module, attribute, None)
    if not isinstance(record, GameRecord):
        what = "nothing" if record is None else f"a {type(record).__name__}"
        raise CatalogError(f"{entry!r}: {module_name}.{attribute} is {what}, not a GameRecord")
    return record
