"""Elo ratings with honest 95% intervals from games of two or more seats.

A game of K players counts as the K(K-1)/2 pairwise results of its final standing (a
shared rank is a draw: half a win each way). All games are fitted at once by maximum
likelihood under the Bradley-Terry model (the model behind BayesElo and Ordo), with a
tiny prior so that a bot that won everything still gets a finite rating, and scaled to
Elo points: the mean is 1500, or a named anchor bot is 1500.

The pairwise results of one game are not independent, nor are the games of one
duplicate deal (every bot held every hand of it). So the intervals come from a
percentile bootstrap over deal groups: resample whole groups with replacement and refit.
docs/ratings.md explains the choices and gives the measured figures.

Pure math on plain data: no I/O, nothing from ``arena``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]

MEAN_ELO = 1500.0
"""The Elo of the average bot, or of the anchor bot."""
ELO_PER_NAT = 400 / math.log(10)
"""Elo points per unit of log-strength: P(i beats j) = 1 / (1 + 10 ** ((elo_j - elo_i) / 400))."""
PRIOR_DRAWS = 1.0
"""Virtual draws of every bot against a virtual opponent at the centre of the scale."""
LEVEL = 0.95
"""Coverage of the intervals."""
NEWTON_STEPS = 100
NEWTON_TOLERANCE = 1e-10
"""Stop when no log-strength moves more than this (about 2e-8 Elo)."""
BOOTSTRAP_CELLS = 4_000_000
"""How many (draw, group) resampling counts to hold in memory at once."""


@dataclass(frozen=True)
class GameResult:
    """The final standing of one game.

    ``group`` names the deal group: the K games of one duplicate deal share it, a game
    on a deal of its own is a group of its own. ``ranks`` are 1-based, per seat, lower
    is better, and tied seats share a rank.
    """

    group: str | int
    players: Sequence[str]
    """Bot key per seat; a bot in two seats of one game does not play itself."""
    ranks: Sequence[int]


@dataclass(frozen=True)
class Rating:
    bot: str
    elo: float
    low: float
    """The 95% interval; NaN without bootstrap draws."""
    high: float
    games: int
    """Games in which the bot held at least one seat."""


@dataclass(frozen=True)
class Table:
    """The results, summed per deal group: everything the fits need."""

    bots: list[str]
    games: NDArray[np.int64]
    group_sums: NDArray[np.float32]
    """(groups, bots + pairs): each bot's pairwise wins in the group, then the number of
    pairwise results of each pair of bots (pairs in ``np.triu_indices`` order)."""
    totals: Floats
    """``group_sums`` summed over all groups."""


def rate(
    results: Iterable[GameResult] | Table, anchor: str | None = None, bootstrap: int = 200, seed: int = 0
) -> list[Rating]:
    """Elo ratings of every bot in ``results``, best first.

    The Elo is the maximum-likelihood fit of all games; ``low`` and ``high`` are the
    2.5% and 97.5% percentiles of ``bootstrap`` refits on deal groups drawn with
    replacement (``seed`` fixes the draws). With ``anchor`` that bot is 1500 in every
    fit, so its interval is [1500, 1500] and the others' are relative to it.
    """
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be at least 0, not {bootstrap}")
    table = results if isinstance(results, Table) else _tabulate(results)
    if not table.bots:
        return []
    anchor_index = None
    if anchor is not None:
        if anchor not in table.bots:
            raise ValueError(f"anchor {anchor!r} is not among the rated bots {table.bots}")
        anchor_index = table.bots.index(anchor)
    elo = _to_elo(_fit_totals(table.totals[None, :], len(table.bots)), anchor_index)[0]
    if bootstrap:
        samples = _to_elo(_bootstrap(table, bootstrap, seed), anchor_index)
        tail = 100 * (1 - LEVEL) / 2
        low, high = np.percentile(samples, [tail, 100 - tail], axis=0)
    else:
        low = high = np.full(len(table.bots), math.nan)
    ratings = [
        Rating(bot, float(elo[i]), float(low[i]), float(high[i]), int(table.games[i]))
        for i, bot in enumerate(table.bots)
    ]
    return sorted(ratings, key=lambda rating: (-rating.elo, rating.bot))


def likelihood_of_superiority(
    results: Iterable[GameResult] | Table, bootstrap: int = 200, seed: int = 0
) -> tuple[list[str], list[list[float]]]:
    """The bots (best first, as ``rate`` orders them) and the matrix ``los[i][j]``.

    ``los[i][j]`` is the fraction of bootstrap fits in which bot i is rated above bot j,
    an exact tie counting half; so ``los[i][j] + los[j][i] == 1`` and the diagonal is
    0.5. With the same ``bootstrap`` and ``seed`` the fits are those behind ``rate``'s
    intervals.
    """
    if bootstrap < 1:
        raise ValueError(f"the likelihood of superiority needs bootstrap draws, not {bootstrap}")
    table = results if isinstance(results, Table) else _tabulate(results)
    if not table.bots:
        return [], []
    theta = _fit_totals(table.totals[None, :], len(table.bots))[0]
    order = sorted(range(len(table.bots)), key=lambda i: (-theta[i], table.bots[i]))
    samples = _bootstrap(table, bootstrap, seed)[:, order]
    above = samples[:, :, None] - samples[:, None, :]
    los = (above > 0).mean(axis=0) + 0.5 * (above == 0).mean(axis=0)
    return [table.bots[i] for i in order], los.tolist()


def _tabulate(results: Iterable[GameResult]) -> Table:
    """Sum each deal group's pairwise results into one row of a (groups, bots + pairs) table."""
    group_index: dict[str | int, int] = {}
    by_seats: dict[int, tuple[list[int], list[str], list[int]]] = {}
    """Games by number of seats: group numbers, then players and ranks seat by seat."""
    for number, result in enumerate(results):
        players, ranks = result.players, result.ranks
        seats = len(players)
        if len(ranks) != seats or seats < 2:
            raise ValueError(
                f"game {number} (group {result.group!r}): needs a rank for each of at least 2 players,"
                f" got players {list(players)} and ranks {list(ranks)}"
            )
        bucket = by_seats.get(seats)
        if bucket is None:
            bucket = by_seats[seats] = ([], [], [])
        bucket[0].append(group_index.setdefault(result.group, len(group_index)))
        bucket[1].extend(players)
        bucket[2].extend(ranks)

    if not by_seats:
        return Table([], np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32), np.zeros(0))
    bots = sorted(set().union(*(players for _, players, _ in by_seats.values())))
    bot_index = {bot: i for i, bot in enumerate(bots)}
    blocks = []
    for seats, (groups, flat_players, flat_ranks) in by_seats.items():
        seat_rank = np.fromiter(flat_ranks, np.float64, len(flat_ranks)).reshape(-1, seats)
        if seat_rank.min() < 1:
            game = int(np.flatnonzero(seat_rank.min(axis=1) < 1)[0])
            group = list(group_index)[groups[game]]
            raise ValueError(
                f"game in group {group!r} with players {flat_players[game * seats : (game + 1) * seats]}:"
                f" ranks start at 1, got {flat_ranks[game * seats : (game + 1) * seats]}"
            )
        seat_bot = np.fromiter(map(bot_index.__getitem__, flat_players), np.int64, len(flat_players))
        blocks.append((np.array(groups, dtype=np.int64), seat_bot.reshape(-1, seats), seat_rank))
    return table_from_seats(bots, len(group_index), blocks)


