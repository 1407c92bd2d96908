"""People at the table (``arena serve --play``): a visitor picks bots from a board and
plays a game against them in the browser.

The server hosts the match: the referee runs in its event loop, the bots in the
sandbox the server was given, and the person's seat is a relay (``BrowserSeat``): two
pipes the referee writes and reads as it does a bot's, whose other ends this module
holds. A request for that seat waits here (``Table.ask``) for the person's page, which
is sent it with that seat's view as the terminal draws it and what is legal, and posts
an answer; anything but a legal answer to the pending request is refused. The table is
the live game (``arena.web.live``) cut for that seat: its own hand face up, every other
hand face down. The game is stored in the tournament of people's games of its board
(``people-GAME-VARIANT``, its config holding ``"people"``), rated on a board of its own
(``GAME/VARIANT,people``), never on the bots' board.

A seat is held by a secret in a cookie: a reload, a second tab or a new connection that
carries it is the same seat, and a page without it sees nothing of it. A person who
goes away times out (``move_s`` a move); after three faults the referee plays the
seat's default moves to the end. At most ``tables`` games with people at once.
"""

from __future__ import annotations

import hmac
import io
import logging
import os
import secrets
import threading
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import msgspec
import trio

from arena.bots import Bot
from arena.games.registry import get_game
from arena.play.live import LiveFolder, publish_beside
from arena.play.match import GameSpec, TimeLimits
from arena.play.person import WithPerson, person_bot
from arena.sandbox.base import Sandbox
from arena.sandbox.framing import EndOfStream, PipeLines
from arena.sandbox.pipes import PipedBot
from arena.store import PEOPLE, Store, StoredBot, Tournament
from arena.tournaments.roundrobin import GameWriter, OnThisMachine, Progress, TournamentConfig, play_and_store
from arena.tournaments.schedule import Match
from arena.web.errors import WebError
from arena.web.live import LiveGames

if TYPE_CHECKING:
    from starlette.responses import Response

log = logging.getLogger("arena.web.play")

PERSON = "person"
"""The seat's name in replays and on the people's boards: every visitor's."""
ISOLATION = "a person at a web page (the server relays the seat)"
COOKIE = "arena-seat-"
"""A seat's cookie is this and the table's id; its value the seat's secret."""
KEEP_S = 600.0
"""How long a finished table stays reachable at its address (then it is the stored game)."""
KEEPALIVE_S = 15.0
MAX_ANSWER_BYTES = 4096
WAIT_FOR_TABLE_S = 10.0
"""How long the table's stream waits for the live game to appear once it has started."""


class PlayOptions(msgspec.Struct, frozen=True):
    """What ``arena serve --play`` offers."""

    sandbox: Any
    """Where the bots run (a ``Sandbox``)."""
    tables: int = 4
    """Games with people at once; the next visitor is asked to try again soon."""
    move_s: float = 120.0
    """The person's time for a move; the bots have the arena's default limits."""


class Ask(msgspec.Struct, frozen=True):
    """A request waiting for the person, as their page is sent it."""

    id: int
    kind: str
    what: str
    """What is asked, in words (the game's answer name)."""
    legal: list[Any]
    picture: str
    """The seat's view as the terminal draws it (``seat_view``), in plain text."""
    move_ms: int
    asked_at: float


@dataclass
class Table:
    """One game with a person: what their page is sent, and the way to the seat."""

    id: str
    secret: str
    game: str
    board: str
    seat: int
    seats: list[str]
    started: float = field(default_factory=time.time)
    state: str = "starting"
    """starting, playing, over (stored) or failed."""
    message: str = ""
    ask: Ask | None = None
    answered: int = 0
    """The id of the last request answered."""
    live: str = ""
    """The live game's key, once its match has a number."""
    game_id: int | None = None
    result: dict[str, Any] | None = None
    ended_at: float | None = None
    changed: trio.Event = field(default_factory=trio.Event)
    to_referee: int | None = None
    """The write end of the seat's output: answers go in here."""

    def update(self) -> None:
        changed, self.changed = self.changed, trio.Event()
        changed.set()

    def holds(self, secret: str | None) -> bool:
        return secret is not None and hmac.compare_digest(secret.encode(), self.secret.encode())

    def view(self) -> dict[str, Any]:
        """What the seat's page is sent: all of it, each time it changes."""
        return {
            "id": self.id,
            "state": self.state,
            "message": self.message,
            "game": self.game,
            "board": self.board,
            "seat": self.seat,
            "seats": self.seats,
            "ask": None if self.ask is None else msgspec.to_builtins(self.ask),
            "live": self.live,
            "events_url": f"/api/play/{self.id}/events",
            "game_url": None if self.game_id is None else f"/games/{self.game_id}",
            "result": self.result,
        }

    def answer(self, request_id: Any, value: Any) -> None:
        """Send the person's answer to the pending request (``WebError`` if it is not one)."""
        ask = self.ask
        if ask is None or self.to_referee is None:
            raise WebError(409, "nothing is asked of this seat now")
        if request_id != ask.id:
            raise WebError(409, f"request {shown_id(request_id)} is not the one pending (it is {ask.id})")
        if not any(_same(value, legal) for legal in ask.legal):
            raise WebError(400, f"{msgspec.json.encode(value).decode()[:60]} is not a legal answer here")
        line = msgspec.json.encode({"type": "answer", "id": ask.id, "answer": value}) + b"\n"
        try:
            os.write(self.to_referee, line)
        except OSError:
            raise WebError(409, "the game no longer takes answers from this seat") from None
        self.ask, self.answered = None, ask.id
        self.update()


