"""A cluster worker's side of a match: what a Dask task runs on the machine that plays it.

A task brings a match (``MatchSpec``) and its bots as content-hashed bundles. The node
unpacks each bundle once into its cache, refusing bytes that do not hash to what the
coordinator named (so a changed bot is never taken for an old one), builds it whenever
its image or sealed copy is missing (asked at every match: a pruned image is built
again) as ``arena bot build`` would, and plays the match in the sandbox ``arena worker``
checked, in the machine's one Trio loop, under thinking slots shared by every match it
plays at once. It returns the games; the coordinator is the only writer of the database.

A node's faults are never a bot's: when a match ends with a crashed bot, or fails, the
node asks its sandbox whether a Python bot still starts in it. If not, the node says so
to the coordinator, hands the match back to Dask to be played elsewhere (its games void)
and leaves the cluster, so that Dask gives its other matches to the other workers.
"""

from __future__ import annotations

import functools
import hashlib
import os
import queue as queue_module
import sys
import threading
from collections.abc import Awaitable, Callable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import msgspec
import trio

from arena.bots import Bot, load_bot
from arena.play import replay as replay_files
from arena.play.match import GameResult, MatchSpec
from arena.play.referee import MatchError, TimedGames, play_match
from arena.text import shown

if TYPE_CHECKING:
    from arena.sandbox.base import Sandbox

T = TypeVar("T")

SANDBOX_ENV = "ARENA_WORKER_SANDBOX"
"""The sandbox a worker checked at its start, for the matches it plays."""
SLOTS_ENV = "ARENA_WORKER_SLOTS"
"""Bots that may think at once on the worker's machine."""
CACHE_ENV = "ARENA_WORKER_CACHE"
"""Where a worker keeps the bots it received, by content hash (default below)."""
DEFAULT_CACHE = Path("/var/tmp/sixarena-worker")
TOPIC = "sixarena"
"""The Dask event topic on which nodes tell the coordinator they left the cluster."""
LEFT_ENV = "ARENA_WORKER_LEFT"
"""A file where a worker that leaves its cluster (its sandbox broke) says why, so that
``arena worker`` does not join again as it would after losing its scheduler."""
VERSION_KEY = "sixarena-version"
"""The scheduler's metadata key naming the arena version its cluster plays with."""


class NodeError(Exception):
    """A match the node cannot play for a reason of the cluster's (another arena version,
    a bundle that is not what it claims), never a bot's fault."""


class NodeGame(msgspec.Struct, frozen=True):
    """One finished game as it travels to the coordinator, the moment it ends."""

    node: str
    """The worker's name (``arena worker --name``, else its address)."""
    game: GameResult
    """The game, its replay cut to its header (the whole one is in ``replay``)."""
    replay: bytes
    """Its replay, encoded here: bytes travel and are stored as they are, at a fraction
    of the cost of the lines as objects."""
    wall_ms: float
    """Its wall time, from the end of the game before (or the match's start)."""


class NodeResult(msgspec.Struct, frozen=True):
    node: str
    """The worker's name (``arena worker --name``, else its address)."""
    isolation: str
    sent: list[int]
    """The numbers of the games this attempt sent (each went on as it ended)."""


class Stream(msgspec.Struct, frozen=True):
    """Where a match's games go as they end: a Dask queue the coordinator reads, each
    item naming its match by ``key``; and the Dask variable where the coordinator lists
    the games of that match it already has (a match played again after its worker died
    plays only the others)."""

    queue: str
    key: str

    @property
    def received(self) -> str:
        return f"{self.queue}-received-{self.key}"


@functools.cache
def arena_version() -> str:
    """The arena's release, its protocol and a digest of its code: two machines that play
    one tournament must agree on all three, or their games could differ."""
    from protocol.messages import PROTOCOL_VERSION

    digest = hashlib.sha256()
    for package in ("arena", "protocol"):
        root = Path(sys.modules[package].__file__ or "").parent
        for path in sorted(root.rglob("*.py")):
            digest.update(f"{path.relative_to(root.parent)}\0".encode())
            digest.update(path.read_bytes())
    return f"{metadata.version('six-arena')} (protocol {PROTOCOL_VERSION}, code {digest.hexdigest()[:12]})"