def table_from_seats(
    bots: list[str], n_groups: int, blocks: list[tuple[NDArray[np.int64], NDArray[np.int64], Floats]]
) -> Table:
    """The tabulated input of ``rate`` straight from arrays, for callers holding many games.

    Each block holds games of one size K: their group numbers (0 to ``n_groups`` - 1),
    and (games, K) arrays of seat bots (indices into ``bots``) and ranks (1 = best).
    """
    n_bots = len(bots)
    width = n_bots + n_bots * (n_bots - 1) // 2
    # The column of each pair of bots; a bot paired with itself gets any column and weight 0.
    pair_column = np.full((n_bots, n_bots), n_bots)
    upper_i, upper_j = np.triu_indices(n_bots, 1)
    pair_column[upper_i, upper_j] = pair_column[upper_j, upper_i] = n_bots + np.arange(len(upper_i))
    cells: list[NDArray[np.int64]] = []
    weights: list[Floats] = []
    games = np.zeros(n_bots, dtype=np.int64)
    for groups, block_bots, block_ranks in blocks:
        seats = block_bots.shape[1]
        seat_rank = np.asarray(block_ranks, dtype=np.float64).T.copy()  # seat by seat: contiguous columns
        seat_bot = np.asarray(block_bots, dtype=np.int64).T.copy()
        row = np.asarray(groups, dtype=np.int64) * width
        seat_wins = np.zeros(seat_bot.shape)
        first_seat = np.ones(seat_bot.shape, dtype=bool)
        for a, b in zip(*np.triu_indices(seats, 1), strict=True):
            real = seat_bot[a] != seat_bot[b]
            first_seat[b] &= real
            score = ((seat_rank[a] < seat_rank[b]) + 0.5 * (seat_rank[a] == seat_rank[b])) * real
            seat_wins[a] += score
            seat_wins[b] += real - score
            cells.append(row + pair_column[seat_bot[a], seat_bot[b]])
            weights.append(real.astype(np.float64))
        cells.append((row + seat_bot).ravel())
        weights.append(seat_wins.ravel())
        games += np.bincount(seat_bot[first_seat], minlength=n_bots)

    flat_sums = np.bincount(np.concatenate(cells), np.concatenate(weights), minlength=n_groups * width)
    group_sums = np.asarray(flat_sums, dtype=np.float64).reshape(n_groups, width)
    return Table(bots, games, group_sums.astype(np.float32), group_sums.sum(axis=0))


