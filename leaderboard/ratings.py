"""Elo ratings with honest 95% intervals from games of two or more seats.

A game of K players counts as the K(K-1)/2 pairwise results of its final standing (a
shared rank is a draw: half a win each way). All games are fitted at once by maximum
likelihood under the Bradley-Terry model (the model behind BayesElo and Ordo), with a
tiny prior so that every fit is finite, and scaled to Elo points: the mean of the bots
is 1500, or a named anchor bot has a given Elo.

The pairwise results of one game are not independent, nor are the games of one
duplicate deal (every bot held every hand of it). So the intervals treat the **deal
group** as the independent unit: a cluster-robust (sandwich) variance of the fit over
deal groups, with the small-sample factor G/(G-1) and Student-t quantiles whose degrees
of freedom come from the number of groups (fewer when a bot's information sits in few
of them); with few groups it is pooled with the steadier variance over single games.
A bot that won (lost) every comparison gets an exact one-sided bound instead,
and bots that never met, directly or through others, are rated on separate scales.
docs/ratings.md explains the choices and gives the measured coverage.

Pure math on plain data: no I/O, nothing from ``arena``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]

MEAN_ELO = 1500.0
"""The Elo of the average bot (of each component), or the default Elo of the anchor."""
ELO_PER_NAT = 400 / math.log(10)
"""Elo points per unit of log-strength: P(i beats j) = 1 / (1 + 10 ** ((elo_j - elo_i) / 400))."""
PRIOR_DRAWS = 1.0
"""Virtual draws of every bot against a virtual opponent at the centre of the scale."""
LEVEL = 0.95
"""Coverage of the intervals; a one-sided bound is the end of such an interval."""
TAIL = (1 - LEVEL) / 2
"""The chance the truth lies beyond one end of an interval (or beyond a one-sided bound)."""
FEW_GROUPS = 8
"""Below this many deal groups a bot's interval carries a note: it rests on few of them."""
MAX_DF = 10_000.0
"""Degrees of freedom above this are treated as this many (t and normal differ by 0.01%)."""
POOLED_DF = 4.0
"""The most degrees of freedom the pooled variance adds to a bot's own groups' (see ``_sandwich``)."""
BALANCED_ELO = 1e-6
"""An interval narrower than this (in Elo) is none: the deal groups balanced exactly."""
BALANCED = "every deal group balanced exactly: these games cannot separate it from the others (no interval)"
NEWTON_STEPS = 100
NEWTON_TOLERANCE = 1e-10
"""Stop when no log-strength moves more than this (about 2e-8 Elo)."""


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
    """The 95% interval; NaN where there is none (see ``bound`` and ``note``)."""
    high: float
    games: int
    """Games in which the bot held at least one seat."""
    groups: int = 0
    """Deal groups in which the bot was compared with another bot."""
    bound: str = ""
    """"" for a two-sided interval. ">": the bot won every comparison (with the bots
    rated two-sided), so its rating is only a lower bound, ``low`` (``high`` is NaN).
    "<": it lost every one; ``high`` is an upper bound (``low`` is NaN)."""
    component: int = 0
    """Bots of different components were never compared, directly or through other
    bots; each component has its own scale (its mean at 1500). 0 is the largest."""
    note: str = ""
    """Why the interval is missing or weak, in words; empty when it is not."""


@dataclass(frozen=True)
class Table:
    """The results, summed per deal group and pair of bots: everything the fits need.

    Pairs are numbered in ``np.triu_indices(len(bots), 1)`` order (``first`` < ``second``).
    Each entry is one pair in one game: how often the pair was compared there and how
    much of that the pair's first bot won (a draw is half a win), and the game's group.
    """

    bots: list[str]
    games: Ints
    n_groups: int
    first: Ints
    second: Ints
    entry_game: Ints
    entry_group: Ints
    entry_pair: Ints
    entry_wins: Floats
    entry_count: Floats
    wins: Floats
    """Per pair, summed over groups: the first bot's wins."""
    count: Floats
    """Per pair, summed over groups: comparisons."""


