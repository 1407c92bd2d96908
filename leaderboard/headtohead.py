"""Head to head: how each bot did against each other bot in the games both sat in.

Two bots in one game are compared by their final ranks, as the bot page's opponents
table does: the row bot finished ahead (a win), behind (a loss) or on the same rank (a
tie). The score share counts a tie as half a win; the likelihood of superiority (LOS)
ignores ties: ``0.5 * (1 + erf((wins - losses) / sqrt(2 * (wins + losses))))``.

Pure math on plain arrays: no I/O, nothing from ``arena``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

Ints = NDArray[np.int64]

CHUNK = 20_000
"""Games whose seats are turned into a (games, bots) table at once (bounds the memory)."""


@dataclass(frozen=True)
class Tally:
    """Per ordered pair of bots, row ``i`` against column ``j`` (indices into ``bots``)."""

    bots: list[str]
    games: list[list[int]]
    """Games both sat in (the diagonal: games the bot played)."""
    wins: list[list[int]]
    """Comparisons in which ``i`` finished ahead of ``j``; ``losses`` is its transpose."""
    ties: list[list[int]]

    def losses(self, i: int, j: int) -> int:
        return self.wins[j][i]


def tally(bots: list[str], blocks: Iterable[tuple[Any, Any]]) -> Tally:
    """The wins, ties and games of every pair of ``bots`` over ``blocks`` of games.

    Each block holds games of one size K: (games, K) arrays of seat bots (indices into
    ``bots``) and ranks (1 = best, tied seats share one). A bot in two seats of a game
    is compared from each of them (as the opponents table counts) but its game counts once;
    it is never compared with itself."""
    n = len(bots)
    ahead = np.zeros(n * n, dtype=np.int64)
    level = np.zeros(n * n, dtype=np.int64)
    games = np.zeros((n, n), dtype=np.int64)
    for block_bots, block_ranks in blocks:
        seat_bot = np.asarray(block_bots, dtype=np.int64)
        seat_rank = np.asarray(block_ranks)
        seats = seat_bot.shape[1] if seat_bot.ndim == 2 else 0
        for a, b in zip(*np.triu_indices(seats, 1), strict=True):
            x, y = seat_bot[:, a], seat_bot[:, b]
            real = x != y
            forward, backward = x * n + y, y * n + x
            ahead += np.bincount(forward[real & (seat_rank[:, a] < seat_rank[:, b])], minlength=n * n)
            ahead += np.bincount(backward[real & (seat_rank[:, b] < seat_rank[:, a])], minlength=n * n)
            same = real & (seat_rank[:, a] == seat_rank[:, b])
            level += np.bincount(forward[same], minlength=n * n) + np.bincount(backward[same], minlength=n * n)
        for start in range(0, len(seat_bot), CHUNK):
            part = seat_bot[start : start + CHUNK]
            present = np.zeros((len(part), n))
            present[np.arange(len(part))[:, None], part] = 1.0
            games += np.rint(present.T @ present).astype(np.int64)  # exact: sums of 0/1 below 2**53
    return Tally(list(bots), games.tolist(), ahead.reshape(n, n).tolist(), level.reshape(n, n).tolist())


def score_share(wins: int, losses: int, ties: int) -> float | None:
    """Wins plus half the ties, of all comparisons; None when there are none."""
    total = wins + losses + ties
    return None if total == 0 else (wins + ties / 2) / total


def pair_los(wins: int, losses: int) -> float | None:
    """The chance the first bot is the stronger, from its wins and losses (ties ignored),
    by the normal approximation; None when there are neither."""
    decided = wins + losses
    if decided == 0:
        return None
    return 0.5 * (1 + math.erf((wins - losses) / math.sqrt(2 * decided)))


def matrix(found: Tally, order: list[str]) -> dict[str, Any]:
    """The tally as the web serves it: ``bots`` in ``order`` (a board's rank order; bots
    of the tally it leaves out come after it, by name), and a matrix per figure, row bot
    against column bot: ``games``, ``wins``, ``losses``, ``ties``, ``share`` (3 decimals)
    and ``los`` (4 decimals). The diagonal is null; so are a share and a LOS that cannot
    be said (no comparison; no win and no loss)."""
    index = {bot: i for i, bot in enumerate(found.bots)}
    chosen = [bot for bot in dict.fromkeys(order) if bot in index]
    chosen += sorted(set(found.bots) - set(chosen))
    rows = [index[bot] for bot in chosen]
    out: dict[str, Any] = {"bots": chosen}
    for name in ("games", "wins", "losses", "ties", "share", "los"):
        out[name] = [[None] * len(rows) for _ in rows]
    for r, i in enumerate(rows):
        for c, j in enumerate(rows):
            if i == j:
                continue
            wins, losses, ties = found.wins[i][j], found.losses(i, j), found.ties[i][j]
            share = score_share(wins, losses, ties)
            los = pair_los(wins, losses)
            out["games"][r][c] = found.games[i][j]
            out["wins"][r][c], out["losses"][r][c], out["ties"][r][c] = wins, losses, ties
            out["share"][r][c] = None if share is None else round(share, 3)
            out["los"][r][c] = None if los is None else round(los, 4)
    return out
