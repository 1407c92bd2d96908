"""Strength against the strongest public 6 nimmt! bot we know: the Monte Carlo search of
github.com/ThingsAI-io/6-nimmt-agent, at equal time a move, in the arena's own
tournament and ratings.

    .venv/bin/python bench/peer_strength.py --peer PATH [--players 4] [--think 0.1]
        [--deals 100] [--seed 11] [--bot sample_bots/montecarlo] [--db FILE]
        [--esbuild CMD] [--sandbox local] [--resume]

``--peer`` is a checkout of the peer (its code is not ours and is never copied here):
the adapter below, ours, imports its MCS strategy (``createMcsStrategy``) and esbuild
bundles the two into a scratch bot folder that speaks the arena's protocol. The peer's
search is untouched; the adapter only sets its simulations per card so that a move
takes ``--think`` seconds (from its own measured cost per simulation and turn, after a
warm-up at ``hello``), and answers a forced card at once.

The table: the measured bot (its ``run`` given ``--think``), the peer, then as many of
``FILLERS`` as make ``--players`` seats: every deal is played once per seat rotation
(``arena tournament run``, fair time: each bot on a core of its own). The move limit
is ``6 x --think`` (at least 1 s), so that the measured bot's longest move (1.8 x
``--think``, the first turn of a round) stays within the third of it it allows itself.
Prints the tournament's board with the likelihood of superiority, then each bot's
mean time per move from the stored replays: what "equal time" came to.

A long run (1 s a move) can be stopped and taken up again: the same settings with
``--resume`` and the same ``--db`` (``--peer`` not needed) play only the games not
stored yet, with the bots stored when it started.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from playouts import bundle

from arena.boards.timing import stored_times
from arena.store import Store

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(ROOT / ".venv" / "bin" / "arena")
FILLERS = ("heuristic", "random", "lowest", "greedy-js")
"""Sample bots that fill the table after the measured bot and the peer, in order."""

ADAPTER = """
import { createMcsStrategy } from '@PEER@/src/engine/strategies/mcs';
import * as readline from 'node:readline';

const args = process.argv.slice(2);
const think = Number(args[args.indexOf('--think') + 1] ?? '0.1');
let unit = 2e-6; // seconds a simulation and remaining turn, learned as it plays
let players = 4;
let initial: number[][] = [[], [], [], []];

const board = (rows: number[][]) => ({ rows: rows.map((r) => [...r]) as any });
const history = (revealed: [number, number][][]) =>
  revealed.map((turn, i) => ({
    turn: i + 1,
    plays: turn.map(([card, seat]) => ({ playerId: 'p' + seat, card })),
    resolutions: [], rowPicks: [], boardAfter: board([[], [], [], []]),
  }));

// Its simulations per card for this move: what fits in `think` at the measured cost.
function timed<T>(work: number, f: (mc: number) => T): T {
  const mc = Math.max(1, Math.floor(think / (unit * work)));
  const t0 = process.hrtime.bigint();
  const out = f(mc);
  const per = Number(process.hrtime.bigint() - t0) / 1e9 / (mc * work);
  if (per > 0) unit = 0.7 * unit + 0.3 * per;
  return out;
}

// A fresh strategy a move: what it knows of the round is the view's (every card
// revealed, the rows and the starting rows), which is all its card counting uses.
function strategy(mc: number) {
  const s = createMcsStrategy({ mcPerCard: mc });
  s.onGameStart!({ playerId: 'p0', playerCount: players, rng: Math.random });
  s.onRoundStart!({ round: 1, hand: [] as any, board: board(initial) });
  return s;
}

function decide(kind: string, view: any, legal: any[]): any {
  players = view.players;
  const hand = view.hand as number[];
  const revealed = view.revealed as [number, number][][];
  if (kind === 'play') {
    if (hand.length === 1) return hand[0];
    const state: any = {
      hand, board: board(view.rows), playerScores: {}, playerCount: players, round: view.round,
      turn: view.turn, turnHistory: history(revealed), initialBoardCards: board(initial),
    };
    return timed(hand.length * hand.length, (mc) => strategy(mc).chooseCard(state));
  }
  if (kind === 'row') {
    const state: any = {
      board: board(view.rows), triggeringCard: view.card,
      revealedThisTurn: revealed[revealed.length - 1].map(([card, seat]) => ({ playerId: 'p' + seat, card })),
      resolutionIndex: 0, hand, playerScores: {}, playerCount: players, round: view.round,
      turn: view.turn, turnHistory: history(revealed.slice(0, -1)),
    };
    return timed(4 * Math.max(1, hand.length), (mc) => strategy(mc).chooseRow(state));
  }
  return legal[0];
}

