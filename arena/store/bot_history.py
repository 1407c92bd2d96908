"""A bot's history, as its page shows it: the tournaments it played in, its games in
one, its opponents with the games it finished ahead, behind or tied, its faulty seats."""

from __future__ import annotations

from arena.store.connection import Database
from arena.store.schema import FAULTY_SEAT


class BotHistory(Database):
    """Reading what one bot played."""

    def bot_tournaments(self, bot_id: int) -> list[tuple[int, str, str]]:
        """``(tournament id, game, variant)`` of every tournament the bot played games in."""
        query = """SELECT DISTINCT g.tournament_id, g.game, g.variant FROM game_seats s JOIN games g ON g.id = s.game_id
                   WHERE s.bot_id = ? ORDER BY 1, 2, 3"""
        return [(r[0], r[1], r[2]) for r in self.db.execute(query, (bot_id,))]

    def bot_games_in(self, bot_id: int, tournament_id: int) -> list[tuple[int, str]]:
        """``(game id, started)`` of the bot's games in one tournament, oldest first: the
        moments of a rating over time within a ladder."""
        query = """SELECT DISTINCT g.id, g.started FROM game_seats s JOIN games g ON g.id = s.game_id
                   WHERE s.bot_id = ? AND g.tournament_id = ? ORDER BY g.id"""
        return [(r[0], r[1]) for r in self.db.execute(query, (bot_id, tournament_id))]

    def opponents(self, bot_id: int) -> list[tuple[str, int, int, int, int]]:
        """Per opponent: ``(name:version, games together, finished ahead, behind, tied)``."""
        query = """SELECT b.name || ':' || b.version, count(DISTINCT s.game_id), sum(s.rank < o.rank),
                          sum(s.rank > o.rank), sum(s.rank = o.rank)
                   FROM game_seats s JOIN game_seats o ON o.game_id = s.game_id AND o.bot_id != s.bot_id
                   JOIN bots b ON b.id = o.bot_id
                   WHERE s.bot_id = ? GROUP BY o.bot_id ORDER BY 2 DESC, 1"""
        return [(r[0], r[1], r[2], r[3], r[4]) for r in self.db.execute(query, (bot_id,))]

    def faulty_seats(self, bot_id: int, limit: int) -> list[tuple[int, int]]:
        """The newest ``(game id, seat)`` where the bot committed faults (their evidence is
        in the replay)."""
        query = f"""SELECT game_id, seat FROM game_seats
                   WHERE bot_id = ? AND {FAULTY_SEAT} ORDER BY game_id DESC LIMIT ?"""
        return [(r[0], r[1]) for r in self.db.execute(query, (bot_id, limit))]
