"""The coordinator's side of a tournament on a Dask distributed cluster.

The coordinator (``arena tournament run --cluster``, ``arena gauntlet --cluster``) keeps
everything it keeps on one machine: the schedule, the progress, the database, of which
it is the only writer. Dask does the rest: each match is one task (``arena.cluster.node.
play_on_node``) needing one ``slots`` resource, so only ``arena worker``s take it; each
bot travels once per worker as its snapshot's bundle, scattered under its content hash;
a worker that dies has its matches played again elsewhere (Dask's ``allowed-failures``
bounds how often), and since games are stored only when their match comes back, none
is stored twice. The arena adds no scheduler, worker protocol or retry loop.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec
import trio

from arena.cluster.node import TOPIC, VERSION_KEY, NodeGame, NodeResult, Stream, arena_version, play_on_node
from arena.play.match import MatchSpec

if TYPE_CHECKING:
    from distributed import Client, Future

    from arena.store import StoredBot
    from arena.tournaments.roundrobin import GameOver


class ClusterError(Exception):
    """A cluster the coordinator cannot use, with what to do about it."""


class OtherVersion(ClusterError):
    """The cluster plays with another arena version."""


class Unreachable(ClusterError):
    """No scheduler answers at the address (yet): nothing listens, or no route there."""


class Worker(msgspec.Struct, frozen=True):
    name: str
    address: str
    slots: int


class TLS(msgspec.Struct, frozen=True):
    """Certificates as Dask's ``Security`` takes them: the authority that signed every
    party's certificate, and this party's own certificate and key."""

    ca_file: str
    cert: str
    key: str

    def security(self) -> Any:
        from distributed.security import Security

        return Security(
            tls_ca_file=self.ca_file,
            tls_client_cert=self.cert,
            tls_client_key=self.key,
            require_encryption=True,
        )


def connect(address: str, tls: TLS | None = None, timeout: float = 10) -> Client:
    """A Dask client of the scheduler at ``address``; ``ClusterError`` in one line when
    none answers there (or refuses our certificate)."""
    from distributed import Client

    # Dask logs its client's troubles with tracebacks; the arena says what they mean in one line.
    for name in ["distributed", *logging.root.manager.loggerDict]:
        if name.split(".")[0] == "distributed":
            logging.getLogger(name).setLevel(logging.CRITICAL)
    if "://" not in address:
        raise ClusterError(f"{address!r} is not a scheduler address: tcp://HOST:PORT (or tls://HOST:PORT)")
    if address.startswith("tls://") and tls is None:
        raise ClusterError(f"{address} speaks TLS: give --tls-ca-file, --tls-cert and --tls-key")
    _handshake(address, tls, min(timeout, 5))
    try:
        return Client(address, security=tls.security() if tls else None, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise Unreachable(f"no Dask scheduler answers at {address} ({first})") from None


def _handshake(address: str, tls: TLS | None, timeout: float) -> None:
    """Reach the scheduler's port (and shake hands over TLS) before Dask's client, which
    retries for its whole timeout whatever the failure: a closed port, an unknown host
    or a certificate either side refuses is one line at once, naming which."""
    import socket
    import ssl
    from urllib.parse import urlsplit

    parts = urlsplit(address)
    try:
        host, port = parts.hostname or "", parts.port or 8786
    except ValueError as exc:
        raise ClusterError(f"{address!r} is not a scheduler address ({exc})") from None
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            if tls is None:
                return
            context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=tls.ca_file)
            context.check_hostname = False  # Dask checks the authority, not names
            context.load_cert_chain(tls.cert, tls.key)
            with context.wrap_socket(sock) as secured:
                # TLS 1.3 tells a client its certificate was refused only at its first
                # read; Dask's server speaks first (its handshake), so this read returns.
                try:
                    secured.recv(1)
                except TimeoutError:
                    pass
    except ssl.SSLCertVerificationError as exc:
        raise ClusterError(
            f"the scheduler at {address} shows a certificate that --tls-ca-file {tls.ca_file if tls else ''} did not"
            f" sign ({exc.verify_message})"
        ) from None
    except ssl.SSLError as exc:
        raise ClusterError(
            f"the scheduler at {address} refused this machine's certificate (--tls-cert), or TLS failed ({exc.reason})"
        ) from None
    except OSError as exc:
        why = exc.strerror or str(exc) or type(exc).__name__
        raise Unreachable(f"no Dask scheduler answers at {address} ({why})") from None


def claim_version(client: Client) -> None:
    """The cluster plays with one arena version: the first party to join names it in the
    scheduler's metadata; another version is refused, both named."""
    mine = arena_version()
    address = client.scheduler_info()["address"]
    try:
        # The scheduler unpickles every task (a match, the arena's types): it needs the
        # arena, of this version, as much as the workers do.
        scheduler_has = client.run_on_scheduler(arena_version)
    except ImportError as exc:
        raise ClusterError(
            f"the scheduler at {address} cannot load the arena ({exc}): run `arena scheduler` there, or install this"
            " arena (./setup.sh) where `dask scheduler` runs"
        ) from None
    if scheduler_has != mine:
        raise OtherVersion(
            f"the scheduler at {address} runs arena {scheduler_has}; this is arena {mine}: run one version on every"
            " machine"
        )
    theirs = client.get_metadata(VERSION_KEY, None)
    if theirs is None:
        client.set_metadata(VERSION_KEY, mine)
    elif theirs != mine:
        raise OtherVersion(
            f"the cluster at {address} plays with arena {theirs}; this is arena {mine}:"
            " run one version on every machine (a new scheduler starts a new cluster)"
        )


