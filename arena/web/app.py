"""The web server's ASGI app (Starlette): pages in HTML, the same data as JSON under /api/.

Every endpoint is a plain function, so Starlette runs it in a worker thread: database
reads and rendering never hold up the event loop that serves other requests. Errors
become a clear page, or ``{"error": "..."}`` under /api/, with the right status; a
traceback only ever goes to the server's log.
"""

from __future__ import annotations

import contextlib
import logging
import mimetypes
import re
import threading
import time
import urllib.parse
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import jinja2
import msgspec
import trio
from starlette.applications import Starlette
from starlette.datastructures import Headers as StarletteHeaders
from starlette.exceptions import HTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.boards.columns import columns_of
from arena.render.common import ms_text
from arena.store import board_label
from arena.text import shown
from arena.web import charts, csv_downloads, privacy, rating_caveats, viewer
from arena.web.coalesce import Coalesce
from arena.web.errors import Unavailable, WebError
from arena.web.etags import Conditional
from arena.web.games_query import (
    GamesAsked,
    filter_params,
    list_query,
    page_numbers,
    page_offset,
    parse_faults,
    short_time,
)
from arena.web.live import LiveGames
from arena.web.pages.authors import account, author_routes
from arena.web.pages.boards import BoardPages, IndexPage, LeaderboardPage
from arena.web.pages.bots import BotPage, BotPages, BotsPage
from arena.web.pages.games import GAMES_LIMIT, DuplicatePage, GamePage, GamePages, GamesPage
from arena.web.pages.ladders import LadderPage, Ladders
from arena.web.pages.site import Site, game_title, interval_range, score_of, variants_of
from arena.web.pages.tournaments import GauntletPage, TournamentPage, TournamentPages, TournamentsPage
from arena.web.play import PlayOptions, Tables, cookie_of
from arena.web.play import routes as play_routes
from arena.web.rendered import Renderer
from arena.web.submit import COOKIE, PRIVATE, SubmitOptions, Writer
from arena.web.submit import routes as submission_routes

HERE = Path(__file__).resolve().parent
log = logging.getLogger("arena.web")

SECURITY_HEADERS = [
    # Everything comes from this server: no CDN, no remote asset, no inline script.
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
        b"script-src 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
]

LIVE_KEY = re.compile(r"t\d{1,18}-m\d{1,9}-g\d{1,9}")
"""A live game's name: game 4 of match 12 of tournament 3 is ``t3-m12-g4``."""
PLAY_STREAM = re.compile(r"/api/play/([A-Za-z0-9_-]{1,40})/(seat|events)")
"""A person's streams: their seat's state, and the table as their seat sees it."""
LIVE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"x-accel-buffering", b"no"),
]
"""A live game's stream: no one's to keep, nor a proxy's to hold back."""
JSON_HEADERS = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]

CSV_TABLES = (
    "/api/leaderboard", "/api/tournaments", "/api/tournaments/NAME", "/api/bots", "/api/bots/NAME[:VERSION]",
    "/api/games", "/api/games/ID", "/api/ladder",
)  # fmt: skip
"""The endpoints whose data are tables: ``format=csv`` gives them as a CSV file."""

