"""The stored tournaments: created running, their status, a ladder's revealed epochs,
the workers that play them and what each node has played."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from typing import Any

from arena.deals import commitment
from arena.store.board_keys import PEOPLE, board_variant, setting_defaults
from arena.store.errors import StoreError
from arena.store.leases import Leases
from arena.store.records import PAUSED, NodeActivity, Tournament, now

TOURNAMENT_COLUMNS = (
    "id, name, game, variant, settings, seed, config, status, created, finished, secret, commitment,"
    " revealed_epochs, revealed_key"
)


class Tournaments(Leases):
    """Creating, reading and updating tournaments (what only the lease holder may
    change checks ``owner``)."""

    def create_tournament(
        self,
        name: str,
        game: str,
        variant: str,
        settings: dict[str, Any],
        seed: int,
        config: dict[str, Any],
        secret: str | None = None,
        committed: str | None = None,
    ) -> Tournament:
        """A new tournament, running. Its ``variant`` (and its games') is stored as its board,
        ``board_variant(game, settings)``, whatever variant name is passed: the settings
        decide which leaderboard its games join (marked ``,people`` for a config that holds
        ``"people"``: games with a person are kept off the bots' boards). ``secret``: what its deals derive from
        (``arena.deals``; None: from ``seed``, known to whoever chose it), ``committed``
        what is published of it (by default its ``commitment``)."""
        exists = StoreError(f"a tournament named {name!r} exists: --resume finishes it, or choose another --name")
        if self.get_tournament(name) is not None:
            raise exists
        if setting_defaults(game) is not None:
            variant = board_variant(game, settings)
        if PEOPLE in config:  # games with a person at the table: a board of their own
            variant += f",{PEOPLE}"
        try:
            with self.transaction():
                self.db.execute(
                    "INSERT INTO tournaments (name, game, variant, settings, seed, config, status, created, secret,"
                    " commitment) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                    (
                        name,
                        game,
                        variant,
                        json.dumps(settings),
                        seed,
                        json.dumps(config),
                        now(),
                        secret,
                        committed if committed is not None or secret is None else commitment(secret),
                    ),
                )
        except sqlite3.IntegrityError:  # another arena created it a moment ago
            raise exists from None
        found = self.get_tournament(name)
        assert found is not None
        return found

    def get_tournament(self, name: str) -> Tournament | None:
        found = self._tournaments("WHERE name = ?", (name,))
        return found[0] if found else None

    def list_tournaments(self) -> list[Tournament]:
        return self._tournaments("ORDER BY id", ())

    def _tournaments(self, where: str, args: tuple[Any, ...]) -> list[Tournament]:
        rows = self.db.execute(f"SELECT {TOURNAMENT_COLUMNS} FROM tournaments {where}", args)
        return [Tournament(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], json.loads(r[6]), *r[7:]) for r in rows]

    def reveal_epochs(self, tournament_id: int, epochs: int, key: str) -> None:
        """A ladder's first ``epochs`` epochs have been played: publish the last one's key."""
        with self.transaction():
            self.db.execute(
                "UPDATE tournaments SET revealed_epochs = ?, revealed_key = ? WHERE id = ? AND revealed_epochs < ?",
                (epochs, key, tournament_id, epochs),
            )

    def tournament_names(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM tournaments ORDER BY id")]

    def set_status(self, tournament_id: int, status: str) -> None:
        """Unless another arena holds the tournament's lease (this one lost it)."""
        finished = now() if status == "finished" else None
        with self.transaction():
            self.db.execute(
                "UPDATE tournaments SET status = ?, finished = ? WHERE id = ?"
                " AND (lease_owner IS NULL OR lease_owner = ?)",
                (status, finished, tournament_id, self.owner),
            )

    def set_paused(self, tournament_id: int, paused: bool) -> None:
        """Pause a ladder, or resume it, from any arena: its run reads the status as it
        goes (no lease needed); resumed, it reads as running, or interrupted when no run
        holds it."""
        with self.transaction():
            if paused:
                self.db.execute("UPDATE tournaments SET status = ? WHERE id = ?", (PAUSED, tournament_id))
            else:
                self.db.execute(
                    "UPDATE tournaments SET status = CASE WHEN lease_owner IS NULL THEN 'interrupted' ELSE 'running' END"
                    " WHERE id = ? AND status = ?",
                    (tournament_id, PAUSED),
                )

    def set_workers(self, tournament_id: int, workers: list[tuple[str, int]]) -> None:
        """The cluster's workers that play the tournament and their thinking slots (none:
        one machine)."""
        listed = [{"name": name, "slots": slots} for name, slots in workers]
        with self.transaction():
            self.db.execute("UPDATE tournaments SET workers = ? WHERE id = ?", (json.dumps(listed), tournament_id))

    def node_activity(self, tournament_id: int, window_s: float = 60.0) -> list[NodeActivity]:
        """Every node that stored a game of the tournament, and every recorded worker that
        has none yet, by name: its slots, its games, and its games per second over the
        last ``window_s`` seconds (by when each game started)."""
        row = self.db.execute("SELECT workers FROM tournaments WHERE id = ?", (tournament_id,)).fetchone()
        try:
            listed = json.loads(row[0]) if row is not None else []
        except (TypeError, ValueError):
            listed = []
        slots: dict[str, int] = {}
        for worker in listed if isinstance(listed, list) else []:
            if (
                isinstance(worker, dict)
                and isinstance(worker.get("name"), str)
                and isinstance(worker.get("slots"), int)
            ):
                slots[worker["name"]] = worker["slots"]
        since = (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=window_s)).isoformat(timespec="seconds")
        counts = {
            r[0]: (int(r[1]), int(r[2] or 0))
            for r in self.db.execute(
                "SELECT node, count(*), sum(started >= ?) FROM games"
                " WHERE tournament_id = ? AND node != '' GROUP BY node",
                (since, tournament_id),
            )
        }
        shown = {name: counts.get(name, (0, 0)) for name in sorted(set(counts) | set(slots))}
        return [
            NodeActivity(name, slots.get(name), games, recent / window_s) for name, (games, recent) in shown.items()
        ]

    def grow_tournament(self, tournament_id: int, config: dict[str, Any]) -> None:
        """Store a tournament's enlarged config (bots added to its league) and mark it
        running again; only by the arena that holds its lease."""
        with self.transaction():
            cursor = self.db.execute(
                "UPDATE tournaments SET config = ?, status = 'running', finished = NULL"
                " WHERE id = ? AND lease_owner = ?",
                (json.dumps(config), tournament_id, self.owner),
            )
            if cursor.rowcount != 1:
                raise StoreError(f"{self.path}: tournament {tournament_id} is not held by this arena: run it again")