@dataclass(frozen=True)
class _Spread:
    """The variance of the two-sided bots' log-strengths (see ``_sandwich``); zero elsewhere."""

    by_group: Floats
    """Cluster-robust covariance over deal groups, with G/(G-1)."""
    pooled: Floats
    """Cluster-robust covariance over games, scaled to the groups' by one factor per component."""
    group_df: Floats
    """Per bot: the effective number of groups behind its rating, less one (NaN: none)."""
    pooled_df: Floats
    """Per bot: the weight of ``pooled``, in degrees of freedom."""
    few: Floats
    """Per bot: ``by_group``'s small-sample factor G/(G-1) made G*/(G*-1), with G* its
    effective number of groups (1 when that is all of them)."""

    def variance(self, contrast: Floats, i: int) -> tuple[float, float]:
        """The variance of ``contrast @ theta``, the rating of bot i, and its degrees of freedom."""
        weight = self.group_df[i] / (self.group_df[i] + self.pooled_df[i])
        by_group = self.few[i] * contrast @ self.by_group @ contrast
        value = weight * by_group + (1 - weight) * contrast @ self.pooled @ contrast
        return max(0.0, float(value)), float(self.group_df[i] + self.pooled_df[i])

    def differences(self, i: Ints, j: Ints) -> tuple[Floats, Floats]:
        """The variances of ``theta[i] - theta[j]`` (arrays of bots) and their degrees of
        freedom: those of the less informed bot of each pair."""
        group_df = np.minimum(self.group_df[i], self.group_df[j])
        pooled_df = np.minimum(self.pooled_df[i], self.pooled_df[j])
        weight = group_df / (group_df + pooled_df)
        few = np.maximum(self.few[i], self.few[j])
        by_group = few * (self.by_group[i, i] + self.by_group[j, j] - 2 * self.by_group[i, j])
        pooled = self.pooled[i, i] + self.pooled[j, j] - 2 * self.pooled[i, j]
        return np.maximum(0.0, weight * by_group + (1 - weight) * pooled), group_df + pooled_df


@dataclass(frozen=True)
class _Analysis:
    """What ``rate`` and ``likelihood_of_superiority`` share."""

    table: Table
    theta: Floats
    """Log-strengths: the bots rated two-sided from their comparisons with each other,
    the others from every comparison (they are only bounded)."""
    elo: Floats
    low: Floats
    high: Floats
    spread: _Spread
    groups: Ints
    bound: list[str]
    component: Ints
    core: NDArray[np.bool_]
    """Rated two-sided: part of its component's centre and of the sandwich."""
    has_interval: NDArray[np.bool_]
    note: list[str]


def rate(
    results: Iterable[GameResult] | Table,
    anchor: str | tuple[str, float] | None = None,
    bootstrap: int | None = None,
    seed: int | None = None,
) -> list[Rating]:
    """Elo ratings of every bot in ``results``: component by component (the largest
    first), best first within each.

    The Elo is the maximum-likelihood fit; ``low`` and ``high`` are a 95% interval from
    the cluster-robust variance over deal groups with Student-t quantiles (see the module
    docstring and docs/ratings.md). ``anchor``, a bot or ``(bot, elo)``: that bot has
    that Elo (default 1500) with the degenerate interval [elo, elo], and the others of its
    component are relative to it; other components keep their own mean at 1500.

    ``bootstrap`` and ``seed`` are accepted for old callers: the intervals no longer
    resample, so ``seed`` changes nothing, and ``bootstrap=0`` still means no intervals.
    """
    if bootstrap is not None and bootstrap < 0:
        raise ValueError(f"bootstrap must be at least 0, not {bootstrap}")
    table = results if isinstance(results, Table) else _tabulate(results)
    if not table.bots:
        return []
    analysis = _analyse(table, _anchor(table, anchor))
    without = bootstrap == 0
    ratings = [
        Rating(
            bot,
            float(analysis.elo[i]),
            math.nan if without else float(analysis.low[i]),
            math.nan if without else float(analysis.high[i]),
            int(table.games[i]),
            int(analysis.groups[i]),
            analysis.bound[i],
            int(analysis.component[i]),
            analysis.note[i],
        )
        for i, bot in enumerate(table.bots)
    ]
    return sorted(ratings, key=lambda r: (r.component, TIERS[r.bound], -r.elo, r.bot))


TIERS = {">": 0, "": 1, "<": 2}
"""The order of a component by what is known: a bot that won every comparison above the
bots rated two-sided, one that lost every one below them; then by Elo (of a bound, the
bound itself)."""


