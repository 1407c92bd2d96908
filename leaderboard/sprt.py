"""The sequential probability ratio test behind ``arena gauntlet``: is NEW stronger?

H0: NEW is ``elo0`` Elo stronger than the field; H1: it is ``elo1`` stronger (elo0 <
elo1). After every deal group the log-likelihood ratio (LLR) of H1 against H0 is
compared with Wald's bounds: at or above ``log((1 - beta) / alpha)`` H1 is accepted, at
or below ``log(beta / (1 - alpha))`` H0 is, and in between the test goes on. The false
accept rate (H1 when the truth is elo0) is then about ``alpha``, the false reject rate
(H0 at elo1) about ``beta``.

**The unit is the deal group**, as the game pair is for fastchess and fishtest: the
games of one duplicate deal are correlated (every seat held every hand), groups are
independent. A group's score is NEW's pairwise score against the opponents at its
table (a win 1, a shared rank 1/2, a loss 0), averaged over the group's games, so it
lies in [0, 1]; at a table of two, a group of two games scores 0, 1/4, 1/2, 3/4 or 1: the
pentanomial of fastchess.

**The likelihood is the generalized SPRT over the group scores** (the method fishtest
and fastchess use for game pairs): the scores are a sample of an unknown discrete
distribution, H0 says its mean is ``expected_score(elo0)``, H1 ``expected_score(elo1)``
(the logistic Elo model of ``leaderboard.ratings``), and the LLR compares the two
maximum-likelihood distributions on the observed values under each constraint. No
shape (normal, trinomial) is assumed, and the correlation inside a group is counted
because the group is the observation. A tiny prior (``PRIOR`` groups, half at score 0,
half at 1) keeps both constrained maxima defined when every group so far scored alike.
For many groups and close hypotheses the LLR equals the familiar
``n (s1 - s0) (mean - (s0 + s1) / 2) / variance`` (``llr_normal``).

Pure math: no I/O, nothing from ``arena``. docs/ratings.md explains the choices and
gives the measured error rates (bench/sprt.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]

PRIOR = 1e-3
"""Groups of prior weight: half at score 0, half at score 1."""
MAX_ELO = 1000.0
"""elo0 and elo1 lie strictly between -MAX_ELO and MAX_ELO."""
NEWTON_STEPS = 100
DEFAULTS = {"elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05}
"""``--sprt`` keys and their defaults."""


class SprtError(ValueError):
    """Parameters that make no test, with a message that names them and the fix."""


def expected_score(elo: float) -> float:
    """The expected pairwise score of a bot ``elo`` Elo stronger: 1 / (1 + 10^(-elo/400))."""
    return 1 / (1 + 10 ** (-elo / 400))


def elo_of_score(score: float) -> float:
    """The Elo difference whose expected score is ``score`` (+-inf at 1 and 0)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


