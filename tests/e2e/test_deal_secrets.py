"""Deals come from a secret no bot or spectator can learn while they are played (issue 23,
item 2).

A tournament's deals derive from 256 random bits, committed (SHA-256) when it starts
and revealed when it ends; an organiser's own --seed keeps the deals reproducible and
is marked known. The attack: take everything a spectator sees while the tournament
runs (its pages and JSON, the organiser's terminal), try every number and hex string in
it, and every small seed, as what deals derive from (and as a game's seed): nothing
may predict a deal not yet played. Then the documented recipe, run as docs/protocol.md
prints it, recomputes every stored deal from the revealed secret.

Real `arena tournament run` and `arena serve` processes over a real SQLite file.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from arena.play.replay import loads
from arena.store import Store
from arena.tournaments.schedule import deal_seed
from protocol.nimmt import Deal

from ..conftest import ROOT, SAMPLES, MakeBot, serving
from .test_docker_attacks import PATIENT  # a bot 50 ms a move: the tournament runs long enough to look at

ARENA = str(Path(sys.executable).parent / "arena")


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=300)


def recipe() -> dict[str, Any]:
    """The snippet of docs/protocol.md's "Deals: committed, then revealed", run as printed."""
    text = (ROOT / "docs/protocol.md").read_text()
    section = text[text.index("## Deals: committed, then revealed") :]
    code = section[section.index("```python") + len("```python") : section.index("```", section.index("```python") + 9)]
    names: dict[str, Any] = {}
    exec(compile(code, "docs/protocol.md", "exec"), names)
    return names


def stored_deals(db: Path, name: str) -> list[tuple[int, int, int, Deal]]:
    """``(table, deal, seed, the first round's deal)`` of every stored game of ``name``."""
    out = []
    with Store(db, read_only=True) as store:
        t = store.get_tournament(name)
        assert t is not None
        for game in store.find_games(tournament_id=t.id, limit=1000):
            events = [e for line in loads(store.replay(game.id)) for e in getattr(line, "events", [])]
            dealt = next(
                e
                for e in events
                if (e.get("type") if isinstance(e, dict) else getattr(e, "type", None)) == "deal" or isinstance(e, Deal)
            )
            if isinstance(dealt, dict):
                dealt = Deal(dealt["round"], tuple(map(tuple, dealt["rows"])), tuple(map(tuple, dealt["hands"])))
            out.append((game.match_no, game.deal, game.seed, dealt))
    return out


def predicted(public: str, tables: int, deals: int, seeds: set[int]) -> set[int]:
    """The deal seeds among ``seeds`` that ``public`` text gives away: each number or hex
    string in it, and every seed below 20,000, tried as what the deals derive from and
    as a game's seed itself."""
    tokens = set(re.findall(r"[0-9a-fA-F]{16,}|\d+", public)) | {str(n) for n in range(20_000)}
    found = {int(t) for t in tokens if t.isdigit() and int(t) in seeds}
    for key in tokens:
        for table in range(tables):
            for deal in range(deals):
                if deal_seed(key, table, deal) in seeds:
                    found.add(deal_seed(key, table, deal))
    return found