API_ENDPOINTS = [
    "/api/health",
    "/api/leaderboard?game=&variant=&tournament=&anchor=&board=",
    "/api/tournaments",
    "/api/tournaments/NAME",
    "/api/gauntlets/NAME",
    "/api/bots",
    "/api/bots/NAME[:VERSION]",
    "/api/games?tournament=&bot=&opponent=&board=&faults=&from=&to=&limit=&offset=&page=&order=",
    "/api/games/ID",
    "/api/games/ID/frames",
    "/api/games/ID/replay?download=",
    "/api/games/ID/duplicate",
    "/api/ladder",
    "/api/ladder/NAME",
    # The tables as CSV files (docs/web.md, "CSV downloads"):
    *(f"{table}?format=csv" for table in CSV_TABLES),
]


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals.update(
        bar_x=charts.bar_x,
        bar_of=charts.errorbar,
        rated_at=charts.rated_at,
        rating_chart=charts.rating_chart,
        llr_chart=charts.llr_chart,
        variants_of=variants_of,
        score_of=score_of,
        standings_columns=columns_of,
        game_title=game_title,
        board_label=board_label,
        board_parts=charts.board_parts,
        part_scale=lambda rows: list(interval_range(rows)),
        board_notes=charts.board_notes,
        time_bins=charts.time_bins,
        time_series=charts.time_series,
        board_caveats=rating_caveats.board_caveats,
        row_marks=rating_caveats.row_marks,
        games_query=lambda page: list_query(page.link_values()),
        filter_params=lambda page: filter_params(page.link_values()),
        page_numbers=page_numbers,
        games_limit=GAMES_LIMIT,
    )
    env.filters["q"] = lambda value: urllib.parse.quote(str(value), safe=":")
    env.filters["when"] = short_time
    env.filters["pct"] = lambda value: f"{100 * value:.0f}%"
    env.filters["ms"] = ms_text
    env.filters["game_title"] = game_title
    return env


# --- reading the request ----------------------------------------------------------------


def text_param(request: Request, name: str) -> str | None:
    value = request.query_params.get(name, "").strip()
    return value or None


LARGEST = 2**63 - 1
"""The largest integer SQLite stores."""


def int_param(request: Request, name: str, default: int, low: int, high: int = LARGEST) -> int:
    raw = request.query_params.get(name, "").strip()
    if not raw:
        return default
    bounds = f"from {low} to {high}" if high < LARGEST else f"at least {low}"
    if high >= LARGEST:  # beyond it SQLite overflows: said, not just the lower bound
        bounds_above = f"at least {low} and at most {high}"
    else:
        bounds_above = bounds
    digits = raw.lstrip("+-")
    if digits.isascii() and digits.isdigit() and len(digits) > len(str(LARGEST)):
        # Far out of range (perhaps more digits than Python converts): named, not echoed.
        shown = raw if len(raw) <= 40 else f"a {len(digits)}-digit number"
        raise WebError(400, f"{name} must be {bounds if raw.startswith('-') else bounds_above}, not {shown}")
    try:
        value = int(raw)
    except ValueError:
        raise WebError(400, f"{name} must be a whole number {bounds}, not {raw[:40]!r}") from None
    if value > high:
        raise WebError(400, f"{name} must be {bounds_above}, not {value}")
    if value < low:
        raise WebError(400, f"{name} must be {bounds}, not {value}")
    return value


def too_large(request: Request, name: str) -> bool:
    """Whether the parameter is a whole number beyond the largest SQLite stores."""
    digits = request.query_params.get(name, "").strip().removeprefix("+")
    return digits.isascii() and digits.isdigit() and (len(digits) > len(str(LARGEST)) or int(digits) > LARGEST)


def game_id_param(request: Request) -> int:
    raw = str(request.path_params["game_id"])
    if not raw.isascii() or not raw.isdigit():
        raise WebError(400, f"a game id is a whole number (`arena games` lists them), not {raw!r}")
    if int(raw) > LARGEST:
        raise WebError(404, f"no game {raw} (the games page lists them)")
    return int(raw)


def games_offset(request: Request, limit: int) -> int:
    """The offset of a games list: ``offset=``, or ``page=`` (from 1) as an offset."""
    if text_param(request, "page") is None:
        return int_param(request, "offset", 0, 0)
    if text_param(request, "offset") is not None:
        raise WebError(400, "page= and offset= both say where the list starts: give one of them")
    return min(page_offset(int_param(request, "page", 1, 1), limit), LARGEST)  # past the end: none


def order_param(request: Request, default: str) -> bool:
    """True for newest first."""
    order = request.query_params.get("order", default).strip() or default
    if order not in ("asc", "desc"):
        raise WebError(400, f"order must be asc or desc, not {order!r}")
    return order == "desc"


