"""The ladder: the table choice as a pure function, then real `arena ladder run`
processes over a real SQLite file with real bots in the local sandbox (bubblewrap), and
one on a real Dask cluster."""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.boards.standings import Row
from arena.bots.bundle import pack
from arena.play.match import TimeLimits
from arena.store import Store, StoredBot
from arena.store.submissions import Submissions
from arena.tournaments.ladder import (
    SETTLING,
    WIDE,
    LadderSpec,
    Rated,
    choose_table,
    duty,
    ladder_config,
    movers,
    next_deals,
    progress_line,
    rated,
    rest_after,
    spec_of,
    status_line,
    table_match,
    table_rng,
)
from arena.tournaments.roundrobin import TournamentConfig

from ..conftest import SAMPLES, MakeBot, one_clean_line, serving
from .test_cluster import Workers, scheduler, workers  # noqa: F401 (fixtures)
from .test_pipeline import base, sample  # noqa: F401 (a fixture)

ARENA = str(Path(sys.executable).parent / "arena")

# --- the table choice -----------------------------------------------------------------


def settled(bot_id: int, elo: float = 1500.0, width: float = 60.0) -> Rated:
    return Rated(bot_id, elo, width)


def new(bot_id: int, elo: float = 1500.0) -> Rated:
    return Rated(bot_id, elo, math.inf)


def test_uncertain_bots_are_chosen_first_far_more_often() -> None:
    bots = [new(1), *(settled(i) for i in range(2, 8)), Rated(8, 1500.0, 300.0)]
    firsts = Counter(choose_table(bots, 4, table_rng(11, n))[0] for n in range(4000))
    settled_mean = sum(firsts[i] for i in range(2, 8)) / 6
    assert firsts[1] > 5 * settled_mean, firsts
    assert settled_mean < firsts[8] < firsts[1], "a wide interval sits between new and settled"
    assert all(firsts[i] > 0 for i in range(2, 8)), "settled bots still lead a table now and then"
    seated = Counter(b for n in range(4000) for b in choose_table(bots, 4, table_rng(11, n)))
    assert seated[1] > 1.5 * max(seated[i] for i in range(2, 8)), "a new version plays many more games"


def test_table_mates_are_near_in_elo_yet_everyone_meets_everyone() -> None:
    bots = [settled(1, 1500), settled(2, 1520), settled(3, 1480), settled(4, 2100), settled(5, 900)]
    pairs: Counter[frozenset[int]] = Counter()
    for n in range(3000):
        table = choose_table(bots, 2, table_rng(5, n))
        pairs[frozenset(table)] += 1
    assert pairs[frozenset({1, 2})] > 3 * pairs[frozenset({1, 4})], pairs
    assert all(pairs[frozenset({a, b})] > 0 for a in range(1, 6) for b in range(a + 1, 6)), pairs


@pytest.mark.parametrize("count", range(0, 9))
@pytest.mark.parametrize("size", [2, 3, 4, 6])
def test_a_table_never_seats_a_bot_twice_and_shrinks_to_the_bots_there_are(count: int, size: int) -> None:
    rng = random.Random(count * 10 + size)
    bots = [Rated(i, rng.uniform(1000, 2000), rng.choice([math.inf, 50.0, 400.0])) for i in range(count)]
    for n in range(200):
        table = choose_table(bots, size, table_rng(1, n))
        assert len(table) == len(set(table)), table
        assert len(table) == (min(size, count) if count >= 2 else 0), table
        assert set(table) <= {b.bot_id for b in bots}


def test_two_bots_make_the_table_one_bot_none() -> None:
    assert sorted(choose_table([new(1), settled(2)], 4, table_rng(0, 0))) == [1, 2]
    assert choose_table([new(1)], 4, table_rng(0, 0)) == []
    assert choose_table([], 4, table_rng(0, 0)) == []


def test_the_choice_is_a_function_of_the_seed_and_the_match() -> None:
    bots = [new(1), *(settled(i, 1400 + 20 * i) for i in range(2, 12))]
    first = [choose_table(bots, 4, table_rng(9, n)) for n in range(50)]
    assert first == [choose_table(bots, 4, table_rng(9, n)) for n in range(50)], "a restart chooses the same"
    assert first != [choose_table(bots, 4, table_rng(10, n)) for n in range(50)], "another seed, other tables"
    assert len({tuple(t) for t in first}) > 10, "matches differ"


