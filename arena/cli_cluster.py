"""``arena worker``: a machine joins a Dask distributed cluster to play matches.

The cluster is Dask's own (``dask scheduler`` on one machine, workers on the others):
the arena writes no scheduler, worker protocol or retry loop. What the arena adds is the
check a worker must pass before it joins: its sandbox works here (the Docker engine and
the base image, or bubblewrap), so a machine that cannot play is never handed a match.
The worker then becomes Dask's worker process (``distributed.cli.dask_worker``, with its
nanny, which restarts it if it dies), declaring its thinking slots as the resource
``slots``, and with ``ARENA_WORKER_SANDBOX`` naming the sandbox it checked.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from .cli_common import console, fail, user_errors

SANDBOX_ENV = "ARENA_WORKER_SANDBOX"
"""The sandbox a worker checked at its start, for the matches it will play."""


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
) -> None:
    """Join a Dask cluster as a machine that plays matches.

    Refuses to join, with one line, when its sandbox does not work here.
    """
    from .cli_sandbox import open_sandbox

    if sandbox not in ("docker", "local"):
        fail(f"--sandbox {sandbox!r}: a worker plays in docker or local (bubblewrap)")
    if "://" not in scheduler:
        fail(f"{scheduler!r} is not a scheduler address: tcp://HOST:PORT (or tls://HOST:PORT)")
    with user_errors():
        checked = open_sandbox(sandbox)
    count = slots or os.cpu_count() or 1
    console.print(f"sandbox works here: {checked.isolation}; joining {scheduler} with {count} slots", soft_wrap=True)
    sys.stdout.flush()
    command = [sys.executable, "-m", "distributed.cli.dask_worker", scheduler]
    command += ["--nthreads", str(count), "--resources", f"slots={count}", "--no-dashboard"]
    if name is not None:
        command += ["--name", name]
    os.environ[SANDBOX_ENV] = sandbox
    os.execv(sys.executable, command)
