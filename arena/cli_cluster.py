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
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .cli_common import console, err_console, fail, user_errors

if TYPE_CHECKING:
    from .cluster import TLS, Cluster
    from .store import StoredBot
    from .tournament import Player

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
    float, typer.Option(help="With --cluster: seconds to wait for a first worker before giving up.", min=0)
]
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
    from .cluster import TLS

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
    from .cluster_ports import InsecureAddress, check_exposure

    try:
        warning = check_exposure(what, host, tls is not None, insecure)
    except InsecureAddress as exc:
        fail(str(exc))
    if warning is not None:
        err_console.print(warning, style="bold yellow", markup=False, soft_wrap=True)


def http_flags(dashboard: bool, port: int) -> list[str]:
    """Dask's HTTP server: the dashboard on loopback at ``port`` when asked; else on a
    loopback port of its own, serving nothing, and closed by our preload at its start."""
    from .cluster_ports import NO_HTTP_ROUTES, PRELOAD

    if dashboard:
        return ["--dashboard", "--dashboard-address", f"127.0.0.1:{port}"]
    os.environ.update(NO_HTTP_ROUTES)
    return ["--no-dashboard", "--dashboard-address", "127.0.0.1:0", "--preload", PRELOAD]


def scheduler(
    host: HostOption = "127.0.0.1",
    port: Annotated[int, typer.Option(help="The port to listen on.", min=1, max=65535)] = 8786,
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
    from .cluster_ports import is_loopback

    join = f"arena worker {address}" + ("" if is_loopback(host) else " --host THE_WORKERS_ADDRESS")
    join += " --tls-ca-file ... --tls-cert ... --tls-key ..." if tls else ""
    console.print(f"scheduler at {address}; join it with: {join}", markup=False, soft_wrap=True)
    if dashboard:
        console.print("dashboard at http://127.0.0.1:8787 (this machine only)", markup=False)
    sys.stdout.flush()
    os.execv(sys.executable, command)


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def worker(
    scheduler: Annotated[str, typer.Argument(help="The scheduler's address, e.g. tcp://10.0.0.5:8786.")],
    slots: Annotated[
        int | None,
        typer.Option(help="Bots that may think at once on this machine (default: its cores).", min=1),
    ] = None,
    sandbox: Annotated[
        str, typer.Option(help="Where bots run: docker or local (bubblewrap); checked before joining.")
    ] = "docker",
    name: Annotated[str | None, typer.Option(help="The worker's name in the cluster (default: Dask's).")] = None,
    host: Annotated[
        str | None,
        typer.Option(
            help="The address this worker (and its nanny) listen on, which the scheduler and the other workers"
            " must reach: 127.0.0.1 unless given (then with TLS).",
            show_default=False,
        ),
    ] = None,
    tls_ca_file: TlsCaOption = None,
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
    dashboard: DashboardOption = False,
    insecure_network: InsecureOption = False,
) -> None:
    """Join a Dask cluster as a machine that plays matches.

    Refuses to join, with one line, when its sandbox does not work here or the cluster
    plays with another arena version. Listens on loopback unless --host names another
    address, which needs TLS (or --insecure-network).
    """
    from urllib.parse import urlsplit

    from .cli_sandbox import open_sandbox
    from .cluster_ports import is_loopback

    if sandbox not in ("docker", "local"):
        fail(f"--sandbox {sandbox!r}: a worker plays in docker or local (bubblewrap)")
    if "://" not in scheduler:
        fail(f"{scheduler!r} is not a scheduler address: tcp://HOST:PORT (or tls://HOST:PORT)")
    tls = tls_of(tls_ca_file, tls_cert, tls_key)
    if host is None:
        remote = urlsplit(scheduler).hostname or ""
        if not is_loopback(remote):
            fail(
                f"the scheduler {scheduler} is on another machine, which must reach this worker too: give --host"
                " with this machine's address there (and TLS)"
            )
        host = "127.0.0.1"
    exposure("worker", host, tls, insecure_network)
    with user_errors():
        checked = open_sandbox(sandbox)
        from .cluster import claim_version, connect

        client = connect(scheduler, tls)
        try:
            claim_version(client)
        finally:
            client.close()
    count = slots or os.cpu_count() or 1
    console.print(f"sandbox works here: {checked.isolation}; joining {scheduler} with {count} slots", soft_wrap=True)
    sys.stdout.flush()
    from .node import SANDBOX_ENV, SLOTS_ENV

    command = [sys.executable, "-m", "distributed.cli.dask_worker", scheduler]
    command += ["--nthreads", str(count), "--resources", f"slots={count}", "--host", host]
    command += [*http_flags(dashboard, 0), *tls_flags(tls)]
    if name is not None:
        command += ["--name", name]
    os.environ[SANDBOX_ENV] = sandbox
    os.environ[SLOTS_ENV] = str(count)
    os.execv(sys.executable, command)


def join(
    held: ExitStack, scheduler: str | None, tls: TLS | None, wait_workers: float, sandbox_name: str
) -> Cluster | None:
    """The cluster of ``--cluster``, checked before anything is written: its scheduler
    answers, it plays with this arena version, an arena worker has joined (waiting up
    to ``wait_workers`` s for one) and every worker runs this version. None: no cluster."""
    if scheduler is None:
        if tls is not None:
            fail("--tls-ca-file, --tls-cert and --tls-key are for --cluster")
        return None
    if sandbox_name != "auto":
        fail(
            f"--sandbox {sandbox_name}: on a cluster each worker plays in the sandbox it checked (arena worker --sandbox)"
        )
    from .cluster import Cluster, claim_version, connect

    client = connect(scheduler, tls)
    held.callback(client.close)
    claim_version(client)
    cluster = Cluster(client, notice=lambda line: err_console.print(f"[yellow]{line}[/]", markup=True, soft_wrap=True))
    workers = cluster.wait_for_workers(wait_workers, lambda line: err_console.print(line, markup=False))
    names = ", ".join(f"{w.name} ({w.slots})" for w in workers)
    console.print(
        f"cluster {scheduler}: {len(workers)} workers, {sum(w.slots for w in workers)} slots: {names}",
        markup=False,
        soft_wrap=True,
    )
    return cluster


def open_player(stored: list[StoredBot], sandbox_name: str, concurrency: int, cluster: Cluster | None) -> Player:
    """Where a tournament's matches will be played, ready: this machine's sandbox with
    every bot built, or the cluster with every bot sent."""
    if cluster is None:
        from .cli_common import warn_about
        from .cli_sandbox import open_sandbox, prepare
        from .tournament import OnThisMachine

        sandbox = open_sandbox(sandbox_name)
        loaded = [b.load() for b in stored]
        prepare(sandbox, loaded)
        warn_about(sorted({sandbox.isolation_for(b) for b in loaded}))
        return OnThisMachine(sandbox, concurrency)
    from .cluster import OnCluster

    cluster.send_bots(stored)
    return OnCluster(cluster, cluster.workers())