def format_param(request: Request, template: str) -> str:
    """``format=json`` (the default) or ``format=csv``, for the pages that have a table."""
    wanted = text_param(request, "format") or "json"
    if wanted not in ("json", "csv"):
        raise WebError(400, f"format must be json or csv, not {wanted[:40]!r}")
    if wanted == "csv" and template not in csv_downloads.TABLES:
        raise WebError(400, f"format=csv: {request.url.path} has no table (its JSON is the data)")
    return wanted


# --- the app ----------------------------------------------------------------------------


class Pages:
    """The page groups over one site, as the routes call them."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.tournaments = TournamentPages(site)
        self.boards = BoardPages(site, self.tournaments)
        self.games = GamePages(site)
        self.bots = BotPages(site)
        self.ladders = Ladders(site)


def create_app(
    db_path: str | Path,
    warm_up: bool = True,
    submit: SubmitOptions | None = None,
    live_delay: float = 0.0,
    play: PlayOptions | None = None,
) -> Starlette:
    """The site over the database at ``db_path`` (which need not exist yet) and the
    games being played beside it (``arena.web.live``, each turn shown ``live_delay``
    seconds after it was played); with ``submit``, also the door through which authors
    submit bots (``arena.web.submit``); with ``play``, games against the bots for
    visitors (``arena.web.play``)."""
    writer = None if submit is None else Writer(Path(db_path), submit)  # creates the database
    site = Site(Path(db_path))
    pages = Pages(site)

    def stored_game(tournament_id: int, match_no: int, game_no: int) -> int | None:
        with site.db.store() as store:
            return store.game_id_of(tournament_id, match_no, game_no)

    live = LiveGames(db_path, live_delay, stored_game)
    tables = None if play is None else Tables(Path(db_path), play, live)
    tournament_names: dict[int, str] = {}
    renderer = Renderer(_environment())

    def json(data: Any, status: int = 200, request: Request | None = None) -> Response:
        headers = PRIVATE if request is not None and personal(request) else None
        return Response(msgspec.json.encode(data), status, media_type="application/json", headers=headers)

    def personal(request: Request) -> bool:
        """Whether the answer holds what only the signed-in author may see (``privacy``)."""
        return bool(getattr(request.state, "personal", False))

    def html(request: Request, template: str, code: int = 200, **context: Any) -> HTMLResponse:
        signed_in = None if writer is None else account(writer, request)  # the header's "Sign in" or name
        context.update(
            path=request.url.path,
            db=str(site.db.path),
            submissions=writer is not None,
            account=signed_in,
            has_ladder=bool(pages.ladders.names()),  # the header links the ladder when there is one
            play=tables is not None,
        )
        body = renderer.render(template, context)
        return HTMLResponse(body, code, headers=PRIVATE if signed_in is not None or personal(request) else None)

    def page(template: str, load: Callable[[Request], msgspec.Struct]) -> tuple[Callable[..., Response], ...]:
        """An HTML endpoint and its JSON twin over the same page model."""

        def as_html(request: Request) -> Response:
            return html(request, template, data=load(request))

        def as_json(request: Request) -> Response:
            if format_param(request, template) == "csv":
                name, text = csv_downloads.TABLES[template](load(request))
                return Response(
                    text, media_type="text/csv", headers={"content-disposition": f'attachment; filename="{name}"'}
                )
            return json(load(request), request=request)

        return as_html, as_json

    def index(request: Request) -> IndexPage:
        return pages.boards.index()

    def leaderboard(request: Request) -> LeaderboardPage:
        data = pages.boards.leaderboard(
            text_param(request, "game"),
            text_param(request, "variant"),
            text_param(request, "tournament"),
            text_param(request, "anchor"),
            text_param(request, "board"),
        )
        if data.tournament is None and data.anchor is None:  # the ladder's board: a section of its own
            data.ladders = pages.ladders.boards(data.game)
        return data

    def ladder(request: Request) -> LadderPage:
        data = pages.ladders.page(request.path_params.get("name"))
        return msgspec.structs.replace(data, live=live_games(data.name))  # a copy: the page may be a cached one

    def tournaments(request: Request) -> TournamentsPage:
        return pages.tournaments.tournaments()

    def tournament(request: Request) -> TournamentPage:
        data = pages.tournaments.tournament(request.path_params["name"])
        return msgspec.structs.replace(data, live=live_games(data.name))  # a copy: the page may be a cached one

    def gauntlet(request: Request) -> GauntletPage:
        return pages.tournaments.gauntlet(request.path_params["name"])

    def bots(request: Request) -> BotsPage:
        return pages.bots.bots()

    def bot(request: Request) -> BotPage:
        """A bot's page; a submitted bot's stderr only for its signed-in author (``privacy``)."""
        data = pages.bots.bot(request.path_params["ref"], int_param(request, "faults_page", 1, 1))
        with site.db.store() as store:
            seen = privacy.shown(store, [data.name], request.cookies.get(COOKIE, ""))
        request.state.personal = seen.personal
        return privacy.bot_page(data) if seen.withheld else data

    def games(request: Request, offset: int | None = None) -> GamesPage:
        limit = int_param(request, "limit", 50, 1, GAMES_LIMIT)
        if offset is None:
            offset = games_offset(request, limit)
        asked = GamesAsked(
            text_param(request, "tournament"),
            text_param(request, "bot"),
            text_param(request, "opponent"),
            text_param(request, "board"),
            parse_faults(text_param(request, "faults")),
            text_param(request, "from"),
            text_param(request, "to"),
        )
        newest_first = order_param(request, "desc" if not request.url.path.startswith("/api/") else "asc")
        return pages.games.games(asked, limit, offset, newest_first)

    def games_page(request: Request) -> Response:
        """The games page: past the end it links the last page, and an offset too large to
        store (a 400, as in the API) shows that link too."""
        refused = None
        try:
            int_param(request, "offset", 0, 0)
        except WebError as exc:
            if not too_large(request, "offset"):
                raise
            refused = exc.message
        data = games(request, LARGEST if refused else None)
        choices = pages.games.game_choices()
        return html(
            request,
            "games.html",
            400 if refused else 200,
            data=data,
            refused=refused,
            choices=choices,
            live=live_games(),
        )

    def game(request: Request) -> GamePage:
        return pages.games.game(game_id_param(request))

    def frames(request: Request) -> Response:
        return Response(pages.games.frames(game_id_param(request)), media_type="application/json")

    def raw_replay(request: Request) -> Response:
        """The replay as stored; ``?download=1`` makes the browser save it as a file."""
        game_id = game_id_param(request)
        disposition = "attachment" if int_param(request, "download", 0, 0, 1) else "inline"
        data = pages.games.replay(game_id)
        with site.db.store() as store:  # a submitted bot's stderr: its author's only
            data, seen = privacy.game_replay(store, game_id, data, request.cookies.get(COOKIE, ""))
        cache = PRIVATE if seen.personal else privacy.SHARED_BUT_PERSONAL if seen.withheld else {}
        return Response(
            data,
            media_type="application/x-ndjson",
            headers={"content-disposition": f'{disposition}; filename="game-{game_id}.jsonl"', **cache},
        )

    def duplicate(request: Request) -> DuplicatePage:
        return pages.games.duplicate(game_id_param(request))

    def live_games(tournament: str | None = None) -> list[dict[str, Any]]:
        """The games being played now, of tournament ``tournament`` or all, as the pages list them."""
        games = live.games()
        if any(g.tournament_id not in tournament_names for g in games):
            with site.db.store() as store:
                tournament_names.update((t.id, t.name) for t in store.list_tournaments())
        listed = [
            {
                "key": g.key,
                "url": f"/live/{g.key}",
                "tournament": tournament_names.get(g.tournament_id, ""),
                "match_no": g.match_no,
                "game_no": g.game_no,
                "game": g.game,
                "title": game_title(g.game),
                "seats": g.seats,
                "started": g.started,
                "watching": live.watching(g.key),
            }
            for g in games
        ]
        return [g for g in listed if tournament is None or g["tournament"] == tournament]

    def live_key(request: Request) -> str:
        key = str(request.path_params["key"])
        if LIVE_KEY.fullmatch(key) is None:
            raise WebError(404, f"no live game {key[:40]!r} (a live game is named like t3-m12-g4)")
        return key

    def live_list(request: Request) -> Response:
        if request.url.path.startswith("/api/"):
            return json({"delay_s": live.delay, "games": live_games()})
        return html(request, "live.html", games=live_games(), delay=live.delay)

    def live_page(request: Request) -> Response:
        key = live_key(request)
        live.find_file(key)  # no such game: its 404 page, not a viewer waiting for nothing
        return html(request, "live_game.html", key=key, events_url=f"/api/live/{key}/events", delay=live.delay)

    warmed = threading.Event()

    def health(request: Request) -> Response:
        # warm: every leaderboard has a value to serve at once (the start's warm-up is done)
        return json(msgspec.structs.replace(site.health(), warm=warmed.is_set()))

    static = StaticFolder(HERE / "static")

    async def favicon(request: Request) -> Response:
        """What browsers ask for on their own: the site's icon (an SVG, which they all draw)."""
        return static.answer("favicon.svg")

    async def static_file(request: Request) -> Response:
        return static.answer(str(request.path_params["name"]))

    def drawer(request: Request) -> Response:
        """A game's drawer for the replay viewer with its style sheet (``viewer.drawer_script``):
        served as the static scripts are, revalidated by its ETag."""
        script = viewer.drawer_script(str(request.path_params["game"]))
        if script is None:
            raise HTTPException(404)
        return Response(script, media_type="text/javascript")

    def api_index(request: Request) -> Response:
        try:
            summary: dict[str, Any] = msgspec.to_builtins(pages.boards.index())
        except Unavailable as exc:
            summary = {"error": str(exc)}
        return json({"endpoints": API_ENDPOINTS, **summary})

    routes: list[Route | Mount] = []
    loads: tuple[tuple[str, str, Callable[[Request], msgspec.Struct]], ...] = (
        ("/", "index.html", index),
        ("/leaderboard", "leaderboard.html", leaderboard),
        ("/tournaments", "tournaments.html", tournaments),
        ("/tournaments/{name:path}", "tournament.html", tournament),
        ("/gauntlets/{name:path}", "gauntlet.html", gauntlet),
        ("/bots", "bots.html", bots),
        ("/bots/{ref:path}", "bot.html", bot),
        ("/games", "games.html", games),
        ("/games/{game_id}", "game.html", game),
        ("/ladder", "ladder.html", ladder),
        ("/ladder/{name:path}", "ladder.html", ladder),
    )
    for path, template, load in loads:
        as_html, as_json = page(template, load)
        routes.append(Route(path, games_page if path == "/games" else as_html))
        if path != "/":
            routes.append(Route("/api" + path, as_json))
    duplicate_html, duplicate_json = page("duplicate.html", duplicate)
    routes += [
        Route("/api", api_index),
        Route("/api/health", health),
        Route("/favicon.ico", favicon),
        Route("/drawers/{game}.js", drawer),
        Route("/api/games/{game_id}/frames", frames),
        Route("/api/games/{game_id}/replay", raw_replay),
        Route("/games/{game_id}/duplicate", duplicate_html),
        Route("/api/games/{game_id}/duplicate", duplicate_json),
        Route("/static/{name}", static_file),
        Route("/live", live_list),
        Route("/api/live", live_list),
        Route("/live/{key}", live_page),
    ]  # and /api/live/KEY/events, answered before the pages' middleware (asgi_app)
    if writer is not None:
        routes[:0] = [*submission_routes(writer, site.db), *author_routes(writer, site.db, html, pages.bots.standing)]
    if tables is not None:
        routes[:0] = play_routes(tables, site, html)

    async def on_error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, WebError):
            status, message = exc.status, exc.message
        elif isinstance(exc, Unavailable):
            status, message = 503, str(exc)
        elif isinstance(exc, HTTPException):
            status = exc.status_code
            message = f"no page at {request.url.path}" if status == 404 else str(exc.detail)
        else:
            log.error("error answering %s", shown(request.url.path), exc_info=exc)
            status, message = 500, "internal error: the server could not answer this request (its log has the details)"
        if request.url.path.startswith("/api"):
            return json({"error": message}, status)
        try:
            return html(request, "error.html", status, status=status, message=message)
        except Exception as failure:  # the error page itself failed: plain words, still no traceback
            log.error("error page for %s failed", shown(request.url.path), exc_info=failure)
            return PlainTextResponse(f"error {status}: {message}\n", status)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = PAGE_THREADS
        if warm_up:
            threading.Thread(target=_warm_up, args=(pages, warmed), daemon=True, name="arena-warm-up").start()
        async with anyio.create_task_group() as tasks:
            live.attach(tasks)  # the live games' readers
            if tables is not None:
                tables.attach(tasks)  # the games with people
            yield
            tasks.cancel_scope.cancel()
        site.db.close()
        if writer is not None:
            writer.close()

    app = Starlette(
        routes=routes,
        exception_handlers={Exception: on_error, HTTPException: on_error, WebError: on_error, Unavailable: on_error},
        lifespan=lifespan,
    )
    app.state.site = site
    app.state.pages = pages
    app.state.live = live
    app.state.tables = tables
    return app


