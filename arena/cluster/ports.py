"""The ports a cluster opens: where ``arena scheduler`` and ``arena worker`` listen.

Whoever reaches a Dask port runs code as the user behind it (Dask runs the functions it
is sent; a worker's and a nanny's ports take them as well as the scheduler's), and
Dask's HTTP server (which every scheduler and worker starts, dashboard or not) hands out
the worker list and their logs over plain HTTP. So each listens on loopback unless told
otherwise; another address needs TLS, or an explicit ``--insecure-network``; and the HTTP
server is closed before it is used unless ``--dashboard`` asks for it (then on loopback).

This module is also a Dask preload (``--preload arena.cluster.ports``): Dask imports it
in the scheduler's, or the worker's, process and calls ``dask_setup`` before the server
takes its first request.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from typing import Any

PRELOAD = __name__
"""The preload that closes a scheduler's or worker's HTTP server."""
NO_HTTP_ROUTES = {"DASK_DISTRIBUTED__SCHEDULER__HTTP__ROUTES": "[]", "DASK_DISTRIBUTED__WORKER__HTTP__ROUTES": "[]"}
"""Dask's configuration (as its environment variables) for HTTP servers that serve
nothing, in the moment between their start and the preload that closes them."""


class InsecureAddress(Exception):
    """An address other machines reach, without TLS and without ``--insecure-network``."""


def is_loopback(host: str) -> bool:
    """``host`` is this machine's loopback (127.0.0.0/8, ::1 or localhost); an empty
    host, 0.0.0.0, :: and any other name are every interface or another machine's."""
    name = host.strip("[]")
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_exposure(what: str, host: str, tls: bool, insecure: bool) -> str | None:
    """Whether ``what`` (a scheduler, a worker) may listen on ``host``: None if safe
    (loopback, or TLS), the warning to print if the user took the risk (``insecure``);
    ``InsecureAddress`` otherwise."""
    if is_loopback(host) or tls:
        return None
    risk = f"anyone who reaches this {what} on {host or 'every interface'} runs any code here as user {_user()}"
    if not insecure:
        raise InsecureAddress(
            f"--host {host}: without TLS {risk}; give --tls-ca-file, --tls-cert and --tls-key"
            " (or --insecure-network to take that risk)"
        )
    return f"warning: --insecure-network: {risk}"


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def dask_setup(server: Any) -> None:
    """Close the HTTP server Dask started with ``server`` (a scheduler or a worker),
    before the server registers or serves: it was asked for no dashboard."""
    http = getattr(server, "http_server", None)
    if http is not None:
        http.stop()
    server.services.pop("dashboard", None)
    logging.getLogger("distributed").info("arena: HTTP server closed (no dashboard unless --dashboard)")
