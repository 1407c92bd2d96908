"""Benchmark: `arena serve --submissions` under hostile uploads.

    .venv/bin/python bench/uploads.py [--uploads 50] [--upload-seconds 10]

Starts the real server over a fresh database with one author per upload, measures its
memory idle (VmRSS, after warming up), then sends ``--uploads`` hostile uploads at once,
each from its own thread and author, in turn: a 150 MiB PAX header in 150 KiB, a bot
whose 190 MiB file of zeros packs to 200 KiB, a body sent to 19 of 20 MiB and then held
back, and 20 MiB of random bytes. Meanwhile a client asks for honest pages (the home
page, /api/health, /leaderboard, /api/bots) one after another. It prints the server's
peak (VmHWM) against idle (target: under 200 MB more), the pages' median and worst time
(target: under 1 s), and how each upload was answered.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import io
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.store import Store  # noqa: E402
from arena.store.submissions import Submissions  # noqa: E402

ARENA = str(Path(sys.executable).parent / "arena")
PAGES = ("/", "/api/health", "/leaderboard", "/api/bots")
MANIFEST = b'name = "{name}"\nversion = "1.0"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'


def tar_gz(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for info, data in members:
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return gzip.compress(buffer.getvalue(), compresslevel=9)


def bot(name: str) -> list[tuple[tarfile.TarInfo, bytes]]:
    return [
        (tarfile.TarInfo("bot.toml"), MANIFEST.replace(b"{name}", name.encode())),
        (tarfile.TarInfo("bot.py"), b"print('hello')\n"),
    ]


def hostile(kind: str, name: str) -> tuple[bytes, int]:
    """The body of one hostile upload, and the Content-Length it declares."""
    if kind == "pax bomb":
        info = tarfile.TarInfo("notes.txt")
        info.pax_headers = {"comment": "x" * (150 * 2**20)}
        data = tar_gz([*bot(name), (info, b"x")])
    elif kind == "unpacks big":
        data = tar_gz([*bot(name), (tarfile.TarInfo("weights.bin"), b"\0" * (190 * 2**20))])
    elif kind == "held back":
        return os.urandom(19 * 2**20), 20 * 2**20
    else:
        data = os.urandom(20 * 2**20 - 1024)
    return data, len(data)


KINDS = ("pax bomb", "unpacks big", "held back", "random bytes")


def send(address: tuple[str, int], token: str, body: bytes, length: int, answers: Counter[str], kind: str) -> None:
    """One upload over a raw socket (a held-back body stops short of its length)."""
    sock = socket.create_connection(address, timeout=600)
    head = (
        f"POST /api/submissions HTTP/1.1\r\nHost: {address[0]}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/gzip\r\nContent-Length: {length}\r\n\r\n"
    )
    try:
        sock.sendall(head.encode() + body)
        response = http.client.HTTPResponse(sock)
        response.begin()
        response.read()
        answers[f"{kind}: {response.status}"] += 1
    except OSError as exc:
        answers[f"{kind}: {type(exc).__name__}"] += 1
    finally:
        sock.close()


def status(pid: int, field: str) -> float:
    with open(f"/proc/{pid}/status") as lines:
        found = dict(line.split(":", 1) for line in lines)
    return int(found[field].split()[0]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=50)
    parser.add_argument("--upload-seconds", type=float, default=10.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-uploads-"))
    db = folder / "arena.db"
    with Store(db) as store:
        subs = Submissions(store)
        tokens = [subs.add_author(f"author{i}")[1] for i in range(args.uploads)]
    bodies = [hostile(KINDS[i % len(KINDS)], f"bot{i}") for i in range(args.uploads)]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    extra = ["--submissions", "--submissions-per-hour", "1000", "--upload-seconds", str(args.upload_seconds)]
    server = subprocess.Popen(
        [ARENA, "serve", "--db", str(db), "--port", str(port), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url + "/api/health", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not come up") from None
                time.sleep(0.1)
        for path in PAGES * 5:  # warm
            urllib.request.urlopen(url + path, timeout=10).read()
        idle = status(server.pid, "VmRSS")
        idle_peak = status(server.pid, "VmHWM")
        answers: Counter[str] = Counter()
        times: list[float] = []
        done = threading.Event()

        def honest() -> None:
            while not done.is_set():
                for path in PAGES:
                    start = time.perf_counter()
                    urllib.request.urlopen(url + path, timeout=60).read()
                    times.append(time.perf_counter() - start)
                time.sleep(0.05)

        reader = threading.Thread(target=honest)
        reader.start()
        started = time.perf_counter()
        threads = [
            threading.Thread(
                target=send, args=(("127.0.0.1", port), tokens[i], *bodies[i], answers, KINDS[i % len(KINDS)])
            )
            for i in range(args.uploads)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        took = time.perf_counter() - started
        done.set()
        reader.join()
        peak = status(server.pid, "VmHWM")
    finally:
        server.terminate()
        server.wait(10)
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{args.uploads} hostile uploads at once, all answered in {took:.1f} s:")
    for key, count in sorted(answers.items()):
        print(f"  {key}: {count}")
    print(f"server memory: idle {idle:.0f} MiB (peak so far {idle_peak:.0f}), peak under load {peak:.0f} MiB")
    print(f"  peak - idle: {peak - idle:.0f} MiB (target < {200 / 1.048576:.0f} MiB, i.e. 200 MB)")
    print(
        f"honest pages meanwhile: {len(times)} answers, median {statistics.median(times) * 1000:.0f} ms,"
        f" worst {max(times) * 1000:.0f} ms (target < 1000 ms)"
    )


if __name__ == "__main__":
    main()
