"""``arena scheduler`` and ``arena worker``: a Dask distributed cluster that plays matches;
and the ``--cluster`` options of ``arena tournament run`` and ``arena gauntlet``.

The cluster is Dask's own: ``arena scheduler`` runs Dask's scheduler (on loopback
unless told otherwise), ``arena worker`` Dask's worker with its nanny (which starts it
again if it dies). The arena adds the checks a machine must pass before it joins: its
sandbox works here (the Docker engine and the base image, or bubblewrap) and it runs the
cluster's arena version, so a machine that cannot play is never handed a match.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arena.cli.common import console, err_console, fail, user_errors

if TYPE_CHECKING:
    from arena.cluster.coordinator import TLS, Cluster
    from arena.store import Store, StoredBot
    from arena.tournaments.roundrobin import Player

ClusterOption = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        help="Play the matches on the Dask cluster of this scheduler (tcp://HOST:PORT, tls://HOST:PORT); this"
        " machine keeps the database.",
        metavar="SCHEDULER",
        show_default=False,
    ),
]
WaitWorkersOption = Annotated[
    float | None,
    typer.Option(
        help="With --cluster: seconds to wait for a first worker before giving up (default 60); and, if given, for"
        " a worker once none is left (else the run waits for one, saying so every minute).",
        min=0,
        show_default=False,
    ),
]


def cluster_flags(scheduler: str | None, tls: TLS | None) -> str:
    """``--cluster`` and the TLS options as the user gave them, for a resume hint that
    works as printed ('' when not on a cluster)."""
    if scheduler is None:
        return ""
    flags = f" --cluster {scheduler}"
    if tls is not None:
        flags += f" --tls-ca-file {tls.ca_file} --tls-cert {tls.cert} --tls-key {tls.key}"
    return flags


TlsCaOption = Annotated[
    Path | None, typer.Option("--tls-ca-file", help="TLS: the authority's certificate (PEM).", show_default=False)
]
TlsCertOption = Annotated[
    Path | None, typer.Option("--tls-cert", help="TLS: this machine's certificate (PEM).", show_default=False)
]
TlsKeyOption = Annotated[
    Path | None, typer.Option("--tls-key", help="TLS: this machine's private key (PEM).", show_default=False)
]


def tls_of(ca_file: Path | None, cert: Path | None, key: Path | None) -> TLS | None:
    """The three TLS files, all given and readable, or none of them."""
    given = {"--tls-ca-file": ca_file, "--tls-cert": cert, "--tls-key": key}
    if not any(given.values()):
        return None
    for flag, path in given.items():
        if path is None:
            fail(f"{flag} is missing: TLS needs --tls-ca-file, --tls-cert and --tls-key together")
        if not path.is_file():
            fail(f"{flag} {path}: no such file")
    from arena.cluster.coordinator import TLS

    assert ca_file and cert and key
    return TLS(str(ca_file), str(cert), str(key))


def tls_flags(tls: TLS | None) -> list[str]:
    """The TLS files as Dask's scheduler and worker commands take them."""
    if tls is None:
        return []
    return ["--tls-ca-file", tls.ca_file, "--tls-cert", tls.cert, "--tls-key", tls.key]


HostOption = Annotated[
    str,
    typer.Option(help="The address to listen on: loopback unless another machine must reach it (then with TLS)."),
]
DashboardOption = Annotated[
    bool,
    typer.Option(
        "--dashboard",
        help="Serve Dask's dashboard (plain HTTP: the workers, their logs) on loopback; none unless asked.",
    ),
]
InsecureOption = Annotated[
    bool,
    typer.Option(
        "--insecure-network",
        help="Listen on a non-loopback address without TLS: anyone who reaches the port runs code as this user.",
    ),
]


def exposure(what: str, host: str, tls: TLS | None, insecure: bool) -> None:
    """Refuse in one line to listen where others reach without TLS, unless the user took
    that risk with ``--insecure-network`` (then warn, naming it)."""
    from arena.cluster.ports import InsecureAddress, check_exposure

    try:
        warning = check_exposure(what, host, tls is not None, insecure)
    except InsecureAddress as exc:
        fail(str(exc))
    if warning is not None:
        err_console.print(warning, style="bold yellow", markup=False, soft_wrap=True)


