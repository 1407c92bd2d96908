"""What the store refuses, as exceptions the CLI shows as one line (``arena.cli.common.USER_ERRORS``)."""

from __future__ import annotations


class StoreError(ValueError):
    """A request the store refuses, with a message that says why and what to do."""


class ReplayPruned(StoreError):
    """A stored game whose replay its ladder pruned (its result is kept)."""