def test_a_table_is_a_duplicate_group_per_deal() -> None:
    match = table_match(7, 3, 42, deals=2)
    assert match.match_no == 7 and match.bots == [0, 1, 2]
    assert match.deals == [0, 0, 0, 1, 1, 1]
    for deal in (0, 1):
        games = [g for g, d in zip(match.games, match.deals, strict=True) if d == deal]
        assert len({g.seed for g in games}) == 1, "one deal, every rotation"
        for seat in range(3):
            assert sorted(g.seats[seat] for g in games) == [0, 1, 2], "each bot holds every hand once"
    assert match.games[0].seed != match.games[3].seed
    assert table_match(8, 3, 42).games[0].seed != match.games[0].seed, "each match its own deal"


def row(bot: str, elo: float, low: float, high: float, games: int, bound: str = "") -> Row:
    return Row(1, bot, elo, low, high, games, 0, 0.0, 0, 0, 0, 0, bound=bound)


def stored(bot_id: int, name: str) -> StoredBot:
    return StoredBot(bot_id, name, "1", "h", "/nowhere", "python", ["nimmt"], "")


def test_ratings_become_what_the_choice_weighs() -> None:
    bots = [stored(1, "a"), stored(2, "b"), stored(3, "c"), stored(4, "d"), stored(5, "e")]
    rows = [
        row("a:1", 1600, 1550, 1650, 400),
        row("b:1", math.nan, 1700, math.nan, 40, bound=">"),  # a bound is no Elo: the bound is what is known
        row("c:1", 1500, 1200, 1800, SETTLING - 1),
        row("d:1", math.nan, math.nan, math.nan, 12),
    ]
    found = {r.bot_id: r for r in rated(rows, bots)}
    assert found[1] == Rated(1, 1600, 100)
    assert math.isinf(found[2].width) and found[2].elo == 1700, "one-sided: uncertain"
    assert math.isinf(found[3].width), "too few games to trust its interval"
    assert math.isinf(found[4].width) and found[4].elo == 1500, "no Elo: placed at the mean"
    assert math.isinf(found[5].width) and found[5].elo == 1500, "no games: new"


def test_a_table_is_bounded_by_its_time_not_by_earlier_tables() -> None:
    auto = LadderSpec(4)
    assert next_deals(auto, 0.0, 0, 0, None) == 1, "first one deal group: its pace"
    assert next_deals(auto, 0.0, 0, 0, 1.0, 0.5) == 18, "bots of known pace: what fills the time at once"
    assert next_deals(auto, 0.0, 0, 0, 1.0, 0.01) == 64 and next_deals(auto, 0.0, 0, 0, 0.0, 30.0) == 1
    assert next_deals(auto, 1.0, 1, 1, None) == 8, "then at most 8 times what it played"
    assert next_deals(auto, 2.0, 9, 2, 0.8) == 55, "fast groups once the start is counted: up to max_deals"
    assert next_deals(auto, 2.0, 9, 2, None) == 36, "without a start known, a slower guess"
    assert next_deals(auto, 6.0, 8, 2, 1.0) == 6, "what fits in the 4 s left, a start counted"
    assert next_deals(auto, 9.7, 10, 3, 0.0) == 0, "less than half a group left: it ends"
    assert next_deals(auto, 200.0, 1, 1, 1.0) == 0, "a slow bot's table stops after its first group"
    assert next_deals(auto, 5.0, 1, 1, 5.0) == 0, "a start as long as the time left: no run"
    assert next_deals(LadderSpec(4, 3), 0.0, 0, 0, None) == 3, "fixed when the ladder says so, at once"
    assert next_deals(LadderSpec(4, 3), 0.1, 3, 1, None) == 0


def test_settled_pairs_rest_down_to_the_floor() -> None:
    assert duty([new(1), settled(2, width=20)], 0.1) == 1.0, "a new bot: no rest"
    assert duty([settled(1, width=200), settled(2, width=20)], 0.1) == 1.0, "an uncertain pair: no rest"
    assert duty([settled(1, width=50), settled(2, width=50)], 0.1) == pytest.approx(0.5)
    assert duty([settled(1, width=5), settled(2, width=5)], 0.1) == 0.1, "the organiser's floor"
    assert duty([settled(1, width=5), settled(2, width=5)], 1.0) == 1.0, "floor 1: never rests"
    assert duty([settled(1, width=5), settled(2, width=5), new(3)], 0.1) == 1.0, "its least settled pair counts"
    assert rest_after(10.0, 1.0) == 0.0 and rest_after(10.0, 0.5) == pytest.approx(10.0)
    assert rest_after(10.0, 0.1) == pytest.approx(90.0), "a tenth of the time"


