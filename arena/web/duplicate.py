"""One deal in all its seat rotations: what duplicate deals are for.

A tournament plays each deal once per rotation of the seats (``arena.tournaments.schedule``): the
games of one deal group share their tournament, match and deal, and seat S holds the
same hand in each of them. So the scores of one hand compare bots on the very same
deal, and a bot's total over a full rotation owes nothing to the luck of the deal.

``deal_group`` is pure: stored games in, the page's data out.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from arena.store import StoredGame


def short_names(refs: Sequence[str]) -> dict[str, str]:
    """Each ``name:version`` as the name alone, unless two versions of one bot share the
    group (then the ref, so that the sentences never mix them up)."""
    names = [ref.rpartition(":")[0] or ref for ref in refs]
    return {ref: ref if names.count(name) > 1 else name for ref, name in zip(refs, names, strict=True)}


def _better(lower_is_better: bool) -> Any:
    """A sort key putting the best score first."""
    return (lambda score: score) if lower_is_better else (lambda score: -score)


def deal_group(games: Sequence[StoredGame], lower_is_better: bool, unit: str = "points") -> dict[str, Any]:
    """The games of one deal group side by side, each bot's results per hand (seat),
    and what the group shows: who did better with the same hand.

    ``games`` are the group's games (any order; shown by game number). A bot's
    ``margin`` is its average over its games of its score minus the mean score of that
    hand in the group: the duplicate score, fair even when a rotation is missing."""
    ordered = sorted(games, key=lambda g: (g.game_no, g.id))
    hands = max((len(g.seats) for g in ordered), default=0)
    best_first = _better(lower_is_better)
    by_hand: list[list[dict[str, Any]]] = [[] for _ in range(hands)]
    for g in ordered:
        for s in g.seats:
            by_hand[s.seat].append({"bot": s.bot, "game": g.id, "score": s.score, "rank": s.rank, "status": s.status})
    hand_mean = [fmean(r["score"] for r in results) if results else 0.0 for results in by_hand]

    refs = sorted({s.bot for g in ordered for s in g.seats})
    names = short_names(refs)
    bots = []
    for ref in refs:
        mine = [(hand, r) for hand, results in enumerate(by_hand) for r in results if r["bot"] == ref]
        scores = [r["score"] for _, r in mine]
        bots.append(
            {
                "bot": ref,
                "name": names[ref],
                "games": len(mine),
                "total": sum(scores),
                "average_score": round(fmean(scores), 2),
                "average_rank": round(fmean(r["rank"] for _, r in mine), 2),
                "margin": round(fmean(r["score"] - hand_mean[hand] for hand, r in mine), 2),
                "by_hand": [[r for hand, r in mine if hand == h] for h in range(hands)],
                "disqualified": sum(1 for _, r in mine if r["status"] == "disqualified"),
            }
        )

    def order(b: dict[str, Any]) -> tuple[Any, ...]:
        """Best margin first; a bot disqualified in the deal after every bot that was not,
        by average rank (its score stopped counting where it was thrown out: a low score
        there is no good play)."""
        if b["disqualified"]:
            return (1, b["average_rank"], best_first(b["margin"]), b["bot"])
        return (0, best_first(b["margin"]), b["average_rank"], b["bot"])

    bots.sort(key=order)

    insights = []
    for hand, results in enumerate(by_hand):
        if len(results) < 2:
            continue
        ranked = sorted(results, key=lambda r: best_first(r["score"]))
        best, worst = ranked[0], ranked[-1]
        if best["score"] == worst["score"]:
            insights.append(f"every bot scored {best['score']} {unit} with hand {hand}")
        else:
            insights.append(
                f"{names[best['bot']]} scored {best['score']} {unit} with hand {hand}"
                f" where {names[worst['bot']]} scored {worst['score']}"
            )

    first = ordered[0] if ordered else None
    return {
        "tournament": first.tournament if first else None,
        "match_no": first.match_no if first else None,
        "deal": first.deal if first else None,
        "seed": first.seed if first else None,
        "hands": hands,
        "rotations": len(ordered),
        "complete": bool(bots) and all(all(b["by_hand"]) for b in bots),
        "lower_is_better": lower_is_better,
        "unit": unit,
        "games": [
            {
                "id": g.id,
                "game_no": g.game_no,
                "seats": [
                    {"seat": s.seat, "bot": s.bot, "score": s.score, "rank": s.rank, "status": s.status}
                    for s in g.seats
                ],
            }
            for g in ordered
        ],
        "hand_mean": [round(m, 2) for m in hand_mean],
        "bots": bots,
        "insights": insights,
    }
