"""Benchmark: `arena serve` under load, over 100,000 games and a ladder's hour.

    .venv/bin/python bench/web.py [--compare OTHER_ARENA] [--seconds 20] [--rounds 2] [--keep DB]

Builds a database (once with ``--keep``): bench/tournament.py's 100,000 synthetic games
in one tournament (settled as its run leaves it, 200 of them given real replays), a
ladder that has run an hour at ``--ladder-rate`` games a second (authors, submissions,
replaced versions, revealed epochs, its board cached: all through the store's own
functions), a real gauntlet and a signed-in author. While it measures, the ladder goes
on (``--feed``, a process holding its lease). Then, for this checkout's ``arena serve``
and, with ``--compare``, another's, in turn:

- ``--clients`` visitors (50), each a request at a time over a kept-alive connection,
  asking for every kind of page in turn for ``--seconds`` (after ``--warm-seconds`` of the
  same, not measured: the caches of a server up for a while): alone, then beside a burst of
  ``--burst`` (50) connections to the ladder's pages; each kind's p50 and p99, with a
  static file and ``/api/health`` as the floor, against the target of 500 ms;
- the first request of every kind to a server just started, against the target of 1 s.

``--classic`` adds the single requests (cold and warm), a replay in headless Chromium
and every kind of page's first contentful paint (``--runs``, ``--no-browser``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import itertools
import math
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tournament import fill_synthetic  # noqa: E402  (bench/, the script's folder)

from arena.boards.standings import leaderboard, settle  # noqa: E402
from arena.store import FinishedGame, SeatResult, Store  # noqa: E402
from arena.web.submit import COOKIE  # noqa: E402

ARENA = str(Path(sys.executable).parent / "arena")
SAMPLES = ROOT / "sample_bots"
REAL_REPLAYS = 200
"""Games given a real replay (spread over the whole id range)."""


def real_replays(work: Path) -> list[bytes]:
    """Replays of a few real 4-player games of the sample bots (local sandbox)."""
    db = work / "real.db"
    bots = [str(SAMPLES / name) for name in ("heuristic", "random", "lowest")]
    args = [ARENA, "tournament", "run", *bots, "--deals", "4", "--seed", "5"]
    args += ["--sandbox", "local", "--db", str(db), "--name", "real"]
    subprocess.run(args, check=True, capture_output=True, timeout=300)
    with Store(db) as store:
        return [store.replay(row.id) for row in store.find_games(limit=100)]


def build(path: Path, games: int, work: Path) -> None:
    """bench/tournament.py's synthetic database, then real replays on a sample of games."""
    rng = random.Random(1)
    replays = real_replays(work)
    with Store(path) as store:
        fill_synthetic(store, games, rng)
        step = max(games // REAL_REPLAYS, 1)
        store.db.execute("BEGIN")
        for n, game_id in enumerate(range(step, games + 1, step)):
            compressed = zlib.compress(replays[n % len(replays)], 6)
            store.db.execute("UPDATE games SET replay = ? WHERE id = ?", (compressed, game_id))
        store.db.execute("COMMIT")
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


LADDER_BOTS = 12
"""Active bots on the ladder (each by one of four authors); a third of them replaced a
version of their own half-way through the hour (the old one is retired, its games kept)."""
LADDER_TABLE = 4
LADDER_DEALS = 8
"""Deal groups a table plays (about its 10 s at a fast pace): 32 games a table."""


def ladder_folder(base: Path, name: str, version: str) -> Path:
    """A small bot folder (never run: its games are synthetic), as authors submit them."""
    folder = base / f"{name}-{version}"
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(f"# {name} {version}\nprint('hello')\n")
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "{version}"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
    )
    return folder


def ladder_game(
    store: Store,
    ladder_id: int,
    match_no: int,
    game_no: int,
    table: list[int],
    strength: dict[int, float],
    started: float,
    rng: random.Random,
) -> None:
    """Game ``game_no`` of a ladder's table (its deal ``game_no // LADDER_TABLE``, in its
    seat rotation), stored as ``roundrobin.play_and_store`` stores one (``Store.save_game``)."""
    rotation = game_no % LADDER_TABLE
    seated = table[rotation:] + table[:rotation]
    perf = sorted(seated, key=lambda b: -(strength[b] + rng.gauss(0, 1.5)))
    seats = [SeatResult(b, perf.index(b) + 1, 10 * perf.index(b), "ok", {}) for b in seated]
    when = dt.datetime.fromtimestamp(started, dt.UTC).isoformat()
    deal = game_no // LADDER_TABLE
    store.save_game(
        FinishedGame(ladder_id, match_no, game_no, deal, rng.randrange(2**31), "nimmt", "standard", 10, 300.0, when,
                     seats, LADDER_REPLAY)
    )  # fmt: skip


