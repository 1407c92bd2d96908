"""The gauntlet's sequential test: the LLR on hand-computed inputs, its bounds, its verdicts."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from leaderboard.sprt import (
    Sprt,
    SprtError,
    elo_of_score,
    expected_score,
    fixed_length_groups,
    llr,
    llr_normal,
    llr_trace,
    parse_sprt,
    sequential,
)

ELO_OF_THREE_QUARTERS = 400 * math.log10(3)
"""The Elo difference whose expected score is 3/4 (190.85)."""


def test_bounds_are_walds() -> None:
    assert Sprt().lower == pytest.approx(-2.944439, abs=1e-6)  # log(0.05 / 0.95)
    assert Sprt().upper == pytest.approx(2.944439, abs=1e-6)  # log(0.95 / 0.05)
    uneven = Sprt(alpha=0.05, beta=0.1)
    assert uneven.lower == pytest.approx(math.log(0.1 / 0.95))
    assert uneven.upper == pytest.approx(math.log(0.9 / 0.05))
    assert Sprt().verdict(2.95) == "H1" and Sprt().verdict(-2.95) == "H0" and Sprt().verdict(2.9) == ""
    assert Sprt().verdict(Sprt().upper) == "H1" and Sprt().verdict(Sprt().lower) == "H0"


def test_logistic_elo() -> None:
    assert expected_score(0) == 0.5
    assert expected_score(ELO_OF_THREE_QUARTERS) == pytest.approx(0.75)
    assert expected_score(-ELO_OF_THREE_QUARTERS) == pytest.approx(0.25)
    assert elo_of_score(0.75) == pytest.approx(ELO_OF_THREE_QUARTERS)
    assert elo_of_score(1.0) == math.inf and elo_of_score(0.0) == -math.inf


def test_two_valued_scores_give_the_bernoulli_llr() -> None:
    # Scores only 0 or 1: the constrained maximum is the Bernoulli with p = s, so the
    # LLR is Wald's: wins log(s1/s0) + losses log((1-s1)/(1-s0)).
    by_hand = 3 * math.log(0.75 / 0.5) + 1 * math.log(0.25 / 0.5)  # 0.5232481
    assert llr([1, 1, 1, 0], 0, ELO_OF_THREE_QUARTERS, prior=0) == pytest.approx(by_hand, abs=1e-10)
    assert by_hand == pytest.approx(0.5232481, abs=1e-7)
    # The prior (0.001 groups) moves it by less than a thousandth.
    assert llr([1, 1, 1, 0], 0, ELO_OF_THREE_QUARTERS) == pytest.approx(by_hand, abs=1e-3)
    # Every group won: n log(s1/s0), each group adding the same.
    s1 = expected_score(200)
    for n in (1, 10, 1000):
        assert llr([1.0] * n, 0, 200) == pytest.approx(n * math.log(s1 / 0.5), rel=1e-3)


def test_scores_midway_between_the_hypotheses_give_zero() -> None:
    # Mean 0.625, halfway between s0 = 0.5 and s1 = 0.75, and the scores symmetric about
    # it: the two constrained maxima mirror each other, the LLR is 0.
    assert llr([1, 0.5, 0.75, 0.25], 0, ELO_OF_THREE_QUARTERS, prior=0) == pytest.approx(0, abs=1e-12)


def test_llr_is_the_constrained_maximum_likelihood() -> None:
    # An independent computation: maximise sum c_i log p_i over distributions on the
    # observed values {0, 1/2, 1} with mean s, by a fine search over the one free
    # parameter, for each hypothesis.
    scores = [0.0] * 3 + [0.5] * 5 + [1.0] * 4

    def best(s: float) -> float:
        counts = np.array([3.0, 5.0, 4.0])
        p1 = np.linspace(max(0.0, s - 0.5), s, 2_000_001)[1:-1]  # mean = p_half / 2 + p1
        half = 2 * (s - p1)
        p0 = 1 - half - p1
        ok = (p0 > 0) & (half > 0)
        logl = counts[0] * np.log(p0[ok]) + counts[1] * np.log(half[ok]) + counts[2] * np.log(p1[ok])
        return float(logl.max())

    s0, s1 = expected_score(0), expected_score(60)
    assert llr(scores, 0, 60, prior=0) == pytest.approx(best(s1) - best(s0), abs=1e-6)


def test_llr_rises_with_every_group_score() -> None:
    rng = np.random.default_rng(3)
    values = np.array([0, 0.25, 0.5, 0.75, 1])
    for _ in range(40):
        scores = rng.choice(values, size=int(rng.integers(5, 60)), p=[0.2, 0.1, 0.4, 0.1, 0.2])
        base = llr(scores, 0, 20)
        i = int(rng.integers(len(scores)))
        if scores[i] < 1:
            higher = scores.copy()
            higher[i] = values[values > scores[i]][0]
            assert llr(higher, 0, 20) > base
        if scores[i] > 0:
            lower = scores.copy()
            lower[i] = values[values < scores[i]][-1]
            assert llr(lower, 0, 20) < base


def test_many_groups_agree_with_the_normal_approximation() -> None:
    rng = np.random.default_rng(5)
    scores = rng.choice([0, 0.25, 0.5, 0.75, 1], size=20_000, p=[0.22, 0.05, 0.45, 0.05, 0.23])
    exact, normal = llr(scores, 0, 10), llr_normal(scores, 0, 10)
    assert abs(exact - normal) < 0.02 * abs(normal) + 0.05


def test_the_trace_is_the_llr_of_every_prefix() -> None:
    scores = [0.5, 1, 0.75, 0, 0.5, 1, 1, 0.25]
    trace = llr_trace(scores, 0, 50)
    assert len(trace) == len(scores)
    for n in range(1, len(scores) + 1):
        assert trace[n - 1] == pytest.approx(llr(scores[:n], 0, 50), abs=1e-9)


def test_going_on_from_an_earlier_decision_changes_no_bit() -> None:
    # The gauntlet re-reads its games after each batch and recomputes only the LLRs after
    # the new groups: they must equal those of the whole computation exactly, or a
    # resumed run (which computes everything) could decide otherwise at a bound.
    scores = np.random.default_rng(2).choice([0, 0.25, 0.5, 0.75, 1], p=[0.22, 0.01, 0.53, 0.01, 0.23], size=3000)
    whole = llr_trace(scores, 0, 10)
    for start in (1, 137, 2999):
        assert np.array_equal(llr_trace(scores, 0, 10, start=start), whole[start:])
    decision = sequential(scores, Sprt(0, 10))
    for known in (0, 100, decision.groups - 1):
        assert sequential(scores, Sprt(0, 10), undecided=known) == decision


def heads_up(elo: float, groups: int, seed: int) -> np.ndarray:
    """Heads-up group scores (0, 1/2 or 1) with mean ``expected_score(elo)``, half of them 1/2."""
    edge = 2 * (expected_score(elo) - 0.5)  # P(1) - P(0), with P(1) + P(0) = 1/2
    p1, p0 = (0.5 + edge) / 2, (0.5 - edge) / 2
    return np.random.default_rng(seed).choice([0.0, 0.5, 1.0], size=groups, p=[p0, 0.5, p1])


def test_a_clearly_better_bot_is_accepted_and_an_equal_one_mostly_rejected() -> None:
    test = Sprt(0, 50)
    better = [sequential(heads_up(150, 400, seed), test) for seed in range(20)]
    assert all(d.verdict == "H1" for d in better)
    assert max(d.groups for d in better) < 200
    equal = [sequential(heads_up(0, 2000, seed), test) for seed in range(20)]
    assert sum(d.verdict == "H0" for d in equal) >= 17  # 95% or more expected; these seeds give 19
    assert all(d.verdict for d in equal)


def test_the_verdict_is_the_first_crossing_and_deterministic() -> None:
    test = Sprt(0, 50)
    scores = heads_up(150, 500, seed=7)
    decision = sequential(scores, test)
    assert decision == sequential(scores.copy(), test)
    trace = llr_trace(scores, 0, 50)
    assert all(test.lower < x < test.upper for x in trace[: decision.groups - 1])
    assert decision.llr == pytest.approx(trace[decision.groups - 1]) and decision.llr >= test.upper
    # Groups after the decision change nothing.
    assert sequential(np.concatenate([scores[: decision.groups], np.zeros(50)]), test) == decision
    # Too few groups: no verdict yet, the LLR so far.
    early = sequential(scores[:2], test)
    assert early.verdict == "" and early.groups == 2 and early.llr == pytest.approx(trace[1])
    assert sequential([], test) == sequential(np.zeros(0), test)
    assert sequential([], test).groups == 0


def test_fixed_length_of_the_same_power() -> None:
    s1 = expected_score(10)
    by_hand = ((1.6448536 + 1.6448536) * 0.3 / (s1 - 0.5)) ** 2
    assert fixed_length_groups(0.3, Sprt()) == pytest.approx(by_hand, rel=1e-6)


def test_parsing_the_parameters() -> None:
    assert parse_sprt("") == Sprt()
    assert parse_sprt("elo0=0,elo1=10,alpha=0.05,beta=0.05") == Sprt()
    assert parse_sprt(" elo1 = 5 , alpha=0.1") == Sprt(0, 5, 0.1, 0.05)
    assert parse_sprt("elo0=-5,elo1=0") == Sprt(-5, 0)
    assert Sprt(0, 5, 0.1).text() == "elo0=0,elo1=5,alpha=0.1,beta=0.05"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("elo0=10,elo1=5", "elo0=10 must be below elo1=5"),
        ("elo0=5,elo1=5", "must be below"),
        ("elo1=-1", "must be below"),
        ("alpha=0", "alpha=0 must lie strictly between 0 and 0.5"),
        ("alpha=0.5", "alpha=0.5 must lie strictly between"),
        ("beta=0.7", "beta=0.7 must lie strictly between"),
        ("beta=-0.1", "beta=-0.1 must lie strictly between"),
        ("elo1", "is not KEY=VALUE"),
        ("elo2=3", "is not KEY=VALUE"),
        ("elo1=ten", "is not a number"),
        ("elo1=5,elo1=6", "given twice"),
        ("elo1=nan", "finite"),
        ("elo1=5000", "outside"),
    ],
)
def test_bad_parameters_are_named(text: str, says: str) -> None:
    with pytest.raises(SprtError, match=None) as caught:
        parse_sprt(text)
    assert says in str(caught.value)


def fewest_groups(test: Sprt) -> int:
    """Deal groups before a NEW that wins every game of each is accepted as stronger."""
    groups = 1
    while not sequential([1.0] * groups, test).verdict:
        groups += 1
    assert sequential([1.0] * groups, test).verdict == "H1"
    return groups


def test_the_readme_says_how_many_deal_groups_a_crushing_win_needs() -> None:
    """The README's numbers are the test's: a clean sweep under the default bounds and
    under the quicker tests it suggests."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    text = " ".join(readme.split())
    found = re.search(r"needs at least (\d+) deal groups before H1 is accepted", text)
    assert found, "the README says how many deal groups a crushing win needs"
    assert int(found.group(1)) == fewest_groups(Sprt()) == 104
    for option, groups in re.findall(r"`--sprt ([^`]+)` (?:decides a clean sweep )?after (\d+) deal groups", text):
        assert fewest_groups(parse_sprt(option)) == int(groups), option
    assert len(re.findall(r"`--sprt ([^`]+)` (?:decides a clean sweep )?after (\d+) deal groups", text)) == 2