def likelihood_of_superiority(
    results: Iterable[GameResult] | Table, bootstrap: int | None = None, seed: int | None = None
) -> tuple[list[str], list[list[float]]]:
    """The bots (in ``rate``'s order) and the matrix ``los[i][j]``: the confidence that
    bot i is stronger than bot j.

    For two bots rated two-sided: the Student-t probability of their Elo difference
    over its cluster-robust standard error, with the degrees of freedom of the pair's
    intervals; so ``los[i][j] + los[j][i] == 1`` and the diagonal is 0.5. A bot that
    won every comparison against one rated two-sided: 1 minus the exact p-value of "no
    stronger" (the bound's test). NaN where nothing can be said: bots of different
    components, a bot without an interval (not even a bound), two bounds on the same
    side, two bounds with no bot rated two-sided to compare them through.
    ``bootstrap`` and ``seed`` are accepted for old callers and change nothing.
    """
    table = results if isinstance(results, Table) else _tabulate(results)
    if not table.bots:
        return [], []
    analysis = _analyse(table, None)
    n = len(table.bots)
    order = sorted(
        range(n), key=lambda i: (analysis.component[i], TIERS[analysis.bound[i]], -analysis.elo[i], table.bots[i])
    )
    los = np.full((n, n), math.nan)
    rated = analysis.core & analysis.has_interval  # nothing is said against a bot without an interval
    core = np.flatnonzero(rated)
    first, second = np.triu_indices(n, 1)
    chosen = np.isin(first, core) & np.isin(second, core) & (analysis.component[first] == analysis.component[second])
    first, second = first[chosen], second[chosen]
    if len(first):
        variance, df = analysis.spread.differences(first, second)
        gap = analysis.theta[first] - analysis.theta[second]
        spread = np.sqrt(variance)
        # No spread at all (every game tied): sure of a gap, or even at no gap.
        z = np.divide(gap, spread, out=np.where(gap == 0, 0.0, np.copysign(np.inf, gap)), where=spread > 0)
        above = _t_cdf(z, df)
        los[first, second], los[second, first] = above, 1 - above
    bounded = [i for i in range(n) if analysis.bound[i]]
    for i in bounded:
        won = analysis.bound[i] == ">"
        for j in np.flatnonzero(rated & (analysis.component == analysis.component[i])).tolist():
            p = _sweep_p_value(table, analysis, i, analysis.theta[j])
            if not math.isnan(p):
                los[i, j] = 1 - p if won else p
                los[j, i] = 1 - los[i, j]
    for i in bounded:
        for j in bounded:
            if analysis.component[i] == analysis.component[j] and analysis.bound[i] == ">" != analysis.bound[j]:
                p = _apart_p_value(table, analysis, i, j)
                if not math.isnan(p):
                    los[i, j], los[j, i] = 1 - p, p
    np.fill_diagonal(los, 0.5)
    return [table.bots[i] for i in order], los[np.ix_(order, order)].tolist()


def _anchor(table: Table, anchor: str | tuple[str, float] | None) -> tuple[int, float] | None:
    if anchor is None:
        return None
    bot, elo = (anchor, MEAN_ELO) if isinstance(anchor, str) else anchor
    if bot not in table.bots:
        raise ValueError(f"anchor {bot!r} is not among the rated bots {table.bots}")
    if not math.isfinite(elo):
        raise ValueError(f"the anchor's Elo must be a finite number, not {elo!r}")
    return table.bots.index(bot), float(elo)


def _analyse(table: Table, anchor: tuple[int, float] | None) -> _Analysis:
    n = len(table.bots)
    component = _components(table)
    bound, core = _peel(table, component)
    if anchor is not None and bound[anchor[0]]:
        side = "won" if bound[anchor[0]] == ">" else "lost"
        raise ValueError(
            f"anchor {table.bots[anchor[0]]!r} {side} every comparison, so its rating is only a bound:"
            " anchor a bot with both wins and losses"
        )
    both = core[table.first] & core[table.second]
    full = _fit(table.wins[None, :], table.count[None, :], table.first, table.second, n)[0]
    if core.all():
        theta = full
    else:  # the two-sided bots from their comparisons with each other only
        theta_core = _fit((table.wins * both)[None, :], (table.count * both)[None, :], table.first, table.second, n)[0]
        theta = np.where(core, theta_core, full)
        for c in np.unique(component):  # the others: their full fit, moved onto the same scale
            members = component == c
            inner = members & core
            if inner.any():
                shift = theta_core[inner].mean() - full[inner].mean()
                theta[members & ~core] += shift

    groups = _groups_per_bot(table, n)
    spread, core_groups = _sandwich(table, theta, core, both, component)

    # Each component's scale: the mean of its two-sided bots (of all its bots if none)
    # at 1500, or the anchor at its Elo.
    centre = np.zeros(n)
    for c in np.unique(component):
        members = component == c
        inner = members & core if (members & core).any() else members
        centre[members] = theta[inner].mean()
    contrast = np.zeros((n, n))
    for i in range(n):
        contrast[i, i] = 1
        members = component == component[i]
        inner = members & core if (members & core).any() else members
        contrast[i, inner] -= 1 / inner.sum()
    base = np.full(n, MEAN_ELO)
    if anchor is not None:
        a, elo_a = anchor
        members = component == component[a]
        centre[members] = theta[a]
        base[members] = elo_a
        for i in np.flatnonzero(members).tolist():
            contrast[i] = 0
            contrast[i, i] += 1
            contrast[i, a] -= 1
    elo = base + ELO_PER_NAT * (theta - centre)

    low = np.full(n, math.nan)
    high = np.full(n, math.nan)
    spreads, dfs = np.zeros(n), np.ones(n)
    has_interval = np.zeros(n, dtype=bool)
    notes: list[list[str]] = [[] for _ in range(n)]
    largest = 0
    for i in range(n):
        if component[i] != largest:
            notes[i].append("never met the bots of the largest component: rated on a scale of its own")
        if anchor is not None and i == anchor[0]:
            low[i] = high[i] = elo[i]
            notes[i].append("the anchor: its Elo is fixed")
            has_interval[i] = core_groups[component[i]] >= 2 and groups[i] >= 2
            continue
        if not table.count[(table.first == i) | (table.second == i)].sum():
            notes[i].append("never compared with another bot: no interval")
            continue
        if bound[i]:
            continue
        if (core & (component == component[i])).sum() == 1:
            notes[i].append("the only bot of its component with both wins and losses: no interval")
            continue
        if groups[i] < 2 or core_groups[component[i]] < 2:
            notes[i].append("one deal group: no interval")
            continue
        has_interval[i] = True
        if groups[i] < FEW_GROUPS:
            notes[i].append(f"{groups[i]} deal groups: interval from few groups")
        variance, dfs[i] = spread.variance(contrast[i], i)
        spreads[i] = ELO_PER_NAT * math.sqrt(variance)
    # No spread at all: every deal group balanced exactly (each bot held every rank of
    # each deal once, say). That is no evidence that the bots are equal, only that these
    # games cannot tell them apart: no interval, rather than a zero-width one.
    balanced = has_interval & (spreads < BALANCED_ELO) & np.isnan(low)
    for i in np.flatnonzero(balanced).tolist():
        notes[i].append(BALANCED)
    has_interval &= ~balanced
    half = _t_quantile(1 - TAIL, dfs) * spreads
    rated = has_interval & np.isnan(low)  # not the anchor, whose interval is [elo, elo]
    low[rated], high[rated] = elo[rated] - half[rated], elo[rated] + half[rated]

    for i in [i for i in range(n) if bound[i]]:
        won = bound[i] == ">"
        limit = _sweep_bound(table, theta, core, i, won)
        everything = _all_comparisons_one_way(table, i, won)
        what = "won" if won else "lost"
        gap = _heads_up_gap(table, component, bound, i) if limit is None else None
        if limit is not None:
            value = float(base[i] + ELO_PER_NAT * (limit - centre[i]))
        elif gap is not None:  # two bots, one swept the other: half the gap each side of the centre
            value = float(base[i] + ELO_PER_NAT * (gap if won else -gap) / 2)
        else:
            notes[i].append(f"{what} every comparison, but none against a bot with both wins and losses: no bound")
            continue
        # What is known is the bound: the fit alone would grow with every game swept.
        elo[i] = value
        if won:
            low[i] = value
        else:
            high[i] = value
        scope = "" if everything else " against the bots rated two-sided"
        notes[i].append(f"{what} every comparison{scope}: {'lower' if won else 'upper'} bound only")

    return _Analysis(
        table,
        theta,
        elo,
        low,
        high,
        spread,
        groups,
        bound,
        component,
        core,
        has_interval,
        ["; ".join(note) for note in notes],
    )