LADDER_REPLAY = b'{"type":"header"}\n' * 20
"""A placeholder replay, as bench/tournament.py's."""


def fill_ladder(path: Path, work: Path, rate: float, hours: float = 1.0) -> None:
    """A ladder that has run for ``hours`` at ``rate`` games a second, made through the
    store's own functions: authors, submissions activated (a third replaced by a newer
    version half-way), two submissions waiting, the ladder's tournament as ``arena ladder
    run`` creates it (a secret, its epochs revealed as they are played) and its tables."""
    from arena.bots import bundle
    from arena.deals import epoch_key, ladder_commitment, new_secret
    from arena.store.submissions import CHECKING, Submissions
    from arena.tournaments.ladder import LadderSpec, ladder_config
    from arena.tournaments.roundrobin import TournamentConfig

    rng = random.Random(2)
    folders = work / "ladder-bots"
    with Store(path) as store:
        subs = Submissions(store)
        authors = [subs.add_author(f"author{a}")[0] for a in range(4)]

        def submit(n: int, version: str) -> int:
            folder = ladder_folder(folders, f"entrant{n:02d}", version)
            digest, archive = bundle.pack(folder)
            made = subs.submit(authors[n % 4], f"entrant{n:02d}", version, digest, archive, per_hour=1000)
            stored = store.add_bot(folder)
            subs.activate(made.id, stored.id, {"build": "", "checks": [], "error": ""})
            return stored.id

        first = {n: submit(n, "1") for n in range(LADDER_BOTS)}
        secret = new_secret()
        spec = LadderSpec(table_size=LADDER_TABLE)
        config = ladder_config(TournamentConfig([], LADDER_TABLE, 1), spec)
        ladder = store.create_tournament(
            "ladder", "nimmt", "standard", {}, 11, config, secret, ladder_commitment(secret)
        )
        tables = round(rate * hours * 3600 / (LADDER_DEALS * LADDER_TABLE))
        begin = time.time() - hours * 3600
        strength = {b: rng.gauss(0, 1) for b in first.values()}
        active = dict(first)
        store.db.execute("BEGIN")
        for match_no in range(tables):
            if match_no == tables // 2:  # half-way: new versions of a third of the bots
                store.db.execute("COMMIT")
                for n in range(0, LADDER_BOTS, 3):
                    active[n] = submit(n, "2")
                    strength[active[n]] = strength[first[n]] + 0.3
                store.db.execute("BEGIN")
            seated = rng.sample(sorted(active.values()), LADDER_TABLE)
            start = begin + match_no * hours * 3600 / max(tables, 1)
            for game_no in range(LADDER_DEALS * LADDER_TABLE):
                ladder_game(store, ladder.id, match_no, game_no, seated, strength, start + 0.3 * game_no, rng)
        store.db.execute("COMMIT")
        leaderboard(store, "nimmt", "standard", "ladder")  # what the ladder caches as it rates its bots
        epochs = tables // spec.reveal_every
        if epochs:
            store.reveal_epochs(ladder.id, epochs, epoch_key(secret, epochs - 1))
        for n in range(2):  # waiting in the pipeline
            folder = ladder_folder(folders, f"newcomer{n}", "1")
            digest, archive = bundle.pack(folder)
            made = subs.submit(authors[n], f"newcomer{n}", "1", digest, archive)
            if n:
                subs.set_state(made.id, CHECKING, {"build": "", "checks": [], "error": ""})
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def fill_extras(path: Path, work: Path) -> None:
    """A real gauntlet of the sample bots (its page reads the test from its games), and a
    signed-in session of the ladder's first author (their submissions page)."""
    from arena.store.submissions import Submissions

    bots = [str(SAMPLES / name) for name in ("heuristic", "random", "lowest")]
    args = [ARENA, "gauntlet", bots[0], "--vs", *bots[1:], "--deals", "4", "--seed", "5", "--name", "g"]
    subprocess.run([*args, "--sandbox", "local", "--db", str(path)], check=True, capture_output=True, timeout=600)
    with Store(path) as store:
        subs = Submissions(store)
        cookie, _ = subs.open_session(subs.author("author0"))
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (path.parent / (path.name + ".cookie")).write_text(cookie)


