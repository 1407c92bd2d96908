"""The kit's typed views (``arena/bots/views.py``): in every compiled language a bot
reads each field of the view as its own type. Each probe below chooses its answer by a
sum over every field (each kind of type: numbers, flags, text, nulls, lists of lists,
a keyed table); it must play, move for move, what the same sum over the protocol's
Python ``View`` chooses, on the same deals against the same rival."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arena.play.replay import DecisionLine, Header, loads

ARENA = str(Path(sys.executable).parent / "arena")
ROOT = Path(__file__).resolve().parents[2]
GAMES = {  # the rival (deterministic) and the options that reach every field
    "nimmt": ("sample_bots/lowest", ["--variant", "logical"]),
    "sixes": ("sample_bots/sixes-heuristic", ["--game", "sixes"]),
}

PYTHON = {
    "nimmt": """
        f = v.seat + v.players + v.round + v.turn + v.top_card + v.cards_per_turn + len(v.variant)
        f += sum(v.hand) + sum(sum(r) for r in v.rows) + sum(v.scores) + sum(v.round_heads)
        f += sum(c * (s + 1) for t in v.revealed for c, s in t) + (v.card or 0) + v.keep_rows + v.shedding
        f += sum(v.hand_sizes) + sum(v.offer) + sum(c + s for c, s in v.picks)""",
    "sixes": """
        f = v.seat + v.players + v.round + v.turn + v.pot + v.to_move + sum(v.chips) + sum(v.hand_sizes)
        f += sum(len(c) * ord(c[-1]) for c in v.hand)
        f += sum(ord(s[0]) * (r[0] + 2 * r[1]) for s, r in v.table.items() if r is not None)""",
}

PROBES = {
    ("go", "nimmt"): """func decide(kind string, v View, legal []any) int {
	f := v.Seat + v.Players + v.Round + v.Turn + v.TopCard + v.CardsPerTurn + len(v.Variant)
	for _, c := range v.Hand { f += c }
	for _, r := range v.Rows { for _, c := range r { f += c } }
	for _, x := range v.Scores { f += x }
	for _, x := range v.RoundHeads { f += x }
	for _, t := range v.Revealed { for _, p := range t { f += p[0] * (p[1] + 1) } }
	if v.Card != nil { f += *v.Card }
	if v.KeepRows { f++ }
	if v.Shedding { f++ }
	for _, x := range v.HandSizes { f += x }
	for _, x := range v.Offer { f += x }
	for _, p := range v.Picks { f += p[0] + p[1] }
	return f % len(legal)
}""",
    ("go", "sixes"): """func decide(kind string, v View, legal []any) int {
	f := v.Seat + v.Players + v.Round + v.Turn + v.Pot + v.ToMove
	for _, x := range v.Chips { f += x }
	for _, x := range v.HandSizes { f += x }
	for _, c := range v.Hand { f += len(c) * int(c[len(c)-1]) }
	for s, r := range v.Table { if r != nil { f += int(s[0]) * (r[0] + 2*r[1]) } }
	return f % len(legal)
}""",
    ("java", "nimmt"): """    static int decide(String kind, View v, List<String> legal) {
        long f = v.seat + v.players + v.round + v.turn + v.topCard + v.cardsPerTurn + v.variant.length();
        for (long c : v.hand) f += c;
        for (List<Long> r : v.rows) for (long c : r) f += c;
        for (long x : v.scores) f += x;
        for (long x : v.roundHeads) f += x;
        for (List<List<Long>> t : v.revealed) for (List<Long> p : t) f += p.get(0) * (p.get(1) + 1);
        if (v.card != null) f += v.card;
        if (v.keepRows) f++;
        if (v.shedding) f++;
        for (long x : v.handSizes) f += x;
        for (long x : v.offer) f += x;
        for (List<Long> p : v.picks) f += p.get(0) + p.get(1);
        return (int) (f % legal.size());
    }""",
    ("java", "sixes"): """    static int decide(String kind, View v, List<String> legal) {
        long f = v.seat + v.players + v.round + v.turn + v.pot + v.toMove;
        for (long x : v.chips) f += x;
        for (long x : v.handSizes) f += x;
        for (String c : v.hand) f += c.length() * (long) c.charAt(c.length() - 1);
        for (java.util.Map.Entry<String, List<Long>> e : v.table.entrySet()) {
            if (e.getValue() != null) f += e.getKey().charAt(0) * (e.getValue().get(0) + 2 * e.getValue().get(1));
        }
        return (int) (f % legal.size());
    }""",
    ("rust", "nimmt"): """fn decide(_kind: &str, v: &View, legal: &[String]) -> usize {
    let mut f = v.seat + v.players + v.round + v.turn + v.top_card + v.cards_per_turn + v.variant.len() as i64;
    f += v.hand.iter().sum::<i64>() + v.scores.iter().sum::<i64>() + v.round_heads.iter().sum::<i64>();
    for r in &v.rows { f += r.iter().sum::<i64>(); }
    for t in &v.revealed { for p in t { f += p[0] * (p[1] + 1); } }
    f += v.card.unwrap_or(0) + v.keep_rows as i64 + v.shedding as i64;
    f += v.hand_sizes.iter().sum::<i64>() + v.offer.iter().sum::<i64>();
    for p in &v.picks { f += p[0] + p[1]; }
    (f as usize) % legal.len()
}""",
    ("rust", "sixes"): """fn decide(_kind: &str, v: &View, legal: &[String]) -> usize {
    let mut f = v.seat + v.players + v.round + v.turn + v.pot + v.to_move;
    f += v.chips.iter().sum::<i64>() + v.hand_sizes.iter().sum::<i64>();
    for c in &v.hand { f += c.len() as i64 * *c.as_bytes().last().unwrap() as i64; }
    for (s, r) in &v.table { if let Some(r) = r { f += s.as_bytes()[0] as i64 * (r[0] + 2 * r[1]); } }
    (f as usize) % legal.len()
}""",
    ("cpp", "nimmt"): """static size_t decide(const std::string&, const View& v,
                     const std::vector<std::string>& legal) {
    long long f = v.seat + v.players + v.round + v.turn + v.top_card + v.cards_per_turn + (long long)v.variant.size();
    for (auto c : v.hand) f += c;
    for (auto& r : v.rows) for (auto c : r) f += c;
    for (auto x : v.scores) f += x;
    for (auto x : v.round_heads) f += x;
    for (auto& t : v.revealed) for (auto& p : t) f += p[0] * (p[1] + 1);
    if (v.card) f += *v.card;
    f += v.keep_rows + v.shedding;
    for (auto x : v.hand_sizes) f += x;
    for (auto x : v.offer) f += x;
    for (auto& p : v.picks) f += p[0] + p[1];
    return (size_t)(f % (long long)legal.size());
}""",
    ("cpp", "sixes"): """static size_t decide(const std::string&, const View& v,
                     const std::vector<std::string>& legal) {
    long long f = v.seat + v.players + v.round + v.turn + v.pot + v.to_move;
    for (auto x : v.chips) f += x;
    for (auto x : v.hand_sizes) f += x;
    for (auto& c : v.hand) f += (long long)c.size() * c.back();
    for (auto& [s, r] : v.table) if (r) f += s[0] * ((*r)[0] + 2 * (*r)[1]);
    return (size_t)(f % (long long)legal.size());
}""",
    ("c", "nimmt"): """static int decide(const char *kind, const struct view *v, char **legal, int count) {
    (void)kind;
    (void)legal;
    long long f = v->seat + v->players + v->round + v->turn + v->top_card + v->cards_per_turn;
    f += (long long)strlen(v->variant) + v->keep_rows + v->shedding;
    for (int i = 0; i < v->hand.count; i++) f += v->hand.items[i];
    for (int i = 0; i < v->rows.count; i++)
        for (int j = 0; j < v->rows.items[i].count; j++) f += v->rows.items[i].items[j];
    for (int i = 0; i < v->scores.count; i++) f += v->scores.items[i];
    for (int i = 0; i < v->round_heads.count; i++) f += v->round_heads.items[i];
    for (int i = 0; i < v->revealed.count; i++)
        for (int j = 0; j < v->revealed.items[i].count; j++)
            f += v->revealed.items[i].items[j].items[0] * (v->revealed.items[i].items[j].items[1] + 1);
    if (v->card.present) f += v->card.value;
    for (int i = 0; i < v->hand_sizes.count; i++) f += v->hand_sizes.items[i];
    for (int i = 0; i < v->offer.count; i++) f += v->offer.items[i];
    for (int i = 0; i < v->picks.count; i++) f += v->picks.items[i].items[0] + v->picks.items[i].items[1];
    return (int)(f % count);
}""",
    ("c", "sixes"): """static int decide(const char *kind, const struct view *v, char **legal, int count) {
    (void)kind;
    (void)legal;
    long long f = v->seat + v->players + v->round + v->turn + v->pot + v->to_move;
    for (int i = 0; i < v->chips.count; i++) f += v->chips.items[i];
    for (int i = 0; i < v->hand_sizes.count; i++) f += v->hand_sizes.items[i];
    for (int i = 0; i < v->hand.count; i++) {
        size_t n = strlen(v->hand.items[i]);
        f += (long long)n * v->hand.items[i][n - 1];
    }
    for (int i = 0; i < v->table.count; i++)
        if (v->table.values[i].present)
            f += v->table.keys[i][0] * (v->table.values[i].value.items[0] + 2 * v->table.values[i].value.items[1]);
    return (int)(f % count);
}""",
}
LANGUAGES = sorted({language for language, _ in PROBES})
EDITED = {"go": "bot.go", "java": "Bot.java", "rust": "bot.rs", "cpp": "bot.cpp", "c": "bot.c"}


def arena(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=600, cwd=cwd)


def with_probe(source: str, probe: str) -> str:
    """``source`` with its ``decide`` function replaced by ``probe``."""
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines) if " decide(" in line and line.rstrip().endswith("{"))
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    end = next(i for i in range(start + 1, len(lines)) if lines[i] == indent + "}")
    return "\n".join([*lines[:start], probe, *lines[end + 1 :]]) + "\n"


def answers(place: Path, folder: Path, game: str, seed: int) -> list[object]:
    """What seat 0 answered, move by move, in one game against the game's rival."""
    rival, options = GAMES[game]
    log = place / f"{folder.name}-{seed}.jsonl"
    played = arena("play", str(folder), str(ROOT / rival), *options, "--seed", str(seed), "--sandbox", "local",
                   "--strict", "--replay", str(log))  # fmt: skip
    assert played.returncode == 0, played.stdout + played.stderr
    lines = loads(log.read_bytes(), str(log))
    assert isinstance(lines[0], Header)
    decisions = [line for line in lines if isinstance(line, DecisionLine)]
    return [a for line in decisions for s, a in zip(line.seats, line.answers, strict=True) if s == 0]