def _components(table: Table) -> Ints:
    """Connected components of the "compared" graph, 0 the largest (most bots, then most
    comparisons, then the first bot's name)."""
    n = len(table.bots)
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for k in np.flatnonzero(table.count > 0):
        a, b = root(int(table.first[k])), root(int(table.second[k]))
        if a != b:
            parent[max(a, b)] = min(a, b)
    roots = np.array([root(i) for i in range(n)])
    comparisons = np.bincount(roots[table.first], table.count, minlength=n)
    found = sorted(set(roots.tolist()), key=lambda r: (-(roots == r).sum(), -comparisons[r], r))
    number = {r: c for c, r in enumerate(found)}
    return np.array([number[r] for r in roots.tolist()], dtype=np.int64)


def _peel(table: Table, component: Ints) -> tuple[list[str], NDArray[np.bool_]]:
    """Which bots are rated two-sided, and the bound of the others.

    Repeatedly, a bot that won every comparison with the bots still in (">") or lost
    every one ("<") is set aside, and so is a bot with no comparison left with them
    unless that would leave its component without any bot in (the middle bot of a
    chain A beat B beat C stays), until none is left to set aside.
    """
    n = len(table.bots)
    core = np.ones(n, dtype=bool)
    bound = [""] * n
    while True:
        inside = core[table.first] & core[table.second]
        count = np.bincount(table.first, table.count * inside, n) + np.bincount(table.second, table.count * inside, n)
        won = np.bincount(table.first, table.wins * inside, n) + np.bincount(
            table.second, (table.count - table.wins) * inside, n
        )
        sweep = core & (count > 0) & (won >= count)
        swept = core & (count > 0) & (won <= 0)
        lonely = core & (count == 0)
        out = sweep | swept | lonely
        for c in np.unique(component[out]):
            members = core & (component == c)
            if not (members & ~out).any():  # keep the centre of a chain (A beat B beat C: B)
                out &= ~(members & lonely)
        if not out.any():
            return bound, core
        for i in np.flatnonzero(sweep & out):
            bound[i] = ">"
        for i in np.flatnonzero(swept & out):
            bound[i] = "<"
        core &= ~out


def _all_comparisons_one_way(table: Table, i: int, won: bool) -> bool:
    mine_first, mine_second = table.first == i, table.second == i
    count = table.count[mine_first].sum() + table.count[mine_second].sum()
    wins = table.wins[mine_first].sum() + (table.count - table.wins)[mine_second].sum()
    return bool(wins >= count) if won else bool(wins <= 0)


