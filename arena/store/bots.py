"""The stored bots: each an immutable snapshot under its name and version, found by
``NAME`` (its highest version) or ``NAME:VERSION``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.bots import BotError, content_hash, load_bot
from arena.store.connection import Database
from arena.store.errors import StoreError
from arena.store.records import StoredBot, now, version_key
from arena.store.snapshots import make_snapshot, snapshot_name


class Bots(Database):
    """Adding and finding bots."""

    def add_bot(self, folder: str | Path) -> StoredBot:
        """Store an immutable snapshot of a bot folder under its name and version.

        The same code again is a no-op, or repairs the entry when its snapshot is missing
        (or was stored somewhere else by an older arena); other code under a stored name
        and version is refused: a new version is a new entry, so every rating refers to
        exact code.
        """
        bot = load_bot(folder)
        digest = content_hash(bot.path)
        existing = self._bot_row("name = ? AND version = ?", (bot.name, bot.version))
        if existing is not None and existing.hash != digest:
            raise StoreError(
                f"{folder}: {bot.name} {bot.version} is already stored with other code"
                f" (hash {existing.hash[:12]}, this folder {digest[:12]}): raise `version` in bot.toml"
            )
        name = snapshot_name(bot.name, bot.version, digest)
        target = self.snapshots / name
        if existing is not None and Path(existing.path) == target and target.is_dir():
            return existing
        make_snapshot(bot.path, target, digest, folder)
        bot_id: int | None
        with self.transaction():
            existing = self._bot_row("name = ? AND version = ?", (bot.name, bot.version))  # another writer's, meanwhile
            if existing is not None and existing.hash != digest:
                raise StoreError(f"{folder}: {bot.name} {bot.version} was stored meanwhile with other code")
            if existing is not None and Path(existing.path) == target:
                bot_id = existing.id
            elif existing is not None:  # its snapshot was missing: made again, from the same code
                self.db.execute("UPDATE bots SET path = ? WHERE id = ?", (name, existing.id))
                bot_id = existing.id
            else:
                cursor = self.db.execute(
                    "INSERT INTO bots (name, version, hash, path, language, games, added) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        bot.name,
                        bot.version,
                        digest,
                        name,
                        bot.manifest.language,
                        json.dumps(bot.manifest.games),
                        now(),
                    ),
                )
                bot_id = cursor.lastrowid
        stored = self._bot_row("id = ?", (bot_id,))
        assert stored is not None
        return stored

    def get_bot(self, ref: str) -> StoredBot:
        """A stored bot by ``NAME`` (its highest version, by ``version_key``) or ``NAME:VERSION``."""
        name, _, version = ref.partition(":")
        if version:
            found = self._bot_row("name = ? AND version = ?", (name, version))
        else:
            versions = self._bot_rows("name = ? ORDER BY id", (name,))
            found = max(versions, key=lambda b: version_key(b.version), default=None)
        if found is None:
            raise StoreError(f"no bot {ref!r} in {self.path} (`arena bot list` shows them; a folder path adds one)")
        return found

    def resolve_bot(self, ref: str) -> StoredBot:
        """A folder (added on the fly) or a stored ``NAME[:VERSION]``."""
        if Path(ref).is_dir():
            return self.add_bot(ref)
        if "/" in ref or Path(ref).exists():
            raise BotError(f"{ref}: no such bot folder")
        return self.get_bot(ref)

    def list_bots(self) -> list[StoredBot]:
        return self._bot_rows("1 ORDER BY name, id", ())

    def bot_names(self) -> dict[int, str]:
        return {row[0]: f"{row[1]}:{row[2]}" for row in self.db.execute("SELECT id, name, version FROM bots")}

    def _bot_row(self, where: str, args: Sequence[Any]) -> StoredBot | None:
        rows = self._bot_rows(where, args)
        return rows[0] if rows else None

    def _bot_rows(self, where: str, args: Sequence[Any]) -> list[StoredBot]:
        """Rows as ``StoredBot`` with the snapshot's full path: stored relative to
        ``<db>-bots/`` (an older arena's path that migration could not map stays as it was)."""
        query = f"SELECT id, name, version, hash, path, language, games, added FROM bots WHERE {where}"
        return [
            StoredBot(r[0], r[1], r[2], r[3], str(self.snapshots / r[4]), r[5], json.loads(r[6]), r[7])
            for r in self.db.execute(query, args)
        ]
