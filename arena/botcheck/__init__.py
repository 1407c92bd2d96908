"""``arena bot check``: the scripted battery a bot author runs before anything else.

Each scenario is one session with a fresh bot process: the handshake, then games
driven by the real rules from a chosen opening (a fresh deal, or a position built to
be tricky), with the bot in one seat and seeded random play in the others. Every line
the bot sends is judged as the referee would judge it, but the first mistake stops the
scenario and is reported whole: the line sent, the exact line received, what was
expected and how to fix it. A game's scenarios are its record's battery (``arena.games.<game>.battery``
for the arena's own), else the generic one (``arena.botcheck.generic``).
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
import trio

from arena.bots import Bot
from arena.games import SettingsError
from arena.games.parts import Scenario
from arena.games.registry import games as known_games
from arena.games.registry import get_game
from arena.play.session import Answered, Dropped, Faulted, Outbox, Pending, exchange, greet, is_legal, judge, seen_by
from arena.sandbox.base import BotGone, BotProcess, Sandbox, StartError
from arena.sandbox.framing import LineTooLong
from arena.sandbox.images import ImageError
from protocol.messages import MAX_LINE_BYTES, PROTOCOL_VERSION, Bye, GameOver, Hello, Limits, NewGame, encode

FLUSH_HINT = (
    "end each message with a newline and flush stdout after it "
    "(Python: print(..., flush=True); C: fflush(stdout); Perl: $| = 1)"
)
STDOUT_HINT = "stdout carries protocol lines only: write logs and debug output to stderr"
SHORT_LINE = 200
"""A request longer than this is shown with its view (and any long list) elided."""
EXIT_GRACE_S = 2.0
"""How long a bot may take to exit after ``bye``."""


@dataclass
class Check:
    """One line of the report: a check passed or failed, and the evidence."""

    name: str
    ok: bool
    detail: str = ""
    sent: str = ""
    got: str = ""
    expected: str = ""
    fix: str = ""
    stderr: str = ""
    times_ms: list[float] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    hello_ms: float | None = None
    skipped: bool = False
    """Not run: a refusal, or an earlier failure that makes it pointless."""
    greeted: bool = False
    """The handshake succeeded."""
    key: str = ""
    """What kind of failure this is: the same key in another check is the same mistake."""
    same_as: str = ""
    """The check that failed the same way first (this one then carries no evidence)."""

    @property
    def timing(self) -> str:
        parts = [] if self.hello_ms is None else [f"hello {self.hello_ms:.0f} ms"]
        if len(self.times_ms) == 1:
            parts.append(f"1 request {self.times_ms[0]:.1f} ms")
        elif self.times_ms:
            mean = sum(self.times_ms) / len(self.times_ms)
            parts.append(f"{len(self.times_ms)} requests, mean {mean:.1f} ms, slowest {max(self.times_ms):.1f} ms")
        return ", ".join(parts)


class Failed(Exception):
    """A check failed; carries what the report shows. ``key`` names the kind of mistake
    (by default the detail with its numbers blanked), so that it is reported once."""

    def __init__(
        self, detail: str, sent: str = "", got: str = "", expected: str = "", fix: str = "", key: str = ""
    ) -> None:
        super().__init__(detail)
        self.detail, self.sent, self.got, self.expected, self.fix = detail, sent, got, expected, fix
        self.key = key or re.sub(r"\d+", "#", detail)


class Refused(Exception):
    """The bot declined the game or variant in its hello answer."""


def scenarios_for(game: str) -> list[Scenario]:
    """The game's own battery (its record's ``scenarios``), else the generic one."""
    return get_game(game).battery()


def manifest_check(bot: Bot) -> Check:
    """The manifest loaded (``load_bot`` checked its fields); its games must exist."""
    unknown = [g for g in bot.manifest.games if g not in known_games()]
    if unknown or not bot.manifest.games:
        return Check(
            "manifest",
            False,
            f"bot.toml lists games {bot.manifest.games}",
            expected=f"`games` with one or more of: {', '.join(known_games())}",
            fix=f"fix `games` in {bot.path / 'bot.toml'}" + (f" (unknown: {', '.join(unknown)})" if unknown else ""),
        )
    m = bot.manifest
    return Check("manifest", True, f"{m.name} {m.version} ({m.language}), games: {', '.join(m.games)}")


class Checker:
    """Runs the battery against one bot in one sandbox; ``on_check`` sees each result."""

    def __init__(
        self,
        bot: Bot,
        sandbox: Sandbox,
        move_ms: int = 1000,
        startup_ms: int = 10_000,
        on_check: Callable[[Check], None] = lambda check: None,
        progress: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.bot = bot
        self.sandbox = sandbox
        self.limits = Limits(move_ms, 10 * move_ms, startup_ms, MAX_LINE_BYTES)
        self.on_check = on_check
        self.progress = progress
        """Where build steps are reported (building happens before the first check)."""
        self.checks: list[Check] = []
        self.first_failed: dict[str, Check] = {}
        """The first check to fail with each ``key``."""

    def _report(self, check: Check) -> Check:
        """Record and show ``check``; a failure like one already shown is shown without
        its evidence, as the same failure."""
        if not check.ok and not check.skipped and check.key:
            first = self.first_failed.setdefault(check.key, check)
            if first is not check:
                check.same_as = first.name
                check.detail = f"{check.detail} (the same failure as above)"
                check.sent = check.got = check.expected = check.fix = check.stderr = ""
        self.checks.append(check)
        self.on_check(check)
        return check

    def repeated(self) -> list[tuple[str, int]]:
        """``(check, how many checks failed as it did)`` for each failure seen more than once."""
        counts = Counter(c.same_as for c in self.checks if c.same_as)
        return [(name, n + 1) for name, n in counts.items()]

    async def run(self, games: list[str] | None = None, only: str = "") -> list[Check]:
        """Every scenario of every game the manifest lists (or of ``games``) whose name
        holds ``only``."""
        if not self._report(manifest_check(self.bot)).ok:
            return self.checks
        if not await self._start_check():
            return self.checks
        stop_reason = ""
        for game in games or self.bot.manifest.games:
            for scenario in scenarios_for(game):
                name = f"{game}: {scenario.name}"
                if only.lower() not in name.lower():
                    continue
                if stop_reason:
                    self._report(Check(name, False, stop_reason, skipped=True))
                    continue
                check = self._report(await self._scenario(game, scenario, name))
                if not check.ok and not check.greeted:
                    stop_reason = "not run: fix the handshake first (every session starts with it)"
                elif not check.ok and "no answer" in check.detail:
                    stop_reason = "not run: a bot that does not answer would only time out again"
        return self.checks

    async def _start_check(self) -> bool:
        """Build what needs building and start the bot once: the first thing to fail."""
        problem = run_program_problem(self.bot, built=False)
        if problem is not None:
            self._report(Check("start", False, problem[0], fix=problem[1]))
            return False
        error: Exception | None = None
        async with trio.open_nursery() as nursery:
            try:
                await trio.to_thread.run_sync(self.sandbox.prepare, self.bot, self.progress)
                began = trio.current_time()
                process = await self.sandbox.start(self.bot, nursery, self.limits.max_line)
                ms = (trio.current_time() - began) * 1000
                await process.stop()
            except (StartError, ImageError) as exc:
                error = exc
        if error is not None:
            problem = run_program_problem(self.bot, built=True)
            detail, fix = problem or (str(error), "fix `run` or `build` in bot.toml, then check again")
            self._report(Check("start", False, detail, fix=fix))
            return False
        isolation = self.sandbox.isolation_for(self.bot)
        self._report(Check("start", True, f"started in {ms:.0f} ms ({isolation})"))
        return True

    async def _scenario(self, game_name: str, scenario: Scenario, name: str) -> Check:
        check = Check(name, True)
        process: BotProcess | None = None
        try:
            async with trio.open_nursery() as nursery:
                try:
                    process = await self.sandbox.start(self.bot, nursery, self.limits.max_line)
                    session = _Session(process, self.limits, check, scenario)
                    await session.play(game_name)
                    check.detail = _covered(check)
                except Refused as exc:
                    check.skipped, check.detail = True, str(exc)
                except Failed as exc:
                    check.ok = False
                    check.detail, check.sent, check.got = exc.detail, exc.sent, exc.got
                    check.expected, check.fix, check.key = exc.expected, exc.fix, exc.key
                except StartError as exc:
                    check.ok, check.detail, check.key = False, f"could not start: {exc}", "start"
                finally:
                    if process is not None:
                        await process.stop()
        except SettingsError as exc:  # a scenario the game refuses: our bug, said plainly
            check.ok, check.detail = False, f"internal: bad scenario settings: {exc}"
        if process is not None and not check.ok:
            check.stderr = process.stderr_tail(1500).strip()
        return check


def _covered(check: Check) -> str:
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(check.kinds.items()))
    return f"answered {kinds}" if kinds else "no requests"


class _Session:
    """Speaks to one bot process as the referee would, for one scenario: the same
    session (``arena.play.session``) under the strict policy, where the first mistake is a
    ``Failed`` that stops the scenario."""

    def __init__(self, process: BotProcess, limits: Limits, check: Check, scenario: Scenario) -> None:
        self.process = process
        self.limits = limits
        self.check = check
        self.scenario = scenario
        self.ids = scenario.ids() if scenario.ids else iter(range(1, 1 << 62))
        self.rng = random.Random(scenario.name)
        self.outbox = Outbox()
        self.names: Mapping[str, str] = {}

    async def play(self, game_name: str) -> None:
        record = get_game(game_name)
        game, self.names = record.rules, record.answer_names
        scenario = self.scenario
        settings = game.parse_settings(scenario.settings, scenario.players)
        hello = Hello(
            PROTOCOL_VERSION,
            game_name,
            scenario.settings,
            scenario.games[0][0],
            scenario.players,
            self.limits,
            games=len(scenario.games),
        )
        await self._greet(hello)
        self.check.greeted = True

        for game_no, (seat, opening) in enumerate(scenario.games, 1):
            if isinstance(opening, int):
                state, events = game.start(settings, scenario.players, opening)
            else:
                state, events = opening(settings, scenario.players)
            self.outbox.queue(encode(NewGame(game_no, seat, scenario.players, scenario.settings)))
            self.outbox.events(seen_by(game.observe, events, seat))
            while (decision := game.decision(state)) is not None:
                answers = {}
                for s in decision.seats:
                    if s == seat:
                        answers[s] = await self._request(game, state, s, decision.kind)
                    else:
                        answers[s] = self.rng.choice(game.legal(state, s))
                state, events = game.apply(state, answers)
                self.outbox.events(seen_by(game.observe, events, seat))
            outcome = game.outcome(state)
            assert outcome is not None
            await self._send(encode(GameOver(game_no, outcome.scores, outcome.ranks)))
        await self._send(encode(Bye()))
        await self._expect_exit()

    async def _greet(self, hello: Hello) -> None:
        """The hello exchange: any mistake fails; a refusal skips the scenario."""
        sent = _text(encode(hello))
        began = trio.current_time()
        greeting = await greet(self.process, hello, began + self.limits.startup_ms / 1000)
        if not isinstance(greeting, Faulted) or greeting.cause in ("undecodable", "not a hello"):
            self.check.hello_ms = (trio.current_time() - began) * 1000
        if isinstance(greeting, Faulted) and greeting.cause == "not a hello":
            raise Failed(
                "the first answer must be the hello answer",
                sent,
                _text(greeting.line or b""),
                expected='{"type":"hello","name":"...","version":"...","accept":true}',
            )
        if isinstance(greeting, Faulted):
            raise _failure(greeting, "hello", _short(sent), self.limits.startup_ms)
        if not greeting.reply.name.strip() or not greeting.reply.version.strip():
            raise Failed("the hello answer needs a name and a version", got=_text(greeting.line))
        if not greeting.reply.accept:
            settings = self.scenario.settings or "default"
            raise Refused(f"refused in its hello answer (settings {settings}): not seated then")

    async def _send(self, data: bytes) -> None:
        """Send what is queued and ``data``, in one write, as the referee does."""
        data = self.outbox.take(data)
        try:
            await self.process.send(data, self.limits.move_ms / 1000)
        except BotGone as exc:
            raise Failed(f"the bot is gone ({exc}) before this message", _text(data)) from None

    async def _request(self, game: Any, state: Any, seat: int, kind: str) -> Any:
        pending = Pending(next(self.ids), kind, game.legal(state, seat))
        request = pending.request(game.view(state, seat), self.limits.move_ms, self.limits.bank_ms)
        timeout_ms = self.limits.move_ms + self.limits.bank_ms
        sent = _short(_text(request))
        began = trio.current_time()
        got = await exchange(self.process, self.outbox.take(request), began + timeout_ms / 1000, timeout_ms / 1000)
        if isinstance(got, bytes):
            self.check.times_ms.append((trio.current_time() - began) * 1000)
        verdict = got if isinstance(got, Faulted) else judge(got, pending)
        legal = _short(_json(pending.legal), 120)
        expected = f'{{"type":"answer","id":{pending.request_id},"answer":A}} with A one of {legal}'
        match verdict:
            case Answered(answer):
                ms = self.check.times_ms[-1]
                if ms > self.limits.move_ms:
                    raise Failed(
                        f"answered in {ms:.0f} ms, over the move limit of {self.limits.move_ms} ms",
                        sent,
                        _text(got if isinstance(got, bytes) else b""),
                        fix="think for less than the request's `move_ms` (overruns eat the game's time bank)",
                    )
                self.check.kinds[kind] += 1
                return answer
            case Dropped(cause="not an answer"):
                raise Failed(f"answered a {kind} request with a hello", sent, _text(verdict.line), expected)
            case Dropped(cause="stale id"):
                raise Failed(
                    f"answered id {verdict.answer_id} to request id {pending.request_id}",
                    sent,
                    _text(verdict.line),
                    expected,
                    fix="copy the request's `id` into the answer: ids are not 1, 2, 3... in general",
                    key="id",
                )
            case Faulted(cause="illegal"):
                fix, key = _illegal_fix(verdict.answer, pending.legal, kind, self.names.get(kind, "an answer"))
                raise Failed(
                    f"illegal {kind} answer {verdict.detail}", sent, _text(verdict.line or b""), expected, fix, key
                )
            case Faulted():
                raise _failure(verdict, f"{kind} request", sent, timeout_ms)
            case Dropped():
                raise Failed(verdict.reason, sent, _text(verdict.line), expected)

    async def _expect_exit(self) -> None:
        """After ``bye`` the bot should exit by itself (the referee kills it otherwise)."""
        reason = None
        with trio.move_on_after(EXIT_GRACE_S):
            try:
                while True:  # lines after bye are ignored, as the referee ignores them
                    await self.process.receive_line()
            except (BotGone, LineTooLong) as exc:
                reason = str(exc) if isinstance(exc, BotGone) else None
        if reason is None:
            raise Failed(
                f"still running {EXIT_GRACE_S:g} s after bye",
                '{"type":"bye"}',
                fix="exit when you read bye (or reach the end of stdin)",
            )
        if reason != "exited with code 0":
            raise Failed(f"after bye the bot {reason}", '{"type":"bye"}', fix="exit with status 0 after bye")


def _failure(fault: Faulted, what: str, sent: str, timeout_ms: int) -> Failed:
    """The strict policy's report of a fault in the exchange for ``what`` (``hello`` or
    ``<kind> request``): silence, an exit, a line too long or not a message."""
    got = _text(fault.line or b"")
    if fault.cause == "timeout":
        return Failed(f"no answer to the {what} within {timeout_ms} ms", sent, fix=FLUSH_HINT)
    if fault.cause == "exited":
        by_hand = "run the bot by hand with this line on its stdin" if what == "hello" else "run the bot by hand"
        return Failed(
            f"the bot exited ({fault.detail}) instead of answering the {what}",
            sent,
            got,  # what it wrote without a newline, if anything
            fix=f"{by_hand}; its stderr is below",
            key=f"exited {fault.detail} at the {'hello' if what == 'hello' else 'request'}",
        )
    if fault.cause == "too long":
        return Failed(fault.detail, sent, got + "...", fix=STDOUT_HINT)
    if fault.cause == "undecodable":
        kind = "hello" if what == "hello" else "answer"
        example = (
            '{"type":"hello","name":"mybot","version":"1.0","accept":true}'
            if kind == "hello"
            else '{"type":"answer","id":7,"answer":42}'
        )
        return Failed(
            f"not a valid {kind} message: {fault.detail}",
            sent,
            got,
            expected=f"one JSON object on one line, such as {example}",
            fix=_decode_fix(fault.detail, kind),
        )
    return Failed(fault.message, sent, got)


def _decode_fix(error: str, kind: str) -> str:
    """The fix for a line that is not a valid ``kind`` message (``hello`` or ``answer``),
    from the decoder's ``error``."""
    fields = "type, name, version and (optionally) accept" if kind == "hello" else "type, id and answer"
    if found := re.search(r"unknown field `([^`]*)`", error):
        return f"remove the field `{found[1]}`: the {kind} message has only {fields} (log to stderr)"
    if found := re.search(r"missing required field `([^`]*)`", error):
        return f"add the field `{found[1]}`: the {kind} message has {fields}"
    if "at `$.id`" in error:
        return 'answer with the request\'s id, a JSON integer, copied as it is: "id": 907, not "id": "907"'
    if "at `$.type`" in error:
        return '`type` is "hello" in the hello answer and "answer" in an answer'
    if found := re.search(r"at `\$\.(name|version)`", error):
        return f'`{found[1]}` is a JSON string: "{found[1]}": "1.0"'
    if "at `$.accept`" in error:
        return "`accept` is true or false"
    return STDOUT_HINT