def feed(path: Path, rate: float, seconds: float) -> None:
    """The ladder going on (``--feed``, a process of its own): it holds the ladder's lease
    and stores a table's games every table's worth of time at ``rate`` games a second."""
    from arena.store.submissions import Submissions
    from arena.tournaments.ladder import RATINGS_S

    rng = random.Random(3)
    with Store(path) as store:
        ladder = store.get_tournament("ladder")
        assert ladder is not None
        store.take_lease(ladder.id)
        bots = sorted(s.bot_id for s in Submissions(store).active() if s.bot_id is not None)
        strength = {b: rng.gauss(0, 1) for b in bots}
        match_no = max(m for m, _ in store.done_games(ladder.id)) + 1
        per_table = LADDER_DEALS * LADDER_TABLE
        end = time.monotonic() + seconds
        rated = time.monotonic()
        while time.monotonic() < end:
            began, table = time.monotonic(), rng.sample(bots, LADDER_TABLE)
            if began - rated >= RATINGS_S:  # the ladder rates its bots (and caches the board) as it goes
                leaderboard(store, "nimmt", "standard", "ladder")
                rated = began
            for game in range(per_table):  # a game at a time, as a table stores them
                ladder_game(store, ladder.id, match_no, game, table, strength, time.time(), rng)
                time.sleep(max(0.0, began + (game + 1) / rate - time.monotonic()))
            match_no += 1
        store.release_lease(ladder.id)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving(db: Path, arena: str = ARENA, extra: tuple[str, ...] = ()) -> Iterator[tuple[str, float]]:
    """``arena serve`` over ``db``: its URL and how long it took to answer its health check."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    server = subprocess.Popen(
        [arena, "serve", "--db", str(db), "--port", str(port), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        while True:
            try:
                urllib.request.urlopen(url + "/api/health", timeout=1).read()
                break
            except OSError:
                if server.poll() is not None:
                    said = server.stderr.read().decode(errors="replace") if server.stderr else ""
                    raise SystemExit(f"arena serve did not start: {said[-2000:]}") from None
                time.sleep(0.02)
        yield url, time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=10)


@contextlib.contextmanager
def feeding(db: Path, rate: float) -> Iterator[None]:
    """The ladder going on meanwhile (``feed``, in a process of its own)."""
    if rate <= 0:
        yield
        return
    args = [sys.executable, __file__, "--feed", str(db), "--ladder-rate", str(rate)]
    feeder = subprocess.Popen(args)
    try:
        yield
    finally:
        feeder.terminate()
        feeder.wait(timeout=10)


def time_restart_load(db: Path, servers: list[tuple[str, str]], game_ids: list[int], cookie: str) -> None:
    """The first request of every kind of page, each to a server just started (its warm-up
    running meanwhile, the ladder going on), each server in turn, against the target of 1 s."""
    report = Report()
    report.row("first request after a restart", *(name for name, _ in servers), "target")
    report.row("---", *("---" for _ in servers), "---")
    for label, path in load_kinds(game_ids):
        path = path.replace("{game}", str(game_ids[len(label) % len(game_ids)]))
        headers = {"cookie": f"{COOKIE}={cookie}"} if path == "/submissions" else {}
        cells = []
        for _, arena in servers:
            with serving(db, arena, ("--submissions",)) as (url, _):
                start = time.perf_counter()
                asked = urllib.request.Request(url + path, headers=headers)
                with urllib.request.urlopen(asked, timeout=300) as answer:
                    answer.read()
                took = (time.perf_counter() - start) * 1000
            cells.append(f"**{took:.0f} ms**" + ("" if took < 1000 else " (over)"))
        report.row(f"{label} `{path}`", *cells, "1 s")


def get(url: str) -> tuple[float, float, int]:
    """Client-side milliseconds, the server's own (server-timing), and the size."""
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read()
        timing = response.headers.get("server-timing", "app;dur=nan")
    took = (time.perf_counter() - start) * 1000
    return took, float(timing.split("dur=")[1]), len(body)


class Report:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def row(self, *cells: str) -> None:
        line = "| " + " | ".join(cells) + " |"
        self.lines.append(line)
        print(line, flush=True)


