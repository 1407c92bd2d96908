"""The gauntlet's sequential test: its error rates and its length, on group scores of real play.

    .venv/bin/python bench/sprt.py [--runs 1000] [--pool 6000] [--seed 1]

**Real play.** In-process policies play real 6 nimmt! (the standard game, to 66 heads)
in duplicate deal groups, exactly as the gauntlet seats them (one deal in every
rotation of the seats): ``careful-E`` plays, with probability E, a random legal card,
and otherwise the card that risks least (one that lands on a short row, never the
sixth card, the cheapest row when it must take one). Per table size, pools of ``--pool``
deal groups record NEW's group score (its pairwise score against the opponents at the
table, averaged over the group's games):

- heads-up: NEW careful-40 against careful-20 (weaker), careful-30 against careful-30
  (equal), careful-20 against careful-40 (stronger), careful-0 against random
  (far stronger, for the loose test);
- tables of 3: the same, NEW against two copies of the opponent.

**The model.** A bot of a given Elo difference is simulated by drawing each deal
group's score from a mixture of the two pools whose mean scores bracket the target,
with the weight that gives the mixture exactly the target's expected score
``1 / (1 + 10^(-elo/400))``: a bot that flips a coin before each deal to play as one
or the other real pairing. So the group scores are real play, their spread, draws and
skew included, and the true Elo of the simulation is exact (of the pools as drawn).

**The test.** For each case, ``--runs`` independent sequential tests run group by
group through ``leaderboard.sprt`` (the gauntlet's own code) until the LLR reaches a
bound (no cap): the share that accepts H1 when the truth is elo0 (false accept, target
at most alpha + 1 point), the share that accepts H0 at elo1 (false reject, at most beta
+ 1 point), each with its 95% Wilson interval, and the mean, median and 95th percentile
of games to the verdict; also the share still undecided at the CLI's default cap
(``arena.tournaments.plan.DEFAULT_MAX_GAMES``). **Against a fixed length**: the one-sided z-test
of the same alpha whose power at elo1 is 1 - beta needs
``((z(1-alpha) + z(1-beta)) sd / (s1 - s0))^2`` groups (sd of one group's score, the
mean of its value at elo0 and elo1); it is run too, on the same model, to check that
its alpha and power are as designed.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.games.nimmt.rules import cheapest_row  # noqa: E402
from arena.games.registry import get_game  # noqa: E402
from arena.play.simulate import Policy, play_game  # noqa: E402
from arena.tournaments.gauntlet import half_points  # noqa: E402
from arena.tournaments.plan import DEFAULT_MAX_GAMES  # noqa: E402
from arena.tournaments.schedule import deal_seed  # noqa: E402
from leaderboard.sprt import Sprt, expected_score, fixed_length_groups, llr_counts  # noqa: E402
from protocol.nimmt import HEADS, ROW_CAPACITY  # noqa: E402

NIMMT = get_game("nimmt").rules
Z95 = 1.959964


# --- real play -----------------------------------------------------------------------


def risk(rows: Any, card: int) -> float:
    """What playing ``card`` now risks: taking a row (worst), being its sixth card, else
    lengthening a row (shorter rows and closer ends are safer)."""
    end, best = -1, None
    for i, row in enumerate(rows):
        if end < row[-1] < card:
            end, best = row[-1], i
    if best is None:
        return 100 + min(sum(HEADS[c] for c in row) for row in rows)
    row = rows[best]
    if len(row) == ROW_CAPACITY:
        return 50 + sum(HEADS[c] for c in row)
    return len(row) + (card - row[-1]) / 100


def careful(noise: float, rng: random.Random) -> Policy:
    """With probability ``noise`` a random legal answer, else the least risky card (and
    the cheapest row when a row must be taken)."""

    def policy(state: Any, seat: int, legal: list[Any]) -> Any:
        if rng.random() < noise:
            return rng.choice(legal)
        if state.to_place:
            return cheapest_row(state.rows)
        return min(legal, key=lambda card: risk(state.rows, card))

    return policy


def play_group(size: int, seed: int, policies: list[Policy]) -> int:
    """NEW's (``policies[0]``) half points over one deal played in every seat rotation."""
    settings = NIMMT.parse_settings({}, size)
    total = 0
    for rotation in range(size):
        seats = [(seat - rotation) % size for seat in range(size)]  # bot per seat, as schedule.gauntlet
        _, outcome = play_game(NIMMT, settings, size, seed, [policies[b] for b in seats])
        total += half_points(outcome.ranks, seats.index(0))
    return total


