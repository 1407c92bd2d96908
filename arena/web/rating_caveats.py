"""The warnings a board's ratings carry, in plain words, for the callouts above a board
and the marks beside its rows: few deal groups (an interval that is wide and itself
rough), a one-sided rating (won or lost every comparison: a bound only) and bots that
never met (Elos on scales of their own). Pure: board rows in, callouts out.

The rows' ``note`` (``leaderboard.ratings``) says per bot what happened; a caveat says
once per board what it means for the reader, and which bots it concerns.
"""

from __future__ import annotations

from typing import Any

from leaderboard.ratings import FEW_GROUPS

FEW = "few"
BOUND = "bound"
APART = "apart"
SHORT = {FEW: "few groups", BOUND: "bound only", APART: "own scale"}
"""The mark beside a row, per kind of caveat."""


def few_groups() -> int:
    """Below this many deal groups an interval rests on few of them (``leaderboard.ratings``)."""
    return FEW_GROUPS


def _kinds(row: dict[str, Any], few: int) -> list[str]:
    """The caveats that concern one row."""
    kinds = []
    groups = int(row.get("groups") or 0)
    if 0 < groups < few or "deal group" in (row.get("note") or ""):
        kinds.append(FEW)
    if row.get("bound") in (">", "<"):
        kinds.append(BOUND)
    if int(row.get("component") or 0) > 0:
        kinds.append(APART)
    return kinds


def _names(bots: list[str]) -> str:
    return bots[0] if len(bots) == 1 else ", ".join(bots[:-1]) + " and " + bots[-1]


def board_caveats(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each caveat that applies to the board, once: ``kind``, ``title``, ``text`` (what it
    means, naming the bots), ``short`` (the mark beside their rows) and ``bots``."""
    few = few_groups()
    concerned: dict[str, list[str]] = {FEW: [], BOUND: [], APART: []}
    for row in rows:
        for kind in _kinds(row, few):
            concerned[kind].append(row["bot"])
    found: list[dict[str, Any]] = []
    if bots := concerned[FEW]:
        who = "every bot" if len(bots) == len(rows) > 1 else _names(bots)
        found.append(
            {
                "kind": FEW,
                "title": "Few deal groups",
                "text": f"The intervals of {who} rest on fewer than {few} deal groups: they are wide and themselves"
                " rough (one deal group gives none at all). Do not read much into the order of these bots yet;"
                " more deals narrow the intervals.",
                "bots": bots,
            }
        )
    if bots := concerned[BOUND]:
        won = [r["bot"] for r in rows if r.get("bound") == ">"]
        lost = [r["bot"] for r in rows if r.get("bound") == "<"]
        parts = [f"{_names(won)} won every comparison"] if won else []
        parts += [f"{_names(lost)} lost every comparison"] if lost else []
        found.append(
            {
                "kind": BOUND,
                "title": "One-sided ratings",
                "text": f"{'; '.join(parts)}. Such a record has no best estimate: the board shows only a bound"
                " (> the Elo is at least, < at most) where the other bots' results give one, and the Elo shown"
                " orders the board but is not a rating to quote.",
                "bots": bots,
            }
        )
    if bots := concerned[APART]:
        tables = 1 + max(int(r.get("component") or 0) for r in rows)
        found.append(
            {
                "kind": APART,
                "title": "Bots that never met",
                "text": f"The board falls into {tables} groups of bots that never played each other, directly or"
                f" through other bots ({_names(bots)} never met the bots of the first table). Each group is rated"
                " on a scale of its own, in a table of its own: Elos of different tables cannot be compared.",
                "bots": bots,
            }
        )
    for caveat in found:
        caveat["short"] = SHORT[caveat["kind"]]
    return found


def row_marks(caveats: list[dict[str, Any]]) -> dict[str, list[dict[str, str]]]:
    """Per bot, the marks beside its row: each caveat's ``kind``, ``short`` and ``title``."""
    marks: dict[str, list[dict[str, str]]] = {}
    for caveat in caveats:
        for bot in caveat["bots"]:
            marks.setdefault(bot, []).append({k: caveat[k] for k in ("kind", "short", "title")})
    return marks