def _illegal_fix(answer: Any, legal: list[Any], kind: str, name: str) -> tuple[str, str]:
    """The fix for an illegal answer, and its key: a number sent as a string is named.
    ``name`` is what the game calls an answer of this kind (its record's ``answer_names``)."""
    unquoted = _unquote(answer)
    if unquoted != answer and is_legal(unquoted, legal):
        what = "a list of JSON numbers, not of strings" if isinstance(unquoted, list) else "a JSON number, not a string"
        fix = f"{name} is {what}: answer {_json(unquoted)}, not {_json(answer)}"
        return fix, "illegal: a number as a string"
    example = f" (such as {_short(_json(legal[0]), 60)})" if legal else ""
    return f"answer one element of `legal`, exactly as it is{example}", f"illegal {kind}"


def _unquote(value: Any) -> Any:
    """``value`` with every string that holds a JSON number turned into that number."""
    if isinstance(value, list):
        return [_unquote(v) for v in value]
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+(\.\d+)?\s*", value):
        return json.loads(value)
    return value


def _short(line: str, limit: int = SHORT_LINE) -> str:
    """``line`` as a report shows it: a long JSON object with its view and long lists
    elided (``"view":{...}``), or the head of anything else that is long."""
    if len(line) <= limit:
        return line
    try:
        message = json.loads(line)
    except ValueError:
        message = None
    if not isinstance(message, dict):
        return line[: limit - 3] + "..."
    parts = []
    for key, value in message.items():
        text = _json(value)
        if key == "view" or len(text) > 60:
            text = "{...}" if isinstance(value, dict) else "[...]" if isinstance(value, list) else text[:57] + "..."
        parts.append(f"{_json(key)}:{text}")
    return "{" + ",".join(parts) + "}"