def _groups_per_bot(table: Table, n: int) -> Ints:
    compared = table.entry_count > 0
    keys = np.concatenate(
        [
            table.entry_group[compared] * n + table.first[table.entry_pair[compared]],
            table.entry_group[compared] * n + table.second[table.entry_pair[compared]],
        ]
    )
    return np.bincount(np.unique(keys) % n, minlength=n).astype(np.int64)


def _sandwich(
    table: Table, theta: Floats, core: NDArray[np.bool_], both: NDArray[np.bool_], component: Ints
) -> tuple[_Spread, dict[int, int]]:
    """The variance of the two-sided log-strengths, per component; and the number of
    deal groups G of each component's two-sided comparisons.

    ``H^-1 M H^-1``, where ``H`` is the curvature of the fitted objective (the comparisons
    among two-sided bots and the prior) and ``M = G/(G-1) sum_g s_g s_g^T`` from each
    deal group's score ``s_g``: the cluster-robust (sandwich) covariance over groups. Its
    degrees of freedom for a bot: the effective number of groups behind the bot's
    rating, ``(sum l_g)^2 / sum l_g^2`` with ``l_g`` group g's share of the rating's model
    variance, less one (G - 1 when the groups are alike, at least 1).

    With few groups that estimate is noisy (one degree of freedom at two groups, and
    exactly zero when two groups' whole-win scores happen to balance), so it is pooled
    with a steadier one: the same sandwich over single games, which has many degrees of
    freedom but misses how the games of one deal offset each other, scaled by one
    factor per component (the ratio of the two covariances' traces over the centred
    ratings, so it is right on average over the bots). That factor rests on the other
    bots' groups too: it is given ``(m - 2)`` times the bot's degrees of freedom (m
    two-sided bots), at most ``POOLED_DF``, so the bot's own groups dominate as they
    grow. docs/ratings.md gives the measured coverage.
    """
    n = len(theta)
    by_group, pooled = np.zeros((n, n)), np.zeros((n, n))
    group_df, pooled_df, few = np.full(n, math.nan), np.zeros(n), np.ones(n)
    groups_of: dict[int, int] = {}
    p = 1 / (1 + np.exp(theta[table.second] - theta[table.first]))  # P(first beats second), per pair
    entries = both[table.entry_pair] & (table.entry_count > 0)
    e_group, e_game, e_pair = table.entry_group[entries], table.entry_game[entries], table.entry_pair[entries]
    residual = table.entry_wins[entries] - table.entry_count[entries] * p[e_pair]
    weight = table.entry_count[entries] * (p * (1 - p))[e_pair]
    for c in np.unique(component).tolist():
        members = np.flatnonzero((component == c) & core)
        inside = component[table.first[e_pair]] == c
        used, local_group = np.unique(e_group[inside], return_inverse=True)
        g = len(used)
        groups_of[c] = g
        m = len(members)
        if not m or g < 2:
            continue
        games, local_game = np.unique(e_game[inside], return_inverse=True)
        index = np.full(n, -1)
        index[members] = np.arange(m)
        i_local = index[table.first[e_pair[inside]]]
        j_local = index[table.second[e_pair[inside]]]
        curvature = np.zeros((m, m))
        pair_weight = weight[inside]
        np.add.at(curvature, (i_local, j_local), -pair_weight)
        np.add.at(curvature, (j_local, i_local), -pair_weight)
        prior = 1 / (1 + np.exp(-theta[members]))
        curvature[np.arange(m), np.arange(m)] = -curvature.sum(axis=1) + PRIOR_DRAWS * prior * (1 - prior)
        inverse = np.linalg.inv(curvature)
        on_groups = (
            inverse @ (g / (g - 1) * _score_gram(local_group, g, i_local, j_local, residual[inside], m)) @ inverse
        )
        n_games = len(games)
        on_games = (
            inverse
            @ (n_games / (n_games - 1) * _score_gram(local_game, n_games, i_local, j_local, residual[inside], m))
            @ inverse
        )
        centre = np.eye(m) - 1 / m
        on_games_total = np.trace(centre @ on_games @ centre)
        scale = np.trace(centre @ on_groups @ centre) / on_games_total if on_games_total > 0 else 1.0
        by_group[np.ix_(members, members)] = on_groups
        pooled[np.ix_(members, members)] = scale * on_games

        # Effective groups: each group's share of the model variance of each bot's
        # centred rating, from the group's own curvature.
        direction = inverse @ centre  # column k: H^-1 c_k
        gap = direction[i_local] - direction[j_local]  # (entries, m)
        share = np.zeros((g, m))
        for k in range(m):
            share[:, k] = np.bincount(local_group, pair_weight * gap[:, k] ** 2, g)
        total = share.sum(axis=0)
        squares = (share * share).sum(axis=0)
        effective = np.divide(total * total, squares, out=np.full(m, 2.0), where=squares > 0)
        group_df[members] = np.clip(effective - 1, 1.0, g - 1)
        # Pooled in proportion to how much the bot shares the component's groups: a bot
        # that played few of them (a newcomer) may not offset like the others.
        share_of_groups = group_df[members] / (g - 1)
        pooled_df[members] = np.minimum((m - 2) * group_df[members], POOLED_DF) * share_of_groups
        few[members] = (group_df[members] + 1) / group_df[members] * (g - 1) / g
    return _Spread(by_group, pooled, group_df, pooled_df, few), groups_of