def _bootstrap(table: Table, draws: int, seed: int) -> Floats:
    """Log-strengths (draws, bots) fitted to deal groups resampled with replacement."""
    rng = np.random.default_rng(seed)
    n_groups = len(table.group_sums)
    if n_groups == 0:
        return np.zeros((draws, len(table.bots)))
    chunk = max(1, BOOTSTRAP_CELLS // n_groups)
    totals = []
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        picks = rng.integers(0, n_groups, size=(size, n_groups))
        picks += np.arange(size)[:, None] * n_groups
        counts = np.bincount(picks.ravel(), minlength=size * n_groups).reshape(size, n_groups)
        totals.append(counts.astype(np.float32) @ table.group_sums)
    return _fit_totals(np.concatenate(totals).astype(np.float64), len(table.bots))


def _fit_totals(totals: Floats, n_bots: int) -> Floats:
    """Maximum-likelihood log-strengths, one fit per row of summed results (rows, bots + pairs).

    Maximises, for every row at once,
    ``sum_i wins_i theta_i - sum_{i<j} n_ij log(e^theta_i + e^theta_j)`` plus the prior
    (``PRIOR_DRAWS`` draws of each bot against a virtual opponent of log-strength 0),
    by Newton's method with step halving. The prior makes the function strictly concave,
    so the maximum is unique and finite even when a bot won every game.
    """
    rows = len(totals)
    upper_i, upper_j = np.triu_indices(n_bots, 1)
    pair_games = np.zeros((rows, n_bots, n_bots))
    pair_games[:, upper_i, upper_j] = totals[:, n_bots:]
    pair_games[:, upper_j, upper_i] = totals[:, n_bots:]
    wins = totals[:, :n_bots] + PRIOR_DRAWS / 2
    diagonal = np.arange(n_bots)

    def log_likelihood(theta: Floats, wins: Floats, pair_games: Floats) -> Floats:
        pairwise = np.logaddexp(theta[:, :, None], theta[:, None, :])
        return (
            (wins * theta).sum(axis=1)
            - 0.5 * (pair_games * pairwise).sum(axis=(1, 2))
            - PRIOR_DRAWS * np.logaddexp(theta, 0).sum(axis=1)
        )

    theta = np.zeros((rows, n_bots))
    current = log_likelihood(theta, wins, pair_games)
    for _ in range(NEWTON_STEPS):
        beats = 1 / (1 + np.exp(theta[:, None, :] - theta[:, :, None]))  # P(i beats j)
        beats_prior = 1 / (1 + np.exp(-theta))
        gradient = wins - (pair_games * beats).sum(axis=2) - PRIOR_DRAWS * beats_prior
        information = -pair_games * beats * (1 - beats)
        information[:, diagonal, diagonal] = -information.sum(axis=2) + PRIOR_DRAWS * beats_prior * (1 - beats_prior)
        step = np.linalg.solve(information, gradient[:, :, None])[:, :, 0]
        proposed = theta + step
        reached = log_likelihood(proposed, wins, pair_games)
        # A full Newton step can overshoot far from the maximum; halve it until the
        # likelihood does not fall (allowing for rounding near the maximum).
        for _ in range(60):
            worse = reached < current - 1e-12 * np.abs(current)
            if not worse.any():
                break
            step[worse] /= 2
            proposed[worse] = theta[worse] + step[worse]
            reached[worse] = log_likelihood(proposed[worse], wins[worse], pair_games[worse])
        theta, current = proposed, reached
        if np.abs(step).max() < NEWTON_TOLERANCE:
            break
    return theta


def _to_elo(theta: Floats, anchor_index: int | None) -> Floats:
    """Elo points per row: the mean at 1500, or the anchor at exactly 1500."""
    elo = ELO_PER_NAT * theta
    centre = elo.mean(axis=1) if anchor_index is None else elo[:, anchor_index]
    return MEAN_ELO + (elo - centre[:, None])