def run_program_problem(bot: Bot, built: bool) -> tuple[str, str] | None:
    """What is wrong with the run command's program, when it is a file of the bot's
    folder: ``(detail, fix)``, or None. Its execute bit is judged only once a build (which
    may make or change it) has run, or when there is no build."""
    try:
        program = shlex.split(bot.manifest.run)[0]
    except (ValueError, IndexError):
        return None
    if "/" not in program or program.startswith("/"):
        return None
    path = bot.path / program
    try:
        if not path.is_file():
            return None
        with path.open("rb") as file:
            first = file.readline(256)
        mode = path.stat().st_mode
    except OSError:
        return None
    name = os.path.relpath(path, bot.path)
    if first.startswith(b"#!") and b"\r" in first:
        line = first.rstrip(b"\n").decode("utf-8", "replace")
        return (
            f"{program} has Windows line endings (CRLF): its first line is {line!r}, and no program's name ends in \\r",
            f"convert it to Unix line endings: dos2unix {name}, or sed -i 's/\\r$//' {name}",
        )
    if (built or not bot.manifest.build) and not mode & 0o111:
        return (
            f"{program} is not executable (no execute permission)",
            f"chmod +x {name} (and in git: git update-index --chmod=+x {name})",
        )
    return None


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def _text(line: bytes) -> str:
    return line.rstrip(b"\n").decode("utf-8", "replace")