def get(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return str(answer.read().decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        return str(exc.read().decode("utf-8", "replace"))


def test_nothing_a_spectator_sees_while_it_runs_predicts_a_deal(tmp_path: Path, make_bot: MakeBot) -> None:
    tag = uuid.uuid4().hex[:8]
    bots = [str(make_bot(f"patient-{tag}-{n}", PATIENT + f"\n# {tag}{n}\n")) for n in range(3)]
    db = tmp_path / "arena.db"
    run = subprocess.Popen(
        [ARENA, "tournament", "run", *bots, "--deals", "3", "--db", str(db), "--sandbox", "local", "--name", "cup"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[str] = []
    pending: set[int] = set()
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if db.exists():
                with Store(db, read_only=True) as store:
                    if store.count_games() >= 2:
                        break
            time.sleep(0.2)
        with serving(db) as site:
            seen.append(get(f"{site}/tournaments/cup"))
            seen.append(get(f"{site}/api/tournaments/cup"))
            games = json.loads(get(f"{site}/api/games?tournament=cup&limit=100"))["games"]
            assert games, "games were stored while it ran"
            seen.append(json.dumps(games))
            for game in games:
                for path in ("", "/duplicate"):
                    seen.append(get(f"{site}/games/{game['id']}{path}"))
                for path in ("", "/replay", "/frames", "/duplicate"):
                    seen.append(get(f"{site}/api/games/{game['id']}{path}"))
            status = json.loads(get(f"{site}/api/tournaments/cup"))
            assert status["status"] == "running" and status["games_done"] < 9, "looked at while it ran"
        shown = arena("tournament", "show", "cup", "--db", str(db), "--format", "json")
        seen.append(shown.stdout)
        during = json.loads(shown.stdout)["deals"]
        assert during["from"] == "secret" and during["secret"] is None and len(during["commitment"]) == 64
        seen.append(arena("tournament", "show", "cup", "--db", str(db)).stdout)
        seen.append(arena("tournament", "list", "--db", str(db)).stdout)
        with Store(db, read_only=True) as store:
            pending_of = {(g.match_no, g.game_no) for g in store.find_games(limit=100)}
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
        seen += [out, err]
    finally:
        if run.poll() is None:
            run.kill()
    deals = stored_deals(db, "cup")
    assert len(deals) == 9
    with Store(db, read_only=True) as store:
        later = [g for g in store.find_games(limit=100) if (g.match_no, g.game_no) not in pending_of]
    pending = {g.seed for g in later}
    assert pending, "some games were still to be played when the spectator looked"
    everything = "\n".join(seen)
    assert predicted(everything, 1, 3, pending) == set(), "a deal still to be played was given away"
    # Its end reveals the secret: it hashes to the commitment, and the recipe recomputes every deal.
    after = json.loads(arena("tournament", "show", "cup", "--db", str(db), "--format", "json").stdout)["deals"]
    secret = after["secret"]
    assert secret is not None and hashlib.sha256(secret.encode()).hexdigest() == during["commitment"]
    assert len(bytes.fromhex(secret)) * 8 >= 128
    assert secret not in everything, "the secret was nowhere while it ran"
    snippet = recipe()
    assert snippet["commitment"](secret) == during["commitment"]
    for table, deal, seed, dealt in deals:
        assert snippet["game_seed"](secret, table, deal) == seed
        rows, hands = snippet["nimmt_deal"](seed, 1, 3)
        assert rows == [list(r) for r in dealt.rows] and hands == [list(h) for h in dealt.hands]


def test_an_organisers_seed_is_known_and_says_so(tmp_path: Path) -> None:
    """The control: with --seed 4242 the same attack finds every deal, and the arena warns."""
    db = tmp_path / "arena.db"
    bots = [str(SAMPLES / name) for name in ("random", "lowest")]
    run = arena("tournament", "run", *bots, "--deals", "2", "--seed", "4242", "--db", str(db), "--sandbox", "local")
    assert run.returncode == 0, run.stderr
    assert "--seed 4242 makes the deals known" in run.stderr
    name = json.loads(arena("tournament", "list", "--db", str(db), "--format", "json").stdout)[0]["name"]
    shown = json.loads(arena("tournament", "show", name, "--db", str(db), "--format", "json").stdout)
    assert shown["deals"] == {"from": "seed", "seed": 4242, "known": True}
    assert "known" in arena("tournament", "show", name, "--db", str(db)).stdout
    seeds = {seed for _, _, seed, _ in stored_deals(db, name)}
    assert predicted("", 1, 2, seeds) == seeds, "a guessed seed derives every deal"


def test_a_ladders_chain_gives_earlier_epochs_and_never_a_later_one() -> None:
    from arena.deals import LADDER_EPOCHS, epoch_key, hashed, ladder_commitment

    secret = "ab" * 32
    top = ladder_commitment(secret)
    keys = [epoch_key(secret, e) for e in range(4)]
    assert len(set(keys)) == 4 and secret not in keys
    snippet = recipe()
    for e, key in enumerate(keys):
        assert hashed(key, e + 1) == top, "a revealed key checks against the commitment"
        assert snippet["ladder_keys"](key, e, top) == keys[: e + 1], "and gives every earlier epoch's"
    assert epoch_key(secret, LADDER_EPOCHS - 1) == hashed(secret, 1)
