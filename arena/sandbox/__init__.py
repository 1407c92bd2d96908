"""Where bots run: Docker containers when an engine answers, local processes otherwise."""

from __future__ import annotations

from typing import Literal

from .base import ResourceLimits, Sandbox, StartError
from .images import ImageError

SandboxName = Literal["auto", "docker", "local"]


def choose_sandbox(name: SandboxName, limits: ResourceLimits | None = None) -> tuple[Sandbox, str | None]:
    """The sandbox to use, and a note for the user when ``auto`` fell back to local.

    ``auto`` takes Docker when an engine answers and the base image's root file system is
    built (its thin SDK layer is made when bots are prepared, if the SDK changed);
    ``docker`` insists, with an error that names the fix.
    """
    from .local import LocalSandbox

    if name == "local":
        return LocalSandbox(limits), None
    from . import images
    from .docker import DockerSandbox

    try:
        client = images.connect()
    except ImageError as exc:
        if name == "docker":
            raise StartError(str(exc)) from None
        return LocalSandbox(limits), "no Docker engine answers: bots run as local processes"
    if not images.rootfs_exists(client):
        if name == "docker":
            raise StartError(f"the base image ({images.ROOTFS_IMAGE}) is missing: run `arena image build`")
        return LocalSandbox(limits), (
            f"Docker answers but the base image ({images.ROOTFS_IMAGE}) is not built (`arena image build`):"
            " bots run as local processes"
        )
    return DockerSandbox(limits, client), None