def http_flags(dashboard: bool, port: int) -> list[str]:
    """Dask's HTTP server: the dashboard on loopback at ``port`` when asked; else on a
    loopback port of its own, serving nothing, and closed by our preload at its start."""
    from arena.cluster.ports import NO_HTTP_ROUTES, PRELOAD

    if dashboard:
        return ["--dashboard", "--dashboard-address", f"127.0.0.1:{port}"]
    os.environ.update(NO_HTTP_ROUTES)
    return ["--no-dashboard", "--dashboard-address", "127.0.0.1:0", "--preload", PRELOAD]


PortOption = Annotated[int, typer.Option(help="The port to listen on.", min=1, max=65535)]


def scheduler(
    host: HostOption = "127.0.0.1",
    port: PortOption = 8786,
    tls_ca_file: TlsCaOption = None,
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
    dashboard: DashboardOption = False,
    insecure_network: InsecureOption = False,
) -> None:
    """Run a Dask scheduler for arena workers (on loopback by default).

    Whoever can reach a scheduler without TLS can run code on its workers: another
    address than loopback needs --tls-ca-file, --tls-cert and --tls-key (or
    --insecure-network, for a network only your machines reach).
    """
    tls = tls_of(tls_ca_file, tls_cert, tls_key)
    exposure("scheduler", host, tls, insecure_network)
    command = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", host, "--port", str(port)]
    command += [*http_flags(dashboard, 8787), *tls_flags(tls)]
    if tls is not None:
        command += ["--protocol", "tls"]
    scheme = "tls" if tls else "tcp"
    address = f"{scheme}://{_bracketed(host)}:{port}"
    from arena.cluster.ports import is_loopback

    join = f"arena worker {address}" + ("" if is_loopback(host) else " --host THE_WORKERS_ADDRESS")
    join += " --tls-ca-file ... --tls-cert ... --tls-key ..." if tls else ""
    console.print(f"scheduler at {address}; join it with: {join}", markup=False, soft_wrap=True)
    if dashboard:
        console.print("dashboard at http://127.0.0.1:8787 (this machine only)", markup=False)
    sys.stdout.flush()
    os.execv(sys.executable, command)


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


SchedulerArgument = Annotated[
    str,
    typer.Argument(
        help="The scheduler's address, e.g. tcp://10.0.0.5:8786 (default: $DASK_SCHEDULER_ADDRESS, as Dask's"
        " deployers set it).",
        envvar="DASK_SCHEDULER_ADDRESS",
        show_default=False,
    ),
]
SlotsOption = Annotated[
    int | None,
    typer.Option(help="Bots that may think at once on this machine (default: its cores).", min=1),
]
SandboxOption = Annotated[
    str, typer.Option(help="Where bots run: docker or local (bubblewrap); checked before joining.")
]
NameOption = Annotated[str | None, typer.Option(help="The worker's name in the cluster (default: Dask's).")]
WorkerHostOption = Annotated[
    str | None,
    typer.Option(
        help="The address this worker (and its nanny) listen on, which the scheduler and the other workers"
        " must reach: 127.0.0.1 unless given (then with TLS).",
        show_default=False,
    ),
]
InterfaceOption = Annotated[
    str | None,
    typer.Option(help="Listen on this network interface's address (instead of --host).", show_default=False),
]
WaitSchedulerOption = Annotated[
    float,
    typer.Option(
        help="Seconds to wait for the scheduler when it does not answer: at the start, and when it goes away"
        " (then join it again).",
        min=0,
    ),
]
DashboardAddressOption = Annotated[
    str | None,
    typer.Option(help="With --dashboard: its port (on loopback).", show_default=False),
]
NthreadsOption = Annotated[
    int | None, typer.Option(help="Dask's name for --slots (deployers pass it).", min=1, show_default=False)
]
NworkersOption = Annotated[
    int, typer.Option(help="Worker processes: 1 (one process plays all of a machine's slots).", min=1)
]
MemoryLimitOption = Annotated[
    str | None, typer.Option(help="Dask's memory limit of the worker process (passed on).", show_default=False)
]
DeathTimeoutOption = Annotated[
    str | None,
    typer.Option(help="Dask's: seconds to wait for the scheduler at start (passed on).", show_default=False),
]
LocalDirectoryOption = Annotated[
    str | None, typer.Option(help="Dask's scratch folder (passed on).", show_default=False)
]
LifetimeOption = Annotated[
    str | None, typer.Option(help="Dask's: close the worker after this time (passed on).", show_default=False)
]
LifetimeStaggerOption = Annotated[str | None, typer.Option(help="Dask's (passed on).", show_default=False)]
LifetimeRestartOption = Annotated[
    bool, typer.Option("--lifetime-restart", help="Dask's: start again after --lifetime (passed on).")
]
ProtocolOption = Annotated[
    str | None, typer.Option(help="tcp or tls (from the scheduler's address unless given).", show_default=False)
]