def test_progress_is_a_line_a_minute_with_who_moved() -> None:
    moved = movers(
        {"a:1": 1500.0, "b:1": 1480.0, "c:1": 1400.0}, {"a:1": 1510.0, "b:1": 1440.0, "c:1": 1400.2, "d:1": 1300.0}
    )
    assert [m[0] for m in moved] == ["d:1", "b:1", "a:1"], "new first, then the largest change; still ones left out"
    line = progress_line(1200, 96.4, 2, 5, 1, moved)
    assert line == (
        "ladder: 1200 games, 96/min · 5 bots active · 1 submission waiting · 2 tables in play"
        " · moved: d:1 1300 (new), b:1 1440 (-40), a:1 1510 (+10)"
    )


def test_the_ladder_config_is_a_tournaments_with_its_own_part() -> None:
    config = ladder_config(TournamentConfig([], 4, 1, TimeLimits(500)), LadderSpec(4))
    assert config["ladder"] == {
        "table_size": 4,
        "deals_per_table": 0,
        "table_seconds": 10.0,
        "max_deals": 64,
        "reveal_every": 100,
    }
    assert config["limits"]["move_ms"] == 500 and config["bots"] == []
    assert status_line(1, 2, 0) == "ladder: 1 game · 2 bots active · 0 submissions waiting"
    assert WIDE > 0


# --- real ladders ---------------------------------------------------------------------


def activate(db: Path, folder: Path) -> StoredBot:
    """What the pipeline ends with, done at once: submitted, stored, active, in one
    transaction (a running ladder's pipeline never sees it received)."""
    digest, archive = pack(folder)
    name, version = folder.name.rsplit("-", 1)
    with Store(db) as store, store.transaction():
        subs = Submissions(store)
        author = next((a for a in subs.authors() if a.name == "tester"), None) or subs.add_author("tester")[0]
        submission = subs.submit(author, name, version, digest, archive, per_hour=1000)
        bot = store.add_bot(folder)
        subs.activate(submission.id, bot.id, {"build": "", "checks": [], "error": ""})
        return bot


