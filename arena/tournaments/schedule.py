"""Round-robin schedules with duplicate deals: who plays whom, on which deal, in which seat.

Bots are grouped into tables of K; each group is a match (its bots started once). A
group plays D deals, and each deal once per rotation of the seats: in rotation r the bot
that sat in seat s moves to seat s + r, so over the K games of a deal every bot holds
every hand (duplicate format, as in duplicate bridge: no bot is luckier in its hands
than another; on real 6 nimmt! play this saves little precision, see docs/ratings.md).

Groups: every combination of K bots while there are at most ``MAX_GROUPS`` of them;
beyond that, ``MAX_GROUPS`` groups chosen greedily so that every bot sits about equally
often and pairs meet about equally often (the least-used bots first, then the bots that
have met the group's members least, ties broken by the seed). Rotations are the K cyclic
shifts, not all K! orders: each bot holds each hand once per deal, which is what
duplicate needs. Everything derives from the tournament's seed, so a resumed run plays
exactly the games an uninterrupted one would. The ties are broken by ``chance.draw``
(SHAKE-256), as the deals are, not by ``random.Random``, whose shuffle may change
between Python versions: the schedule of a seed is the same in every Python, and a
resume checks the games already stored against it (``conflicts``).

A league grows (``arena tournament run --resume --add BOT``) without replaying what it
played: the tables of its earlier sizes keep their numbers, bots and deal seeds, and only
tables that seat a new bot are appended, numbered on (``grown_groups``).

A gauntlet (``gauntlet``) seats one bot, NEW, at every table, in rounds of one deal group
per table, a match holding a few consecutive rounds of one table.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence

import msgspec

from arena.games.chance import draw
from arena.play.match import GameSpec

MAX_GROUPS = 64


class Match(msgspec.Struct, frozen=True):
    match_no: int
    bots: list[int]
    """Indices into the tournament's bot list: the bots of this table."""
    games: list[GameSpec]
    """``GameSpec.seats`` index into ``bots`` (as ``MatchSpec`` wants)."""
    deals: list[int]
    """The deal number of each game: games of one deal form a duplicate group."""


def deal_seed(key: int | str, group: int, deal: int) -> int:
    """A deal's seed: a pure function of the tournament's deal key (its secret, or the
    seed an organiser chose: ``Tournament.deal_key``) and the deal's place in it."""
    digest = hashlib.sha256(f"tournament/{key}/{group}/{deal}".encode()).digest()
    return int.from_bytes(digest[:7], "big")


def by_rotation(match: Match, game_nos: Sequence[int]) -> list[int]:
    """``game_nos`` in the order they are played: rotation by rotation (the first
    rotation of every deal, then the second...), keeping the deals' order within each.
    A bot process never plays two games of one deal (``referee.lives``: it would know
    every hand of the second), so played in this order a table's bots start afresh
    once per rotation instead of once per game."""
    rotation, seen = {}, Counter[int]()
    for game_no, deal in enumerate(match.deals):
        rotation[game_no] = seen[deal]
        seen[deal] += 1
    return sorted(game_nos, key=lambda game_no: (rotation[game_no], game_no))


def groups(bots: int, size: int, seed: int) -> list[list[int]]:
    """The tables: all combinations when few, else a balanced greedy choice."""
    if not 2 <= size <= bots:
        raise ValueError(f"a table of {size} needs between 2 and {bots} seats")
    if math.comb(bots, size) <= MAX_GROUPS:
        return [list(g) for g in itertools.combinations(range(bots), size)]
    sat = [0] * bots
    met = [[0] * bots for _ in range(bots)]
    chosen: list[list[int]] = []
    for table in range(MAX_GROUPS):
        group: list[int] = []
        for seat in range(size):
            candidates = draw(f"groups/{seed}/{table}/{seat}", [b for b in range(bots) if b not in group])
            best = min(candidates, key=lambda b: (sat[b], sum(met[b][m] for m in group)))
            group.append(best)
        for b in group:
            sat[b] += 1
            for other in group:
                if other != b:
                    met[b][other] += 1
        chosen.append(sorted(group))
    return chosen