def worker(
    scheduler: SchedulerArgument,
    slots: SlotsOption = None,
    sandbox: SandboxOption = "docker",
    name: NameOption = None,
    host: WorkerHostOption = None,
    interface: InterfaceOption = None,
    wait_scheduler: WaitSchedulerOption = 3600,
    tls_ca_file: TlsCaOption = None,
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
    dashboard: DashboardOption = False,
    dashboard_address: DashboardAddressOption = None,
    insecure_network: InsecureOption = False,
    nthreads: NthreadsOption = None,
    nworkers: NworkersOption = 1,
    memory_limit: MemoryLimitOption = None,
    death_timeout: DeathTimeoutOption = None,
    local_directory: LocalDirectoryOption = None,
    lifetime: LifetimeOption = None,
    lifetime_stagger: LifetimeStaggerOption = None,
    lifetime_restart: LifetimeRestartOption = False,
    protocol: ProtocolOption = None,
) -> None:
    """Join a Dask cluster as a machine that plays matches.

    Refuses to join, with one line, when its sandbox does not work here or the cluster
    plays with another arena version. Listens on loopback unless --host (or --interface)
    names another address, which needs TLS (or --insecure-network). Takes the options
    Dask's deployers (dask-jobqueue, dask-kubernetes) give a worker. When the scheduler
    goes away, waits for it (--wait-scheduler) and joins it again.
    """
    from urllib.parse import urlsplit

    from arena.cluster.ports import is_loopback

    if sandbox not in ("docker", "local"):
        fail(f"--sandbox {sandbox!r}: a worker plays in docker or local (bubblewrap)")
    if "://" not in scheduler:
        fail(f"{scheduler!r} is not a scheduler address: tcp://HOST:PORT (or tls://HOST:PORT)")
    scheme = urlsplit(scheduler).scheme
    if protocol is not None and protocol.removesuffix("://") != scheme:
        fail(f"--protocol {protocol}: the scheduler {scheduler} speaks {scheme}")
    if nworkers != 1:
        fail(f"--nworkers {nworkers}: an arena worker is one process that shares its slots among its matches")
    if slots is not None and nthreads is not None and slots != nthreads:
        fail(f"--slots {slots} and --nthreads {nthreads}: give one (they are the same)")
    tls = tls_of(tls_ca_file, tls_cert, tls_key)
    if interface is not None:
        if host is not None:
            fail("--host and --interface: give one")
        host = _interface_address(interface)
    if host is None:
        remote = urlsplit(scheduler).hostname or ""
        if not is_loopback(remote):
            fail(
                f"the scheduler {scheduler} is on another machine, which must reach this worker too: give --host"
                " with this machine's address there, or --interface (and TLS)"
            )
        host = "127.0.0.1"
    exposure("worker", host, tls, insecure_network)
    port = 0
    if dashboard_address is not None:
        where, _, number = dashboard_address.rpartition(":")
        if where and not is_loopback(where) or not number.isdigit():
            fail(f"--dashboard-address {dashboard_address}: a port (the dashboard is served on loopback only)")
        port = int(number)
    count = slots or nthreads or os.cpu_count() or 1
    checked = _checked_sandbox(sandbox, scheduler, tls, wait_scheduler)
    console.print(f"sandbox works here: {checked}; joining {scheduler} with {count} slots", soft_wrap=True)
    sys.stdout.flush()
    from arena.cluster.node import LEFT_ENV, SANDBOX_ENV, SLOTS_ENV

    command = [sys.executable, "-m", "distributed.cli.dask_worker", scheduler]
    command += ["--nthreads", str(count), "--resources", f"slots={count}", "--host", host]
    command += [*http_flags(dashboard, port), *tls_flags(tls)]
    passed = {
        "--name": name,
        "--memory-limit": memory_limit,
        "--death-timeout": death_timeout,
        "--local-directory": local_directory,
        "--lifetime": lifetime,
        "--lifetime-stagger": lifetime_stagger,
    }
    command += [part for flag, value in passed.items() if value is not None for part in (flag, value)]
    command += ["--lifetime-restart"] if lifetime_restart else []
    import tempfile

    os.environ[SANDBOX_ENV] = sandbox
    os.environ[SLOTS_ENV] = str(count)
    with tempfile.TemporaryDirectory(prefix="arena-worker-") as private:
        os.environ[LEFT_ENV] = str(Path(private) / "left")
        raise typer.Exit(_supervise(command, scheduler, tls, wait_scheduler, Path(private) / "left"))