@pytest.mark.parametrize("game", sorted(GAMES))
@pytest.mark.parametrize("language", LANGUAGES)
def test_a_typed_view_reads_every_field_as_the_protocol_does(place: Path, language: str, game: str) -> None:
    reference = place / f"ref-{uuid.uuid4().hex[:8]}"
    assert arena("bot", "new", reference.name, "--game", game, "--dir", str(place)).returncode == 0
    (reference / "bot.py").write_text(
        "from protocol.bot import Bot, run\n\n\nclass Probe(Bot):\n"
        f'    name = "{reference.name}"\n    version = "0.1.0"\n\n'
        f"    def decide(self, kind, v, legal):{PYTHON[game]}\n        return legal[f % len(legal)]\n\n\n"
        "run(Probe())\n"
    )
    probe = place / f"probe-{language}-{uuid.uuid4().hex[:8]}"
    made = arena("bot", "new", probe.name, "--lang", language, "--game", game, "--dir", str(place))
    assert made.returncode == 0, made.stderr
    edited = probe / EDITED[language]
    edited.write_text(with_probe(edited.read_text(), PROBES[language, game]))
    for seed in (1, 2):
        expected = answers(place, reference, game, seed)
        assert len(set(map(str, expected))) > 3, expected  # the probe's sum moves its choices around
        assert answers(place, probe, game, seed) == expected