def grown_groups(sizes: Sequence[int], size: int, seed: int) -> list[list[int]]:
    """The tables of a league that grew: it started with ``sizes[0]`` bots and had
    ``sizes[i]`` after its i-th addition (the added bots take the next indices). The
    tables of each earlier size come first, unchanged, so their numbers and deal seeds
    stay; then, for each addition, only tables with at least one added bot:

    - every such combination when the league so far was every combination and these
      are at most ``MAX_GROUPS`` (the league stays a complete round robin);
    - else a balanced greedy choice: each table starts with the added bot that sat least
      and is filled with the bots that have met its members least (then those that sat
      least, ties broken by the seed), until every added bot sat as often as the bots
      before it did on average.
    """
    if any(later <= earlier for earlier, later in itertools.pairwise(sizes)):
        raise ValueError(f"a league only grows: {list(sizes)}")
    chosen = groups(sizes[0], size, seed)
    complete = math.comb(sizes[0], size) <= MAX_GROUPS
    for step, (before, after) in enumerate(itertools.pairwise(sizes), 1):
        added = math.comb(after, size) - math.comb(before, size)
        if complete and added <= MAX_GROUPS:
            chosen += [list(g) for g in itertools.combinations(range(after), size) if g[-1] >= before]
            continue
        complete = False
        sat = [0] * after
        met = [[0] * after for _ in range(after)]
        for group in chosen:
            for b in group:
                sat[b] += 1
                for other in group:
                    met[b][other] += other != b
        target = max(1, round(sum(sat[:before]) / before))
        while short := [b for b in range(before, after) if sat[b] < target]:
            group = [min(short, key=lambda b: (sat[b], b))]
            while len(group) < size:
                key = f"groups/{seed}/grown/{step}/{len(chosen)}/{len(group)}"
                candidates = draw(key, [b for b in range(after) if b not in group])
                best = min(candidates, key=lambda b: (sum(met[b][m] for m in group), sat[b]))
                group.append(best)
            for b in group:
                sat[b] += 1
                for other in group:
                    met[b][other] += other != b
            chosen.append(sorted(group))
    return chosen


def round_robin(
    bots: int, size: int, deals: int, seed: int, grown: Sequence[int] = (), key: int | str | None = None
) -> list[Match]:
    """Every match of a tournament, in a fixed order. ``grown``: the league's bot counts
    before each of its additions (``grown_groups``); empty for a league that never grew.
    ``seed`` chooses the tables; ``key`` deals (by default the seed: ``deal_seed``)."""
    key = seed if key is None else key
    if deals < 1:
        raise ValueError(f"--deals must be at least 1, not {deals}")
    tables = grown_groups([*grown, bots], size, seed) if grown else groups(bots, size, seed)
    matches = []
    for number, group in enumerate(tables):
        games, deal_numbers = [], []
        for deal in range(deals):
            for rotation in range(size):
                seats = [(seat - rotation) % size for seat in range(size)]
                games.append(GameSpec(deal_seed(key, number, deal), seats))
                deal_numbers.append(deal)
        matches.append(Match(number, group, games, deal_numbers))
    return matches


def gauntlet_tables(opponents: int, size: int) -> list[list[int]]:
    """The tables of a gauntlet: NEW (bot 0) with each combination of ``size - 1`` of
    the ``opponents`` (bots 1 to ``opponents``); heads-up, NEW against each one."""
    if not 2 <= size <= opponents + 1:
        raise ValueError(f"a gauntlet table of {size} needs between 2 and {opponents + 1} seats")
    return [[0, *rest] for rest in itertools.combinations(range(1, opponents + 1), size - 1)]


def gauntlet(opponents: int, size: int, rounds: int, chunk: int, seed: int | str) -> list[Match]:
    """Every match of a gauntlet, in the order it is played. A round is one deal group
    (one deal in every rotation) at each table; deal group ``g`` is round ``g // T`` at
    table ``g % T`` (``T`` tables). A match plays ``chunk`` rounds of one table, so its
    bots start once for them: match ``j * T + t`` plays rounds ``j * chunk`` to
    ``(j + 1) * chunk - 1`` of table ``t``, its games' ``deals`` numbering the rounds.
    ``seed`` is the deal key (``deal_seed``): a gauntlet's tables are fixed."""
    if rounds < 1 or chunk < 1:
        raise ValueError(f"a gauntlet needs at least one round and one round per match, not {rounds} and {chunk}")
    tables = gauntlet_tables(opponents, size)
    matches: list[Match] = []
    for start in range(0, rounds, chunk):
        for number, table in enumerate(tables):
            games, deal_numbers = [], []
            for deal in range(start, min(start + chunk, rounds)):
                for rotation in range(size):
                    seats = [(seat - rotation) % size for seat in range(size)]
                    games.append(GameSpec(deal_seed(seed, number, deal), seats))
                    deal_numbers.append(deal)
            matches.append(Match(len(matches), table, games, deal_numbers))
    return matches


def conflicts(
    matches: Sequence[Match], stored: Mapping[tuple[int, int], tuple[int, list[int]]]
) -> list[tuple[int, int]]:
    """The stored games this schedule would not play as they were played, sorted:
    ``stored`` maps ``(match_no, game_no)`` to the game's deal seed and the bot in each
    seat (indices into the tournament's bots). Any conflict means another schedule
    started the tournament (an arena that chose its tables otherwise), so resuming on
    this one would mix two. Games of matches not in ``matches`` are not looked at (a
    gauntlet runs its schedule a batch at a time)."""
    numbered = {match.match_no: match for match in matches}
    found = []
    for (match_no, game_no), (seed, seats) in stored.items():
        match = numbered.get(match_no)
        if match is None:
            continue
        if game_no >= len(match.games):
            found.append((match_no, game_no))
            continue
        game = match.games[game_no]
        if game.seed != seed or [match.bots[i] for i in game.seats] != seats:
            found.append((match_no, game_no))
    return sorted(found)
