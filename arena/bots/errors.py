"""The error a bot folder is refused with, shared by the manifest's reader and the
folder's scan (``arena.bots.folder``), so neither imports the other for it."""

from __future__ import annotations


class BotError(ValueError):
    """A bot folder that cannot be used, with a message that says how to fix it."""