def _interface_address(interface: str) -> str:
    """The IPv4 address of the network interface ``interface``, or one line."""
    from distributed.utils import get_ip_interface

    try:
        return str(get_ip_interface(interface))
    except ValueError as exc:
        fail(f"--interface {interface}: {str(exc).splitlines()[0]}")


def _checked_sandbox(sandbox: str, scheduler: str, tls: TLS | None, wait: float) -> str:
    """Check that bots run here and that the cluster plays this arena version (one
    line and exit otherwise); the sandbox's isolation, in words."""
    from arena.cli.sandbox import open_sandbox
    from arena.cluster.coordinator import Unreachable

    with user_errors():
        checked = open_sandbox(sandbox)
        try:
            _claim(scheduler, tls)
        except Unreachable:  # not up yet (started beside it, or a pod before its scheduler's)
            _wait_for_scheduler(scheduler, tls, wait, "does not answer yet", lambda: False)
    return checked.isolation


def _supervise(command: list[str], scheduler: str, tls: TLS | None, wait: float, left: Path) -> int:
    """Run Dask's worker (with its nanny) and, each time it ends because its scheduler
    went away, wait up to ``wait`` s for the scheduler to answer again (a line a minute)
    and join it again; Dask's own worker exits when it loses its scheduler, which would
    leave every machine of a cluster to be visited. Its exit code otherwise."""
    import signal
    import subprocess

    from arena.cluster.coordinator import ClusterError, connect

    stopping: list[int] = []
    child: subprocess.Popen[bytes] | None = None

    def forward(signum: int, frame: object) -> None:
        stopping.append(signum)
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    while True:
        child = subprocess.Popen(command)
        code = child.wait()
        if stopping:
            return 128 + stopping[0] if code < 0 else code
        if left.exists():
            return 3  # it left the cluster: its sandbox broke (it said why)
        try:
            connect(scheduler, tls, timeout=5).close()
            return code  # the scheduler is there: the worker was retired, or ended its lifetime
        except ClusterError:
            pass
        if not _wait_for_scheduler(scheduler, tls, wait, "is gone", lambda: bool(stopping)):
            return 128 + stopping[0]
        err_console.print(f"the scheduler {scheduler} is back: joining it again", markup=False, soft_wrap=True)