WATCH_SECONDS = 5.0
"""How often a run waiting for its matches asks whether any worker is left."""
SAY_EVERY_SECONDS = 60.0
"""How often a run without workers says it still waits."""


class Cluster:
    """A connection to a scheduler whose arena workers play the coordinator's matches."""

    def __init__(self, client: Client, notice: Callable[[str], None]) -> None:
        self.client = client
        self.address = str(client.scheduler_info()["address"])
        self.version = arena_version()
        self.bundles: dict[str, Future[bytes]] = {}
        self.vigil = Vigil(self.address, notice)
        self.inbox = _Inbox(client)
        self._notice = notice
        client.subscribe_topic(TOPIC, self._event)

    def _event(self, event: tuple[float, dict[str, str]]) -> None:
        self._notice(event[1]["message"])

    def close(self) -> None:
        self.inbox.stop()
        self.client.close()

    def workers(self) -> list[Worker]:
        """The arena workers (those that declare thinking slots) and their slots."""
        found = []
        for address, info in self.client.scheduler_info(n_workers=-1)["workers"].items():
            slots = int(info.get("resources", {}).get("slots", 0))
            if slots > 0:
                found.append(Worker(str(info.get("name", address)), address, slots))
        return sorted(found, key=lambda w: w.name)

    def wait_for_workers(self, seconds: float, say: Callable[[str], None]) -> list[Worker]:
        """The workers, once there is one; ``ClusterError`` after ``seconds`` without."""
        deadline = time.monotonic() + seconds
        workers = self.workers()
        if not workers:
            say(f"no arena worker has joined {self.address} yet: waiting up to {seconds:g} s")
        while not workers:
            if time.monotonic() >= deadline:
                raise ClusterError(
                    f"no arena worker joined {self.address} in {seconds:g} s (start one: arena worker {self.address})"
                )
            time.sleep(0.2)
            workers = self.workers()
        self.check_versions(workers)
        return workers

    def check_versions(self, workers: list[Worker]) -> None:
        versions = self.client.run(arena_version, workers=[w.address for w in workers])
        for worker in workers:
            theirs = versions.get(worker.address)
            if theirs is not None and theirs != self.version:
                raise ClusterError(f"worker {worker.name} runs arena {theirs}; this is arena {self.version}")

    def send_bots(self, bots: list[StoredBot]) -> None:
        """Each bot's snapshot as a bundle, once per cluster under its content hash; a
        snapshot that no longer hashes to what was stored is refused."""
        from arena.bots.bundle import pack

        for bot in bots:
            if bot.hash in self.bundles:
                continue
            digest, data = pack(bot.load().path)
            if digest != bot.hash:
                raise ClusterError(f"{bot.ref}: its snapshot {bot.path} changed since it was stored: add it again")
            # A task that returns the bytes, not scattered data: should every worker that
            # holds it die, the scheduler makes it again from the task (scattered data
            # would be lost, and every match waiting for it cancelled).
            self.bundles[bot.hash] = self.client.submit(_bundle, data, key=f"bot-{bot.hash}", pure=False)

    async def play(self, spec: MatchSpec, bots: list[StoredBot], on_game: Callable[[NodeGame], None]) -> NodeResult:
        """Play ``spec`` on a worker, ``on_game`` getting each game as it ends there (a
        worker that dies meanwhile has the games it did not send played elsewhere, by
        Dask); return once every game has come."""
        digests = [bot.hash for bot in bots]
        receiver = self.inbox.open(on_game)
        future = self.client.submit(
            play_on_node,
            spec,
            self.version,
            receiver.stream,
            digests,
            *(self.bundles[d] for d in digests),
            resources={"slots": 1},
            pure=False,
        )
        done = trio.Event()
        token = trio.lowlevel.current_trio_token()

        def finished(_: Any) -> None:
            try:
                token.run_sync_soon(done.set)
            except trio.RunFinishedError:
                pass

        future.add_done_callback(finished)
        try:
            while True:
                with trio.move_on_after(WATCH_SECONDS):
                    await done.wait()
                if done.is_set():
                    break
                workers = await trio.to_thread.run_sync(self.workers)
                self.vigil.workers_seen(len(workers), trio.current_time())
            result = await trio.to_thread.run_sync(_result_of, future, self.address)
            await receiver.until(result.sent)
            return result
        except BaseException:
            future.cancel()
            raise
        finally:
            receiver.ended = True  # before the await: a hand-over queued meanwhile must find it
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self.inbox.close, receiver)