@dataclass(frozen=True)
class Sprt:
    """The test's parameters: the hypotheses (Elo) and the error rates."""

    elo0: float = DEFAULTS["elo0"]
    elo1: float = DEFAULTS["elo1"]
    alpha: float = DEFAULTS["alpha"]
    """The false accept rate: H1 accepted when NEW is elo0 stronger."""
    beta: float = DEFAULTS["beta"]
    """The false reject rate: H0 accepted when NEW is elo1 stronger."""

    def __post_init__(self) -> None:
        for key in ("elo0", "elo1", "alpha", "beta"):
            if not math.isfinite(getattr(self, key)):
                raise SprtError(f"{key} must be a finite number, not {getattr(self, key)}")
        for key in ("elo0", "elo1"):
            if not -MAX_ELO < getattr(self, key) < MAX_ELO:
                raise SprtError(f"{key}={_number(getattr(self, key))} is outside (-{MAX_ELO:.0f}, {MAX_ELO:.0f})")
        if self.elo0 >= self.elo1:
            raise SprtError(
                f"elo0={_number(self.elo0)} must be below elo1={_number(self.elo1)} (H0: NEW is elo0 stronger,"
                " H1: elo1 stronger), e.g. elo0=0,elo1=10"
            )
        for key in ("alpha", "beta"):
            if not 0 < getattr(self, key) < 0.5:
                raise SprtError(f"{key}={_number(getattr(self, key))} must lie strictly between 0 and 0.5, e.g. 0.05")

    @property
    def lower(self) -> float:
        """At or below it, H0 is accepted: log(beta / (1 - alpha))."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """At or above it, H1 is accepted: log((1 - beta) / alpha)."""
        return math.log((1 - self.beta) / self.alpha)

    def verdict(self, llr: float) -> str:
        """``"H1"``, ``"H0"``, or ``""`` while the LLR lies between the bounds."""
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return ""

    def text(self) -> str:
        """As ``--sprt`` takes it: ``elo0=0,elo1=10,alpha=0.05,beta=0.05``."""
        return ",".join(f"{key}={_number(getattr(self, key))}" for key in DEFAULTS)


def _number(value: float) -> str:
    return f"{value:g}"


def parse_sprt(text: str) -> Sprt:
    """``elo0=0,elo1=10,alpha=0.05,beta=0.05``, any of them in any order (the others keep
    these defaults), or ``SprtError``."""
    values = dict(DEFAULTS)
    seen = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, equals, value = (s.strip() for s in part.partition("="))
        if not equals or key not in DEFAULTS:
            raise SprtError(f"{part!r} is not KEY=VALUE with KEY one of elo0, elo1, alpha, beta")
        if key in seen:
            raise SprtError(f"{key} is given twice")
        seen.add(key)
        try:
            values[key] = float(value)
        except ValueError:
            raise SprtError(f"{key}={value!r} is not a number") from None
    return Sprt(**values)


def _constrained(values: Floats, counts: Floats, score: float) -> Floats:
    """The Lagrange multiplier of the maximum-likelihood distribution on ``values`` with
    mean ``score``, for every row of ``counts`` (..., values).

    The maximum of ``sum_i c_i log p_i`` under ``sum p_i = 1`` and ``sum p_i v_i = score``
    is ``p_i = (c_i / n) / (1 + lam (v_i - score))`` where ``lam`` solves
    ``f(lam) = sum_i c_i d_i / (1 + lam d_i) = 0`` (``d_i = v_i - score``). ``f`` falls
    from +inf to -inf on the interval where every ``1 + lam d_i`` is positive (the
    values straddle ``score``), so the root is unique: Newton's method, bisecting the
    bracket whenever a step leaves it.
    """
    d = values - score
    shape = counts.shape[:-1]
    occupied = counts > 0
    # The bracket: 1 + lam d_i > 0 for every observed value.
    top = np.where(occupied & (d < 0), -1 / np.where(d < 0, d, -1), np.inf).min(axis=-1)
    bottom = np.where(occupied & (d > 0), -1 / np.where(d > 0, d, 1), -np.inf).max(axis=-1)
    low, high = bottom.astype(np.float64), top.astype(np.float64)
    lam = np.zeros(shape)
    settled = np.zeros(shape, dtype=bool)
    # Each row stops on its own, so its result does not depend on the other rows.
    for _ in range(NEWTON_STEPS):
        denominator = 1 + lam[..., None] * d
        f = (counts * d / denominator).sum(axis=-1)
        slope = -(counts * d * d / denominator**2).sum(axis=-1)
        low = np.where(f > 0, lam, low)
        high = np.where(f < 0, lam, high)
        step = np.where(slope < 0, f / np.where(slope < 0, slope, -1), 0.0)
        proposed = lam - step
        outside = ~((proposed > low) & (proposed < high))
        proposed = np.where(outside, (low + high) / 2, proposed)
        still = np.abs(proposed - lam) > 1e-14 * (1 + np.abs(lam))
        lam = np.where(settled, lam, proposed)
        settled |= ~still
        if settled.all():
            break
    return lam


def llr_counts(
    values: Sequence[float] | Floats, counts: Floats, elo0: float, elo1: float, prior: float = PRIOR
) -> Floats:
    """The LLR of H1 (mean score ``expected_score(elo1)``) against H0 for groups whose
    scores take ``values`` (in [0, 1], each once) ``counts`` times, for every row of
    ``counts`` (..., values) at once; ``prior`` groups are added, half at 0, half at 1."""
    values = np.asarray(values, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    if prior > 0:
        values = np.concatenate([[0.0, 1.0], values])
        weights = np.full(counts.shape[:-1] + (2,), prior / 2)
        counts = np.concatenate([weights, counts], axis=-1)
    s0, s1 = expected_score(elo0), expected_score(elo1)
    observed = counts > 0
    for s in (s0, s1):
        if not ((observed & (values < s)).any(axis=-1) & (observed & (values > s)).any(axis=-1)).all():
            raise ValueError(f"without a prior the scores must lie on both sides of each hypothesis' mean ({s:.4f})")
    lam0, lam1 = _constrained(values, counts, s0), _constrained(values, counts, s1)
    with np.errstate(divide="ignore"):
        gain = np.log(1 + lam0[..., None] * (values - s0)) - np.log(1 + lam1[..., None] * (values - s1))
    return np.asarray(np.where(counts > 0, counts * gain, 0.0).sum(axis=-1), dtype=np.float64)


def _tabulate(scores: Sequence[float] | Floats) -> tuple[Floats, NDArray[np.int64]]:
    """The distinct scores and the index of each score among them."""
    array = np.asarray(scores, dtype=np.float64)
    if array.size and (np.isnan(array).any() or array.min() < 0 or array.max() > 1):
        raise ValueError(f"group scores lie in [0, 1], got {array[(array < 0) | (array > 1) | np.isnan(array)][:3]}")
    values, index = np.unique(np.round(array, 12), return_inverse=True)
    return values, index.reshape(-1)


def llr(scores: Sequence[float] | Floats, elo0: float, elo1: float, prior: float = PRIOR) -> float:
    """The LLR of H1 against H0 after the deal groups that scored ``scores``."""
    values, index = _tabulate(scores)
    counts = np.bincount(index, minlength=len(values)).astype(np.float64)
    return float(llr_counts(values, counts, elo0, elo1, prior))


def llr_trace(
    scores: Sequence[float] | Floats, elo0: float, elo1: float, prior: float = PRIOR, start: int = 0
) -> Floats:
    """The LLR after each group in order: ``llr(scores[: i + 1])`` for every i from
    ``start`` on (the first ``start`` are left out)."""
    values, index = _tabulate(scores)
    if len(index) <= start:
        return np.zeros(0)
    one_hot = np.zeros((len(index), len(values)))
    one_hot[np.arange(len(index)), index] = 1
    return llr_counts(values, np.cumsum(one_hot, axis=0)[start:], elo0, elo1, prior)


def llr_normal(scores: Sequence[float] | Floats, elo0: float, elo1: float) -> float:
    """The normal approximation of the LLR: n (s1 - s0) (mean - (s0 + s1) / 2) / variance
    (the variance of the group scores, divided by n). NaN when every score is alike."""
    array = np.asarray(scores, dtype=np.float64)
    s0, s1 = expected_score(elo0), expected_score(elo1)
    variance = float(array.var())
    if variance == 0:
        return math.nan
    return float(len(array) * (s1 - s0) * (array.mean() - (s0 + s1) / 2) / variance)


@dataclass(frozen=True)
class Decision:
    verdict: str
    """``"H1"``, ``"H0"``, or ``""`` (the groups so far decide nothing)."""
    groups: int
    """The groups counted: up to and including the one that decided, else all."""
    llr: float
    """The LLR after those groups (0 before any)."""


def sequential(scores: Sequence[float] | Floats, sprt: Sprt, undecided: int = 0) -> Decision:
    """The test run over ``scores`` group by group, in order: it stops at the first group
    after which the LLR reaches a bound. The same scores give the same decision.
    ``undecided``: the first that many groups are known to reach no bound (an earlier
    call said so), so only the LLRs after the later ones are computed."""
    undecided = min(undecided, max(len(scores) - 1, 0))
    trace = llr_trace(scores, sprt.elo0, sprt.elo1, start=undecided)
    crossed = np.flatnonzero((trace >= sprt.upper) | (trace <= sprt.lower))
    if len(crossed):
        at = int(crossed[0])
        return Decision(sprt.verdict(float(trace[at])), undecided + at + 1, float(trace[at]))
    return Decision("", undecided + len(trace), float(trace[-1]) if len(trace) else 0.0)


def fixed_length_groups(sd: float, sprt: Sprt) -> float:
    """Groups a fixed-length test of the same error rates needs, given the sd of one
    group's score: the one-sided z-test of mean = s0 at level alpha whose power at s1 is
    1 - beta, ``((z(1 - alpha) + z(1 - beta)) sd / (s1 - s0))^2``."""
    z = NormalDist().inv_cdf
    spread = expected_score(sprt.elo1) - expected_score(sprt.elo0)
    return float(((z(1 - sprt.alpha) + z(1 - sprt.beta)) * sd / spread) ** 2)