def _wait_for_scheduler(scheduler: str, tls: TLS | None, wait: float, why: str, stop: Callable[[], bool]) -> bool:
    """Until the scheduler answers and plays this arena version (True), saying so at once
    and then every minute; one line and exit after ``wait`` s, or on another version or a
    refused certificate (nothing to wait for); False if ``stop()`` turns true."""
    import time

    from arena.cluster.coordinator import ClusterError, Unreachable

    since = said = time.monotonic()
    err_console.print(f"the scheduler {scheduler} {why}: waiting up to {wait:g} s for it", markup=False, soft_wrap=True)
    while not stop():
        waited = time.monotonic() - since
        if waited >= wait:
            fail(f"the scheduler {scheduler} did not answer in {wait:g} s: start this worker again once it runs")
        try:
            _claim(scheduler, tls)
            return True
        except Unreachable:
            pass
        except ClusterError as exc:
            fail(str(exc))
        if time.monotonic() - said >= 60:
            said = time.monotonic()
            err_console.print(
                f"still waiting for the scheduler {scheduler} ({waited:.0f} s)", markup=False, soft_wrap=True
            )
        time.sleep(1)
    return False


def _claim(scheduler: str, tls: TLS | None) -> None:
    """The scheduler answers and plays this arena version (``ClusterError`` if not)."""
    from arena.cluster.coordinator import claim_version, connect

    client = connect(scheduler, tls)
    try:
        claim_version(client)
    finally:
        client.close()


def join(
    held: ExitStack, scheduler: str | None, tls: TLS | None, wait_workers: float | None, sandbox_name: str
) -> Cluster | None:
    """The cluster of ``--cluster``, checked before anything is written: its scheduler
    answers, it plays with this arena version, an arena worker has joined (waiting up
    to ``wait_workers`` s, 60 if None, for one) and every worker runs this version; a
    run gives up after ``wait_workers`` s without any worker (None: never). None: no
    cluster."""
    if scheduler is None:
        if tls is not None:
            fail("--tls-ca-file, --tls-cert and --tls-key are for --cluster")
        return None
    if sandbox_name != "auto":
        fail(
            f"--sandbox {sandbox_name}: on a cluster each worker plays in the sandbox it checked (arena worker --sandbox)"
        )
    from arena.cluster.coordinator import Cluster, claim_version, connect

    client = connect(scheduler, tls)
    held.callback(client.close)
    claim_version(client)
    cluster = Cluster(client, notice=lambda line: err_console.print(f"[yellow]{line}[/]", markup=True, soft_wrap=True))
    held.callback(cluster.inbox.stop)  # before the client closes
    workers = cluster.wait_for_workers(
        60 if wait_workers is None else wait_workers, lambda line: err_console.print(line, markup=False)
    )
    cluster.vigil.give_up_after = wait_workers
    names = ", ".join(f"{w.name} ({w.slots})" for w in workers)
    console.print(
        f"cluster {scheduler}: {len(workers)} workers, {sum(w.slots for w in workers)} slots: {names}",
        markup=False,
        soft_wrap=True,
    )
    return cluster


def open_player(
    stored: list[StoredBot], sandbox_name: str, concurrency: int, cluster: Cluster | None, store: Store
) -> Player:
    """Where a tournament's matches will be played, ready: this machine's sandbox with
    every bot built (its games published for spectators beside ``store``), or the
    cluster with every bot sent."""
    if cluster is None:
        from arena.cli.common import warn_about
        from arena.cli.sandbox import open_sandbox, prepare
        from arena.play.live import publish_beside
        from arena.tournaments.roundrobin import OnThisMachine

        sandbox = open_sandbox(sandbox_name)
        loaded = [b.load() for b in stored]
        prepare(sandbox, loaded)
        warn_about(sorted({sandbox.isolation_for(b) for b in loaded}))
        return OnThisMachine(sandbox, concurrency, publish_beside(store.path))
    from arena.cluster.coordinator import OnCluster

    cluster.send_bots(stored)
    return OnCluster(cluster, cluster.workers())