const send = (o: unknown) => process.stdout.write(JSON.stringify(o) + '\\n');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.type === 'hello') {
    initial = [[1], [30], [60], [90]];
    const view = { players: 4, hand: [5, 12, 25, 33, 47, 58, 66, 71, 88, 99], rows: initial, round: 1, turn: 1, revealed: [] };
    const end = Date.now() + 600; // warm the JIT and the cost estimate
    while (Date.now() < end) decide('play', view, view.hand);
    send({ type: 'hello', name: 'peer-mcs', version: '1' });
  } else if (m.type === 'new_game') {
    players = m.players;
  } else if (m.type === 'events') {
    for (const e of m.events) if (e.type === 'round_start') initial = e.rows;
  } else if (m.type === 'request') {
    let answer;
    try { answer = decide(m.kind, m.view, m.legal); } catch (err) { console.error(err); answer = m.legal[0]; }
    send({ type: 'answer', id: m.id, answer });
  } else if (m.type === 'bye') {
    process.exit(0);
  }
});
"""


def build_peer(peer: Path, esbuild: str, think: float, scratch: Path) -> Path:
    """The peer's MCS as a bot folder: the adapter bundled with its code."""
    folder = scratch / "peer-mcs"
    folder.mkdir()
    bundle(ADAPTER, peer, esbuild, scratch / "adapter.ts", folder / "adapter.mjs")
    (folder / "bot.toml").write_text(
        'name = "peer-mcs"\nversion = "1"\nlanguage = "javascript"\n'
        f'run = "node adapter.mjs --think {think:g}"\ngames = ["nimmt"]\n'
        'description = "ThingsAI-io/6-nimmt-agent\'s Monte Carlo search through an adapter"\n'
    )
    return folder


def with_think(bot: Path, think: float, scratch: Path) -> Path:
    """A copy of ``bot`` whose ``run`` thinks ``think`` seconds a move."""
    copy = scratch / bot.name
    shutil.copytree(bot, copy)
    manifest = copy / "bot.toml"
    text = manifest.read_text()
    run = tomllib.loads(text)["run"]
    thinking = re.sub(r"--think \S+", f"--think {think:g}", run) if "--think" in run else f"{run} --think {think:g}"
    if f'run = "{run}"' not in text:
        sys.exit(f'{manifest}: its run line is not `run = "..."`; give --think there by hand')
    manifest.write_text(text.replace(f'run = "{run}"', f'run = "{thinking}"'))
    return copy


def mean_times(db: Path, name: str) -> list[tuple[str, float, int]]:
    """Each bot's mean time per move (ms) and its moves, over the tournament's replays."""
    store = Store(db, read_only=True)
    tournament = store.get_tournament(name)
    assert tournament is not None
    games = store.find_games(tournament_id=tournament.id, limit=1_000_000)
    seats, _ = stored_times(store, games, None)
    walls: dict[str, list[float]] = {}
    for seat in seats:
        walls.setdefault(seat.bot, []).extend(move.wall_ms for move in seat.moves)
    return [(ref, sum(ms) / max(1, len(ms)), len(ms)) for ref, ms in sorted(walls.items())]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--peer", type=Path, help="a checkout of ThingsAI-io/6-nimmt-agent (not needed to --resume)")
    parser.add_argument("--players", type=int, default=4, choices=range(2, 2 + len(FILLERS) + 1), metavar="2..6")
    parser.add_argument("--think", type=float, default=0.1, help="seconds a move, for both (default 0.1)")
    parser.add_argument("--deals", type=int, default=100, help="deals, each played in every rotation")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--bot", type=Path, default=ROOT / "sample_bots" / "montecarlo")
    parser.add_argument("--db", type=Path, help="keep the games in this database (default: a scratch one)")
    parser.add_argument("--esbuild", default="npx --yes esbuild", help="the esbuild command")
    parser.add_argument("--sandbox", default="local")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--resume", action="store_true", help="go on with the run of these settings in --db")
    args = parser.parse_args()
    if args.resume:
        if args.db is None or not args.db.is_file():
            sys.exit(f"--resume: give the --db the run was started with ({args.db or 'none given'}: no such file)")
    elif args.peer is None:
        sys.exit("--peer: give a checkout of ThingsAI-io/6-nimmt-agent")
    elif not (args.peer / "src/engine/strategies/mcs.ts").is_file():
        sys.exit(f"--peer {args.peer}: no src/engine/strategies/mcs.ts (a checkout of ThingsAI-io/6-nimmt-agent)")
    tournament = f"peer-{args.players}p-{args.think:g}s-seed{args.seed}"
    move_time = max(1.0, 6 * args.think)
    with tempfile.TemporaryDirectory(prefix="arena-bench-peer-") as name:
        scratch = Path(name)
        db = args.db or scratch / "peer.db"
        if args.resume:
            play = ["--resume"]
        else:
            bots = [with_think(args.bot, args.think, scratch), build_peer(args.peer, args.esbuild, args.think, scratch)]
            bots += [ROOT / "sample_bots" / filler for filler in FILLERS[: args.players - 2]]
            play = [*map(str, bots), "--deals", str(args.deals), "--seed", str(args.seed),
                    "--move-time", f"{move_time:g}"]  # fmt: skip
        ran = subprocess.run(
            [ARENA, "tournament", "run", *play, "--db", str(db), "--name", tournament, "--sandbox", args.sandbox,
             "--concurrency", str(args.concurrency)],
        )  # fmt: skip
        if ran.returncode:
            again = " (the same command with --resume goes on)" if args.db else ""
            sys.exit(f"peer_strength: the tournament stopped (exit {ran.returncode}){again}")
        subprocess.run([ARENA, "leaderboard", "--db", str(db), "--tournament", tournament, "--los"], check=True)
        print(f"\nmean time per move (limit {move_time:g} s, {args.think:g} s to think):")
        for ref, ms, moves in mean_times(db, tournament):
            print(f"  {ref:24} {ms:7.1f} ms over {moves} moves")


if __name__ == "__main__":
    main()