class _Receiver:
    """One match's end of the inbox: the games it took, in the coordinator's loop."""

    def __init__(self, stream: Stream, on_game: Callable[[NodeGame], None]) -> None:
        self.stream = stream
        self.on_game = on_game
        self.token = trio.lowlevel.current_trio_token()
        self.have: set[int] = set()
        """Games read from the queue (the inbox's thread keeps it)."""
        self.taken: set[int] = set()
        self.ended = False
        """Its match's play is over: a game still on its way (of a match cancelled, a
        gauntlet decided) finds the tournament's writer closed, and is left out."""
        self._more = trio.Event()

    def take_all(self, games: list[NodeGame]) -> None:
        if self.ended:
            return
        for game in games:
            self.taken.add(game.game.game_no)
            self.on_game(game)
        self._more.set()

    async def until(self, numbers: list[int]) -> None:
        """Until the games ``numbers`` have been taken (their sender put them in the
        queue before its task ended: they are there, or on their way)."""
        while not set(numbers) <= self.taken:
            self._more = trio.Event()
            await self._more.wait()


class _Inbox:
    """Where every match of a run sends its games as they end: one Dask queue, read by
    a thread of its own, each game handed to its match's receiver once (a match played
    again may send a game twice); and, per match, a Dask variable listing the games
    read, which a worker playing the match again skips. Games travel through the
    scheduler: each is a few KiB, once."""

    def __init__(self, client: Client) -> None:
        from distributed import Queue

        self.client = client
        self.name = f"sixarena-games-{uuid.uuid4().hex}"
        self.queue = Queue(self.name, client=client)
        self._receivers: dict[str, _Receiver] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arena-inbox", daemon=True)
        self._thread.start()

    def open(self, on_game: Callable[[NodeGame], None]) -> _Receiver:
        receiver = _Receiver(Stream(self.name, uuid.uuid4().hex), on_game)
        with self._lock:
            self._receivers[receiver.stream.key] = receiver
        return receiver

    def close(self, receiver: _Receiver) -> None:
        from distributed import Variable

        with self._lock:
            self._receivers.pop(receiver.stream.key, None)
        if receiver.have:
            with contextlib.suppress(Exception):  # a scheduler gone took it with it
                Variable(receiver.stream.received, client=self.client).delete()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        from distributed import Variable

        while not self._stop.is_set():
            try:
                items = [self.queue.get(timeout=0.5)]
            except TimeoutError:
                continue
            except Exception:  # the scheduler is away: the matches out say so
                self._stop.wait(0.5)
                continue
            with contextlib.suppress(Exception):  # and what else waits, never losing the one read
                items += self.queue.get(batch=True)
            for receiver, games in self._sort(items).items():
                with contextlib.suppress(Exception):
                    Variable(receiver.stream.received, client=self.client).set(sorted(receiver.have))
                try:
                    receiver.token.run_sync_soon(receiver.take_all, games)
                except trio.RunFinishedError:
                    pass

    def _sort(self, items: list[dict[str, Any]]) -> dict[_Receiver, list[NodeGame]]:
        """The new games of ``items`` by the match they belong to (a game already read,
        sent again by a match played again, or of a match given up, is left out)."""
        found: dict[_Receiver, list[NodeGame]] = {}
        for item in items:
            with self._lock:
                receiver = self._receivers.get(item["key"])
            if receiver is None:
                continue
            for data in item["games"]:
                game = msgspec.msgpack.decode(data, type=NodeGame)
                if game.game.game_no not in receiver.have:
                    receiver.have.add(game.game.game_no)
                    found.setdefault(receiver, []).append(game)
        return found