def time_pages(url: str, runs: int, report: Report, game_ids: list[int]) -> None:
    report.row("request", "cold (first)", "warm median", "warm worst", "target")
    report.row("---", "---", "---", "---", "---")
    pages = [
        ("leaderboard HTML", "/leaderboard?game=nimmt&variant=standard", "100 ms"),
        ("leaderboard JSON", "/api/leaderboard?game=nimmt&variant=standard", "100 ms"),
        ("every leaderboard HTML", "/leaderboard", "100 ms"),
        ("game page HTML", f"/games/{game_ids[0]}", "100 ms"),
        ("game JSON", f"/api/games/{game_ids[1]}", "100 ms"),
        ("game frames JSON (viewer data)", f"/api/games/{game_ids[2]}/frames", ""),
        ("game replay (JSON lines)", f"/api/games/{game_ids[3]}/replay", ""),
        ("tournament page HTML", "/tournaments/big", ""),
        ("tournament JSON", "/api/tournaments/big", ""),
        ("bot page HTML", "/bots/bot03:1", ""),
        ("bot JSON", "/api/bots/bot04:1", ""),
        ("games list JSON (50, newest)", "/api/games?order=desc", ""),
        ("games of a pair of bots JSON", "/api/games?order=desc&bot=bot03:1&opponent=bot05:1", ""),
        ("games of a board, page 1000, HTML", "/games?board=nimmt/standard&page=1000", ""),
        ("index HTML", "/", ""),
    ]
    for label, path, target in pages:
        cold, cold_server, _ = get(url + path)
        warm = [get(url + path) for _ in range(runs)]
        times = sorted(t for t, _, _ in warm)
        server = statistics.median(s for _, s, _ in warm)
        report.row(
            label,
            f"{cold:.1f} ms ({cold_server:.1f})",
            f"**{statistics.median(times):.1f} ms** ({server:.1f})",
            f"{times[-1]:.1f} ms",
            target,
        )
    fresh = [get(f"{url}/games/{game_id}")[0] for game_id in game_ids[4:24]]
    report.row(
        "game page HTML, 20 games never asked before",
        f"median {statistics.median(fresh):.1f} ms",
        "",
        f"{max(fresh):.1f} ms",
        "100 ms",
    )


def page_kinds(game_ids: list[int]) -> list[tuple[str, str]]:
    """One of every kind of page the site serves (HTML): its label and path."""
    return [
        ("index", "/"),
        ("every leaderboard", "/leaderboard"),
        ("one leaderboard", "/leaderboard?game=nimmt&variant=standard"),
        ("tournaments", "/tournaments"),
        ("tournament", "/tournaments/big"),
        ("bots", "/bots"),
        ("bot", "/bots/bot03:1"),
        ("games (newest)", "/games"),
        ("game (replay viewer)", f"/games/{game_ids[5]}"),
        ("duplicate deal", f"/games/{game_ids[6]}/duplicate"),
    ]


def api_kinds(game_ids: list[int]) -> list[tuple[str, str]]:
    """One of every kind of JSON answer: its label and path."""
    return [
        ("API index", "/api"),
        ("API every leaderboard", "/api/leaderboard"),
        ("API tournaments", "/api/tournaments"),
        ("API tournament", "/api/tournaments/big"),
        ("API bots", "/api/bots"),
        ("API bot", "/api/bots/bot04:1"),
        ("API games (50, newest)", "/api/games?order=desc"),
        ("API game", f"/api/games/{game_ids[7]}"),
        ("API game frames", f"/api/games/{game_ids[8]}/frames"),
    ]


