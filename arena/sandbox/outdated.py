"""The arena's images no longer current, for `arena image prune`: found (``outdated``)
and removed when asked (``prune``); nothing else removes an image."""

from __future__ import annotations

import contextlib

import docker
import docker.errors

from arena.sandbox import images
from arena.sandbox.images import BASE_REPOSITORY, BOT_REPOSITORY, LABEL, ROOTFS_REPOSITORY, Progress


def outdated(client: docker.DockerClient, current: str, stored: set[str]) -> list[tuple[str, str]]:
    """The arena's image tags (of this prefix's repositories) that `arena image prune`
    removes, each with why it is outdated: bases other than ``current``, stacks of
    runtimes under none of the bases kept, and bot images built on another base. Kept
    whatever their base: the images of a bot whose content hash is in ``stored`` (the
    databases' bots), those a container uses (a running arena's, or a stopped one's),
    and the bases and runtimes under any kept image. Never the root file system."""
    used = {c.get("ImageID", "") for c in client.api.containers(all=True)}  # one call: no race with a removal
    listed = client.images.list(filters={"label": LABEL})
    kept_bases = {current}
    stale: list[tuple[str, str]] = []
    for image in listed:
        labels = image.labels or {}
        tags = [t for t in image.tags if t.startswith(BOT_REPOSITORY)]
        if labels.get(LABEL) != "bot" or not tags:
            continue
        if labels.get(f"{LABEL}.base") == current or image.id in used or labels.get(f"{LABEL}.content") in stored:
            kept_bases.add(labels.get(f"{LABEL}.base", ""))
        else:
            stale += [(t, f"a bot built on {labels.get(f'{LABEL}.base', 'another base')}") for t in tags]
    under: set[str] = set()
    root = images._root_image(client)
    for image in listed:
        tags = [t for t in image.tags if t.startswith(f"{BASE_REPOSITORY}:")]
        if (image.labels or {}).get(LABEL) == "base" and tags:
            if image.id in used or set(tags) & kept_bases:
                with contextlib.suppress(docker.errors.APIError):
                    under |= {layer["Id"] for layer in image.history()}
            else:
                stale += [(t, "a base of another SDK or other runtimes") for t in tags]
    if root is not None:
        with contextlib.suppress(docker.errors.APIError):
            under |= {layer["Id"] for layer in root.history()}
    for image in listed:
        tags = [t for t in image.tags if t.startswith(f"{ROOTFS_REPOSITORY}:")]
        if (image.labels or {}).get(LABEL) == "runtimes" and tags and image.id not in under | used:
            packages = (image.labels or {}).get(f"{LABEL}.packages", "")
            stale += [(t, f"runtimes {packages} no base uses") for t in tags]
    return sorted(stale)


def stale_note(client: docker.DockerClient, current: str) -> str | None:
    """What `arena image build` says once the base ``current`` is built: how many of the
    arena's images are no longer current (None: none is)."""
    stale = len(outdated(client, current, set()))
    if not stale:
        return None
    return (
        f"{stale} arena image{'s are' if stale != 1 else ' is'} no longer current (other bases, bots built on"
        " them): `arena image prune` lists them and removes them when asked"
    )


def prune(client: docker.DockerClient, tags: list[str], progress: Progress = print) -> int:
    """Remove ``tags`` (as ``outdated`` found them): one in use by a container meanwhile
    stays, said; returns how many went."""
    removed = 0
    for tag in tags:
        try:
            client.images.remove(tag)
            removed += 1
        except docker.errors.ImageNotFound:
            pass
        except docker.errors.APIError as exc:
            progress(f"kept {tag}: {images._short(exc)}")
    return removed
