"""Tournaments on a real Dask cluster: a scheduler and arena workers on this machine,
each a process of its own (local sandbox; one test with Docker), and the coordinator
as a user runs it, ``arena tournament run --cluster``.

Every test starts its own processes (a scheduler, workers with their nannies, the
coordinator) in sessions of their own and kills those sessions at the end, so nothing is
left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from arena.play.replay import loads as replay_lines
from arena.store import Store

from ..conftest import SAMPLES, MakeBot, bot_pids, faults_of, fresh_c_bot, one_clean_line

ARENA = str(Path(sys.executable).parent / "arena")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop ``proc`` and everything in its session (a worker's nanny and its child)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=10)
            break
        except subprocess.TimeoutExpired:
            continue
    proc.wait()
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # what the session left, if anything
    except ProcessLookupError:
        pass


def wait_listening(port: int, seconds: float = 60) -> None:
    """Until something listens on loopback at ``port``."""
    deadline = time.monotonic() + seconds
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        if time.monotonic() > deadline:
            pytest.fail(f"nothing came to listen on port {port}")
        time.sleep(0.1)


@pytest.fixture
def scheduler() -> Iterator[str]:
    """A real Dask scheduler on a free loopback port, as ``arena scheduler`` starts it."""
    port = free_port()
    proc = subprocess.Popen(
        [ARENA, "scheduler", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_listening(port)
        yield f"tcp://127.0.0.1:{port}"
    finally:
        stop(proc)


ASK_WORKERS = """
import json, sys, time
from distributed import Client
with Client(sys.argv[1], timeout=30) as client:
    deadline = time.monotonic() + 60
    while not client.scheduler_info()["workers"] and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = client.scheduler_info()["workers"]
    sandboxes = client.run(lambda: __import__("os").environ.get("ARENA_WORKER_SANDBOX"))
    print(json.dumps({
        "workers": [
            {"name": w["name"], "nthreads": w["nthreads"], "resources": w["resources"]} for w in workers.values()
        ],
        "sandboxes": sorted(sandboxes.values()),
    }))
"""


def test_a_worker_joins_with_its_slots_and_its_checked_sandbox(scheduler: str) -> None:
    worker = subprocess.Popen(
        [ARENA, "worker", scheduler, "--slots", "3", "--sandbox", "local", "--name", "w1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        asked = subprocess.run(
            [sys.executable, "-c", ASK_WORKERS, scheduler], capture_output=True, text=True, timeout=120
        )
        assert asked.returncode == 0, asked.stderr
        seen = json.loads(asked.stdout)
    finally:
        stop(worker)
        said = worker.stdout.read().decode() if worker.stdout else ""
        if worker.stdout:
            worker.stdout.close()
    assert seen["workers"] == [{"name": "w1", "nthreads": 3, "resources": {"slots": 3.0}}]
    assert seen["sandboxes"] == ["local"], "the worker plays in the sandbox it checked"
    assert "sandbox works here" in said and "3 slots" in said


def test_a_worker_without_a_working_sandbox_refuses_to_join(tmp_path: Path) -> None:
    """No bubblewrap on its PATH: one line naming the fix, and it never reaches the
    scheduler (nothing listens on this address: a worker that tried would hang)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("python3", "sh", "env"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    env = {**os.environ, "PATH": str(bin_dir)}
    address = f"tcp://127.0.0.1:{free_port()}"
    refused = subprocess.run(
        [ARENA, "worker", address, "--sandbox", "local"], capture_output=True, text=True, timeout=60, env=env
    )
    one_clean_line(refused, "bubblewrap is not installed")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["tcp://127.0.0.1:1", "--sandbox", "unsafe-local"], "a worker plays in docker or local"),
        (["127.0.0.1:8786"], "is not a scheduler address: tcp://HOST:PORT"),
        (["tcp://127.0.0.1:1", "--slots", "0"], "--slots"),
    ],
)
def test_bad_worker_arguments_are_one_line(args: list[str], says: str) -> None:
    result = subprocess.run([ARENA, "worker", *args], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert says in result.stdout + result.stderr


SLOW = """
import time
import zlib
from protocol.bot import Bot, run


class Slow(Bot):
    name = "slow"
    version = "0.1"

    def decide(self, kind, view, legal):
        time.sleep(0.03)
        return min(legal)


run(Slow())
"""


class Workers:
    """``arena worker``s of one scheduler, each in its own session, with its own cache
    and log; all stopped at the end."""

    def __init__(self, scheduler: str, tmp: Path) -> None:
        self.scheduler = scheduler
        self.tmp = tmp
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, slots: int = 1, sandbox: str = "local", *extra: str, **env: str) -> None:
        log = open(self.tmp / f"{name}.log", "wb")  # noqa: SIM115 (the process holds it)
        self.procs[name] = subprocess.Popen(
            [ARENA, "worker", self.scheduler, "--slots", str(slots), "--sandbox", sandbox, "--name", name, *extra],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "ARENA_WORKER_CACHE": str(self.tmp / f"cache-{name}"), **env},
            start_new_session=True,
        )
        log.close()

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text(errors="replace")

    def wait_for(self, count: int, *tls: str) -> None:
        ask(self.scheduler, WAIT_FOR_WORKERS, str(count), *tls)

    def kill(self, name: str) -> None:
        """kill -9 of the worker's whole session: the machine is gone."""
        proc = self.procs.pop(name)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def stop_all(self) -> None:
        for proc in self.procs.values():
            stop(proc)


@pytest.fixture
def workers(scheduler: str, tmp_path: Path) -> Iterator[Workers]:
    started = Workers(scheduler, tmp_path)
    try:
        yield started
    finally:
        started.stop_all()