class Client:
    """One HTTP/1.1 connection kept alive, as a browser's: a request at a time, its
    answer read whole (by length or chunks). Plain trio, so the clients cost the machine
    little beside the server."""

    def __init__(self, port: int, headers: dict[str, str] | None = None) -> None:
        self.port = port
        self.extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.stream: Any = None
        self.buffer = b""

    async def get(self, path: str) -> tuple[int, int]:
        """The status and the size of the body, reconnecting once if the server closed."""
        import trio

        for attempt in range(2):
            if self.stream is None:
                self.stream, self.buffer = await trio.open_tcp_stream("127.0.0.1", self.port), b""
            try:
                await self.stream.send_all(f"GET {path} HTTP/1.1\r\nHost: bench\r\n{self.extra}\r\n".encode())
                return await self._answer()
            except (trio.BrokenResourceError, ConnectionError, EOFError):
                self.stream = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    async def _more(self) -> None:
        data = await self.stream.receive_some(1 << 16)
        if not data:
            raise EOFError
        self.buffer += data

    async def _take(self, size: int) -> bytes:
        while len(self.buffer) < size:
            await self._more()
        taken, self.buffer = self.buffer[:size], self.buffer[size:]
        return taken

    async def _line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            await self._more()
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    async def _answer(self) -> tuple[int, int]:
        while b"\r\n\r\n" not in self.buffer:
            await self._more()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
        size = 0
        if "content-length" in headers:
            size = len(await self._take(int(headers["content-length"])))
        elif headers.get("transfer-encoding") == "chunked":
            while chunk := int((await self._line()).split(b";")[0], 16):
                size += len(await self._take(chunk + 2)) - 2
            await self._line()
        if headers.get("connection", "").lower() == "close":
            await self.stream.aclose()
            self.stream = None
        return int(lines[0].split()[1]), size


BROWSER = {"accept-encoding": "gzip", "accept": "text/html,application/json"}
"""What the measured clients send, as browsers do (the burst sends nothing of it)."""


def load_kinds(game_ids: list[int]) -> list[tuple[str, str]]:
    """Every kind of page a visitor asks for, as the clients under load ask for them;
    ``{game}`` is a game with a real replay, drawn at each request."""
    return [
        ("home", "/"),
        ("every leaderboard", "/leaderboard"),
        ("one leaderboard", "/leaderboard?board=nimmt/standard"),
        ("tournaments", "/tournaments"),
        ("tournament (100,000 games)", "/tournaments/big"),
        ("games (newest)", "/games"),
        ("game page (replay viewer)", "/games/{game}"),
        ("game frames (viewer data)", "/api/games/{game}/frames"),
        ("bots", "/bots"),
        ("bot (the big tournament's)", "/bots/bot03:1"),
        ("bot (the ladder's)", "/bots/entrant03:2"),
        ("ladder", "/ladder"),
        ("ladder JSON", "/api/ladder"),
        ("gauntlet", "/gauntlets/g"),
        ("author's submissions (signed in)", "/submissions"),
        ("sign-in page", "/signin"),
        ("CSV: leaderboard", "/api/leaderboard?format=csv"),
        ("CSV: the ladder's games", "/api/games?format=csv&tournament=ladder&order=desc"),
        ("floor: a static file", "/static/site.css"),
        ("floor: health", "/api/health"),
    ]


BURST = ["/ladder", "/api/ladder", "/tournaments/ladder"]
"""What the stranger's burst asks for, round and round."""


