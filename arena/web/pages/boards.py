"""The boards' pages: the home page (every board and tournament at a glance) and the
leaderboards (``/leaderboard``: every board, or one game's, one tournament's, anchored
on a bot's Elo), each with its JSON twin.
"""

from __future__ import annotations

import msgspec

from arena.boards.standings import Anchor, AnchorError, parse_anchor
from arena.web.errors import WebError
from arena.web.games_query import check_board, split_board
from arena.web.pages.site import Board, BoardId, Site, board_id
from arena.web.pages.tournaments import TournamentPages, TournamentSummary


class BoardCount(BoardId, kw_only=True):
    """A board and its stored games."""

    games: int


class IndexPage(msgspec.Struct, kw_only=True):
    """``/``: the boards, the tournaments and how much is stored."""

    kinds: list[BoardCount]
    tournaments: list[TournamentSummary]
    games: int
    bots: int
    last_game: int


class LeaderboardPage(msgspec.Struct, kw_only=True):
    """``/leaderboard``: the boards asked for, and what the page's filters offer."""

    game: str | None
    variant: str | None
    tournament: str | None
    anchor: str | None
    """``NAME[:VERSION]=ELO`` as asked."""
    kinds: list[BoardId]
    tournaments: list[str]
    boards: list[Board]
    ladders: list[Board] = []
    """Each ladder's board (of ``game``), a section of its own (``Ladders.boards``)."""


def parse_anchor_param(text: str | None) -> Anchor | None:
    """``anchor=NAME[:VERSION]=ELO``, or 400 naming the expected form."""
    if text is None:
        return None
    try:
        return parse_anchor(text)
    except ValueError as exc:
        raise WebError(400, f"anchor={exc}") from None


class BoardPages:
    """The home page and the leaderboards over a site."""

    def __init__(self, site: Site, tournaments: TournamentPages) -> None:
        self.site = site
        self.tournaments = tournaments

    def index(self) -> IndexPage:
        with self.site.db.store() as store:
            stamps = self.site.board_stamps(store)
            return IndexPage(
                kinds=[BoardCount(**board_id(g, v), games=stamps.counts[g, v]) for g, v in stamps.played_boards()],
                tournaments=self.tournaments.tournaments(store).tournaments,
                games=stamps.games,
                bots=len(store.list_bots()),
                last_game=stamps.last,
            )

    def leaderboard(
        self,
        game: str | None,
        variant: str | None,
        tournament: str | None,
        anchor_text: str | None = None,
        board: str | None = None,
    ) -> LeaderboardPage:
        """Every board (of ``game``; or the one of ``variant``, or of the key ``board``),
        each anchored on ``anchor_text`` (``NAME[:VERSION]=ELO``) when that bot is on it:
        400 when it is on none of them."""
        if board is not None:
            if game is not None or variant is not None:
                raise WebError(400, f"board={board} names the game and variant: leave game= and variant= out")
            game, variant = split_board(board)
        variant = check_board(game, variant)
        anchor = parse_anchor_param(anchor_text)
        site = self.site
        with site.db.store() as store:
            stamps = site.board_stamps(store)
            played = 0
            if tournament is not None:
                found = store.get_tournament(tournament)
                if found is None:
                    raise WebError(404, f"no tournament {tournament!r} (the tournaments page lists them)")
                played = site.games_of(store, found.id)

            def board_stamp(g: str, v: str) -> int:
                """A tournament's board changes with its games, the others with their game and variant's."""
                return played if tournament is not None else stamps.of((g, v))

            stored = site.played_boards(store, tournament, played)
            if game is not None and variant is not None:
                chosen = [(game, variant)]
            else:
                chosen = [(g, v) for g, v in stored if game is None or g == game]
            boards: list[Board] = []
            bots: set[str] = set()
            refused = ""
            for g, v in chosen:
                try:
                    boards.append(site.board(store, board_stamp(g, v), g, v, tournament, None, anchor))
                except AnchorError as exc:  # shown as it is, saying why
                    bots.update(exc.bots)
                    refused = refused or ("" if exc.missing else str(exc))
                    shown = site.board(store, board_stamp(g, v), g, v, tournament)
                    why = (
                        f"{anchor[0] if anchor else anchor_text} has no games on this board"
                        if exc.missing
                        else str(exc)
                    )
                    boards.append(msgspec.structs.replace(shown, unanchored=why))
            if anchor is not None and chosen and not any(b.anchor for b in boards):
                if refused and not bots:
                    raise WebError(400, f"anchor={anchor_text}: {refused}")
                where = f"the board {chosen[0][0]}/{chosen[0][1]}: its" if len(chosen) == 1 else "these boards: their"
                raise WebError(
                    400, f"anchor={anchor_text}: no bot {anchor[0]!r} on {where} bots are {', '.join(sorted(bots))}"
                )
            for shown_board in boards:
                stamp = board_stamp(shown_board.game, shown_board.variant)
                shown_board.head_to_head = site.head_to_head(store, stamp, shown_board)
            return LeaderboardPage(
                game=game,
                variant=variant,
                tournament=tournament,
                anchor=anchor_text,
                kinds=[BoardId(**board_id(g, v)) for g, v in stamps.played_boards()],
                tournaments=store.tournament_names(),
                boards=boards,
            )