def ask(scheduler: str, script: str, *args: str, timeout: float = 120) -> str:
    """Run ``script`` with a Dask client of ``scheduler`` in a process of its own."""
    done = subprocess.run(
        [sys.executable, "-c", script, scheduler, *args], capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


WAIT_FOR_WORKERS = """
import json, sys, time
from distributed import Client
from arena.cluster.coordinator import TLS
tls = TLS(*sys.argv[4::2]).security() if len(sys.argv) > 3 else None
with Client(sys.argv[1], timeout=30, security=tls) as client:
    deadline = time.monotonic() + 90
    while len(client.scheduler_info()["workers"]) < int(sys.argv[2]):
        assert time.monotonic() < deadline, "the workers did not join"
        time.sleep(0.1)
    print(json.dumps([
        {"name": w["name"], "nthreads": w["nthreads"], "resources": w["resources"], "memory": w["memory_limit"]}
        for w in client.scheduler_info()["workers"].values()
    ]))
"""

WAIT_FOR_A_MATCH_ON = """
import sys, time
from distributed import Client
with Client(sys.argv[1], timeout=30) as client:
    deadline = time.monotonic() + 240  # a guard: three workers share the machine
    while True:
        names = {a: w["name"] for a, w in client.scheduler_info()["workers"].items()}
        if any(names.get(a) == sys.argv[2] and keys for a, keys in client.processing().items()):
            break
        assert time.monotonic() < deadline, "no match reached the worker"
        time.sleep(0.05)
"""


def run_arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=timeout)


