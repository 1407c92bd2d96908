"""Benchmark: `arena serve` over a database of 100,000 games.

    .venv/bin/python bench/web.py [--games 100000] [--keep DB] [--runs 20]

Fills a database the way bench/tournament.py does (4-seat games among 16 bots, their
results drawn from hidden strengths), gives a sample of those games the replays of real
games played by the sample bots (the rest keep a stub, as in bench/tournament.py, to
keep the file small), then starts the real server and times, over HTTP:

- each page and its JSON twin: the first (cold) request and the median and worst of
  ``--runs`` warm ones, as the client sees them (the server's own time in brackets);
- a replay page in headless Chromium: from navigation to the viewer having drawn its
  first frame (``window.replayViewer`` set), the frames cold and cached;
- every kind of page in headless Chromium: its first contentful paint, navigated to from a
  blank tab (the median of ``--runs``, warm), against the target of 300 ms;
- after a restart of the server (a new one for each): the first request of every kind of
  page and JSON, against the target of 1 s (warm JSON: 50 ms).

``--keep DB`` builds the database once at DB and reuses it on the next run.
"""

from __future__ import annotations

import argparse
import contextlib
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
from arena.store import Store  # noqa: E402

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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving(db: Path) -> Iterator[tuple[str, float]]:
    """``arena serve`` over ``db``: its URL and how long it took to answer its health check."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    server = subprocess.Popen(
        [ARENA, "serve", "--db", str(db), "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        while True:
            try:
                urllib.request.urlopen(url + "/api/health", timeout=1).read()
                break
            except OSError:
                if server.poll() is not None:
                    raise SystemExit("arena serve did not start") from None
                time.sleep(0.02)
        yield url, time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=10)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="build the database here once, and reuse it")
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="arena-bench-web-"))
    work.chmod(0o755)
    db = args.keep or work / "big.db"
    try:
        if not db.exists():
            start = time.perf_counter()
            build(db, args.games, work)
            print(f"built {db} ({args.games} games) in {time.perf_counter() - start:.0f} s", flush=True)
        with Store(db) as store:  # a kept database brought up to this arena's schema
            with store.db:
                store.db.execute("DELETE FROM ratings")  # nothing cached, as built
        with Store(db, read_only=True) as store:
            games = store.count_games()
            start = time.perf_counter()
            leaderboard(store, "nimmt", "standard")
            rating = time.perf_counter() - start
        with Store(db) as store:  # what the end of the tournament's run caches
            start = time.perf_counter()
            big = store.get_tournament("big")
            assert big is not None
            settle(store, big.game, big.variant, big.name, big.id)
            print(f"settling the tournament's boards as its run ends: {time.perf_counter() - start:.1f} s")
        step = max(games // REAL_REPLAYS, 1)
        real = list(range(step, games + 1, step))  # the games with a real replay
        print(f"{games} games; rating them from scratch (read-only store, nothing cached): {rating * 1000:.0f} ms")
        with serving(db) as (url, up):
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
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
