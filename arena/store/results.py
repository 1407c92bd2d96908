"""What boards are computed from: each game's seats as text (bots, ranks, scores), the
fault totals, which boards have games, and the cache of computed boards (the store
knows no rating: a board is text to it, keyed by its scope and the newest game id)."""

from __future__ import annotations

from typing import Any

from arena.store.connection import Database
from arena.store.records import now


def _scope(
    game: str | None,
    variant: str | None,
    tournament: str | None,
    through_tournament: int | None = None,
    through_game: int | None = None,
) -> tuple[str, list[Any]]:
    clauses, args = ["1"], list[Any]()
    for column, value in (("g.game", game), ("g.variant", variant), ("t.name", tournament)):
        if value is not None:
            clauses.append(f"{column} = ?")
            args.append(value)
    if through_tournament is not None:
        clauses.append("g.tournament_id <= ?")
        args.append(through_tournament)
    if through_game is not None:
        clauses.append("g.id <= ?")
        args.append(through_game)
    return " AND ".join(clauses), args


def _join_tournaments(tournament: str | None) -> str:
    return "" if tournament is None else "JOIN tournaments t ON t.id = g.tournament_id"


class Results(Database):
    """Reading results for boards, and caching the boards computed from them."""

    def results(
        self,
        game: str | None,
        variant: str | None,
        tournament: str | None,
        through_tournament: int | None = None,
        through_game: int | None = None,
    ) -> list[tuple[Any, ...]]:
        """Per game: ``(tournament, match, deal, rounds, bots, ranks, scores)``, the last three
        as comma-separated text seat by seat: what ratings and totals are computed from.
        ``through_tournament``: only games of tournaments with at most this id (a rating
        as it stood after that tournament); ``through_game``: only games with at most this
        id (as it stood then, within a ladder that never ends)."""
        where, args = _scope(game, variant, tournament, through_tournament, through_game)
        return self.db.execute(
            f"""SELECT g.tournament_id, g.match_no, g.deal, g.rounds, g.seat_bots, g.seat_ranks, g.seat_scores
                FROM games g {_join_tournaments(tournament)} WHERE {where}""",
            args,
        ).fetchall()

    def fault_totals(
        self,
        game: str | None,
        variant: str | None,
        tournament: str | None,
        through_tournament: int | None = None,
        through_game: int | None = None,
    ) -> dict[int, tuple[int, ...]]:
        """Per bot with any fault: timeouts, crashes, malformed lines, illegal answers."""
        where, args = _scope(game, variant, tournament, through_tournament, through_game)
        rows = self.db.execute(
            f"""SELECT s.bot_id, sum(s.timeouts), sum(s.crashes), sum(s.malformed), sum(s.illegal)
                FROM game_seats s JOIN games g ON g.id = s.game_id {_join_tournaments(tournament)}
                WHERE s.timeouts + s.crashes + s.malformed + s.illegal > 0 AND {where} GROUP BY s.bot_id""",
            args,
        )
        return {row[0]: tuple(row[1:]) for row in rows}

    def played_boards(self, tournament: str | None = None) -> list[tuple[str, str]]:
        """The (game, variant) pairs with stored games (of one tournament): each is rated on its own."""
        return [(game, variant) for game, variant, _, _ in self.newest_of_boards(tournament=tournament)]

    def last_game_id(self, tournament_id: int | None = None) -> int:
        if tournament_id is None:
            return int(self.db.execute("SELECT coalesce(max(id), 0) FROM games").fetchone()[0])
        query = "SELECT coalesce(max(id), 0) FROM games WHERE tournament_id = ?"
        return int(self.db.execute(query, (tournament_id,)).fetchone()[0])

    def newest_in_scope(
        self, game: str | None, variant: str | None, tournament: str | None, through_tournament: int | None = None
    ) -> int:
        """The newest game id of a board's scope (0 for none): a board cached at or after
        it counts every game of its scope."""
        where, args = _scope(game, variant, tournament, through_tournament)
        query = f"SELECT coalesce(max(g.id), 0) FROM games g {_join_tournaments(tournament)} WHERE {where}"
        return int(self.db.execute(query, args).fetchone()[0])

    def cached_board(self, scope: str, last_game: int) -> str | None:
        row = self.db.execute(
            "SELECT board FROM ratings WHERE scope = ? AND last_game = ?", (scope, last_game)
        ).fetchone()
        return None if row is None else str(row[0])

    def cache_board(self, scope: str, last_game: int, board: str) -> None:
        if self.read_only:  # a reader keeps its own cache (the web server does)
            return
        with self.transaction():
            self.db.execute(
                "INSERT OR REPLACE INTO ratings (scope, last_game, computed, board) VALUES (?, ?, ?, ?)",
                (scope, last_game, now(), board),
            )

    def latest_cached_board(self, scope: str) -> tuple[int, str] | None:
        """The newest board cached for ``scope`` whatever game it was computed at, with
        that game's id: worth showing while a fresh one is computed."""
        row = self.db.execute("SELECT last_game, board FROM ratings WHERE scope = ?", (scope,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def board_counts(self) -> list[tuple[str, str, int]]:
        """``(game, variant, games stored)`` for every kind with stored games."""
        return [(game, variant, games) for game, variant, _, games in self.newest_of_boards()]

    def newest_of_boards(self, after: int = 0, tournament: str | None = None) -> list[tuple[str, str, int, int]]:
        """``(game, variant, newest game id, games)`` per kind, in order, of the games with
        an id above ``after`` (of one tournament): all of them (the kind index, once) or
        only those new since (by id). The one query that lists boards (``played_boards`` and
        ``board_counts`` read it)."""
        where, args = _scope(None, None, tournament)
        source = "games g"
        if after > 0:  # a range of ids: the table itself, not a scan of the whole kind index
            source, where, args = "games g NOT INDEXED", f"{where} AND g.id > ?", [*args, after]
        query = f"""SELECT g.game, g.variant, max(g.id), count(*) FROM {source} {_join_tournaments(tournament)}
                    WHERE {where} GROUP BY g.game, g.variant ORDER BY g.game, g.variant"""
        return [(r[0], r[1], r[2], r[3]) for r in self.db.execute(query, args)]
