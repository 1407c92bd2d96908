"""Deleting what was stored: a tournament with its games, some games of a tournament (a
gauntlet's past its decision), a bot with its snapshot (and, when asked, its games).
Each in one transaction, refused while a live arena runs what it would delete; the
cached boards that counted deleted games are dropped with them."""

from __future__ import annotations

import json
from collections.abc import Callable

from arena.store.bot_history import BotHistory
from arena.store.bots import Bots
from arena.store.errors import StoreError
from arena.store.games import Games
from arena.store.snapshots import remove_snapshot
from arena.store.tournaments import Tournaments


class Removal(Bots, BotHistory, Games, Tournaments):
    """Deletions, which ask the other parts (who runs what, which games a bot played)."""

    def delete_tournament(self, tournament_id: int) -> int:
        """Delete a tournament with its games and their seats, in one transaction; its bots
        stay. Refused while an arena runs it. Returns how many games were deleted."""
        with self.transaction():
            row = self.db.execute("SELECT name FROM tournaments WHERE id = ?", (tournament_id,)).fetchone()
            if row is None:
                raise StoreError(f"no tournament {tournament_id} in {self.path}")
            self.check_not_running(tournament_id, row[0], "it cannot be deleted while it runs")
            games = self.count_games(tournament_id)
            self.db.execute(
                "DELETE FROM game_seats WHERE game_id IN (SELECT id FROM games WHERE tournament_id = ?)",
                (tournament_id,),
            )
            self.db.execute("DELETE FROM games WHERE tournament_id = ?", (tournament_id,))
            self.db.execute("DELETE FROM tournaments WHERE id = ?", (tournament_id,))
            self.db.execute("DELETE FROM ratings")  # cached boards counted those games
        return games

    def bot_tournaments_named(self, bot_id: int) -> list[tuple[int, str]]:
        """``(id, name)`` of the tournaments that name the bot (it is scheduled in them)
        or hold its games."""
        bot = self._bot_row("id = ?", (bot_id,))
        played = {tournament_id for tournament_id, _, _ in self.bot_tournaments(bot_id)}
        rows = self.db.execute("SELECT id, name, config FROM tournaments ORDER BY id").fetchall()
        return [
            (tournament_id, name)
            for tournament_id, name, config in rows
            if tournament_id in played or (bot is not None and bot.ref in (json.loads(config).get("bots") or []))
        ]

    def drop_games(self, tournament_id: int, drop: Callable[[int, int], bool]) -> int:
        """Delete the tournament's games for which ``drop(match_no, deal)`` holds, with
        their seats, in one transaction (a gauntlet's games past its decision); how many."""
        with self.transaction():
            rows = self.db.execute("SELECT id, match_no, deal FROM games WHERE tournament_id = ?", (tournament_id,))
            game_ids = [(game_id,) for game_id, match_no, deal in rows.fetchall() if drop(match_no, deal)]
            self.db.executemany("DELETE FROM game_seats WHERE game_id = ?", game_ids)
            self.db.executemany("DELETE FROM games WHERE id = ?", game_ids)
            if game_ids:
                self.db.execute("DELETE FROM ratings")  # cached boards counted those games
        return len(game_ids)

    def remove_bot(self, bot_id: int, with_games: bool = False) -> int:
        """Delete a stored bot and then its snapshot in ``<db>-bots/``. Refused while games
        reference it, unless ``with_games``: then those games and their seats go too, in
        the same transaction. Refused while an arena runs a tournament that plays it.
        Returns how many games were deleted."""
        with self.transaction():
            bot = self._bot_row("id = ?", (bot_id,))
            if bot is None:
                raise StoreError(f"no bot {bot_id} in {self.path} (`arena bot list` shows them)")
            tournaments = self.bot_tournaments_named(bot_id)
            for tournament_id, name in tournaments:
                self.check_not_running(tournament_id, name, f"it plays {bot.ref}")
            names = [name for _, name in tournaments]
            query = "SELECT DISTINCT game_id FROM game_seats WHERE bot_id = ?"
            game_ids = [row[0] for row in self.db.execute(query, (bot_id,))]
            if game_ids and not with_games:
                raise StoreError(
                    f"{bot.ref} played {len(game_ids)} stored game{'s' * (len(game_ids) != 1)} (tournament"
                    f"{'s' * (len(names) != 1)} {', '.join(names)}): its ratings rest on them; --with-games"
                    " removes those games too"
                )
            self.db.executemany("DELETE FROM game_seats WHERE game_id = ?", [(i,) for i in game_ids])
            self.db.executemany("DELETE FROM games WHERE id = ?", [(i,) for i in game_ids])
            self.db.execute("DELETE FROM bots WHERE id = ?", (bot_id,))
            if game_ids:
                self.db.execute("DELETE FROM ratings")  # cached boards counted those games
        remove_snapshot(bot.path, self.snapshots)
        return len(game_ids)