def shown_id(value: Any) -> str:
    return msgspec.json.encode(value).decode()[:20]


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``1`` is not ``true``, nor ``1.0`` a card."""
    return type(a) is type(b) and a == b


class BrowserSeat(PipedBot):
    """The person's seat as the referee sees it: pipes, like a bot's. The server reads
    the requests and writes the answers at the other ends (``relay``); nothing runs, so
    nothing is frozen, and it uses no CPU of its own."""

    isolation = ISOLATION

    def __init__(self, table: Table, game: str, max_line: int) -> None:
        to_seat, self._requests = os.pipe()[::-1]  # (write end, read end)
        answers, to_referee = os.pipe()
        errors, no_errors = os.pipe()
        os.close(no_errors)  # the seat writes no stderr
        super().__init__(
            trio.lowlevel.FdStream(to_seat),
            trio.lowlevel.FdStream(answers),
            trio.lowlevel.FdStream(errors),
            max_line,
        )
        self.table = table
        self.game = game
        self.max_line = max_line
        table.to_referee = to_referee
        self._closed = False

    async def relay(self) -> None:
        """Read what the referee sends the seat: answer hello, keep each request for the
        person's page, the result at the end; then close the seat's ends."""
        stream = trio.lowlevel.FdStream(self._requests)
        requests = PipeLines(stream, self.max_line)
        decode = _view_decoder(self.game)
        try:
            while True:
                try:
                    line = await requests.receive_line()
                except EndOfStream:
                    return
                message = msgspec.json.decode(line)
                kind = message.get("type")
                if kind == "hello":
                    self._write({"type": "hello", "name": PERSON, "version": "1"})
                elif kind == "request":
                    self.table.ask = _ask(self.game, message, decode)
                    self.table.update()
                elif kind == "game_over":
                    self.table.ask = None
                    self.table.result = {"scores": message["scores"], "ranks": message["ranks"]}
                    self.table.update()
                elif kind == "bye":
                    return
        except (trio.ClosedResourceError, trio.BrokenResourceError, msgspec.DecodeError):
            return
        finally:
            with trio.CancelScope(shield=True):
                await stream.aclose()
            self._close_answers()

    def _write(self, message: dict[str, Any]) -> None:
        if self.table.to_referee is not None:
            try:
                os.write(self.table.to_referee, msgspec.json.encode(message) + b"\n")
            except OSError:
                pass

    def _close_answers(self) -> None:
        fd, self.table.to_referee = self.table.to_referee, None
        self.table.ask = None
        if fd is not None:
            os.close(fd)

    def cpu_seconds(self) -> float:
        return 0.0

    async def gone_reason(self) -> str:
        return "the person's seat closed"

    def exit_reason(self) -> str | None:
        return "the person's seat closed" if self._closed else None

    def freeze(self) -> None:
        pass

    def thaw(self) -> None:
        pass

    async def stop(self) -> None:
        if not self._closed:
            self._closed = True
            self._close_answers()
            with trio.CancelScope(shield=True):
                await self._close_pipes()


def _view_decoder(game: str) -> Callable[[Any], Any]:
    """The seat's view as the game's typed view (what ``seat_view`` draws)."""
    from protocol.bot import game_types

    view_type = game_types(game)[0]
    return lambda view: msgspec.convert(view, view_type)


def _ask(game: str, request: dict[str, Any], decode: Callable[[Any], Any]) -> Ask:
    from rich.console import Console

    record = get_game(game)
    kind, legal = str(request["kind"]), list(request["legal"])
    seat_view = getattr(record.terminal(), "seat_view", None)
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None, highlight=False)
    try:
        parts = (
            seat_view(decode(request["view"]), kind, legal)
            if seat_view
            else [msgspec.json.encode(request["view"]).decode()]
        )
        for part in parts:
            console.print(part)
    except (msgspec.ValidationError, TypeError, ValueError, AttributeError):
        console.print(msgspec.json.encode(request["view"]).decode(), markup=False)
    return Ask(
        id=int(request["id"]),
        kind=kind,
        what=record.answer_names.get(kind, "an answer"),
        legal=legal,
        picture=out.getvalue(),
        move_ms=int(request.get("move_ms", 0)),
        asked_at=time.time(),
    )


class Tables:
    """The games with people this server hosts: started in the app's task group, each
    seat's page answered from here."""

    def __init__(self, db: Path, options: PlayOptions, live: LiveGames) -> None:
        self.db = db
        self.options = options
        self.live = live
        self.tables: dict[str, Table] = {}
        self._tasks: anyio.abc.TaskGroup | None = None
        self._lock = threading.Lock()
        self._matches: dict[int, int] = {}
        """The last match number given out, by people's tournament."""
        self._person: Bot | None = None
        self._live: LiveFolder | None = None

    def attach(self, tasks: anyio.abc.TaskGroup) -> None:
        self._tasks = tasks

    def playing(self) -> int:
        return sum(1 for t in self.tables.values() if t.state in ("starting", "playing"))

    def _tidy(self) -> None:
        now = time.time()
        for key in [k for k, t in self.tables.items() if t.ended_at is not None and now - t.ended_at > KEEP_S]:
            del self.tables[key]

    def open(self, game: str, variant: str, settings: dict[str, Any], bots: list[StoredBot], seat: int) -> Table:
        """A new table of ``bots`` with the person at ``seat``: being set up as this returns
        (``WebError`` 503 when ``tables`` games with people are being played)."""
        self._tidy()
        if self._tasks is None:
            raise WebError(503, "this server does not host games now")
        if self.playing() >= self.options.tables:
            raise WebError(
                503, f"{self.options.tables} games with people are being played, this server's most: try again soon"
            )
        names = [b.ref for b in bots]
        names.insert(seat, PERSON)
        table = Table(
            id=secrets.token_urlsafe(12),
            secret=secrets.token_urlsafe(32),
            game=game,
            board=f"{game}/{variant},{PEOPLE}",
            seat=seat,
            seats=names,
        )
        self.tables[table.id] = table
        self._tasks.start_soon(self._play, table, variant, settings, bots)
        return table

    def find(self, table_id: str, secret: str | None) -> Table:
        """The table whose seat ``secret`` holds: 404 for any other (no table, or not yours)."""
        table = self.tables.get(table_id)
        if table is None or not table.holds(secret):
            raise WebError(404, f"no game of yours at /play/{table_id[:24]} (the play page starts one)")
        return table

    async def _play(self, table: Table, variant: str, settings: dict[str, Any], bots: list[StoredBot]) -> None:
        store = await trio.to_thread.run_sync(Store, self.db)
        try:
            tournament, match_no, person = await trio.to_thread.run_sync(
                self._seat_table, store, table, variant, settings
            )
            table.live = f"t{tournament.id}-m{match_no}-g0"
            seated = [*bots[: table.seat], person, *bots[table.seat :]]
            loaded = await trio.to_thread.run_sync(lambda: [b.load() for b in seated])
            sandbox: Sandbox = self.options.sandbox
            for bot in loaded[: table.seat] + loaded[table.seat + 1 :]:
                await trio.to_thread.run_sync(sandbox.prepare, bot, log.info)

            async def start_seat(nursery: trio.Nursery, max_line: int) -> BrowserSeat:
                seat = BrowserSeat(table, table.game, max_line)
                nursery.start_soon(seat.relay)
                return seat

            with_person = WithPerson(sandbox, loaded[table.seat], start_seat, ISOLATION)
            player = OnThisMachine(with_person, 1, self._live_folder(), live_every=0.0)
            seats = list(range(len(seated)))
            match = Match(match_no, seats, [GameSpec(secrets.randbits(48), seats)], [match_no])
            config = TournamentConfig(bots=[b.ref for b in seated], table_size=len(seated), deals=1)
            person_limits = TimeLimits(round(self.options.move_s * 1000), 0, 10_000)
            writer = GameWriter(store)
            table.state = "playing"
            table.update()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(writer.run)
                try:
                    await play_and_store(
                        player, writer, tournament, config, match, seated, loaded, Progress(), [0],
                        bot_limits={table.seat: person_limits},
                    )  # fmt: skip
                finally:
                    writer.close()
            table.game_id = await trio.to_thread.run_sync(store.game_id_of, tournament.id, match_no, 0)
            table.state = "over" if table.game_id is not None else "failed"
            if table.game_id is None:
                table.message = "the game could not be played to its end"
        except Exception as exc:
            log.error("the game with a person at %s failed", table.id, exc_info=True)
            table.state, table.message = "failed", f"the game could not be played: {exc}"
        finally:
            table.ask = None
            table.ended_at = time.time()
            table.update()
            store.close()

    def _live_folder(self) -> LiveFolder | None:
        """The live folder beside the database (made by the first table), where the
        tables' games are published: the seat's table is drawn from it."""
        if self._live is None:
            self._live = publish_beside(self.db)
        return self._live

    def _seat_table(
        self, store: Store, table: Table, variant: str, settings: dict[str, Any]
    ) -> tuple[Tournament, int, StoredBot]:
        """The people's tournament of the board (made the first time), the table's match
        number, and the person's seat as a stored bot."""
        with self._lock:
            if self._person is None:
                self._person = person_bot(PERSON)
            person = store.add_bot(self._person.path)
            name = f"people-{table.game}-{variant.replace(',', '-')}"
            tournament = store.get_tournament(name)
            if tournament is None:
                config = {PEOPLE: {"move_ms": round(self.options.move_s * 1000)}}
                tournament = store.create_tournament(name, table.game, variant, settings, secrets.randbits(31), config)
            last = self._matches.get(tournament.id)
            if last is None:
                last = max((m for m, _ in store.done_games(tournament.id)), default=0)
            self._matches[tournament.id] = match_no = last + 1
        return tournament, match_no, person

    async def seat_stream(self, table: Table) -> AsyncGenerator[bytes, None]:
        """The seat's page's events: the table's state whenever it changes."""

        async def events() -> AsyncGenerator[bytes, None]:
            while True:
                changed = table.changed
                yield b"event: seat\ndata: " + msgspec.json.encode(table.view()) + b"\n\n"
                if table.ended_at is not None:
                    return
                with anyio.move_on_after(KEEPALIVE_S):
                    await changed.wait()
                if not changed.is_set():
                    yield b": still playing\n\n"

        return events()

    async def board_stream(self, table: Table) -> AsyncGenerator[bytes, None]:
        """The table drawn for the seat: the live game cut with its own hand shown (waited
        for while the bots are made ready, then ``WAIT_FOR_TABLE_S`` for its first line)."""
        deadline = time.monotonic() + WAIT_FOR_TABLE_S
        while True:
            if table.state == "starting":
                deadline = time.monotonic() + WAIT_FOR_TABLE_S
            if table.live:
                try:
                    return await self.live.stream(table.live, table.seat)
                except WebError as exc:
                    if exc.status != 404 or table.ended_at is not None:
                        raise
            elif table.ended_at is not None:
                break
            if time.monotonic() > deadline:
                break
            await anyio.sleep(0.05)
        raise WebError(404, "this game's table is not being played")