class Vigil:
    """What a run says, and when it gives up, while no worker is left on its cluster:
    the matches out all report to one vigil, so each line is said once."""

    def __init__(self, address: str, notice: Callable[[str], None], give_up_after: float | None = None) -> None:
        self.address = address
        self.notice = notice
        self.give_up_after = give_up_after
        """Seconds a run waits once no worker is left (None: for ever)."""
        self._since: float | None = None
        self._said_at = 0.0

    def workers_seen(self, count: int, now: float) -> None:
        """``count`` arena workers are there at ``now``; ``ClusterError`` once there
        have been none for ``give_up_after`` s."""
        if count:
            self._since = None
            return
        if self._since is None:
            self._since = self._said_at = now
            self.notice(
                f"no arena worker is left on the cluster at {self.address}: the run waits for one"
                f" (start one: arena worker {self.address})"
                + (f"; it gives up after {self.give_up_after:g} s" if self.give_up_after is not None else "")
            )
            return
        waited = now - self._since
        if self.give_up_after is not None and waited >= self.give_up_after:
            raise ClusterError(
                f"no arena worker on the cluster at {self.address} for {self.give_up_after:g} s (--wait-workers"
                f" {self.give_up_after:g}); the games stored so far are kept (--resume goes on)"
            )
        if now - self._said_at >= SAY_EVERY_SECONDS:
            self._said_at = now
            self.notice(f"still no arena worker on the cluster at {self.address} ({waited:.0f} s)")


def _result_of(future: Future[NodeResult], address: str) -> NodeResult:
    """The match's games; what went wrong with the cluster as one ``ClusterError`` line
    (the tournament stops there, resumable); the match's own error as it is."""
    from concurrent.futures import CancelledError

    from distributed import KilledWorker

    try:
        return future.result()
    except KilledWorker as exc:
        raise ClusterError(
            f"a match was given up after it stopped every worker that played it ({exc}): look into those"
            " workers' logs; the games stored so far are kept (--resume goes on)"
        ) from None
    except (CancelledError, OSError) as exc:  # the scheduler went away, or dropped our matches
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ClusterError(
            f"lost the cluster at {address} ({why}); the games stored so far are kept (--resume goes on)"
        ) from None


def _bundle(data: bytes) -> bytes:
    return data


class OnCluster:
    """A tournament's ``Player`` on a cluster: every match is a task; games go to the
    coordinator's writer when their match comes back."""

    def __init__(self, cluster: Cluster, workers: list[Worker]) -> None:
        self.cluster = cluster
        self.nodes = [(w.name, w.slots) for w in workers]

    @property
    def at_once(self) -> int:
        """Twice the slots of the workers there are now (a task waits at each worker for
        the one that ends): workers that join during a run are given matches too."""
        return max(1, 2 * sum(w.slots for w in self.cluster.workers()))

    async def play(self, spec: MatchSpec, bots: list[StoredBot], game_over: GameOver) -> None:
        def on_game(sent: NodeGame) -> None:
            game_over(sent.game, sent.node, sent.wall_ms, sent.replay)

        await self.cluster.play(spec, bots, on_game)
