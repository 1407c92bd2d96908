"""Where bots run: Docker containers when an engine answers, bubblewrap otherwise.

Plain processes with no sandbox (``unsafe-local``) are only ever used when asked for
by name, never as a fallback.
"""

from __future__ import annotations

from typing import Literal

from arena.sandbox.base import ImageError, ResourceLimits, Sandbox, StartError

SandboxName = Literal["auto", "docker", "local", "unsafe-local"]


def sandbox_name(text: str) -> SandboxName | None:
    """``text`` as the name of a sandbox (``--sandbox``), or None when it names none."""
    match text:
        case "auto" | "docker" | "local" | "unsafe-local":
            return text
    return None


def clear_leftovers() -> None:
    """What dead arenas left (run folders, cgroups, containers), whatever the sandbox
    chosen now: every arena start does this, cheaply when there is nothing."""
    from arena.sandbox.containers import remove_stale_containers_if_any
    from arena.sandbox.leftovers import remove_leftovers

    remove_leftovers()
    remove_stale_containers_if_any()


def choose_sandbox(name: SandboxName, limits: ResourceLimits | None = None) -> tuple[Sandbox, str | None]:
    """The sandbox to use, and a note for the user when ``auto`` fell back to local.

    ``auto`` takes Docker when an engine answers and the base image's root file system is
    built (its thin SDK layer is made when bots are prepared, if the SDK changed), else
    bubblewrap; ``docker`` and ``local`` insist, with an error that names the fix.
    """
    from arena.sandbox.local import LocalSandbox

    clear_leftovers()
    if name == "unsafe-local":
        return LocalSandbox(limits, unsafe=True), None
    if name == "local":
        return LocalSandbox(limits), None
    from arena.sandbox import images
    from arena.sandbox.docker import DockerSandbox

    try:
        client = images.connect()
    except ImageError as exc:
        if name == "docker":
            raise StartError(str(exc)) from None
        return LocalSandbox(limits), "no Docker engine answers: bots run as local processes"
    if not images.rootfs_exists(client):
        client.close()
        if name == "docker":
            raise StartError(f"the base image ({images.ROOTFS_IMAGE}) is missing: run `arena image build`")
        return LocalSandbox(limits), (
            f"Docker answers but the base image ({images.ROOTFS_IMAGE}) is not built (`arena image build`):"
            " bots run as local processes"
        )
    return DockerSandbox(limits, client), None