def start_coordinator(bots: list[str], db: Path, scheduler: str) -> subprocess.Popen[bytes]:
    """``arena tournament run --cluster`` of the short tournament, in a session of its own."""
    return subprocess.Popen(
        [ARENA, "tournament", "run", *bots, "--db", str(db), "--cluster", scheduler, *SHORT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def games_of(db: Path) -> dict[tuple[int, int], tuple[object, ...]]:
    """Every stored game by (match, game): its seed, deal, seats, ranks, scores and replay
    without its times; and, apart, the node that played it."""
    import sqlite3

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        names = dict(con.execute("SELECT id, name || ':' || version FROM bots"))
        rows = con.execute(
            "SELECT match_no, game_no, seed, deal, seat_bots, seat_ranks, seat_scores, replay FROM games"
        ).fetchall()
    games = {}
    for match_no, game_no, seed, deal, bots, ranks, scores, replay in rows:
        seats = [names[int(b)] for b in bots.split(",")]
        lines = [_timeless(msgspec.to_builtins(line)) for line in replay_lines(zlib.decompress(replay))]
        key = (match_no, game_no)
        assert key not in games, f"game {key} stored twice"
        games[key] = (seed, deal, seats, ranks, scores, lines)
    return games


def _timeless(value: object) -> object:
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k not in ("wall_ms", "cpu_ms", "started")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def nodes_of(db: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return [node for (node,) in con.execute("SELECT node FROM games ORDER BY match_no, game_no")]


def one_machine(tmp_path: Path, bots: list[str], *args: str) -> dict[tuple[int, int], tuple[object, ...]]:
    """The same tournament played on this machine without a cluster, as the reference."""
    db = tmp_path / "alone.db"
    done = run_arena("tournament", "run", *bots, "--db", str(db), "--sandbox", "local", *args)
    assert done.returncode == 0, done.stderr
    return games_of(db)


TOURNAMENT = ["--seed", "7", "--deals", "2", "--table-size", "2", "--name", "t"]
SHORT = ["--seed", "7", "--deals", "1", "--table-size", "2", "--name", "t"]
"""With the slow bot: 3 tables of 2 games, a match about 1 s."""


def test_a_tournament_on_the_cluster_stores_what_one_machine_stores(workers: Workers, tmp_path: Path) -> None:
    """Same seed, same games: deals, seats, every move, scores and ranks; each game once,
    each with the worker that played it; and the coordinator's progress as at home."""
    workers.start("w1")
    workers.start("w2")
    workers.wait_for(2)
    bots = [str(SAMPLES / name) for name in ("lowest", "heuristic", "random")]
    db = tmp_path / "cluster.db"
    done = run_arena("tournament", "run", *bots, "--db", str(db), "--cluster", workers.scheduler, *TOURNAMENT)
    assert done.returncode == 0, done.stderr
    assert "cluster tcp://" in done.stdout and "2 workers, 2 slots" in done.stdout
    assert "Leaderboard: t" in done.stdout
    played = games_of(db)
    assert len(played) == 3 * 2 * 2, "3 tables of 2 deals in 2 seat orders"
    assert played == one_machine(tmp_path, bots, *TOURNAMENT)
    assert set(nodes_of(db)) == {"w1", "w2"}, "both workers played, and each game names its own"
    listed = json.loads(run_arena("games", "--db", str(db), "--format", "json").stdout)
    assert {g["node"] for g in listed} == {"w1", "w2"}
    with Store(db, read_only=True) as store:
        tournament = store.get_tournament("t")
        assert tournament is not None
        activity = store.node_activity(tournament.id)
    assert [(a.node, a.slots) for a in activity] == [("w1", 1), ("w2", 1)], "the workers and their slots"
    assert sum(a.games for a in activity) == 12


def test_a_worker_killed_mid_match_loses_and_doubles_nothing(
    workers: Workers, tmp_path: Path, make_bot: MakeBot
) -> None:
    """kill -9 of a worker's machine while it plays a match: the match is played again on
    the other worker (the same seeds, so the same games), each game stored once."""
    slow = make_bot("slow", SLOW)
    workers.start("w1")
    workers.start("w2")
    workers.wait_for(2)
    bots = [str(slow), str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
    db = tmp_path / "cluster.db"
    coordinator = start_coordinator(bots, db, workers.scheduler)
    try:
        ask(workers.scheduler, WAIT_FOR_A_MATCH_ON, "w1")
        time.sleep(0.3)  # into the match: its bots started, some moves played
        workers.kill("w1")
        out, err = coordinator.communicate(timeout=300)
    finally:
        stop(coordinator)
    assert coordinator.returncode == 0, err.decode()
    played = games_of(db)
    assert played == one_machine(tmp_path, bots, *SHORT)
    assert "w2" in nodes_of(db)
    deadline = time.monotonic() + 120  # only a guard against a hang
    while bot_pids(slow) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not bot_pids(slow), subprocess.run(
        ["ps", "-o", "pid,ppid,etimes,args", "-p", ",".join(map(str, bot_pids(slow)))], capture_output=True, text=True
    ).stdout


def test_a_killed_coordinator_is_resumed_on_the_cluster(workers: Workers, tmp_path: Path, make_bot: MakeBot) -> None:
    """kill -9 of ``arena tournament run --cluster`` after its first games: `--resume
    --cluster` plays the rest, and the database is the one-machine run's."""
    slow = make_bot("slow", SLOW)
    workers.start("w1")
    workers.wait_for(1)
    bots = [str(slow), str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
    db = tmp_path / "cluster.db"
    coordinator = start_coordinator(bots, db, workers.scheduler)
    try:
        deadline = time.monotonic() + 120
        while not (db.exists() and _stored(db)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert 0 < _stored(db) < 6, "killed in the middle"
        os.killpg(coordinator.pid, signal.SIGKILL)
        coordinator.communicate()  # its pipes read to their end and closed
    finally:
        stop(coordinator)
    resumed = run_arena("tournament", "run", "--resume", "--name", "t", "--db", str(db), "--cluster", workers.scheduler)
    assert resumed.returncode == 0, resumed.stderr
    assert games_of(db) == one_machine(tmp_path, bots, *SHORT)


def _stored(db: Path) -> int:
    import sqlite3

    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            return int(con.execute("SELECT count(*) FROM games").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_a_worker_whose_sandbox_breaks_leaves_and_no_bot_pays(
    workers: Workers, tmp_path: Path, make_bot: MakeBot
) -> None:
    """w1's bubblewrap stops working after its first match: its next match's bots cannot
    start. That is the node's fault, not the bots': w1 says so and leaves the cluster,
    the match is played on w2, and the database is the one-machine run's (no start-up
    fault charged to any bot)."""
    wrapper_dir = Path(tempfile.mkdtemp(prefix="arena-test-bwrap-"))  # bots start it as users of their own
    wrapper_dir.chmod(0o755)
    wrapper = wrapper_dir / "bwrap"
    real = shutil.which("bwrap")
    assert real is not None
    wrapper.write_text(f'#!/bin/sh\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    slow = make_bot("slow", SLOW)
    workers.start("w1", PATH=f"{wrapper_dir}:{os.environ['PATH']}")
    workers.wait_for(1)
    bots = [str(slow), str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
    db = tmp_path / "cluster.db"
    coordinator = start_coordinator(bots, db, workers.scheduler)
    try:
        ask(workers.scheduler, WAIT_FOR_A_MATCH_ON, "w1")
        wrapper.write_text("#!/bin/sh\necho 'bwrap: broken on purpose' >&2\nexit 1\n")
        deadline = time.monotonic() + 120  # w1 alone: it finds its sandbox broken at its next match
        while "left the cluster" not in workers.log("w1") and time.monotonic() < deadline:
            time.sleep(0.1)
        workers.start("w2")
        out, err = coordinator.communicate(timeout=300)
    finally:
        stop(coordinator)
        shutil.rmtree(wrapper_dir)
    assert coordinator.returncode == 0, err.decode()
    assert "worker w1 left the cluster: its sandbox fails" in err.decode()
    assert "unsafe-local" not in err.decode(), "a worker refuses it: never suggested"
    assert "left the cluster" in workers.log("w1")
    assert games_of(db) == one_machine(tmp_path, bots, *SHORT)
    assert "w2" in nodes_of(db)


def test_an_unreachable_scheduler_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    address = f"tcp://127.0.0.1:{free_port()}"
    bots = [str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
    done = run_arena("tournament", "run", *bots, "--db", str(db), "--cluster", address)
    one_clean_line(done, f"no Dask scheduler answers at {address}")
    assert not db.exists(), "nothing was written"


def test_a_scheduler_without_workers_is_waited_for_then_given_up(scheduler: str, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    bots = [str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
    done = run_arena("tournament", "run", *bots, "--db", str(db), "--cluster", scheduler, "--wait-workers", "1")
    assert "waiting up to 1 s" in done.stderr
    assert f"no arena worker joined {scheduler} in 1 s (start one: arena worker {scheduler})" in done.stderr
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert not db.exists()


SET_VERSION = """
import sys
from distributed import Client
with Client(sys.argv[1], timeout=30) as client:
    client.set_metadata("sixarena-version", sys.argv[2])
"""


def test_another_arena_version_is_refused_at_join_with_both_named(scheduler: str, tmp_path: Path) -> None:
    """The cluster plays with arena 0.0.1 (the first to join said so): this arena's
    worker and coordinator are refused, each naming both versions."""
    ask(scheduler, SET_VERSION, "0.0.1 (protocol 1, code 000000000000)")
    from arena.cluster.node import arena_version

    worker = subprocess.run(
        [ARENA, "worker", scheduler, "--sandbox", "local"], capture_output=True, text=True, timeout=120
    )
    line = one_clean_line(worker, "plays with arena 0.0.1 (protocol 1, code 000000000000)", arena_version())
    assert "this is arena" in line
    db = tmp_path / "a.db"
    bots = [str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
    coordinator = run_arena("tournament", "run", *bots, "--db", str(db), "--cluster", scheduler)
    one_clean_line(coordinator, "plays with arena 0.0.1", arena_version())
    assert not db.exists()


def make_certificates(folder: Path) -> dict[str, list[str]]:
    """A certificate authority and, signed by it, certificates for the scheduler, the
    worker and the coordinator; and a stranger's, signed by another authority. Each as
    the three ``--tls-*`` options."""
    folder.mkdir()

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=folder, stdin=subprocess.DEVNULL)

    flags = {}
    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{ca}.key", "-out", f"{ca}.pem",
                "-days", "2", "-subj", f"/CN={ca}")  # fmt: skip
    (folder / "san.ext").write_text("subjectAltName = IP:127.0.0.1, DNS:localhost\n")
    for name, ca in (("scheduler", "ca"), ("worker", "ca"), ("coordinator", "ca"), ("stranger", "other-ca")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                "-subj", f"/CN={name}")  # fmt: skip
        openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
            "-out", f"{name}.pem", "-days", "2", "-extfile", "san.ext",
        )  # fmt: skip
        flags[name] = ["--tls-ca-file", str(folder / f"{ca}.pem"), "--tls-cert", str(folder / f"{name}.pem")]
        flags[name] += ["--tls-key", str(folder / f"{name}.key")]
    return flags


def listening_ports(*procs: subprocess.Popen[bytes]) -> dict[int, list[int]]:
    """Every port the processes of ``procs`` (and their children: a worker's nanny and
    the worker it starts) listen on, by process; each must be bound to loopback."""
    import ipaddress

    import psutil

    found: dict[int, list[int]] = {}
    for proc in procs:
        parent = psutil.Process(proc.pid)
        for each in [parent, *parent.children(recursive=True)]:
            for conn in each.net_connections(kind="inet"):
                if conn.status == psutil.CONN_LISTEN:
                    assert ipaddress.ip_address(conn.laddr.ip).is_loopback, f"{each.cmdline()} listens on {conn.laddr}"
                    found.setdefault(each.pid, []).append(conn.laddr.port)
    return found


PLAIN_TO_EACH = """
import asyncio, json, socket, sys
from distributed.comm import connect

async def rpc(port):
    comm = await connect(f"tcp://127.0.0.1:{port}", timeout=10)
    await comm.write({"op": "identity"})
    return await comm.read()

def http(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(b"GET /info/main/workers.html HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n")
        try:
            return conn.recv(64).startswith(b"HTTP")
        except (TimeoutError, OSError):
            return False

answers = []
for port in map(int, sys.argv[2:]):
    try:
        asyncio.run(asyncio.wait_for(rpc(port), 20))
        answers.append(f"{port} ran a plain RPC")
    except Exception:
        answers.append(f"{port} speaks HTTP" if http(port) else "refused")
print(json.dumps(answers))
"""
"""A plain (no TLS) Dask RPC, then a plain HTTP GET, to each port given: what answered."""

HTTP_TO_EACH = """
import json, socket, sys
answers = []
for port in map(int, sys.argv[2:]):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(b"GET /health HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n")
        try:
            answers.append("http" if conn.recv(64).startswith(b"HTTP") else "nothing")
        except (TimeoutError, OSError):
            answers.append("nothing")
print(json.dumps(answers))
"""


def test_a_scheduler_and_worker_as_the_docs_start_them_listen_on_loopback_and_serve_no_http(tmp_path: Path) -> None:
    """`arena scheduler` and `arena worker tcp://127.0.0.1:PORT --sandbox local`: every
    port of the scheduler, the worker and its nanny is bound to loopback (never 0.0.0.0
    or ::), and none answers HTTP (no dashboard, no /health) unless --dashboard."""
    port = free_port()
    scheduler = subprocess.Popen(
        [ARENA, "scheduler", "--port", str(port)], stdout=subprocess.DEVNULL, start_new_session=True
    )
    workers = Workers(f"tcp://127.0.0.1:{port}", tmp_path)
    try:
        workers.start("w1")
        workers.wait_for(1)
        listening = listening_ports(scheduler, *workers.procs.values())
        answers = json.loads(ask(workers.scheduler, HTTP_TO_EACH, *(str(p) for ps in listening.values() for p in ps)))
    finally:
        workers.stop_all()
        stop(scheduler)
    assert listening[scheduler.pid] == [port], "the scheduler's one port: no HTTP server"
    assert len(listening) == 3 and all(len(ports) == 1 for ports in listening.values()), "scheduler, nanny, worker"
    assert answers == ["nothing"] * 3


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["scheduler", "--host", "0.0.0.0"], "--host 0.0.0.0: without TLS anyone who reaches this scheduler"),
        (["scheduler", "--host", "::"], "--host ::: without TLS anyone who reaches this scheduler"),
        (["scheduler", "--host", "10.0.0.5"], "runs any code here as user"),
        (["worker", "tcp://127.0.0.1:1", "--host", "0.0.0.0"], "anyone who reaches this worker on 0.0.0.0"),
        (["worker", "tcp://10.0.0.5:8786"], "is on another machine, which must reach this worker too: give --host"),
    ],
)
def test_a_network_address_without_tls_is_refused_in_one_line(args: list[str], says: str) -> None:
    """Nothing listens: the refusal comes before Dask starts (a worker before it checks
    its sandbox or reaches the scheduler)."""
    refused = run_arena(*args, timeout=60)
    line = one_clean_line(refused, says)
    assert "--insecure-network" in line or "another machine" in line


def test_tls_lets_in_only_who_holds_a_certificate_of_the_cluster(tmp_path: Path) -> None:
    """`arena scheduler` with TLS (on loopback, by default), a worker and a coordinator
    with certificates of its authority play; a coordinator without TLS, or with a
    stranger's certificate, is refused in one line that says which side's certificate
    failed, and writes nothing. From another
    process, each port of the scheduler, the worker and its nanny refuses a plain Dask
    RPC and a plain HTTP GET (no HTTP server hands out the workers or their logs)."""
    certs = make_certificates(tmp_path / "certs")
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    scheduler = subprocess.Popen(
        [ARENA, "scheduler", "--port", str(port), *certs["scheduler"]],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    workers = Workers(address, tmp_path)
    try:
        workers.start("w1", 1, "local", *certs["worker"])
        workers.wait_for(1, *certs["coordinator"])
        listening = listening_ports(scheduler, *workers.procs.values())
        worker = {pid: ports for pid, ports in listening.items() if pid != scheduler.pid}
        refusals = json.loads(ask(address, PLAIN_TO_EACH, *(str(p) for ps in listening.values() for p in ps)))
        bots = [str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
        db = tmp_path / "a.db"
        plain = run_arena("tournament", "run", *bots, "--db", str(db), "--cluster", f"tcp://127.0.0.1:{port}")
        one_clean_line(plain, f"no Dask scheduler answers at tcp://127.0.0.1:{port}")
        bare = run_arena("tournament", "run", *bots, "--db", str(db), "--cluster", address)
        one_clean_line(bare, f"{address} speaks TLS: give --tls-ca-file, --tls-cert and --tls-key")
        stranger = run_arena("tournament", "run", *bots, "--db", str(db), "--cluster", address, *certs["stranger"])
        one_clean_line(stranger, f"the scheduler at {address} shows a certificate that --tls-ca-file")
        ours_trusted = [*certs["coordinator"][:2], *certs["stranger"][2:]]  # our authority, a stranger's certificate
        refused = run_arena("tournament", "run", *bots, "--db", str(db), "--cluster", address, *ours_trusted)
        one_clean_line(refused, f"the scheduler at {address} refused this machine's certificate")
        assert not db.exists()
        played = run_arena(
            "tournament", "run", *bots, "--db", str(db), "--cluster", address, "--deals", "1", *certs["coordinator"]
        )
        assert played.returncode == 0, played.stderr
        assert set(nodes_of(db)) == {"w1"} and len(nodes_of(db)) == 2
    finally:
        workers.stop_all()
        stop(scheduler)
        said = scheduler.stdout.read().decode() if scheduler.stdout else ""
        if scheduler.stdout:
            scheduler.stdout.close()
    assert f"scheduler at tls://127.0.0.1:{port}" in said
    assert listening[scheduler.pid] == [port], "the scheduler's one port: no HTTP server"
    assert len(worker) == 2 and all(len(ports) == 1 for ports in worker.values()), "a worker and its nanny"
    assert refusals == ["refused"] * 3, "no port runs a plain RPC or speaks plain HTTP"


def test_a_gauntlet_on_the_cluster_stores_what_one_machine_stores(workers: Workers, tmp_path: Path) -> None:
    workers.start("w1", 2)
    workers.wait_for(1)
    new, field = str(SAMPLES / "heuristic"), [str(SAMPLES / "lowest"), str(SAMPLES / "random")]
    args = ["--deals", "1", "--seed", "3", "--name", "g"]
    db = tmp_path / "cluster.db"
    done = run_arena("gauntlet", new, "--vs", *field, "--db", str(db), "--cluster", workers.scheduler, *args)
    assert done.returncode == 0, done.stderr
    alone = tmp_path / "alone.db"
    reference = run_arena("gauntlet", new, "--vs", *field, "--db", str(alone), "--sandbox", "local", *args)
    assert reference.returncode == 0, reference.stderr
    assert games_of(db) == games_of(alone) and len(games_of(db)) == 4
    assert set(nodes_of(db)) == {"w1"}


def test_a_sequential_gauntlet_stores_the_same_games_on_the_cluster_and_on_one_machine(
    workers: Workers, tmp_path: Path
) -> None:
    """An SPRT gauntlet decides after some deal groups; the games in flight then differ
    with the batch (4 matches at once on the cluster, 2 on this machine), and were
    stored (32 against 22 for the same 16 counted). Now only the counted games stay:
    the same seed stores the same games everywhere, and the verdict is the same."""
    workers.start("w1", 2)
    workers.wait_for(1)
    new, field = str(SAMPLES / "heuristic"), [str(SAMPLES / "random")]
    args = ["--sprt", "elo0=0,elo1=200", "--max-games", "200", "--seed", "5", "--name", "g"]
    db = tmp_path / "cluster.db"
    done = run_arena("gauntlet", new, "--vs", *field, "--db", str(db), "--cluster", workers.scheduler, *args)
    assert done.returncode == 0, done.stderr
    alone = tmp_path / "alone.db"
    reference = run_arena("gauntlet", new, "--vs", *field, "--db", str(alone), "--sandbox", "local", *args)
    assert reference.returncode == 0, reference.stderr
    verdict = next(line for line in done.stdout.splitlines() if "accepted" in line)
    assert verdict in reference.stdout
    counted = int(re.search(r"groups (\d+) · games", done.stdout).group(1))  # type: ignore[union-attr]
    assert games_of(db) == games_of(alone) and len(games_of(db)) == 2 * counted


def test_a_worker_builds_a_bot_with_a_build_step(workers: Workers, tmp_path: Path) -> None:
    """A C bot never built before, built on the worker from the bundle it unpacked (a
    read-only copy in its cache), and played without a fault."""
    workers.start("w1")
    workers.wait_for(1)
    folder = fresh_c_bot(tmp_path / "bots")
    db = tmp_path / "cluster.db"
    done = run_arena(
        "tournament", "run", str(folder), str(SAMPLES / "random"), "--db", str(db), "--cluster", workers.scheduler,
        *SHORT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + workers.log("w1")
    assert f"building {folder.name}: make" in workers.log("w1"), "built on the worker"
    assert set(nodes_of(db)) == {"w1"}
    assert faults_of(db) == {f"{folder.name}:1.0.0": 0, "random:1.0.0": 0}


@pytest.mark.docker
def test_a_worker_plays_in_docker(workers: Workers, tmp_path: Path, docker_sandbox: object) -> None:
    """A worker whose sandbox is Docker: the bots arrive as bundles, are built as images
    there and play in containers; the database is the one-machine Docker run's."""
    workers.start("d1", 2, "docker")
    workers.wait_for(1)
    bots = [str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
    args = ["--seed", "5", "--deals", "1", "--name", "t"]
    db = tmp_path / "cluster.db"
    done = run_arena("tournament", "run", *bots, "--db", str(db), "--cluster", workers.scheduler, *args)
    assert done.returncode == 0, done.stderr
    alone = tmp_path / "alone.db"
    reference = run_arena("tournament", "run", *bots, "--db", str(alone), "--sandbox", "docker", *args)
    assert reference.returncode == 0, reference.stderr
    assert games_of(db) == games_of(alone) and len(games_of(db)) == 2
    assert set(nodes_of(db)) == {"d1"}
    header = next(iter(games_of(db).values()))[5][0]
    assert all(seat["isolation"].startswith("docker") for seat in header["seats"])


def test_a_lost_scheduler_stops_the_tournament_in_one_line_keeping_its_games(tmp_path: Path, make_bot: MakeBot) -> None:
    """kill -9 of the scheduler while matches are out: the coordinator says it lost the
    cluster, in one line, exits non-zero, and the games stored before stay (resumable)."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = subprocess.Popen(
        [ARENA, "scheduler", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    workers = Workers(address, tmp_path)
    slow = make_bot("slow", SLOW)
    db = tmp_path / "cluster.db"
    try:
        workers.start("w1")
        workers.wait_for(1)
        coordinator = subprocess.Popen(
            [ARENA, "tournament", "run", str(slow), str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
            + ["--db", str(db), "--cluster", address, *SHORT],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while not _stored(db) and time.monotonic() < deadline:
            time.sleep(0.1)
        os.killpg(scheduler.pid, signal.SIGKILL)
        out, err = coordinator.communicate(timeout=120)
    finally:
        workers.stop_all()
        stop(scheduler)
    assert coordinator.returncode not in (0, None) and "Traceback" not in err, err
    assert f"lost the cluster at {address}" in err
    assert "resume with: arena tournament run --resume --name t" in err
    assert 0 < _stored(db) < 6


def test_a_sandbox_is_the_workers_choice_on_a_cluster(tmp_path: Path) -> None:
    bots = [str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
    db = tmp_path / "a.db"
    done = run_arena(
        "tournament", "run", *bots, "--db", str(db), "--cluster", "tcp://127.0.0.1:1", "--sandbox", "docker"
    )
    one_clean_line(done, "--sandbox docker: on a cluster each worker plays in the sandbox it checked")
    assert not db.exists()


PROBE = """
import os, socket, sys
from protocol.bot import Bot, run

found = []
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    found.append("SCHEDULER REACHED")
except OSError as exc:
    found.append(f"scheduler unreachable ({{type(exc).__name__}})")
for place in ({cache!r}, "/var/tmp/sixarena-worker", "/tmp/dask-scratch-space"):
    found.append(f"{{place}}: {{'SEEN ' + ','.join(os.listdir(place)) if os.path.isdir(place) else 'hidden'}}")
found.append("env: " + ",".join(k for k in os.environ if k.startswith(("ARENA", "DASK"))))
print("PROBE " + "; ".join(found), file=sys.stderr, flush=True)


class Probe(Bot):
    def decide(self, kind, view, legal):
        return min(legal)


run(Probe())
"""


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_bot_on_a_worker_reaches_neither_the_scheduler_nor_other_bots_code(
    workers: Workers, tmp_path: Path, make_bot: MakeBot, sandbox: str
) -> None:
    """Whoever reaches the scheduler runs code on every worker: a bot on a worker must
    not reach it, nor the worker's cache of other bots' code, nor the worker's
    environment. The probe says what it found on its stderr, which the replay keeps."""
    port = workers.scheduler.rsplit(":", 1)[1]
    cache = tmp_path / "cache-w1"
    probe = make_bot("probe", PROBE.format(port=port, cache=str(cache)))
    workers.start("w1", 1, sandbox)
    workers.wait_for(1)
    db = tmp_path / "cluster.db"
    bots = [str(probe), str(SAMPLES / "heuristic")]
    done = run_arena("tournament", "run", *bots, "--db", str(db), "--cluster", workers.scheduler, "--deals", "1")
    assert done.returncode == 0, done.stderr
    assert cache.is_dir() and len(list((cache / "bots").iterdir())) == 2, "the worker holds both bots' code"
    said = [
        line["stderr"][seat]
        for game in games_of(db).values()
        for line in game[5]
        if line.get("type") == "end"
        for seat in range(2)
        if "PROBE" in line["stderr"][seat]
    ]
    assert said, "the probe ran and reported"
    for report in said:
        assert "scheduler unreachable" in report and "REACHED" not in report
        assert "SEEN" not in report, report
        assert "env: ;" in report or report.rstrip().endswith("env:"), report


def test_which_addresses_are_loopback_and_what_the_risk_taken_says() -> None:
    from arena.cluster.ports import check_exposure, is_loopback

    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("", "0.0.0.0", "::", "10.0.0.5", "example.org", "127.0.0.1.nip.io"))
    assert check_exposure("worker", "10.0.0.5", tls=True, insecure=False) is None
    warning = check_exposure("worker", "10.0.0.5", tls=False, insecure=True)
    assert warning is not None and "anyone who reaches this worker on 10.0.0.5 runs any code here as user" in warning


def test_a_worker_builds_again_an_image_removed_under_it(
    workers: Workers, tmp_path: Path, make_bot: MakeBot, docker_sandbox: object
) -> None:
    """A Docker worker played a fresh bot (its image built there); the image is removed
    behind its back (a prune, another arena on the engine): the next tournament needing
    it builds it again on the worker and plays, where a worker that remembered what it
    had built stopped the whole tournament with `no image ...`."""
    import uuid

    import docker as docker_sdk

    name = f"gone-{uuid.uuid4().hex[:10]}"
    fresh = make_bot(name, f"# {name}\nfrom protocol.bot import Bot, run\n\n\nclass B(Bot):\n"
                     f"    name = {name!r}\n    version = '0.1'\n\n    def decide(self, kind, view, legal):\n"
                     "        return min(legal)\n\n\nrun(B())\n")  # fmt: skip
    workers.start("d1", 1, "docker")
    workers.wait_for(1)
    bots = [str(fresh), str(SAMPLES / "lowest")]
    db = tmp_path / "a.db"
    client = docker_sdk.from_env()
    try:
        first = run_arena("tournament", "run", *bots, "--db", str(db), "--cluster", workers.scheduler, *SHORT)
        assert first.returncode == 0, first.stderr
        images = [tag for image in client.images.list(f"sixarena-bot-{name}") for tag in image.tags]
        assert len(images) == 1, "the worker built the fresh bot's image"
        client.images.remove(images[0], force=True)
        again = run_arena("tournament", "run", *bots, "--db", str(db), "--cluster", workers.scheduler,
                          *SHORT[:-1], "t2")  # fmt: skip
        assert again.returncode == 0, again.stderr
        assert [tag for image in client.images.list(f"sixarena-bot-{name}") for tag in image.tags] == images
    finally:
        workers.stop_all()  # a worker keeps its bots' containers until it stops: then the image is free
        for image in client.images.list(f"sixarena-bot-{name}"):
            for container in client.containers.list(all=True, filters={"ancestor": image.id}):
                container.remove(force=True)  # what a worker killed for not stopping left
            client.images.remove(image.id, force=True)
        client.close()
    assert len(nodes_of(db)) == 4 and set(nodes_of(db)) == {"d1"}


WITHOUT_ARENA = """
import sys


class NoArena:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("arena", "protocol", "leaderboard"):
            raise ModuleNotFoundError(f"No module named {name!r}")


sys.meta_path.insert(0, NoArena())
from distributed.cli.dask_scheduler import main

sys.argv = ["dask-scheduler", "--host", "127.0.0.1", "--port", sys.argv[1], "--no-dashboard"]
main()
"""


def test_a_scheduler_without_the_arena_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    """A plain `dask scheduler` where the arena is not installed unpickles no match: the
    coordinator and a worker each say so in one line before anything is written (it was
    a 133-line traceback and an interrupted tournament)."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    plain = subprocess.Popen(
        [sys.executable, "-c", WITHOUT_ARENA, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_listening(port)
        db = tmp_path / "a.db"
        bots = [str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
        coordinator = run_arena("tournament", "run", *bots, "--db", str(db), "--cluster", address)
        worker = run_arena("worker", address, "--sandbox", "local")
    finally:
        stop(plain)
    says = f"the scheduler at {address} cannot load the arena (No module named 'arena'): run `arena scheduler` there"
    one_clean_line(coordinator, says)
    one_clean_line(worker, says)
    assert not db.exists()


ODD_VERSION = """
import arena.cluster.node

arena.cluster.node.arena_version = lambda: "0.0.1 (protocol 1, code 000000000000)"
"""


def test_a_worker_of_another_version_that_joins_mid_run_leaves_and_the_tournament_goes_on(
    workers: Workers, tmp_path: Path, make_bot: MakeBot
) -> None:
    """A worker started without `arena worker`'s check (a plain `dask worker` with the
    slots resource) runs another arena and joins while a tournament plays: it is given
    matches, takes none (it leaves the cluster, saying why), and the tournament ends
    with every game, played by the right worker (it stopped with 36 games, exit 2)."""
    workers.start("w1", 1)
    workers.wait_for(1)
    slow = make_bot("slow", SLOW)
    bots = [str(slow), str(SAMPLES / "lowest"), str(SAMPLES / "heuristic"), str(SAMPLES / "random")]
    db = tmp_path / "a.db"
    coordinator = start_coordinator(bots, db, workers.scheduler)
    preload = tmp_path / "odd_version.py"
    preload.write_text(ODD_VERSION)
    log = open(tmp_path / "odd.log", "wb")  # noqa: SIM115 (the process holds it)
    odd = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", workers.scheduler, "--nthreads", "2",
         "--resources", "slots=2", "--name", "odd", "--preload", str(preload), "--no-dashboard"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "ARENA_WORKER_SANDBOX": "local", "ARENA_WORKER_CACHE": str(tmp_path / "cache-odd")},
    )  # fmt: skip
    log.close()
    try:
        ask(workers.scheduler, WAIT_FOR_A_MATCH_ON, "w1")
        out, err = coordinator.communicate(timeout=300)
    finally:
        stop(odd)
        stop(coordinator)
    said = (tmp_path / "odd.log").read_text(errors="replace")
    assert coordinator.returncode == 0, err.decode()
    assert "worker odd left the cluster: its arena version differs (it runs arena 0.0.1" in said
    assert set(nodes_of(db)) == {"w1"} and len(nodes_of(db)) == 12


def test_a_vigil_says_once_that_no_worker_is_left_then_every_minute_then_gives_up() -> None:
    from arena.cluster.coordinator import ClusterError, Vigil

    said: list[str] = []
    vigil = Vigil("tcp://h:1", said.append, give_up_after=150)
    vigil.workers_seen(2, 0)
    for now in (10, 15, 20, 69):  # several matches out report; one line
        vigil.workers_seen(0, now)
    assert said == [
        "no arena worker is left on the cluster at tcp://h:1: the run waits for one (start one: arena worker"
        " tcp://h:1); it gives up after 150 s"
    ]
    vigil.workers_seen(0, 71)
    assert said[1:] == ["still no arena worker on the cluster at tcp://h:1 (61 s)"]
    vigil.workers_seen(1, 100)  # one came back: the count starts again
    vigil.workers_seen(0, 200)
    with pytest.raises(ClusterError, match=r"for 150 s \(--wait-workers 150\); the games stored so far are kept"):
        vigil.workers_seen(0, 350)
    forever = Vigil("tcp://h:1", said.append)
    forever.workers_seen(0, 0)
    forever.workers_seen(0, 10_000)  # never gives up
    assert "gives up" not in said[-2]


def test_a_game_that_arrives_after_its_match_ended_is_left_out_not_a_crash() -> None:
    """A gauntlet decided cancels its matches and closes its writer; a game of theirs
    still on its way from the cluster is handed over from the inbox's thread after that.
    Handing it to the closed writer raised inside trio's entry queue, which ends the
    whole run with TrioInternalError."""
    from types import SimpleNamespace
    from typing import cast

    import trio

    from arena.cluster.coordinator import _Receiver
    from arena.cluster.node import NodeGame, Stream

    late = [cast(NodeGame, SimpleNamespace(game=SimpleNamespace(game_no=3)))]
    handed: list[NodeGame] = []

    def closed_writer(game: NodeGame) -> None:
        handed.append(game)
        raise trio.ClosedResourceError("the tournament's writer is closed")

    async def main() -> None:
        receiver = _Receiver(Stream("inbox", "match"), closed_writer)
        receiver.ended = True  # what Cluster.play sets as the match's play ends
        receiver.token.run_sync_soon(receiver.take_all, late)
        await trio.sleep(0.05)
        assert receiver.taken == set()

    trio.run(main)
    assert handed == []


def test_a_run_whose_last_worker_died_says_so_and_stops_after_wait_workers(
    workers: Workers, tmp_path: Path, make_bot: MakeBot
) -> None:
    """kill -9 of the only worker mid-run: the coordinator says no worker is left (it
    waited silently for ever), gives up after --wait-workers in one line, keeps its
    games, and its resume hint is the whole command, --cluster included."""
    workers.start("w1", 1)
    workers.wait_for(1)
    slow = make_bot("slow", SLOW)
    bots = [str(slow), str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
    db = tmp_path / "a.db"
    coordinator = subprocess.Popen(
        [ARENA, "tournament", "run", *bots, "--db", str(db), "--cluster", workers.scheduler, *SHORT,
         "--wait-workers", "3"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        ask(workers.scheduler, WAIT_FOR_A_MATCH_ON, "w1")
        workers.kill("w1")
        out, err = coordinator.communicate(timeout=120)
    finally:
        stop(coordinator)
    said = " ".join(err.decode().split())
    assert coordinator.returncode != 0 and "Traceback" not in said
    assert f"no arena worker is left on the cluster at {workers.scheduler}: the run waits for one" in said
    assert f"no arena worker on the cluster at {workers.scheduler} for 3 s (--wait-workers 3)" in said
    assert f"resume with: arena tournament run --resume --name t --db {db} --cluster {workers.scheduler}" in said


def test_the_games_a_killed_worker_sent_are_kept_and_not_played_again(
    workers: Workers, tmp_path: Path, make_bot: MakeBot
) -> None:
    """One long match (6 games) on w1, killed -9 once it has sent two games: those stay
    (each game travels back as it ends), w2 plays only the rest, and the database is the
    one-machine run's, each game once (the unit of work was the whole match: all of it
    was played again)."""
    import sqlite3

    slow = make_bot("slow", SLOW)
    bots = [str(slow), str(SAMPLES / "lowest")]
    long = ["--seed", "7", "--deals", "3", "--table-size", "2", "--name", "t"]
    workers.start("w1")
    workers.wait_for(1)
    db = tmp_path / "cluster.db"
    coordinator = subprocess.Popen(
        [ARENA, "tournament", "run", *bots, "--db", str(db), "--cluster", workers.scheduler, *long],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert time.monotonic() < deadline, "no game came back from w1"
            if db.exists():
                with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
                    with contextlib.suppress(sqlite3.OperationalError):
                        if con.execute("SELECT count(*) FROM games").fetchone()[0] >= 2:
                            break
            time.sleep(0.05)
        workers.kill("w1")
        workers.start("w2")
        out, err = coordinator.communicate(timeout=300)
    finally:
        stop(coordinator)
    assert coordinator.returncode == 0, err.decode()
    nodes = nodes_of(db)
    assert len(nodes) == 6 and nodes.count("w1") >= 2 and "w2" in nodes, nodes
    assert games_of(db) == one_machine(tmp_path, bots, *long)
