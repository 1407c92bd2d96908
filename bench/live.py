"""Benchmark: spectators of live games (issue 28, item 3). Hundreds of streams on one
game must cost the referee nothing: it publishes each turn once (the live folder), the
web server fans it out.

    .venv/bin/python bench/live.py [--streams 200] [--rounds 3] [--deals 4] [--think-ms 20]
    .venv/bin/python bench/live.py --publishing [--rounds 3] [--deals 100]

On a fresh database ``arena serve`` runs. Each round plays one tournament twice, the
order swapped every round: three bots that think ``--think-ms`` a move (a fast game to
watch: a turn every few tens of ms), ``--deals`` deals in every rotation, fair time on,
local sandbox; once with nobody watching, once with ``--streams`` spectators, each a
server-sent events stream (in a process of its own) that follows the newest live game
and, at its end, the next. Every frame a spectator gets says when its turn was logged
(``at``): the delay from commit to spectator is when it arrived less that (the frames
played before a stream opened are its backlog, not counted).

Printed: the tournament's games/s with and without the spectators per round and their
ratio (the target: at least 0.95), the CPU the server and the spectators' process took
while watched (on a real deployment the spectators are elsewhere), the frames received,
and the delay's p50, p99 and max (the target names the p99).

``--publishing`` measures instead what writing the live folder costs a referee whose
bots answer at once (the sample bots: the most turns a second), the same round robin
played with its games published and without, interleaved.
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
THINKING = """
import time
from protocol.bot import Bot, run

