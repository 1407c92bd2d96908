"""Benchmark: spectators of live games (issue 28, item 3). Hundreds of streams on one
game must cost the referee nothing: it publishes each turn once (the live folder), the
web server fans it out.

    .venv/bin/python bench/live.py [--streams 200] [--rounds 3] [--deals 150] [--think-ms 20]

On a fresh database, ``arena serve`` runs, and beside it a watched tournament: three
bots that think ``--think-ms`` a move, played without end in the local sandbox. Each
round then plays a measured tournament (four bots that answer at once,
bench/bots/fast, ``--deals`` deals of tables of 4 in every rotation, fair time on, local
sandbox) twice, the order swapped every round: once with nobody watching, once with
``--streams`` spectators, each a server-sent events stream that follows the watched
tournament's newest live game and, at its end, the next. Every frame a spectator gets
says when its turn was logged (``at``): its delay is when it arrived less that.

Printed: the measured tournament's games/s with and without the spectators, per round
and their ratio (the target: at least 0.95), the frames the spectators got, and the
delay from a turn's commit to a spectator (p50, p99, max; the target names the p99).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).parent / "arena")
FAST = ROOT / "bench" / "bots" / "fast"
THINKING = """
import time
from protocol.bot import Bot, run

class Thinking(Bot):
    def decide(self, kind, view, legal):
        time.sleep(THINK_S)
        return legal[len(legal) // 2]

run(Thinking())
"""


def bot_folders(base: Path, think_ms: int) -> tuple[list[str], list[str]]:
    """Four fast bots to measure, three thinking bots to watch."""
    fast, thinking = [], []
    for i in range(4):
        folder = base / f"fast{i}"
        shutil.copytree(FAST, folder)
        toml = (folder / "bot.toml").read_text().replace('name = "fast"', f'name = "fast{i}"')
        (folder / "bot.toml").write_text(toml)
        fast.append(str(folder))
    for i in range(3):
        folder = base / f"thinking{i}"
        folder.mkdir()
        (folder / "bot.py").write_text(THINKING.replace("THINK_S", str(think_ms / 1000)))
        (folder / "bot.toml").write_text(
            f'name = "thinking{i}"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
        )
        thinking.append(str(folder))
    for path in base.rglob("*"):
        os.chmod(path, 0o755)
    os.chmod(base, 0o755)
    return fast, thinking


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def measured(db: Path, fast: list[str], deals: int, name: str) -> float:
    """Games/s of one measured tournament, from its own first to last game stored."""
    started = time.perf_counter()
    subprocess.run(
        [ARENA, "tournament", "run", *fast, "--db", str(db), "--name", name, "--deals", str(deals)]
        + ["--table-size", "4", "--sandbox", "local", "--move-time", "5"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    took = time.perf_counter() - started
    return deals * 4 / took


def spectators(url: str, streams: int, seconds_file: Path, stop_file: Path) -> subprocess.Popen[bytes]:
    """The spectators, in a process of their own (``--spectate``)."""
    return subprocess.Popen(
        [sys.executable, __file__, "--spectate", url, str(streams), str(seconds_file), str(stop_file)]
    )


def spectate(url: str, streams: int, out: Path, stop: Path) -> None:
    """``streams`` streams following the newest live game until ``stop`` exists; every
    frame's delay (s) written to ``out`` at the end, one a line."""
    import msgspec
    import trio

    host, port = url.removeprefix("http://").split(":")
    delays: list[float] = []
    newest: list[str] = []

    async def listing() -> None:
        while not stop.exists():
            try:
                games = json.loads(
                    await trio.to_thread.run_sync(lambda: urllib.request.urlopen(url + "/api/live").read())
                )
                newest[:] = [games["games"][-1]["key"]] if games["games"] else []
            except OSError:
                pass
            await trio.sleep(0.05)

    async def follow() -> None:
        seen = ""
        while not stop.exists():
            if not newest or newest[0] == seen:
                await trio.sleep(0.02)
                continue
            seen = newest[0]
            stream = await trio.open_tcp_stream(host, int(port))
            await stream.send_all(f"GET /api/live/{seen}/events HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
            buffer = b""
            done = False
            async with stream:
                while not done:
                    with trio.move_on_after(1) as quiet:
                        chunk = await stream.receive_some(1 << 16)
                    if quiet.cancelled_caught:
                        if stop.exists():
                            return
                        continue
                    if not chunk:
                        break
                    buffer += chunk
                    *events, buffer = buffer.split(b"\n\n")
                    now = time.time()
                    for event in events:
                        if b"event: frame" in event:
                            data = event.partition(b"data: ")[2]
                            delays.append(now - msgspec.json.decode(data)["at"])
                        elif b"event: end" in event or b"event: gone" in event:
                            done = True

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(listing)
            for _ in range(streams):
                nursery.start_soon(follow)

    trio.run(main)
    out.write_text("\n".join(f"{d:.6f}" for d in delays))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--deals", type=int, default=150)
    parser.add_argument("--think-ms", type=int, default=20)
    parser.add_argument("--spectate", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.spectate:
        url, streams, out, stop = args.spectate
        spectate(url, int(streams), Path(out), Path(stop))
        return
    base = Path(tempfile.mkdtemp(prefix="arena-bench-live-"))
    os.chmod(base, 0o755)
    fast, thinking = bot_folders(base, args.think_ms)
    db = base / "arena.db"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([ARENA, "serve", "--db", str(db), "--port", str(port)], stdout=subprocess.DEVNULL)
    watched = subprocess.Popen(
        [ARENA, "tournament", "run", *thinking, "--db", str(db), "--name", "watched", "--deals", "100000"]
        + ["--sandbox", "local"],
        stdout=subprocess.DEVNULL,
    )
    rows: list[tuple[float, float]] = []
    delays: list[float] = []
    try:
        while True:
            try:
                if json.loads(urllib.request.urlopen(url + "/api/live").read())["games"]:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        for round_no in range(args.rounds):
            result: dict[bool, float] = {}
            for watched_now in [False, True] if round_no % 2 == 0 else [True, False]:
                name = f"measured-{round_no}-{int(watched_now)}"
                if not watched_now:
                    result[False] = measured(db, fast, args.deals, name)
                    continue
                out, stop = base / f"delays-{round_no}", base / f"stop-{round_no}"
                crowd = spectators(url, args.streams, out, stop)
                time.sleep(3)  # every stream open and following
                result[True] = measured(db, fast, args.deals, name)
                stop.touch()
                crowd.wait(timeout=60)
                got = [float(x) for x in out.read_text().split()] if out.exists() else []
                delays += got
            rows.append((result[False], result[True]))
            print(
                f"round {round_no + 1}: alone {result[False]:.1f} games/s, beside {args.streams} streams"
                f" {result[True]:.1f} games/s, ratio {result[True] / result[False]:.3f}",
                flush=True,
            )
    finally:
        for process in (watched, server):
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(base, ignore_errors=True)
    ratios = [b / a for a, b in rows]
    print(f"ratio with/without spectators: median {statistics.median(ratios):.3f} (min {min(ratios):.3f}; target 0.95)")
    if delays:
        delays.sort()

        def p(q: float) -> float:
            return delays[min(len(delays) - 1, int(q * len(delays)))] * 1000

        print(
            f"frames received: {len(delays)}; commit to spectator p50 {p(0.5):.1f} ms, p99 {p(0.99):.1f} ms,"
            f" max {delays[-1] * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