PAGE_THREADS = 6
"""Requests computed at once (in worker threads; the others wait their turn, first come
first served). Pages are Python, one at a time under the interpreter's lock, with the
database's reads beside: a few threads keep both cores busy, while forty would share the
lock forty ways, and a large page, sliced among them, would take many times its own
time to answer. Three times a kind's ``coalesce.AT_ONCE``: a burst of one kind of page
leaves threads to the others."""


class StaticFolder:
    """The site's own files (style sheets, scripts, its icon), read once at start and
    served from memory by the event loop: no worker thread, no disk, and no name but those
    of the files it read."""

    def __init__(self, folder: Path) -> None:
        self.files = {
            path.name: (path.read_bytes(), mimetypes.guess_type(path.name)[0] or "application/octet-stream")
            for path in sorted(folder.iterdir())
            if path.is_file()
        }

    def answer(self, name: str) -> Response:
        found = self.files.get(name)
        if found is None:
            raise HTTPException(404)
        return Response(found[0], media_type=found[1])


WARM_TOURNAMENTS = 3
"""The newest tournaments whose standings are computed at start."""


def _warm_up(pages: Pages, warmed: threading.Event) -> None:
    """Compute every leaderboard, and the standings of the newest tournaments, once at
    start (requests are answered meanwhile), so that the first visitors do not wait for
    them. A board the arena cached in the database is served at once, marked stale, while
    the current one is computed."""
    try:
        pages.boards.leaderboard(None, None, None)
        pages.ladders.boards(None)  # the leaderboard page's ladder section, and the ladder page's board
        warmed.set()
        for summary in pages.tournaments.tournaments().tournaments[:WARM_TOURNAMENTS]:
            pages.tournaments.tournament(summary.name)
    except Unavailable:
        pass
    except Exception:
        log.exception("warming up the leaderboards failed")