def start(db: Path, *args: str, seed: bool = True) -> subprocess.Popen[str]:
    log = open(db.with_suffix(f".{time.monotonic_ns()}.log"), "w")  # noqa: SIM115 (the process holds it)
    proc = subprocess.Popen(
        [ARENA, "ladder", "run", "--db", str(db), *(["--seed", "5"] if seed else []), "--concurrency", "2", *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    proc.log = Path(log.name)  # type: ignore[attr-defined]
    log.close()
    return proc


def said(proc: subprocess.Popen[str]) -> str:
    return Path(proc.log).read_text(errors="replace")  # type: ignore[attr-defined]


def stop(proc: subprocess.Popen[str]) -> int:
    """SIGTERM, as a service manager stops it; its session killed if it lingers."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode


@pytest.fixture
def ladders() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def games(db: Path) -> list[tuple[int, int, int, int, int, str]]:
    """Every stored game: id, match, game, deal, seed, seated bot ids (a bare reader)."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
            return con.execute("SELECT id, match_no, game_no, deal, seed, seat_bots FROM games ORDER BY id").fetchall()
    except sqlite3.Error:
        return []


HANG_S = 600
"""Only turns a hang into a failure: no test here claims a speed."""


def wait_for(what: str, check: object, proc: subprocess.Popen[str]) -> None:
    """Poll ``check()`` until true (``HANG_S`` at most, a guard against a hang)."""
    deadline = time.monotonic() + HANG_S
    while not check():  # type: ignore[operator]
        assert proc.poll() is None, f"the ladder ended: {said(proc)}"
        assert time.monotonic() < deadline, f"{what}: hung ({HANG_S} s); {said(proc)[-3000:]}"
        time.sleep(0.1)


def whole_matches(db: Path, size: int) -> list[int]:
    """Match numbers with all their ``size`` games stored."""
    count = Counter(m for _, m, *_ in games(db))
    return [m for m, n in count.items() if n == size]


def last_match(db: Path) -> int:
    """The highest match number with a stored game (0 before any)."""
    return max((m for _, m, *_ in games(db)), default=0)


def seated(db: Path, bot: StoredBot) -> list[int]:
    """Match numbers that seated ``bot``."""
    return sorted({m for _, m, _, _, _, seats in games(db) if str(bot.id) in seats.split(",")})


def test_the_ladder_plays_duplicate_groups_and_stores_them_as_a_tournament(
    base: Path,  # noqa: F811
    ladders: list[subprocess.Popen[str]],
) -> None:
    db = base / "arena.db"
    bots = [activate(db, sample(base, name)) for name in ("ann", "bea", "cyd")]
    ladder = start(db, "--sandbox", "local", "--table-size", "3", "--deals-per-table", "2", "--progress-every", "1")
    ladders.append(ladder)
    wait_for("three whole tables", lambda: len(whole_matches(db, 6)) >= 3, ladder)
    assert stop(ladder) == 130
    output = said(ladder)
    assert "go on with: arena ladder run --name ladder --db" in output and "Traceback" not in output
    assert "ladder: " in output or "game 1:" in output
    stored = games(db)
    by_match: dict[int, list[tuple[int, int, int, str]]] = {}
    for _, match_no, game_no, deal, seed, seats in stored:
        by_match.setdefault(match_no, []).append((game_no, deal, seed, seats))
    whole = whole_matches(db, 6)
    assert len(whole) >= 3
    for m in whole:
        rows = sorted(by_match[m])
        assert [g for g, *_ in rows] == list(range(6)) and [d for _, d, _, _ in rows] == [0, 0, 0, 1, 1, 1]
        for deal in (0, 1):
            group = [r for r in rows if r[1] == deal]
            assert len({seed for _, _, seed, _ in group}) == 1, "one deal in every rotation"
            seats = [s.split(",") for *_, s in group]
            assert sorted(seats[0]) == sorted(str(b.id) for b in bots)
            for seat in range(3):
                assert len({s[seat] for s in seats}) == 3, "every bot holds every hand"
    deals = {(m, deal) for _, m, _, deal, _, _ in stored}
    assert len({seed for *_, seed, _ in stored}) == len(deals), "a fresh deal for every deal of every match"
    with Store(db, read_only=True) as store:
        tournament = store.get_tournament("ladder")
        assert tournament is not None and tournament.status == "interrupted"
        assert spec_of(tournament) == LadderSpec(3, 2) and tournament.seed == 5
    board = subprocess.run([ARENA, "ladder", "show", "--db", str(db)], capture_output=True, text=True, timeout=120)
    assert board.returncode == 0 and all(b.ref in board.stdout for b in bots), board.stdout
    resumed = subprocess.run(
        [ARENA, "tournament", "run", "--resume", "--name", "ladder", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    one_clean_line(resumed, "is a ladder: arena ladder run --name ladder")


def test_a_ladder_deals_from_a_chain_revealed_an_epoch_at_a_time(
    base: Path,  # noqa: F811
    ladders: list[subprocess.Popen[str]],
) -> None:
    """Without --seed: each epoch of 2 tables deals from its key of the chain; once its
    tables are played the key is published, and the documented recipe recomputes those
    deals from it, while no published key gives a deal of a later epoch."""
    from .test_deal_secrets import recipe

    db = base / "arena.db"
    for name in ("ann", "bea"):
        activate(db, sample(base, name))
    args = ("--sandbox", "local", "--table-size", "2", "--deals-per-table", "1", "--reveal-every", "2")
    ladder = start(db, *args, seed=False)
    ladders.append(ladder)
    wait_for("three epochs' tables", lambda: len(whole_matches(db, 2)) >= 6, ladder)
    assert stop(ladder) == 130
    with Store(db, read_only=True) as store:
        t = store.get_tournament("ladder")
        assert t is not None and t.secret is not None and t.commitment is not None
        revealed, key = t.revealed_epochs, t.revealed_key
    assert revealed >= 2 and key is not None
    shown = subprocess.run([ARENA, "ladder", "show", "--db", str(db)], capture_output=True, text=True, timeout=120)
    assert f"the last by the key {key}" in shown.stdout and t.secret not in shown.stdout + said(ladder)
    keys = recipe()["ladder_keys"](key, revealed - 1, t.commitment)
    game_seed = recipe()["game_seed"]
    later = 0
    for _, match_no, _, deal, seed, _ in games(db):
        epoch = match_no // 2
        if epoch < revealed:
            assert game_seed(keys[epoch], match_no, deal) == seed
        else:
            later += 1
            assert all(game_seed(k, match_no, deal) != seed for k in keys), "a later epoch's deal given away"
    with serving(db) as site:
        page = json.loads(urllib.request.urlopen(f"{site}/api/ladder", timeout=10).read())
    assert page["deals"]["epochs_revealed"] == revealed and page["deals"]["last_revealed_key"] == key
    assert t.secret not in json.dumps(page)


def test_a_new_version_is_seated_within_a_minute_and_the_retired_one_no_more(
    base: Path,  # noqa: F811
    ladders: list[subprocess.Popen[str]],
) -> None:
    db = base / "arena.db"
    for name in ("ann", "bea"):
        activate(db, sample(base, name))
    ladder = start(db, "--sandbox", "local", "--table-seconds", "2")  # short tables: a quick test, same rule
    ladders.append(ladder)
    wait_for("first games", lambda: len(games(db)) >= 2, ladder)
    old = activate(db, sample(base, "cyd", "1.0"))
    begun = last_match(db)
    wait_for("cyd 1.0 seated", lambda: seated(db, old), ladder)
    newer = activate(db, sample(base, "cyd", "2.0"))
    wait_for("cyd 2.0 seated", lambda: seated(db, newer), ladder)
    first_new = seated(db, newer)[0]
    wait_for("tables after it", lambda: max(m for _, m, *_ in games(db)) >= first_new + 4, ladder)
    assert stop(ladder) == 130
    assert all(m < first_new for m in seated(db, old)), "chosen after 2.0 was active: never 1.0"
    # seated at once, however slow the machine: past the tables begun when it became
    # active (the two in play, the one being chosen), the next table is its own
    assert len(seated(db, old)) >= 1 and seated(db, old)[0] <= begun + 2 + 2, (begun, seated(db, old))
    with Store(db, read_only=True) as store:
        assert store.get_bot("cyd:1.0").id == old.id, "the retired version keeps its games"


def test_kill_9_then_restart_loses_nothing_and_doubles_nothing(
    base: Path,  # noqa: F811
    ladders: list[subprocess.Popen[str]],
) -> None:
    db = base / "arena.db"
    for name in ("ann", "bea", "cyd"):
        activate(db, sample(base, name))
    first = start(db, "--sandbox", "local")
    ladders.append(first)
    wait_for("some games", lambda: len(games(db)) >= 6, first)
    os.killpg(first.pid, signal.SIGKILL)  # the arena, not its bots (their own sessions)
    first.wait()
    before = games(db)
    second = start(db, "--sandbox", "local")
    ladders.append(second)
    wait_for("games after the restart", lambda: len(games(db)) >= len(before) + 6, second)
    assert stop(second) == 130
    after = games(db)
    assert after[: len(before)] == before, "every game stored before the kill is there, unchanged"
    keys = [(m, g) for _, m, g, *_ in after]
    assert len(keys) == len(set(keys)), "no (match, game) twice"
    old_top = max(m for _, m, *_ in before)
    assert min(m for _, m, *_ in after[len(before) :]) > old_top, "no match number reused"


def test_two_ladders_at_once_are_refused_in_one_line(
    base: Path,  # noqa: F811
    ladders: list[subprocess.Popen[str]],
) -> None:
    db = base / "arena.db"
    for name in ("ann", "bea"):
        activate(db, sample(base, name))
    first = start(db, "--sandbox", "local")
    ladders.append(first)
    wait_for("it plays", lambda: len(games(db)) >= 1, first)
    second = subprocess.run(
        [ARENA, "ladder", "run", "--db", str(db), "--sandbox", "local"], capture_output=True, text=True, timeout=120
    )
    one_clean_line(second, "is being run by another arena", f"pid {first.pid}", code=1)
    assert first.poll() is None, "the first goes on"
    assert stop(first) == 130


def test_a_bot_that_breaks_on_the_ladder_never_stops_it(
    base: Path,  # noqa: F811
    make_bot: MakeBot,
    ladders: list[subprocess.Popen[str]],
) -> None:
    """A bot active without passing the check (it crashes at once), and one whose stored
    snapshot went missing: the first plays and faults, the second is left out with one
    line, and the others play on."""
    db = base / "arena.db"
    for name in ("ann", "bea"):
        activate(db, sample(base, name))
    crasher = make_bot("crash", "import sys\nsys.exit(3)\n")
    crasher = crasher.rename(crasher.with_name("crash-0.1"))
    crash = activate(db, crasher)
    lost = activate(db, sample(base, "gone"))
    shutil.rmtree(lost.path)
    ladder = start(db, "--sandbox", "local", "--table-size", "2")
    ladders.append(ladder)
    wait_for("the crasher played", lambda: seated(db, crash), ladder)
    wait_for("games go on after it", lambda: len(games(db)) >= 20, ladder)
    assert stop(ladder) == 130
    output = said(ladder)
    assert "gone:1.0 cannot be seated" in output and "Traceback" not in output
    assert not seated(db, lost)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        crashes = con.execute("SELECT sum(crashes) FROM game_seats WHERE bot_id = ?", (crash.id,)).fetchone()[0]
    assert crashes >= 1, "its crashes are stored as faults"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["ladder", "run", "--name", "t"], "'t' is a tournament, not a ladder"),
        (["ladder", "run", "--game", "sixes"], "--game sixes: ladder 'ladder' plays nimmt"),
        (["ladder", "show", "--name", "t"], "no ladder 't'"),
        (["ladder", "show", "--db", "nowhere.db"], "no such database"),
    ],
)
def test_bad_ladder_input_is_one_line_and_writes_nothing(base: Path, args: list[str], says: str) -> None:  # noqa: F811
    db = base / "arena.db"
    bots = [str(sample(base, n)) for n in ("ann", "bea")]
    made = subprocess.run(
        [ARENA, "tournament", "run", *bots, "--db", str(db), "--name", "t", "--deals", "1", "--sandbox", "local"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    with Store(db) as store:
        config = ladder_config(TournamentConfig([], 4, 1), LadderSpec(4))
        store.create_tournament("ladder", "nimmt", "standard", {}, 1, config)
    before = games(db), db.stat().st_size
    done = subprocess.run(
        [ARENA, *args, *([] if "--db" in args else ["--db", str(db)])], capture_output=True, text=True
    )
    one_clean_line(done, says)
    assert (games(db), db.stat().st_size) == before


def test_the_ladder_plays_on_the_cluster(
    base: Path,  # noqa: F811
    workers: Workers,  # noqa: F811
    ladders: list[subprocess.Popen[str]],
) -> None:
    workers.start("w1", 2)
    workers.wait_for(1)
    db = base / "arena.db"
    for name in ("ann", "bea", "cyd"):
        activate(db, sample(base, name))
    ladder = start(db, "--cluster", workers.scheduler, "--sandbox", "local")
    ladders.append(ladder)
    wait_for("games from the worker", lambda: len(games(db)) >= 8, ladder)
    newer = activate(db, sample(base, "dee"))
    wait_for("a bot activated meanwhile, sent and seated", lambda: seated(db, newer), ladder)
    assert stop(ladder) == 130
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        nodes = {node for (node,) in con.execute("SELECT node FROM games")}
    assert nodes == {"w1"}, "every game played by the worker"
    assert "cluster tcp://" in said(ladder)


# --- a ladder bounded by time, resting, paused and on a budget ------------------------


def sleepy(root: Path, name: str, seconds: float = 0.1) -> Path:
    """A random bot that sleeps ``seconds`` before each answer: a game lasts at least
    about 30 of them, however fast the machine (a slow bot, as montecarlo is)."""
    folder = sample(root, name)
    code = (folder / "bot.py").read_text()
    code = code.replace(
        "    def decide(self, kind, view, legal):\n",
        f"    def decide(self, kind, view, legal):\n        __import__('time').sleep({seconds})\n",
    )
    assert "sleep" in code
    (folder / "bot.py").write_text(code)
    return folder


def matches(db: Path) -> dict[int, list[tuple[int, int, str]]]:
    """Each stored match's games: (game, deal, seated bot ids)."""
    found: dict[int, list[tuple[int, int, str]]] = {}
    for _, match_no, game_no, deal, _, seats in games(db):
        found.setdefault(match_no, []).append((game_no, deal, seats))
    return found


def test_a_slow_bots_table_stops_after_its_first_deal_group(
    base: Path,  # noqa: F811
    ladders: list[subprocess.Popen[str]],
) -> None:
    """Fast tables set a fast pace; a table with the slow bot used to take as many deals
    from it (16 here, minutes). Now each table measures its own first deal group and stops
    once its time is spent: the slow bot's tables are one deal group each."""
    db = base / "arena.db"
    for name in ("ann", "bea"):
        activate(db, sample(base, name))
    slow = activate(db, sleepy(base, "slow"))
    ladder = start(db, "--sandbox", "local", "--table-size", "2", "--table-seconds", "4")
    ladders.append(ladder)

    def slow_tables() -> list[int]:
        found = matches(db)
        return [m for m in seated(db, slow) if m + 2 in found or m < max(found) - 2]

    wait_for("two of the slow bot's tables ended", lambda: len(slow_tables()) >= 2, ladder)
    assert stop(ladder) == 130
    found = matches(db)
    for m in slow_tables():
        assert sorted(g for g, _, _ in found[m]) == [0, 1], f"match {m}: one deal group, then its time was spent"
        assert {d for _, d, _ in found[m]} == {0}
    assert "Traceback" not in said(ladder)


def test_a_newcomer_plays_at_once_while_every_slot_holds_a_slow_table(
    base: Path,  # noqa: F811
    ladders: list[subprocess.Popen[str]],
) -> None:
    """Both slots play 64 deals of two slow bots (over 12 minutes each, on any machine);
    a bot activated meanwhile gets a table of its own beside them at once."""
    db = base / "arena.db"
    for name in ("slow-a", "slow-b"):
        activate(db, sleepy(base, name))
    ladder = start(db, "--sandbox", "local", "--table-size", "2", "--deals-per-table", "64")
    ladders.append(ladder)
    wait_for("the slow tables play", lambda: len(games(db)) >= 1, ladder)
    newcomer = activate(db, sample(base, "newbie"))
    wait_for("the newcomer played", lambda: seated(db, newcomer), ladder)
    busy = [m for m, played in matches(db).items() if m not in seated(db, newcomer)]
    assert len(busy) == 2 and all(len(matches(db)[m]) < 128 for m in busy), "beside the slow tables, not after"
    assert stop(ladder) == 130


def test_pause_and_resume_from_another_terminal(
    base: Path,  # noqa: F811
    ladders: list[subprocess.Popen[str]],
) -> None:
    db = base / "arena.db"
    missing = subprocess.run([ARENA, "ladder", "pause", "--db", str(db)], capture_output=True, text=True, timeout=60)
    for name in ("ann", "bea"):
        activate(db, sample(base, name))
    one_clean_line(
        subprocess.run([ARENA, "ladder", "pause", "--db", str(db)], capture_output=True, text=True, timeout=60),
        "no ladder 'ladder'",
    )
    assert missing.returncode != 0
    ladder = start(db, "--sandbox", "local", "--table-size", "2", "--table-seconds", "1", "--progress-every", "1")
    ladders.append(ladder)
    wait_for("games", lambda: len(games(db)) >= 2, ladder)
    wait_for("a progress line while it plays", lambda: "/min · " in said(ladder), ladder)

    def arena(*args: str) -> str:
        done = subprocess.run([ARENA, "ladder", *args, "--db", str(db)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
        return done.stdout

    assert f"its run (pid {ladder.pid}" in arena("pause")
    wait_for("the run saw it", lambda: "ladder paused" in said(ladder), ladder)

    def still(seconds: float) -> bool:
        before = games(db)
        time.sleep(seconds)
        return games(db) == before

    def ended() -> bool:
        log = said(ladder)
        return " 0 tables in play" in log[log.index("ladder paused") :]

    wait_for("the tables in play ended", ended, ladder)  # its progress line says so
    wait_for("their last games stored", lambda: still(3), ladder)
    assert still(4), "nothing new while paused"
    assert "its run plays again" in arena("resume")
    paused_at = len(games(db))
    wait_for("games again", lambda: len(games(db)) > paused_at, ladder)
    arena("pause")
    wait_for("the run saw it", lambda: said(ladder).count("ladder paused") == 2, ladder)
    assert stop(ladder) == 130
    with Store(db, read_only=True) as store:
        assert store.get_tournament("ladder").status == "paused", "stopped paused, it stays paused"  # type: ignore[union-attr]
    with serving(db) as site:
        health = json.loads(urllib.request.urlopen(f"{site}/api/ladder", timeout=10).read())["health"]
    assert health["state"] == "paused" and "arena ladder resume" in health["text"], health
    again = start(db, "--sandbox", "local")
    ladders.append(again)
    wait_for("it starts paused", lambda: "is paused" in said(again) and "ladder paused" in said(again), again)
    before = len(games(db))
    assert still(4) and len(games(db)) == before
    assert "its run plays again" in arena("resume")
    wait_for("games after resume", lambda: len(games(db)) > before, again)
    assert stop(again) == 130


def test_a_game_budget_ends_the_run_and_old_replays_are_pruned_results_kept(
    base: Path,  # noqa: F811
    ladders: list[subprocess.Popen[str]],
) -> None:
    db = base / "arena.db"
    for name in ("ann", "bea"):
        activate(db, sample(base, name))
    args = ("--table-size", "2", "--games", "10", "--keep-replays", "3", "--progress-every", "0.5")
    ladder = start(db, "--sandbox", "local", *args)
    ladders.append(ladder)
    assert ladder.wait(timeout=300) == 0, said(ladder)
    output = said(ladder)
    stored = games(db)
    assert 10 <= len(stored) <= 11, "the budget, give or take the deal group in play"
    assert f"played {len(stored)} games (--games 10)" in output and "Traceback" not in output
    assert "/min · " in output and "game 1:" not in output, "progress lines, not a line a game"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        kept = [i for i, size in con.execute("SELECT id, length(replay) FROM games ORDER BY id") if size]
    ids = [g[0] for g in stored]
    assert kept == ids[-3:], "the newest 3 replays kept"
    old = subprocess.run([ARENA, "replay", str(ids[0]), "--db", str(db)], capture_output=True, text=True, timeout=60)
    one_clean_line(old, f"game {ids[0]}'s replay was pruned", "its result and ratings are stored")
    new = subprocess.run([ARENA, "replay", str(ids[-1]), "--db", str(db)], capture_output=True, text=True, timeout=60)
    assert new.returncode == 0, new.stderr
    board = subprocess.run(
        [ARENA, "leaderboard", "--db", str(db), "--tournament", "ladder", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    (rows,) = json.loads(board.stdout).values()
    assert sorted(r["games"] for r in rows) == [len(stored)] * 2, "every result rated, pruned or not"
    with serving(db) as site:
        try:
            urllib.request.urlopen(f"{site}/api/games/{ids[0]}/replay", timeout=10)
            raise AssertionError("a pruned replay served")
        except urllib.error.HTTPError as exc:
            assert exc.code == 410 and "was pruned" in exc.read().decode()
        assert urllib.request.urlopen(f"{site}/api/games/{ids[-1]}/replay", timeout=10).status == 200


def sixes_sample(where: Path, name: str) -> Path:
    """``sample_bots/sixes-random`` as ``name`` 1.0, world-readable (as ``sample`` is)."""
    folder = where / "folders" / f"{name}-1.0"
    shutil.copytree(SAMPLES / "sixes-random", folder)
    text = (folder / "bot.toml").read_text().replace('name = "sixes-random"', f'name = "{name}"')
    (folder / "bot.toml").write_text(text.replace('version = "1.0.0"', 'version = "1.0"'))
    for path in (where / "folders", folder, *folder.rglob("*")):
        os.chmod(path, 0o755)
    return folder


def test_a_new_ladder_plays_the_game_its_active_bots_play(
    base: Path,  # noqa: F811
    ladders: list[subprocess.Popen[str]],
) -> None:
    """Created without --game, a ladder takes the game every active bot plays (here not
    the first the arena knows); active bots with no game in common are refused in one
    line that asks for --game, before the ladder is created."""
    db = base / "arena.db"
    for name in ("sue", "sid"):
        activate(db, sixes_sample(base, name))
    mixed = base / "mixed.db"
    activate(mixed, sixes_sample(base, "sal"))
    activate(mixed, sample(base, "ann"))
    refused = subprocess.run([ARENA, "ladder", "run", "--db", str(mixed)], capture_output=True, text=True, timeout=120)
    one_clean_line(refused, "no game in common: sal plays sixes; ann plays nimmt", "--game names the ladder's")
    with sqlite3.connect(f"file:{mixed}?mode=ro", uri=True) as con:
        assert con.execute("SELECT count(*) FROM tournaments").fetchone() == (0,)
    ladder = start(db, "--sandbox", "local", "--table-size", "2", "--games", "2")
    ladders.append(ladder)
    assert ladder.wait(timeout=300) == 0, said(ladder)
    output = said(ladder)
    assert "ladder ladder created: Sixes, tables of 2" in output, output
    assert "ladder ladder · Sixes · tables of 2" in output, output
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        assert con.execute("SELECT game FROM tournaments").fetchall() == [("sixes",)]
    assert len(games(db)) >= 2
