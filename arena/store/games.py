"""The stored games: each committed with its seats and its compressed replay, all or
nothing, then read back as ``StoredGame`` pages (by tournament, bot, opponent, board,
faults, time) and counted the same way."""

from __future__ import annotations

import zlib
from typing import Any

import msgspec

from arena.store.errors import ReplayPruned, StoreError
from arena.store.leases import LEASE_TIMEOUT, Leases
from arena.store.records import FAULT_KINDS, FinishedGame, GameFilter, StoredGame, StoredSeat
from arena.store.schema import FAULTY_SEAT


def _merged(where: GameFilter | None, tournament_id: int | None, bot_id: int | None) -> GameFilter:
    """The filter with the tournament and bot given beside it (the older way to ask)."""
    match = where or GameFilter()
    if tournament_id is not None:
        match = msgspec.structs.replace(match, tournament_id=tournament_id)
    if bot_id is not None:
        match = msgspec.structs.replace(match, bot_id=bot_id)
    return match


def _faulty(match: GameFilter) -> str:
    return f" AND {FAULTY_SEAT}" if match.faulty else ""


class Games(Leases):
    """Storing games (refused once another arena took over the tournament's lease) and
    reading them."""

    def save_game(self, record: FinishedGame) -> int:
        """Commit one finished game, its seats and its replay, all or nothing; refused
        when another arena has taken over the tournament this store held."""
        with self.transaction():
            if record.tournament_id in self._leases:
                row = self.db.execute(
                    "SELECT lease_owner FROM tournaments WHERE id = ?", (record.tournament_id,)
                ).fetchone()
                if row is None or row[0] != self.owner:
                    self._leases.discard(record.tournament_id)
                    raise StoreError(
                        f"{self.path}: another arena has taken over this tournament (this one was silent for"
                        f" {LEASE_TIMEOUT:.0f} s): this run stops; the games it stored are kept"
                    )
            cursor = self.db.execute(
                "INSERT INTO games (tournament_id, match_no, game_no, deal, seed, game, variant, players, rounds,"
                " wall_ms, started, replay, seat_bots, seat_ranks, seat_scores, node)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.tournament_id,
                    record.match_no,
                    record.game_no,
                    record.deal,
                    record.seed,
                    record.game,
                    record.variant,
                    len(record.seats),
                    record.rounds,
                    record.wall_ms,
                    record.started,
                    zlib.compress(record.replay, 6),
                    ",".join(str(seat.bot_id) for seat in record.seats),
                    ",".join(str(seat.rank) for seat in record.seats),
                    ",".join(str(seat.score) for seat in record.seats),
                    record.node,
                ),
            )
            game_id = cursor.lastrowid
            assert game_id is not None
            self.db.executemany(
                "INSERT INTO game_seats (game_id, seat, bot_id, rank, score, status, timeouts, crashes, malformed,"
                " illegal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        game_id,
                        seat,
                        s.bot_id,
                        s.rank,
                        s.score,
                        s.status,
                        *(s.faults.get(k, 0) for k in FAULT_KINDS),
                    )
                    for seat, s in enumerate(record.seats)
                ],
            )
        return game_id

    def done_games(self, tournament_id: int) -> set[tuple[int, int]]:
        query = "SELECT match_no, game_no FROM games WHERE tournament_id = ?"
        return {(m, g) for m, g in self.db.execute(query, (tournament_id,))}

    def seatings(self, tournament_id: int) -> dict[tuple[int, int], tuple[int, list[int]]]:
        """``(match_no, game_no)`` of each stored game of the tournament, to its deal seed
        and the bot id in each seat: what a resume checks its schedule against."""
        query = "SELECT match_no, game_no, seed, seat_bots FROM games WHERE tournament_id = ?"
        return {
            (m, g): (seed, [int(b) for b in bots.split(",") if b])
            for m, g, seed, bots in self.db.execute(query, (tournament_id,))
        }

    def count_games(self, tournament_id: int | None = None) -> int:
        """Every stored game, or a tournament's (``count_games_of``, which counts any filter)."""
        return self.count_games_of(tournament_id)

    def replay(self, game_id: int) -> bytes:
        row = self.db.execute("SELECT replay FROM games WHERE id = ?", (game_id,)).fetchone()
        if row is None:
            raise StoreError(f"no game {game_id} in {self.path} (`arena games` lists them)")
        if not row[0]:
            raise ReplayPruned(
                f"game {game_id}'s replay was pruned (its ladder keeps only its newest games' replays:"
                " `arena ladder run --keep-replays`); its result and ratings are stored"
            )
        return zlib.decompress(row[0])

    def prune_replays(self, tournament_id: int, keep: int) -> int:
        """Empty the replays of the tournament's games older than its newest ``keep``
        (their results, seats and faults stay, and so every rating); how many went. A
        pruned replay reads as ``ReplayPruned``."""
        with self.transaction():
            newest = self.db.execute(
                "SELECT id FROM games WHERE tournament_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?",
                (tournament_id, max(0, keep)),
            ).fetchone()
            if newest is None:
                return 0
            done = self.db.execute(
                "UPDATE games SET replay = X'' WHERE tournament_id = ? AND id <= ? AND length(replay) > 0",
                (tournament_id, newest[0]),
            )
            return int(done.rowcount)

    def game(self, game_id: int) -> StoredGame | None:
        """One stored game with its seats; None when there is no such game."""
        found = self._games("g.id = ?", [game_id], False, 1, 0)
        return found[0] if found else None

    def game_id_of(self, tournament_id: int, match_no: int, game_no: int) -> int | None:
        """The id of game ``game_no`` of match ``match_no`` of a tournament, once stored."""
        row = self.db.execute(
            "SELECT id FROM games WHERE tournament_id = ? AND match_no = ? AND game_no = ?",
            (tournament_id, match_no, game_no),
        ).fetchone()
        return None if row is None else int(row[0])

    def deal_games(self, game_id: int, limit: int = 64) -> list[StoredGame]:
        """The games of the game's duplicate group (its own included, in the order they
        were stored): the games of its tournament, match and deal. Empty when there is no
        such game."""
        where = """g.id IN (SELECT o.id FROM games o JOIN games d
                       ON o.tournament_id = d.tournament_id AND o.match_no = d.match_no AND o.deal = d.deal
                       WHERE d.id = ?)"""
        return self._games(where, [game_id], False, limit, 0)

    def find_games(
        self,
        tournament_id: int | None = None,
        bot_id: int | None = None,
        limit: int = 50,
        offset: int = 0,
        newest_first: bool = False,
        where: GameFilter | None = None,
    ) -> list[StoredGame]:
        """A page of stored games with their seats, of one tournament and/or one bot, or
        as ``where`` narrows them: what ``arena games`` and the web list."""
        match = _merged(where, tournament_id, bot_id)
        if match.bot_id is not None and match == GameFilter(bot_id=match.bot_id, faulty=match.faulty):
            # A bot's seats in the order they were stored, which is the games' order: the
            # index on bot_id (or on its faulty seats) walks them from either end and
            # stops at the page.
            order = "DESC" if newest_first else "ASC"
            query = f"SELECT game_id FROM game_seats WHERE bot_id = ?{_faulty(match)} ORDER BY rowid {order} LIMIT ? OFFSET ?"
            ids = [row[0] for row in self.db.execute(query, (match.bot_id, limit, offset))]
            if not ids:
                return []
            found = f"g.id IN ({', '.join('?' * len(ids))})"
            return self._games(found, ids, newest_first, limit, 0)
        # `+` keeps SQLite from the (tournament, match, game) index: walking the games by
        # id and keeping the tournament's stops at the page instead of sorting them all.
        clauses, args = self._games_where(match, "+g.tournament_id")
        return self._games(clauses, args, newest_first, limit, offset)

    def count_games_of(
        self, tournament_id: int | None = None, bot_id: int | None = None, where: GameFilter | None = None
    ) -> int:
        match = _merged(where, tournament_id, bot_id)
        if match.bot_id is not None and match == GameFilter(bot_id=match.bot_id, faulty=match.faulty):
            query = f"SELECT count(*) FROM game_seats WHERE bot_id = ?{_faulty(match)}"
            return int(self.db.execute(query, (match.bot_id,)).fetchone()[0])
        clauses, args = self._games_where(match)
        return int(self.db.execute(f"SELECT count(*) FROM games g WHERE {clauses}", args).fetchone()[0])

    @staticmethod
    def _games_where(match: GameFilter, tournament_column: str = "g.tournament_id") -> tuple[str, list[Any]]:
        clauses, args = ["1"], list[Any]()
        if match.tournament_id is not None:
            clauses.append(f"{tournament_column} = ?")
            args.append(match.tournament_id)
        if match.game is not None:
            clauses.append("g.game = ?")
            args.append(match.game)
        if match.variant is not None:
            clauses.append("g.variant = ?")
            args.append(match.variant)
        if match.started_from is not None:
            clauses.append("g.started >= ?")
            args.append(match.started_from)
        if match.started_before is not None:
            clauses.append("g.started < ?")
            args.append(match.started_before)
        if match.bot_id is not None:
            clauses.append(f"g.id IN (SELECT game_id FROM game_seats WHERE bot_id = ?{_faulty(match)})")
            args.append(match.bot_id)
        elif match.faulty:  # the partial index of faulty seats holds them all
            clauses.append(f"g.id IN (SELECT game_id FROM game_seats WHERE {FAULTY_SEAT})")
        if match.opponent_id is not None:
            clauses.append("g.id IN (SELECT game_id FROM game_seats WHERE bot_id = ?)")
            args.append(match.opponent_id)
        return " AND ".join(clauses), args

    def _games(self, where: str, args: list[Any], newest_first: bool, limit: int, offset: int) -> list[StoredGame]:
        order = "DESC" if newest_first else "ASC"
        rows = self.db.execute(
            f"""WITH page AS (
                    SELECT g.id, t.name, g.match_no, g.game_no, g.deal, g.seed, g.game, g.variant, g.rounds,
                           g.wall_ms, g.started, g.node
                    FROM games g JOIN tournaments t ON t.id = g.tournament_id
                    WHERE {where} ORDER BY g.id {order} LIMIT ? OFFSET ?)
                SELECT page.*, s.seat, b.name || ':' || b.version, s.rank, s.score, s.status,
                       s.timeouts, s.crashes, s.malformed, s.illegal
                FROM page JOIN game_seats s ON s.game_id = page.id JOIN bots b ON b.id = s.bot_id
                ORDER BY page.id {order}, s.seat""",
            (*args, limit, offset),
        )
        games: list[StoredGame] = []
        for r in rows:
            if not games or games[-1].id != r[0]:
                games.append(StoredGame(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], [], r[11]))
            faults = {kind: count for kind, count in zip(FAULT_KINDS, r[17:21], strict=True) if count}
            games[-1].seats.append(StoredSeat(r[12], r[13], r[14], r[15], r[16], faults))
        return games

    def games_per_tournament(self, after: int = 0) -> dict[int, int]:
        """Games per tournament (of the games with an id above ``after``: a range of ids,
        so a reader keeping the counts adds only the games new since)."""
        if after > 0:
            query = "SELECT tournament_id, count(*) FROM games NOT INDEXED WHERE id > ? GROUP BY tournament_id"
            return {row[0]: row[1] for row in self.db.execute(query, (after,))}
        query = "SELECT tournament_id, count(*) FROM games GROUP BY tournament_id"
        return {row[0]: row[1] for row in self.db.execute(query)}

    def bot_game_counts(self, after: int = 0) -> dict[int, int]:
        """Games played per bot: its seats (a tournament never seats a bot twice); of the
        games with an id above ``after`` only, as ``games_per_tournament``."""
        if after > 0:
            # `+`: the seats' primary key (game_id, seat) walks the range, not the bot index all of them
            query = "SELECT bot_id, count(*) FROM game_seats WHERE game_id > ? GROUP BY +bot_id"
            return {row[0]: row[1] for row in self.db.execute(query, (after,))}
        query = "SELECT bot_id, count(*) FROM game_seats GROUP BY bot_id"
        return {row[0]: row[1] for row in self.db.execute(query)}

    def tournament_seat_counts(self, tournament_id: int) -> dict[str, int]:
        """Games each bot (``name:version``) played in the tournament."""
        query = """SELECT b.name || ':' || b.version, count(*) FROM game_seats s JOIN games g ON g.id = s.game_id
                   JOIN bots b ON b.id = s.bot_id WHERE g.tournament_id = ? GROUP BY s.bot_id ORDER BY min(b.id)"""
        return {row[0]: row[1] for row in self.db.execute(query, (tournament_id,))}