def _score_gram(unit: Ints, units: int, i_local: Ints, j_local: Ints, residual: Floats, m: int) -> Floats:
    """``sum_u s_u s_u^T`` over units (groups or games), where ``s_u`` sums each entry's
    residual (first bot's wins less their expectation) onto its first bot and takes it
    from its second; built a slice of units at a time to bound memory."""
    gram = np.zeros((m, m))
    order = np.argsort(unit, kind="stable")
    unit, i_local, j_local, residual = unit[order], i_local[order], j_local[order], residual[order]
    step = max(1, 4_000_000 // max(m, 1))
    for start in range(0, units, step):
        lo, hi = np.searchsorted(unit, [start, start + step])
        rows = unit[lo:hi] - start
        scores = np.zeros(min(step, units - start) * m)
        scores += np.bincount(rows * m + i_local[lo:hi], residual[lo:hi], len(scores))
        scores -= np.bincount(rows * m + j_local[lo:hi], residual[lo:hi], len(scores))
        block = scores.reshape(-1, m)
        gram += block.T @ block
    return gram


def _heads_up_gap(table: Table, component: Ints, bound: list[str], i: int) -> float | None:
    """For a component of two bots, one of which won every comparison: the exact lower
    bound of the gap between their log-strengths (the winner's G group sweeps have chance
    at most P(win one comparison)^G; that is ``TAIL`` at the bound). None otherwise."""
    members = np.flatnonzero(component == component[i])
    if len(members) != 2 or {bound[m] for m in members} != {">", "<"}:
        return None
    pair = np.flatnonzero((table.first == members[0]) & (table.second == members[1]))
    played = (table.entry_pair == pair[0]) & (table.entry_count > 0)
    groups = len(np.unique(table.entry_group[played]))
    chance = TAIL ** (1 / groups)
    return math.log(chance / (1 - chance))


def _apart_p_value(table: Table, analysis: _Analysis, above: int, below: int) -> float:
    """An upper limit on the chance of the two sweeps were the ">" bot ``above`` no
    stronger than the "<" bot ``below``: the smallest sum of their p-values at a common
    log-strength (one of the two-sided bots'), or ``0.5^G`` for two bots alone whose G
    groups all went one way. NaN when there is no such reference."""
    gap = _heads_up_gap(table, analysis.component, analysis.bound, above)
    if gap is not None:
        groups = math.log(TAIL) / math.log(1 / (1 + math.exp(-gap)))
        return float(0.5**groups)
    references = analysis.theta[
        analysis.core & analysis.has_interval & (analysis.component == analysis.component[above])
    ]
    if not len(references):
        return math.nan
    chances = [
        _sweep_p_value(table, analysis, above, float(x)) + _sweep_p_value(table, analysis, below, float(x))
        for x in references
    ]
    return float(min(1.0, min(chances)))


def _sweep_p_value(table: Table, analysis: _Analysis, i: int, theta_i: float) -> float:
    """An upper limit on the chance of bot i's clean sweep (every comparison won for a
    ">" bot, lost for a "<" one) against the two-sided bots, were its log-strength
    ``theta_i``: per deal group, the chance of winning (losing) every comparison there is
    at most that of the hardest single one, whatever ties the comparisons of the group
    together; groups are independent."""
    return float(
        _sweep_chance(table, analysis.theta, analysis.core, i, analysis.bound[i] == ">", np.array([theta_i]))[0]
    )


def _sweep_chance(
    table: Table, theta: Floats, core: NDArray[np.bool_], i: int, won: bool, candidates: Floats
) -> Floats:
    mine = (table.first[table.entry_pair] == i) | (table.second[table.entry_pair] == i)
    other = np.where(table.first[table.entry_pair] == i, table.second[table.entry_pair], table.first[table.entry_pair])
    chosen = mine & core[other] & (table.entry_count > 0)
    if not chosen.any():
        return np.full(len(candidates), math.nan)
    groups = table.entry_group[chosen]
    opponents = theta[other[chosen]]
    # The hardest comparison of each group: the strongest opponent to beat, or the
    # weakest to lose to.
    order = np.argsort(groups, kind="stable")
    groups, opponents = groups[order], opponents[order]
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    hardest = (np.maximum if won else np.minimum).reduceat(opponents, starts)
    sign = 1 if won else -1
    # log P(sweep) <= sum over groups of log P(the hardest comparison goes that way)
    log_chance = -np.logaddexp(0, -sign * (candidates[:, None] - hardest[None, :])).sum(axis=1)
    result: Floats = np.exp(log_chance)
    return result


def _sweep_bound(table: Table, theta: Floats, core: NDArray[np.bool_], i: int, won: bool) -> float | None:
    """The log-strength at which bot i's clean sweep would have had chance ``TAIL``:
    below it (above, for "<") the sweep is that unlikely, so it is an exact one-sided
    bound at the level of the intervals. None without a two-sided opponent."""
    if math.isnan(_sweep_chance(table, theta, core, i, won, np.zeros(1))[0]):
        return None
    sign = 1 if won else -1
    low, high = -60.0, 60.0  # log-strengths: +-10,000 Elo
    for _ in range(100):
        middle = (low + high) / 2
        chance = _sweep_chance(table, theta, core, i, won, np.array([sign * middle]))[0]
        if chance < TAIL:
            low = middle
        else:
            high = middle
    return sign * (low + high) / 2


def _tabulate(results: Iterable[GameResult]) -> Table:
    """Sum each deal group's pairwise results per pair of bots."""
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
        return table_from_seats([], 0, [])
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


def table_from_seats(bots: list[str], n_groups: int, blocks: list[tuple[Ints, Ints, Floats]]) -> Table:
    """The tabulated input of ``rate`` straight from arrays, for callers holding many games.

    Each block holds games of one size K: their group numbers (0 to ``n_groups`` - 1),
    and (games, K) arrays of seat bots (indices into ``bots``) and ranks (1 = best).
    """
    n_bots = len(bots)
    first, second = (index.astype(np.int64) for index in np.triu_indices(n_bots, 1))
    n_pairs = len(first)
    pair_of = np.zeros((n_bots, n_bots), dtype=np.int64)
    pair_of[first, second] = pair_of[second, first] = np.arange(n_pairs)
    keys: list[Ints] = []
    wins: list[Floats] = []
    counts: list[Floats] = []
    games = np.zeros(n_bots, dtype=np.int64)
    game_group = np.concatenate(
        [np.asarray(groups, dtype=np.int64) for groups, _, _ in blocks] or [np.zeros(0, np.int64)]
    )
    offset = 0
    for _, block_bots, block_ranks in blocks:
        seats = block_bots.shape[1]
        seat_rank = np.asarray(block_ranks, dtype=np.float64).T.copy()  # seat by seat: contiguous columns
        seat_bot = np.asarray(block_bots, dtype=np.int64).T.copy()
        row = (offset + np.arange(seat_bot.shape[1], dtype=np.int64)) * max(n_pairs, 1)
        offset += seat_bot.shape[1]
        first_seat = np.ones(seat_bot.shape, dtype=bool)
        for a, b in zip(*np.triu_indices(seats, 1), strict=True):
            real = seat_bot[a] != seat_bot[b]
            first_seat[b] &= real
            score = (seat_rank[a] < seat_rank[b]) + 0.5 * (seat_rank[a] == seat_rank[b])
            lower_first = seat_bot[a] < seat_bot[b]
            keys.append((row + pair_of[seat_bot[a], seat_bot[b]])[real])
            wins.append(np.where(lower_first, score, 1 - score)[real])
            counts.append(np.ones(int(real.sum())))
        games += np.bincount(seat_bot[first_seat], minlength=n_bots)

    if keys:
        unique, where = np.unique(np.concatenate(keys), return_inverse=True)
        entry_wins = np.asarray(np.bincount(where, np.concatenate(wins), len(unique)), dtype=np.float64)
        entry_count = np.asarray(np.bincount(where, np.concatenate(counts), len(unique)), dtype=np.float64)
    else:
        unique = np.zeros(0, dtype=np.int64)
        entry_wins = entry_count = np.zeros(0)
    entry_game, entry_pair = np.divmod(unique, max(n_pairs, 1))
    return Table(
        bots,
        games,
        n_groups,
        first,
        second,
        entry_game.astype(np.int64),
        game_group[entry_game].astype(np.int64),
        entry_pair.astype(np.int64),
        entry_wins,
        entry_count,
        np.asarray(np.bincount(entry_pair, entry_wins, n_pairs), dtype=np.float64),
        np.asarray(np.bincount(entry_pair, entry_count, n_pairs), dtype=np.float64),
    )


def _fit(wins: Floats, count: Floats, first: Ints, second: Ints, n_bots: int) -> Floats:
    """Maximum-likelihood log-strengths, one fit per row of per-pair sums (rows, pairs):
    the pair's first bot's wins and the pair's comparisons.

    Maximises, for every row at once,
    ``sum_i wins_i theta_i - sum_{i<j} n_ij log(e^theta_i + e^theta_j)`` plus the prior
    (``PRIOR_DRAWS`` draws of each bot against a virtual opponent of log-strength 0),
    by Newton's method with step halving. The prior makes the function strictly concave,
    so the maximum is unique and finite even when a bot won every game.
    """
    rows = len(wins)
    pair_games = np.zeros((rows, n_bots, n_bots))
    pair_games[:, first, second] = count
    pair_games[:, second, first] = count
    first_of, second_of = np.zeros((len(first), n_bots)), np.zeros((len(first), n_bots))
    first_of[np.arange(len(first)), first] = 1
    second_of[np.arange(len(first)), second] = 1
    bot_wins = wins @ first_of + (count - wins) @ second_of + PRIOR_DRAWS / 2
    diagonal = np.arange(n_bots)

    def log_likelihood(theta: Floats, bot_wins: Floats, pair_games: Floats) -> Floats:
        pairwise = np.logaddexp(theta[:, :, None], theta[:, None, :])
        value: Floats = (
            (bot_wins * theta).sum(axis=1)
            - 0.5 * (pair_games * pairwise).sum(axis=(1, 2))
            - PRIOR_DRAWS * np.logaddexp(theta, 0).sum(axis=1)
        )
        return value

    theta = np.zeros((rows, n_bots))
    current = log_likelihood(theta, bot_wins, pair_games)
    for _ in range(NEWTON_STEPS):
        beats = 1 / (1 + np.exp(theta[:, None, :] - theta[:, :, None]))  # P(i beats j)
        beats_prior = 1 / (1 + np.exp(-theta))
        gradient = bot_wins - (pair_games * beats).sum(axis=2) - PRIOR_DRAWS * beats_prior
        information = -pair_games * beats * (1 - beats)
        information[:, diagonal, diagonal] = -information.sum(axis=2) + PRIOR_DRAWS * beats_prior * (1 - beats_prior)
        step = np.linalg.solve(information, gradient[:, :, None])[:, :, 0]
        proposed = theta + step
        reached = log_likelihood(proposed, bot_wins, pair_games)
        # A full Newton step can overshoot far from the maximum; halve it until the
        # likelihood does not fall (allowing for rounding near the maximum).
        for _ in range(60):
            worse = reached < current - 1e-12 * np.abs(current)
            if not worse.any():
                break
            step[worse] /= 2
            proposed[worse] = theta[worse] + step[worse]
            reached[worse] = log_likelihood(proposed[worse], bot_wins[worse], pair_games[worse])
        theta, current = proposed, reached
        if np.abs(step).max() < NEWTON_TOLERANCE:
            break
    return theta


# Student's t distribution (no SciPy): the CDF through the regularised incomplete beta
# function (a continued fraction, as in Numerical Recipes' betacf), the quantile by
# Newton's method on the logarithm, starting from the normal quantile, which is below it.


def _log_gamma(values: Floats) -> Floats:
    return np.array([math.lgamma(v) for v in values.ravel()]).reshape(values.shape)


def _incomplete_beta(a: Floats, b: Floats, x: Floats) -> Floats:
    """The regularised incomplete beta function I_x(a, b), element by element."""
    swap = x > (a + 1) / (a + b + 2)
    a, b, x = np.where(swap, b, a), np.where(swap, a, b), np.where(swap, 1 - x, x)
    with np.errstate(divide="ignore"):
        log_front = a * np.log(x) + b * np.log1p(-x) - (_log_gamma(a) + _log_gamma(b) - _log_gamma(a + b))
    tiny = 1e-300
    c = np.ones_like(x)
    d = 1 - (a + b) * x / (a + 1)
    d = 1 / np.where(np.abs(d) < tiny, tiny, d)
    value = d.copy()
    for m in range(1, 10_000):
        delta = np.ones_like(x)
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / np.where(np.abs(d) < tiny, tiny, d)
            c = 1 + numerator / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            delta = c * d
            value = value * delta
        if np.all(np.abs(delta - 1) < 1e-15):
            break
    value = np.where(x <= 0, 0.0, np.exp(log_front) * value / a)
    return np.where(swap, 1 - value, value)


def _t_cdf(t: Floats, df: Floats) -> Floats:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (arrays of one shape)."""
    t, df = np.broadcast_arrays(np.asarray(t, dtype=np.float64), np.minimum(np.asarray(df, dtype=np.float64), MAX_DF))
    out = np.where(t > 0, 1.0, 0.0)
    finite = np.isfinite(t)
    if finite.any():
        tf, dff = t[finite], df[finite]
        tail = 0.5 * _incomplete_beta(dff / 2, np.full(tf.shape, 0.5), dff / (dff + tf * tf))
        out[finite] = np.where(tf > 0, 1 - tail, tail)
    return out


def _t_density(t: Floats, df: Floats) -> Floats:
    log_scale = _log_gamma((df + 1) / 2) - _log_gamma(df / 2) - 0.5 * np.log(df * math.pi)
    return np.exp(log_scale - (df + 1) / 2 * np.log1p(t * t / df))


def _t_quantile(p: float, df: Floats) -> Floats:
    """The ``p`` quantile (``p`` > 0.5) of Student's t with ``df`` degrees of freedom."""
    df = np.minimum(np.asarray(df, dtype=np.float64), MAX_DF)
    log_q = np.full(df.shape, math.log(NormalDist().inv_cdf(p)))
    for _ in range(50):
        q = np.exp(log_q)
        step = (p - _t_cdf(q, df)) / (_t_density(q, df) * q)
        log_q = log_q + step
        if np.all(np.abs(step) < 1e-12):
            break
    result: Floats = np.exp(log_q)
    return result