class _Node:
    """This worker's sandbox, slots, bot cache and builds, made on its first match."""

    def __init__(self) -> None:
        from arena.sandbox import choose_sandbox, sandbox_name

        name = sandbox_name(os.environ.get(SANDBOX_ENV, "local"))
        if name not in ("docker", "local"):
            raise NodeError(f"{SANDBOX_ENV}={name!r}: a worker plays in docker or local (start it with arena worker)")
        self.sandbox: Sandbox = choose_sandbox(name)[0]
        self._loop(int(os.environ.get(SLOTS_ENV) or os.cpu_count() or 1))
        self.cache = Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE)
        self.building = threading.Lock()
        """One build at a time on this machine."""

    def _loop(self, slots: int) -> None:
        """One Trio loop plays every match of this machine, as on one machine: matches
        share its thinking slots, and no two event loops fight over the interpreter
        (threads of their own would wait for it at every wake-up)."""
        ready = threading.Event()

        async def serve() -> None:
            self.token = trio.lowlevel.current_trio_token()
            self.slots = trio.Semaphore(slots)
            ready.set()
            await trio.sleep_forever()

        threading.Thread(target=trio.run, args=(serve,), name="arena-matches", daemon=True).start()
        ready.wait()

    def run(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``await fn(*args)`` in this machine's Trio loop, from a Dask task's thread."""
        return trio.from_thread.run(fn, *args, trio_token=self.token)

    def bot(self, digest: str, bundle: bytes, wanted: Bot) -> Bot:
        """The bot of ``bundle`` from the cache, checked against its hash and what the
        coordinator says it is, built if its image or copy is missing."""
        from arena.bots.bundle import unpack

        bot = load_bot(unpack(bundle, digest, self.cache / "bots"))
        if (bot.name, bot.version) != (wanted.name, wanted.version):
            raise NodeError(f"bundle {digest[:12]} holds {bot.name}:{bot.version}, not {wanted.name}:{wanted.version}")
        # Asked at every match, not remembered: an image removed or a base rebuilt since
        # (a prune, `arena image build`, another arena on the engine) is built again here.
        with self.building:
            self.sandbox.prepare(bot, progress=lambda line: print(shown(line), file=sys.stderr, flush=True))
        return bot

    def sandbox_fault(self) -> str | None:
        """Why bots cannot start in this node's sandbox any more (None: they can)."""
        from arena.sandbox.base import StartError
        from arena.sandbox.runtime import why_python_bots_fail

        try:
            return self.run(why_python_bots_fail, self.sandbox)
        except (StartError, OSError) as exc:
            return str(exc)


_node: _Node | None = None
_node_lock = threading.Lock()
_left: str | None = None
"""Why this worker left its cluster, once it has."""


def this_node() -> _Node:
    global _node
    with _node_lock:
        if _node is None:
            _node = _Node()
        return _node


def play_on_node(spec: MatchSpec, version: str, stream: Stream, digests: list[str], *bundles: bytes) -> NodeResult:
    """The Dask task: play ``spec`` here with the bots of ``bundles`` (one per bot, in
    order, hashing to ``digests``), sending each game to ``stream`` as it ends; only
    the games the coordinator does not have yet (a match played again)."""
    from distributed import Reschedule, get_worker

    if _left is not None:  # it is leaving: the match goes elsewhere
        raise Reschedule()
    mine = arena_version()
    if version != mine:  # it joined without `arena worker`'s check: it leaves, the tournament goes on
        _leave(f"it runs arena {mine}; the cluster plays with arena {version}", "its arena version differs")
    try:
        node = this_node()
    except Exception as exc:  # its sandbox cannot even be opened any more
        _leave(str(exc))
    try:
        bots = [node.bot(d, b, wanted) for d, b, wanted in zip(digests, bundles, spec.bots, strict=True)]
    except NodeError:
        raise
    except Exception:  # its build failed: this machine's fault, or the bot's?
        if (why := node.sandbox_fault()) is not None:
            _leave(f"it cannot build bots: {why}")
        raise
    from distributed import Queue, Variable, get_client

    client = get_client()
    try:
        have = set(Variable(stream.received, client=client).get(timeout=0))
    except TimeoutError:  # nothing of this match reached the coordinator yet
        have = set()
    todo = [g for g in spec.games if g.game_no not in have]
    name = str(get_worker().name)
    if not todo:
        return NodeResult(name, "", [])
    spec = msgspec.structs.replace(spec, bots=bots, games=todo)
    outbox = _Outbox(node, name, Queue(stream.queue, client=client), stream.key)
    play = functools.partial(play_match, keep_games=False)
    try:
        result = node.run(play, spec, node.sandbox, TimedGames(outbox.put), node.slots)
    except Exception as exc:
        outbox.close()
        if (why := outbox.broken or node.sandbox_fault()) is not None:  # the match failed: its sandbox, or the match?
            _leave(why)
        # The match's own error, as one line whatever its class needs to be made again.
        if isinstance(exc, MatchError):
            raise MatchError(str(exc)) from None
        raise NodeError(f"worker {name}: {type(exc).__name__}: {exc}") from None
    outbox.close()
    if outbox.broken is not None:
        _leave(outbox.broken)
    return NodeResult(name, result.isolation, outbox.sent)


class _Outbox:
    """Sends each game of a match to the coordinator as it ends, from a thread of its own
    (the match's loop never waits for the network). A game in which a bot crashed goes
    only once the sandbox is known to work: if it does not, neither it nor any later
    game goes (the node's fault is never a bot's), and ``broken`` says why."""

    def __init__(self, node: _Node, name: str, queue: Any, key: str) -> None:
        self.node = node
        self.name = name
        self.queue = queue
        self.key = key
        self.sent: list[int] = []
        self.broken: str | None = None
        self._games: queue_module.SimpleQueue[NodeGame | None] = queue_module.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="arena-outbox", daemon=True)
        self._thread.start()

    def put(self, game: GameResult, wall_ms: float) -> None:
        """A game ended (called in the match's loop: it only queues)."""
        cut = msgspec.structs.replace(game, replay=game.replay[:1])
        self._games.put(NodeGame(self.name, cut, replay_files.dumps(game.replay), wall_ms))

    def close(self) -> None:
        """Wait until every game queued has gone."""
        self._games.put(None)
        self._thread.join()

    def _run(self) -> None:
        done = False
        while not done:
            batch = [self._games.get()]
            while not self._games.empty():  # what piled up meanwhile goes in one message
                batch.append(self._games.get())
            sent = []
            for item in batch:
                if item is None:
                    done = True
                    break
                if self.broken is not None:
                    continue
                crashed = any(f.kind == "crash" for s in item.game.statuses for f in s.faults)
                if crashed and (why := self.node.sandbox_fault()) is not None:
                    self.broken = why
                    continue
                sent.append(item)
            if sent:
                self.queue.put({"key": self.key, "games": [msgspec.msgpack.encode(item) for item in sent]})
                self.sent += [item.game.game_no for item in sent]


def _leave(why: str, what: str = "its sandbox fails") -> NoReturn:
    """The node cannot play (its sandbox broke, or it runs another arena): it takes no
    more matches (``slots`` 0), says why to the coordinator and its log, and leaves the
    cluster (its nanny too, so it is not started again as it is); Dask gives this match
    and those queued here to other workers."""
    from distributed import Reschedule, get_worker
    from distributed.utils import sync

    global _left
    worker = get_worker()
    why = why.split("; --sandbox unsafe-local")[0]  # a worker plays in a sandbox, never without
    if _left is not None:
        raise Reschedule()
    _left = why
    message = f"worker {worker.name} left the cluster: {what} ({why}); its matches go to other workers"
    if left := os.environ.get(LEFT_ENV):
        Path(left).write_text(message)
    print(shown(message), file=sys.stderr, flush=True)
    worker.log_event(TOPIC, {"worker": str(worker.name), "message": message})
    sync(worker.loop, worker.set_resources, slots=0)
    worker.loop.add_callback(worker.close, executor_wait=False, nanny=True, reason=what)
    raise Reschedule()