def percentile(times: list[float], share: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def time_load(
    port: int, game_ids: list[int], seconds: float, clients: int, burst: int, cookie: str
) -> tuple[dict[str, list[float]], list[float], int]:
    """``clients`` visitors asking for every kind of page in turn, each a request at a
    time, for ``seconds``, beside ``burst`` connections asking for the ladder's pages as
    fast as they are answered: each kind's times (ms), the burst's, and failures."""
    import trio

    kinds = load_kinds(game_ids)
    times: dict[str, list[float]] = {label: [] for label, _ in kinds}
    burst_times: list[float] = []
    failed = 0
    rng = random.Random(4)

    async def visitor(n: int, end: float) -> None:
        nonlocal failed
        client = Client(port)
        plain = "".join(f"{k}: {v}\r\n" for k, v in BROWSER.items())
        signed_in = plain + f"cookie: {COOKIE}={cookie}\r\n"  # only the author's own page carries it
        for turn in itertools.count(n):
            if time.monotonic() >= end:
                return
            label, path = kinds[turn % len(kinds)]
            path = path.replace("{game}", str(rng.choice(game_ids)))
            client.extra = signed_in if path == "/submissions" else plain
            start = time.perf_counter()
            status, _ = await client.get(path)
            times[label].append((time.perf_counter() - start) * 1000)
            failed += status != 200

    async def stranger(n: int, end: float) -> None:
        client = Client(port)
        for turn in itertools.count(n):
            if time.monotonic() >= end:
                return
            start = time.perf_counter()
            await client.get(BURST[turn % len(BURST)])
            burst_times.append((time.perf_counter() - start) * 1000)

    async def main() -> None:
        end = time.monotonic() + seconds
        async with trio.open_nursery() as nursery:
            for n in range(burst):
                nursery.start_soon(stranger, n, end)
            if burst:
                await trio.sleep(0.5)  # the burst under way first
            for n in range(clients):
                nursery.start_soon(visitor, n, end)

    trio.run(main)
    return times, burst_times, failed


def warm(url: str) -> None:
    """Wait for the server's start-up warm-up (every leaderboard has a value)."""
    deadline = time.monotonic() + 120
    while not json_of(url + "/api/health").get("warm") and time.monotonic() < deadline:
        time.sleep(0.2)


Phases = dict[bool, list[dict[str, list[float]]]]
"""Per phase (under the burst or not), each round's times by kind of page."""


def report_load(
    db: Path, servers: list[tuple[str, str]], game_ids: list[int], args: argparse.Namespace, cookie: str
) -> None:
    """Each server in turn (the one compared, then this one), quiet and then under the
    burst, ``--rounds`` times: each kind's p50 and p99 (under the burst, the range of the
    rounds' p99 in brackets)."""
    runs: dict[str, Phases] = {name: {False: [], True: []} for name, _ in servers}
    bursts: dict[str, list[float]] = {name: [] for name, _ in servers}
    for round_no in range(args.rounds):
        for name, arena in servers:
            with serving(db, arena, ("--submissions",)) as (url, _):
                warm(url)
                port = int(url.rsplit(":", 1)[1])
                if args.warm_seconds > 0:  # a server up for a while: its caches made, not measured
                    time_load(port, game_ids, args.warm_seconds, args.clients, 0, cookie)
                for under in (False, True):
                    burst = args.burst if under else 0
                    times, burst_times, failed = time_load(port, game_ids, args.seconds, args.clients, burst, cookie)
                    runs[name][under].append(times)
                    bursts[name] += burst_times
                    served = sum(len(t) for t in times.values())
                    print(
                        f"round {round_no + 1}, {name}, {'under the burst' if under else 'quiet'}: {served} requests"
                        f" ({served / args.seconds:.0f}/s), {len(burst_times)} of the burst, {failed} not 200;"
                        f" load {os.getloadavg()[0]:.1f}",
                        flush=True,
                    )
    for name, _ in servers:
        print(f"\n{name}: {args.clients} visitors, each a request at a time, beside {args.burst} to the ladder")
        report = Report()
        report.row("page", "quiet p50", "quiet p99", "burst p50", "burst p99 (rounds)", "requests (burst)")
        report.row("---", "---", "---", "---", "---", "---")
        for label, path in load_kinds(game_ids):
            cells = []
            for under in (False, True):
                every = [t for times in runs[name][under] for t in times[label]]
                if not every:
                    cells += ["", ""]
                    continue
                p99 = percentile(every, 0.99)
                rounds = [percentile(times[label], 0.99) for times in runs[name][under] if times[label]]
                mark = "" if p99 < 500 else " (over)"
                spread = f" ({min(rounds):.0f}-{max(rounds):.0f})" if under else ""
                cells += [f"{percentile(every, 0.5):.0f} ms", f"**{p99:.0f} ms**{mark}{spread}"]
            count = sum(len(times[label]) for times in runs[name][True])
            report.row(f"{label} `{path}`", *cells, str(count))
        if bursts[name]:
            every = bursts[name]
            report.row(
                "the burst itself (ladder pages)", "", "", f"{percentile(every, 0.5):.0f} ms",
                f"{percentile(every, 0.99):.0f} ms", str(len(every)),
            )  # fmt: skip


def chromium() -> tuple[Any, str]:
    """Headless Chromium (Debian's, with its driver) and its throw-away profile folder."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
    ):
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="arena-bench-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    return webdriver.Chrome(options=options, service=Service(executable_path="/usr/bin/chromedriver")), profile


PAINT = """
    const done = arguments[arguments.length - 1];
    new PerformanceObserver((list, observer) => {
        const fcp = list.getEntriesByName('first-contentful-paint')[0];
        if (fcp) { observer.disconnect(); done(fcp.startTime); }
    }).observe({type: 'paint', buffered: true});
    setTimeout(() => done(null), 20000);
"""
"""The page's first contentful paint, in ms from the start of its navigation."""


def time_paints(url: str, runs: int, report: Report, game_ids: list[int]) -> None:
    """Each kind of page's first contentful paint, navigated to from a blank tab: the
    browser's caches (CSS, JS) warm, as for a visitor's second page."""
    driver, profile = chromium()
    driver.set_script_timeout(30)
    report.row("page in Chromium", "first contentful paint, median", "worst", "server (median)", "target")
    report.row("---", "---", "---", "---", "---")
    try:
        for label, path in page_kinds(game_ids):
            paints, server = [], []
            for n in range(runs + 1):
                driver.get("about:blank")
                driver.get(url + path)
                paint = driver.execute_async_script(PAINT)
                timing = driver.execute_script(
                    "const t = performance.getEntriesByType('navigation')[0].serverTiming;"
                    " return t && t.length ? t[0].duration : null;"
                )
                if n and paint is not None:  # the first visit warms the browser's caches
                    paints.append(paint)
                    server.append(timing if timing is not None else float("nan"))
            if not paints:
                report.row(label, "no paint", "", "", "300 ms")
                continue
            median = statistics.median(paints)
            report.row(
                f"{label} `{path}`",
                f"**{median:.0f} ms**" + ("" if median < 300 else " (over)"),
                f"{max(paints):.0f} ms",
                f"{statistics.median(server):.1f} ms",
                "300 ms",
            )
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def time_restarts(db: Path, report: Report, game_ids: list[int]) -> None:
    """The first request of each kind of page and JSON, each to a server just started (its
    start-up warm-up running meanwhile), and warm JSON against its own target."""
    report.row("first request after a restart", "client", "server", "target")
    report.row("---", "---", "---", "---")
    for label, path in page_kinds(game_ids) + api_kinds(game_ids):
        with serving(db) as (url, _):
            took, server, _ = get(url + path)
        report.row(
            f"{label} `{path}`", f"**{took:.0f} ms**" + ("" if took < 1000 else " (over)"), f"{server:.0f} ms", "1 s"
        )
    print()
    report.row("JSON, warm", "median", "worst", "server (median)", "target")
    report.row("---", "---", "---", "---", "---")
    with serving(db) as (url, _):
        deadline = time.monotonic() + 120
        while not json_of(url + "/api/health").get("warm") and time.monotonic() < deadline:
            time.sleep(0.2)
        for label, path in api_kinds(game_ids):
            get(url + path)
            warm = [get(url + path) for _ in range(10)]
            times = sorted(t for t, _, _ in warm)
            median = statistics.median(times)
            report.row(
                f"{label} `{path}`",
                f"**{median:.1f} ms**" + ("" if median < 50 else " (over)"),
                f"{times[-1]:.1f} ms",
                f"{statistics.median(s for _, s, _ in warm):.1f} ms",
                "50 ms",
            )


def json_of(url: str) -> dict[str, Any]:
    import json

    with urllib.request.urlopen(url, timeout=30) as response:
        return dict(json.loads(response.read()))


def time_browser(url: str, game_ids: list[int], report: Report) -> None:
    driver, profile = chromium()
    wait_for_viewer = """
        const done = arguments[arguments.length - 1];
        (function check() {
            const root = document.getElementById('replay-viewer');
            if (window.replayViewer || (root && root.classList.contains('rv-failed'))) {
                const nav = performance.getEntriesByType('navigation')[0];
                done([performance.now(), nav.domContentLoadedEventEnd, nav.loadEventEnd, !!window.replayViewer]);
            } else setTimeout(check, 2);
        })();
    """
    driver.set_script_timeout(30)
    try:
        driver.get(f"{url}/games/{game_ids[-1]}")  # start the browser's caches (CSS, JS)
        driver.execute_async_script(wait_for_viewer)
        results: dict[str, list[list[Any]]] = {"cold": [], "cached": []}
        for game_id in game_ids[30:40]:
            for kind in ("cold", "cached"):  # the first visit computes the frames, the second finds them cached
                driver.get(f"{url}/games/{game_id}")
                results[kind].append(driver.execute_async_script(wait_for_viewer))
        for kind, found in results.items():
            drawn = [r[0] for r in found]
            assert all(r[3] for r in found), "the viewer drew every replay"
            report.row(
                f"replay page in Chromium, frames {kind}: navigation to the viewer drawn",
                f"median {statistics.median(drawn):.0f} ms",
                f"DOMContentLoaded {statistics.median(r[1] for r in found):.0f} ms",
                f"worst {max(drawn):.0f} ms",
                "1 s",
            )
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def prepare(db: Path, args: argparse.Namespace, work: Path) -> None:
    """The database, built once (``--keep``): bench/tournament.py's 100,000 games, a
    ladder's hour, a gauntlet and an author signed in."""
    if db.exists():
        return
    start = time.perf_counter()
    build(db, args.games, work)
    with Store(db) as store:  # what the end of the tournament's run caches
        big = store.get_tournament("big")
        assert big is not None
        settle(store, big.game, big.variant, big.name, big.id)
    fill_ladder(db, work, args.ladder_rate)
    fill_extras(db, work)
    with Store(db) as store:
        games = store.count_games()
    print(f"built {db} ({games} games, {args.games} in one tournament) in {time.perf_counter() - start:.0f} s")


def classic(db: Path, args: argparse.Namespace, real: list[int]) -> None:
    """The single-request figures (warm and cold, Chromium's paints, restarts), one at a time."""
    with Store(db) as store:  # nothing cached, as built
        with store.db:
            store.db.execute("DELETE FROM ratings")
    with Store(db, read_only=True) as store:
        games = store.count_games()
        start = time.perf_counter()
        leaderboard(store, "nimmt", "standard")
        rating = time.perf_counter() - start
    with Store(db) as store:  # what the end of the tournament's run caches
        big = store.get_tournament("big")
        assert big is not None
        start = time.perf_counter()
        settle(store, big.game, big.variant, big.name, big.id)
        print(f"settling the tournament's boards as its run ends: {time.perf_counter() - start:.1f} s")
    print(f"{games} games; rating them from scratch (read-only store, nothing cached): {rating * 1000:.0f} ms")
    with serving(db, args.arena) as (url, up):
        first, _, _ = get(url + "/leaderboard")
        print(
            f"server up in {up * 1000:.0f} ms; the first leaderboard request (while the start-up"
            f" warm-up rates every board) took {first:.0f} ms"
        )
        report = Report()
        time_pages(url, args.runs, report, real)
        if not args.no_browser:
            time_browser(url, real, report)
            print()
            time_paints(url, args.runs, Report(), real)
    print()
    time_restarts(db, Report(), real)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000, help="games of the big tournament")
    parser.add_argument(
        "--ladder-rate", type=float, default=20.0, help="the ladder's games a second (its hour, and on)"
    )
    parser.add_argument("--clients", type=int, default=50, help="visitors asking for every kind of page")
    parser.add_argument("--burst", type=int, default=50, help="the stranger's connections to the ladder's pages")
    parser.add_argument("--seconds", type=float, default=20.0, help="each round's quiet and burst phases")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--warm-seconds",
        type=float,
        default=10.0,
        help="visitors asking before each round is measured (the first requests after a restart are --no-restarts's)",
    )
    parser.add_argument("--arena", default=ARENA, help="the arena command that serves (another checkout's, to compare)")
    parser.add_argument("--compare", help="another arena command measured side by side (main's checkout's)")
    parser.add_argument("--keep", type=Path, help="build the database here once, and reuse it")
    parser.add_argument("--no-load", action="store_true", help="leave out the load (only the restarts)")
    parser.add_argument("--no-restarts", action="store_true", help="leave out the first requests after a restart")
    parser.add_argument("--classic", action="store_true", help="also the single-request figures and Chromium's paints")
    parser.add_argument("--runs", type=int, default=20, help="--classic: warm requests of each page")
    parser.add_argument("--no-browser", action="store_true", help="--classic: without Chromium")
    parser.add_argument("--feed", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.feed:
        feed(args.feed, args.ladder_rate, 3600)
        return
    work = Path(tempfile.mkdtemp(prefix="arena-bench-web-"))
    work.chmod(0o755)
    db = args.keep or work / "big.db"
    try:
        prepare(db, args, work)
        cookie = (db.parent / (db.name + ".cookie")).read_text()
        step = max(args.games // REAL_REPLAYS, 1)
        real = list(range(step, args.games + 1, step))  # the games with a real replay
        print(
            f"serving with {args.arena} (compared: {args.compare}); load {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
            flush=True,
        )
        servers = ([("compared", args.compare)] if args.compare else []) + [("this", args.arena)]
        with feeding(db, args.ladder_rate):
            if not args.no_load:
                report_load(db, servers, real, args, cookie)
            if not args.no_restarts:
                print()
                time_restart_load(db, servers, real, cookie)
        print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        if args.classic:
            classic(db, args, real)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