# --- the pages --------------------------------------------------------------------------

BOTS_SHOWN = 12
"""The bots of a board offered as opponents: its best rated."""


def cookie_of(headers: Any, table_id: str) -> str | None:
    """The seat secret a request carries for table ``table_id``."""
    from http.cookies import CookieError, SimpleCookie

    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except CookieError:
        return None
    found = jar.get(COOKIE + table_id)
    return None if found is None else found.value


def routes(tables: Tables, site: Any, html: Callable[..., Response]) -> list[Any]:
    """``/play`` (choose a board and bots), ``POST /play`` (sit down), ``/play/ID`` (the
    seat's page) and ``POST /api/play/ID/answer``; the seat's and the table's streams
    (``/api/play/ID/seat``, ``/api/play/ID/events``) go around the pages' middleware."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, RedirectResponse
    from starlette.routing import Route

    from arena.store import board_label, with_people

    def boards(store: Store) -> list[tuple[str, str]]:
        return [(g, v) for g, v in site.board_stamps(store).played_boards() if not with_people(v)[1]]

    def choices(board: str | None) -> dict[str, Any]:
        with site.db.store() as store:
            played = boards(store)
            if not played:
                raise WebError(404, "no board has games yet: the bots a person plays are a board's (run a tournament)")
            game, variant = played[0]
            if board:
                game, _, variant = board.partition("/")
                if (game, variant) not in played:
                    raise WebError(404, f"no board {board[:60]!r} with games (the play page lists them)")
            rows = site.board(store, site.board_stamps(store).of((game, variant)), game, variant).rows[:BOTS_SHOWN]
        record = get_game(game)
        return {
            "boards": [{"key": f"{g}/{v}", "label": board_label(f"{g}/{v}")} for g, v in played],
            "board": f"{game}/{variant}",
            "label": board_label(f"{game}/{variant}"),
            "bots": [{"ref": r["bot"], "elo": r.get("elo")} for r in rows],
            "players": [record.rules.MIN_PLAYERS, record.rules.MAX_PLAYERS],
            "move_s": tables.options.move_s,
            "playing": tables.playing(),
            "tables": tables.options.tables,
        }

    def play_page(request: Request) -> Response:
        return html(request, "play.html", data=choices(request.query_params.get("board")))

    async def sit_down(request: Request) -> Response:
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
            raise WebError(403, "a game is started from this site's own play page")
        form = await request.form(max_files=0, max_fields=32, max_part_size=4096)
        board = str(form.get("board", ""))
        wanted = [str(b) for b in form.getlist("bot")]
        offered = await anyio.to_thread.run_sync(choices, board)
        refs = {b["ref"] for b in offered["bots"]}
        low, high = offered["players"]
        if not wanted or any(ref not in refs for ref in wanted) or len(set(wanted)) != len(wanted):
            raise WebError(400, "choose one or more of the board's bots (the play page lists them)")
        if not low <= len(wanted) + 1 <= high:
            raise WebError(400, f"{len(wanted) + 1} players: this game is played by {low} to {high}")
        seat_text = str(form.get("seat", "random"))
        seat = secrets.randbelow(len(wanted) + 1) if seat_text == "random" else _int(seat_text, len(wanted))
        game, _, variant = offered["board"].partition("/")

        def stored_bots() -> tuple[list[StoredBot], dict[str, Any]]:
            with site.db.store() as store:
                found = [store.get_bot(ref) for ref in wanted]
                settings = dict(_board_settings(game, variant))
            return found, settings

        bots, settings = await anyio.to_thread.run_sync(stored_bots)
        table = tables.open(game, variant, settings, bots, seat)
        answer = RedirectResponse(f"/play/{table.id}", status_code=303)
        answer.set_cookie(COOKIE + table.id, table.secret, max_age=int(KEEP_S * 3), httponly=True, samesite="strict")
        answer.headers["cache-control"] = "no-store"
        return answer

    def seat_page(request: Request) -> Response:
        table_id = request.path_params["table_id"]
        table = tables.find(table_id, cookie_of(request.headers, table_id))
        answer = html(request, "play_table.html", table=table.view())
        answer.headers["cache-control"] = "private, no-store"
        return answer

    async def answer(request: Request) -> Response:
        table_id = request.path_params["table_id"]
        table = tables.find(table_id, cookie_of(request.headers, table_id))
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_ANSWER_BYTES:
                raise WebError(413, f"an answer is at most {MAX_ANSWER_BYTES} bytes")
        try:
            sent = msgspec.json.decode(body, type=dict[str, Any])
        except msgspec.DecodeError:
            raise WebError(400, 'an answer is JSON: {"id": REQUEST, "answer": VALUE}') from None
        table.answer(sent.get("id"), sent.get("answer"))
        return JSONResponse({"answered": table.answered}, headers={"cache-control": "no-store"})

    return [
        Route("/play", play_page, methods=["GET"]),
        Route("/play", sit_down, methods=["POST"]),
        Route("/play/{table_id}", seat_page),
        Route("/api/play/{table_id}/answer", answer, methods=["POST"]),
    ]


def _int(text: str, most: int) -> int:
    if not text.isdigit() or int(text) > most:
        raise WebError(400, f"seat {text[:10]!r}: choose a seat from 0 to {most}, or random")
    return int(text)


def _board_settings(game: str, variant: str) -> dict[str, Any]:
    from arena.store import board_settings

    return board_settings(game, variant)