@dataclass(frozen=True)
class Pool:
    label: str
    size: int
    points: np.ndarray
    """Half points per group, 0 to 2 K (K - 1)."""

    @property
    def full(self) -> int:
        return 2 * self.size * (self.size - 1)

    @property
    def mean(self) -> float:
        return float(self.points.mean()) / self.full


def pool(label: str, size: int, new: float, opponent: float, groups: int, seed: int) -> Pool:
    rng = random.Random(f"{label}/{seed}")
    policies = [careful(new, rng)] + [careful(opponent, rng) for _ in range(size - 1)]
    number = zlib.crc32(f"{label}/{size}".encode())
    points = [play_group(size, deal_seed(seed, number, g), policies) for g in range(groups)]
    return Pool(label, size, np.array(points, dtype=np.int64))


# --- the model -----------------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    """Group scores with mean exactly ``expected_score(elo)``: pool ``a`` with
    probability ``weight``, else pool ``b``."""

    elo: float
    a: Pool
    b: Pool
    weight: float

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        pick_a = rng.random(n) < self.weight
        from_a = self.a.points[rng.integers(0, len(self.a.points), n)]
        from_b = self.b.points[rng.integers(0, len(self.b.points), n)]
        return np.where(pick_a, from_a, from_b)

    def sd(self) -> float:
        full = self.a.full
        second = self.weight * np.mean((self.a.points / full) ** 2) + (1 - self.weight) * np.mean(
            (self.b.points / full) ** 2
        )
        return math.sqrt(second - expected_score(self.elo) ** 2)


def model(elo: float, pools: list[Pool]) -> Model:
    target = expected_score(elo)
    ordered = sorted(pools, key=lambda p: p.mean)
    for low, high in zip(ordered, ordered[1:], strict=False):
        if low.mean <= target <= high.mean:
            weight = (target - low.mean) / (high.mean - low.mean)
            return Model(elo, high, low, weight)
    raise ValueError(f"no two pools bracket the score {target:.3f} of {elo:+} Elo")


# --- the tests -----------------------------------------------------------------------


@dataclass(frozen=True)
class Runs:
    verdicts: np.ndarray
    """1 H1, -1 H0 per run."""
    groups: np.ndarray


def sequential_runs(truth: Model, sprt: Sprt, runs: int, seed: int, most: int = 400_000) -> Runs:
    """``runs`` tests, all at once, each drawing groups until it decides."""
    rng = np.random.default_rng(seed)
    full = truth.a.full
    values = np.arange(full + 1) / full
    counts = np.zeros((runs, full + 1))
    verdicts = np.zeros(runs, dtype=np.int64)
    groups = np.zeros(runs, dtype=np.int64)
    active = np.arange(runs)
    for step in range(1, most + 1):
        points = truth.draw(rng, len(active))
        counts[active, points] += 1
        llr = llr_counts(values, counts[active], sprt.elo0, sprt.elo1)
        up, down = llr >= sprt.upper, llr <= sprt.lower
        verdicts[active[up]], verdicts[active[down]] = 1, -1
        groups[active[up | down]] = step
        active = active[~(up | down)]
        if not len(active):
            break
    if len(active):
        raise RuntimeError(f"{len(active)} runs undecided after {most} groups")
    return Runs(verdicts, groups)


def fixed_runs(truth: Model, sprt: Sprt, groups: int, sd: float, runs: int, seed: int) -> float:
    """The share of fixed-length tests of ``groups`` groups that accept H1."""
    rng = np.random.default_rng(seed)
    z = statistics.NormalDist().inv_cdf(1 - sprt.alpha)
    threshold = expected_score(sprt.elo0) + z * sd / math.sqrt(groups)
    accepted = 0
    for start in range(0, runs, 50):
        batch = min(50, runs - start)
        means = truth.draw(rng, batch * groups).reshape(batch, groups).mean(axis=1) / truth.a.full
        accepted += int((means > threshold).sum())
    return accepted / runs


def wilson(hits: int, n: int) -> tuple[float, float]:
    p = hits / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return centre - half, centre + half


def percent(hits: int, n: int) -> str:
    low, high = wilson(hits, n)
    return f"{100 * hits / n:4.1f}% [{100 * low:.1f}-{100 * high:.1f}]"


def case(
    label: str, pools: list[Pool], sprt: Sprt, runs: int, seed: int, midpoint: bool, say: Callable[[str], None]
) -> None:
    size = pools[0].size
    at0, at1 = model(sprt.elo0, pools), model(sprt.elo1, pools)
    say(f"\n{label}: SPRT {sprt.text()}, {runs} runs per truth, {size} games per deal group")
    truths = [("elo0", at0), ("elo1", at1)]
    if midpoint:
        truths.append(("midway", model((sprt.elo0 + sprt.elo1) / 2, pools)))
    cap = DEFAULT_MAX_GAMES // size
    for name, truth in truths:
        started = time.perf_counter()
        result = sequential_runs(truth, sprt, runs, seed)
        games = result.groups * size
        h1 = int((result.verdicts == 1).sum())
        h0 = runs - h1
        text = f"  truth {name} ({truth.elo:+g} Elo, group sd {truth.sd():.3f}):"
        if name == "elo0":
            text += f" false accept (H1) {percent(h1, runs)}, target <= {100 * sprt.alpha + 1:.0f}%;"
        elif name == "elo1":
            text += f" false reject (H0) {percent(h0, runs)}, target <= {100 * sprt.beta + 1:.0f}%;"
        else:
            text += f" H1 {percent(h1, runs)};"
        text += (
            f" games to a verdict: mean {games.mean():.0f}, median {np.median(games):.0f},"
            f" 95th percentile {np.percentile(games, 95):.0f};"
            f" undecided at the default cap of {DEFAULT_MAX_GAMES} games {percent(int((result.groups > cap).sum()), runs)}"
            f" ({time.perf_counter() - started:.0f} s)"
        )
        say(text)
    sd = (at0.sd() + at1.sd()) / 2
    fixed = math.ceil(fixed_length_groups(sd, sprt))
    alpha = fixed_runs(at0, sprt, fixed, sd, runs, seed + 1)
    power = fixed_runs(at1, sprt, fixed, sd, runs, seed + 2)
    say(
        f"  fixed length of the same alpha and power: {fixed} groups = {fixed * size} games"
        f" (measured: accepts H1 at elo0 {100 * alpha:.1f}%, at elo1 {100 * power:.1f}%)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000, help="sequential tests per case and truth (at least 200)")
    parser.add_argument("--pool", type=int, default=6000, help="deal groups of real play per pool")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    def say(line: str) -> None:
        print(line, flush=True)

    started = time.perf_counter()
    say(f"real play: {args.pool} deal groups per pool (6 nimmt!, standard, to 66 heads)")
    pools: dict[int, list[Pool]] = {}
    for size in (2, 3):
        pools[size] = []
        pairs = [("weaker", 0.4, 0.2), ("equal", 0.3, 0.3), ("stronger", 0.2, 0.4)]
        if size == 2:
            pairs.append(("far stronger", 0.0, 1.0))
        for label, new, opponent in pairs:
            p = pool(label, size, new, opponent, args.pool, args.seed)
            pools[size].append(p)
            shares = np.bincount(p.points, minlength=p.full + 1) / len(p.points)
            spread = float(np.std(p.points / p.full))
            say(
                f"  {size} seats, {label:<12} careful-{100 * new:.0f} vs careful-{100 * opponent:.0f}:"
                f" mean {p.mean:.3f} ({_elo(p.mean):+.0f} Elo), sd {spread:.3f};"
                f" group scores {' '.join(f'{s:.3f}' for s in shares)}"
            )
    say(f"  ({time.perf_counter() - started:.0f} s)")
    case("heads-up, default test", pools[2], Sprt(), args.runs, args.seed, True, say)
    case("tables of 3, default test", pools[3], Sprt(), args.runs, args.seed, False, say)
    case("heads-up, loose test", pools[2], Sprt(0, 200), args.runs, args.seed, False, say)
    say(f"\ntotal {time.perf_counter() - started:.0f} s")


def _elo(score: float) -> float:
    return -400 * math.log10(1 / score - 1)


if __name__ == "__main__":
    main()