GONE = (trio.BusyResourceError, trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError)
"""What sending raises once the client has hung up (the server may be closing its socket
from its reader at that very moment): nobody is left to answer."""


class Headers:
    """ASGI middleware: the security headers on every response, and the time taken
    (``server-timing: app;dur=MS``, read by the benchmark). An answer to a client that
    hung up meanwhile is dropped quietly, not logged as the app's error."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        gone = False

        async def send_with_headers(message: Message) -> None:
            nonlocal gone
            if message["type"] == "http.response.start":
                took = f"app;dur={(time.perf_counter() - start) * 1000:.1f}".encode()
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS, (b"server-timing", took)]
            if gone:
                return
            try:
                await send(message)
            except GONE:
                gone = True

        await self.app(scope, receive, send_with_headers)


GZIP_MIN_BYTES = 1024
"""Smaller answers go as they are: compressing them saves less than a packet."""


def asgi_app(
    db_path: str | Path,
    warm_up: bool = True,
    submit: SubmitOptions | None = None,
    live_delay: float = 0.0,
    play: PlayOptions | None = None,
) -> ASGIApp:
    """What ``arena serve`` serves: the app, identical requests asked together answered
    by one computation (``coalesce``), its answers tagged for conditional requests (on
    the uncompressed body), gzipped when the client takes it, then the headers. A live
    game's stream goes around the pages' middleware (``LiveStreams``)."""
    app = create_app(db_path, warm_up, submit, live_delay, play)
    pages = GZipMiddleware(Conditional(Coalesce(app)), minimum_size=GZIP_MIN_BYTES)
    return Headers(LiveStreams(app.state.live, pages, app.state.tables))


class LiveStreams:
    """ASGI middleware: a spectator's stream of a live game (``GET /api/live/KEY/events``)
    answered here, each of its messages sent as it is; everything else to ``pages``. A
    stream has nothing to tag, share or compress, and it sends a message per turn to
    every spectator: the pages' middleware would cost the server a third of its time."""

    def __init__(self, live: LiveGames, pages: ASGIApp, tables: Tables | None = None) -> None:
        self.live = live
        self.pages = pages
        self.tables = tables

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        played = self.tables is not None and PLAY_STREAM.fullmatch(path)
        if not (played or path.startswith("/api/live/") and path.endswith("/events")):
            await self.pages(scope, receive, send)
            return
        try:
            if scope["method"] != "GET":
                raise WebError(405, f"{scope['method']} {shown(path)}: a live game's stream is read with GET")
            events = await self._events(path, scope)
        except WebError as exc:
            body = msgspec.json.encode({"error": exc.message})
            await send({"type": "http.response.start", "status": exc.status, "headers": JSON_HEADERS})
            await send({"type": "http.response.body", "body": body})
            return
        await send({"type": "http.response.start", "status": 200, "headers": LIVE_HEADERS})
        async with anyio.create_task_group() as tasks:

            async def until_gone() -> None:  # the spectator left: its stream ends
                while (await receive())["type"] != "http.disconnect":
                    pass
                tasks.cancel_scope.cancel()

            tasks.start_soon(until_gone)
            async with contextlib.aclosing(events) as chunks:
                async for chunk in chunks:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            tasks.cancel_scope.cancel()

    async def _events(self, path: str, scope: Scope) -> AsyncGenerator[bytes, None]:
        """A spectator's stream of a live game, or a seat's own streams (its state, its table)."""
        played = PLAY_STREAM.fullmatch(path)
        if played is not None and self.tables is not None:
            table_id, which = played[1], played[2]
            table = self.tables.find(table_id, cookie_of(StarletteHeaders(scope=scope), table_id))
            return await (self.tables.seat_stream(table) if which == "seat" else self.tables.board_stream(table))
        key = path.removeprefix("/api/live/").removesuffix("/events")
        if LIVE_KEY.fullmatch(key) is None:
            raise WebError(404, f"no live game {shown(key[:40])!r} (a live game is named like t3-m12-g4)")
        return await self.live.stream(key)