class Thinking(Bot):
    def decide(self, kind, view, legal):
        time.sleep(THINK_S)
        return legal[len(legal) // 2]

run(Thinking())
"""


def bot_folders(base: Path, think_ms: int) -> list[str]:
    """Three bots that think ``think_ms`` a move, then play the middle legal answer."""
    folders = []
    for i in range(3):
        folder = base / f"thinking{i}"
        folder.mkdir()
        (folder / "bot.py").write_text(THINKING.replace("THINK_S", str(think_ms / 1000)))
        (folder / "bot.toml").write_text(
            f'name = "thinking{i}"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
        )
        folders.append(str(folder))
    for path in base.rglob("*"):
        os.chmod(path, 0o755)
    os.chmod(base, 0o755)
    return folders


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def measured(db: Path, bots: list[str], deals: int, name: str) -> float:
    """Games/s of one tournament, from its start to its end."""
    started = time.perf_counter()
    subprocess.run(
        [ARENA, "tournament", "run", *bots, "--db", str(db), "--name", name, "--deals", str(deals)]
        + ["--sandbox", "local", "--seed", "28"],  # the same games every time: only the watching differs
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return deals * 3 / (time.perf_counter() - started)


def spectators(url: str, streams: int, seconds_file: Path, stop_file: Path) -> subprocess.Popen[bytes]:
    """The spectators, in a process of their own (``--spectate``)."""
    return subprocess.Popen(
        [sys.executable, __file__, "--spectate", url, str(streams), str(seconds_file), str(stop_file)]
    )


def spectate(url: str, streams: int, out: Path, stop: Path) -> None:
    """``streams`` streams following the newest live game until ``stop`` exists; every
    frame's delay (s) written to ``out`` at the end, one a line."""
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
            connected = time.time()  # what was played before is the backlog, not a delay
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
                    for event in events:  # a frame's data ends with its "at": read that alone
                        if event.startswith(b"event: frame"):
                            at = float(event[event.rindex(b'"at":') + 5 : -1])
                            if at >= connected:
                                delays.append(now - at)
                        elif event.startswith((b"event: end", b"event: gone")):
                            done = True

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(listing)
            for _ in range(streams):
                nursery.start_soon(follow)

    trio.run(main)
    out.write_text("\n".join(f"{d:.6f}" for d in delays))


def cpu_seconds(pid: int) -> float:
    """User and system CPU of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def publishing(rounds: int, deals: int) -> None:
    """What publishing costs the referee: the same round robin of the sample bots (3
    seats, every deal in every rotation, fair time on, local sandbox) played in this
    process with its games written to a live folder and without, interleaved."""
    import msgspec
    import trio

    from arena.play.live import LiveFolder
    from arena.sandbox import choose_sandbox
    from arena.store import Store
    from arena.tournaments.roundrobin import OnThisMachine, TournamentConfig, run_tournament

    samples = [ROOT / "sample_bots" / name for name in ("heuristic", "random", "lowest")]
    sandbox, _ = choose_sandbox("local")
    rates: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as work, Store(Path(work) / "arena.db") as store:
        bots = [store.add_bot(path) for path in samples]
        for bot in bots:
            sandbox.prepare(bot.load(), progress=lambda line: None)
        live = LiveFolder(Path(work) / "arena.db-live")
        for round_no in range(rounds):
            for published in [False, True] if round_no % 2 == 0 else [True, False]:
                config = msgspec.to_builtins(TournamentConfig([b.ref for b in bots], 3, deals))
                tournament = store.create_tournament(f"r{round_no}-{published}", "nimmt", "standard", {}, 7, config)
                player = OnThisMachine(sandbox, 2, live if published else None)
                started = time.perf_counter()
                trio.run(run_tournament, store, tournament, bots, player)
                rates[published].append(deals * 3 / (time.perf_counter() - started))
            print(
                f"round {round_no + 1}: not published {rates[False][-1]:.1f} games/s,"
                f" published {rates[True][-1]:.1f} games/s",
                flush=True,
            )
        live.close()
    ratios = [b / a for a, b in zip(rates[False], rates[True], strict=True)]
    print(f"published/not: median {statistics.median(ratios):.3f} (min {min(ratios):.3f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--deals", type=int, default=4)
    parser.add_argument("--think-ms", type=int, default=20)
    parser.add_argument("--spectate", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument(
        "--publishing", action="store_true", help="measure what publishing costs a round robin of fast bots instead"
    )
    args = parser.parse_args()
    if args.publishing:
        publishing(args.rounds, args.deals)
        return
    if args.spectate:
        url, streams, out, stop = args.spectate
        spectate(url, int(streams), Path(out), Path(stop))
        return
    base = Path(tempfile.mkdtemp(prefix="arena-bench-live-"))
    os.chmod(base, 0o755)
    bots = bot_folders(base, args.think_ms)
    db = base / "arena.db"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([ARENA, "serve", "--db", str(db), "--port", str(port)], stdout=subprocess.DEVNULL)
    rows: list[tuple[float, float]] = []
    cpu = {"server": 0.0, "spectators": 0.0}
    delays: list[float] = []
    try:
        while True:
            try:
                urllib.request.urlopen(url + "/api/health").read()
                break
            except OSError:
                time.sleep(0.2)
        for round_no in range(args.rounds):
            result: dict[bool, float] = {}
            for watched in [False, True] if round_no % 2 == 0 else [True, False]:
                name = f"round-{round_no}-{'watched' if watched else 'alone'}"
                if not watched:
                    result[False] = measured(db, bots, args.deals, name)
                    continue
                out, stop = base / f"delays-{round_no}", base / f"stop-{round_no}"
                crowd = spectators(url, args.streams, out, stop)
                time.sleep(2)  # the spectators' process is up, asking what is live
                served, watching = cpu_seconds(server.pid), cpu_seconds(crowd.pid)
                began = time.perf_counter()
                result[True] = measured(db, bots, args.deals, name)
                took = time.perf_counter() - began
                cpu["server"] += (cpu_seconds(server.pid) - served) / took
                cpu["spectators"] += (cpu_seconds(crowd.pid) - watching) / took
                stop.touch()
                crowd.wait(timeout=60)
                delays += [float(x) for x in out.read_text().split()] if out.exists() else []
            rows.append((result[False], result[True]))
            print(
                f"round {round_no + 1}: alone {result[False]:.2f} games/s, watched by {args.streams} streams"
                f" {result[True]:.2f} games/s, ratio {result[True] / result[False]:.3f}",
                flush=True,
            )
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(base, ignore_errors=True)
    ratios = [b / a for a, b in rows]
    print(
        f"CPU while watched (cores): arena serve {cpu['server'] / len(rows):.2f},"
        f" the spectators' process {cpu['spectators'] / len(rows):.2f}"
    )
    print(f"ratio with/without spectators: median {statistics.median(ratios):.3f} (min {min(ratios):.3f}; target 0.95)")
    if delays:
        delays.sort()

        def p(q: float) -> float:
            return delays[min(len(delays) - 1, int(q * len(delays)))] * 1000

        print(
            f"frames received: {len(delays)}; commit to spectator p50 {p(0.5):.1f} ms, p90 {p(0.9):.1f} ms,"
            f" p99 {p(0.99):.1f} ms,"
            f" max {delays[-1] * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
