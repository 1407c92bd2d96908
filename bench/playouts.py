"""Benchmark: full 4-player games of 6 nimmt! with random play, the SDK's search rules
(``protocol.nimmt_search``) beside a public TypeScript engine, in one run.

    .venv/bin/python bench/playouts.py --peer PATH [--seconds 3] [--runs 5] [--esbuild CMD]

``--peer`` is a checkout of github.com/ThingsAI-io/6-nimmt-agent (its code is not ours and
is never copied here: a driver written to a scratch folder imports it, and esbuild
bundles the two for Node). Each run measures, in turn, games per second of CPU time:

- ``sdk``: ``protocol.nimmt_search.random_game`` (each round dealt with ``random.sample``,
  every hand played in a random order, a too-low card's row at random), to 66 heads;
- ``referee rules``: the referee's own rules through ``arena.play.simulate.play_game``
  with random policies (a random legal answer at every decision);
- ``peer engine``: the peer's engine (``createGame``, ``dealRound``, ``resolveTurn``,
  ``scoreRound``, ``isGameOver``) with a random card for each seat each turn and a random
  row, to its own end (66 heads);
- ``peer runner``: its game runner (``runGame``) with four ``random`` strategies;
- ``peer playouts``: the loop inside its Monte Carlo strategy (``fisherYates`` and
  ``simulateTurn`` of ``mcs-base``, which always takes the cheapest row), made to play
  whole games: not its engine, the fastest code it has.

Node's CPU time is its own ``process.cpuUsage()``, taken inside the driver around the
games only (not its start-up); ours is ``time.process_time()``.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.games.nimmt import rules
from arena.play.simulate import play_game, random_policy
from protocol.nimmt_search import random_game

DRIVER = """
import { createGame, dealRound, resolveTurn, scoreRound, isGameOver } from '@PEER@/src/engine';
import { runGame } from '@PEER@/src/sim/runner';
import { fisherYates, simulateTurn } from '@PEER@/src/engine/strategies/mcs-base';

const [mode, seconds] = [process.argv[2], Number(process.argv[3])];
const rng = Math.random;
const ids = ['p0', 'p1', 'p2', 'p3'];

function engine(g: number): void {
  let state = createGame(ids, 'g' + g);
  for (;;) {
    state = dealRound(state);
    for (let t = 0; t < 10; t++) {
      const plays = state.players.map((p) => ({ playerId: p.id, card: p.hand[Math.floor(rng() * p.hand.length)] }));
      state = resolveTurn(state, plays, () => Math.floor(rng() * 4));
    }
    state = scoreRound(state);
    if (isGameOver(state)) return;
  }
}

function runner(g: number): void {
  runGame({ players: ids.map((id) => ({ id, strategy: 'random' })), seed: 'g' + g });
}

function playouts(): void {
  const scores = [0, 0, 0, 0];
  const deck = Array.from({ length: 104 }, (_, i) => i + 1);
  while (Math.max(...scores) < 66) {
    fisherYates(deck, rng);
    const hands = [0, 1, 2, 3].map((p) => deck.slice(p * 10, p * 10 + 10));
    const board = [[deck[40]], [deck[41]], [deck[42]], [deck[43]]];
    for (let t = 0; t < 10; t++) {
      const plays = hands.map((h) => h.splice(Math.floor(rng() * h.length), 1)[0]);
      const heads = simulateTurn(plays, board);
      for (let i = 0; i < 4; i++) scores[i] += heads[i];
    }
  }
}

const play = mode === 'engine' ? engine : mode === 'runner' ? runner : playouts;
const start = process.cpuUsage();
const cpu = () => { const u = process.cpuUsage(start); return (u.user + u.system) / 1e6; };
let games = 0;
while (cpu() < seconds) { play(games); games++; }
console.log(JSON.stringify({ games, cpu: cpu() }));
"""
PEER_MODES = {"peer engine": "engine", "peer runner": "runner", "peer playouts": "playouts"}


def sdk_rate(seconds: float) -> float:
    rng = random.Random(1)
    games, start = 0, time.process_time()
    while (elapsed := time.process_time() - start) < seconds:
        random_game(4, rng)
        games += 1
    return games / elapsed


def rules_rate(seconds: float) -> float:
    settings = rules.parse_settings({}, 4)
    policies = [random_policy(random.Random(1))] * 4
    games, start = 0, time.process_time()
    while (elapsed := time.process_time() - start) < seconds:
        play_game(rules, settings, 4, games, policies)
        games += 1
    return games / elapsed


def bundle(code: str, peer: Path, esbuild: str, source: Path, out: Path) -> Path:
    """``code`` (TypeScript importing ``@PEER@/...``) bundled with the peer's for Node."""
    source.write_text(code.replace("@PEER@", str(peer.resolve())))
    command = [*shlex.split(esbuild), str(source), "--bundle", "--platform=node", "--format=esm",
               f"--outfile={out}", "--log-level=warning"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"esbuild could not bundle {source.name} with {peer}: {done.stderr.strip() or done.stdout.strip()}")
    return out


def build_driver(peer: Path, esbuild: str, scratch: Path) -> Path:
    return bundle(DRIVER, peer, esbuild, scratch / "driver.ts", scratch / "driver.mjs")


def peer_rate(bundle: Path, mode: str, seconds: float) -> float:
    done = subprocess.run(["node", str(bundle), mode, str(seconds)], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["games"]) / float(result["cpu"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", type=Path, required=True, help="a checkout of ThingsAI-io/6-nimmt-agent")
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds a measurement")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--esbuild", default="npx --yes esbuild", help="the esbuild command")
    args = parser.parse_args()
    if not (args.peer / "src/engine/game.ts").is_file():
        sys.exit(f"--peer {args.peer}: no src/engine/game.ts (a checkout of ThingsAI-io/6-nimmt-agent)")
    with tempfile.TemporaryDirectory(prefix="arena-bench-playouts-") as scratch:
        bundle = build_driver(args.peer, args.esbuild, Path(scratch))
        rates: dict[str, list[float]] = {"sdk": [], "referee rules": [], **{name: [] for name in PEER_MODES}}
        for run in range(args.runs):  # in turn, so that every one sees the same load
            rates["sdk"].append(sdk_rate(args.seconds))
            rates["referee rules"].append(rules_rate(args.seconds))
            for name, mode in PEER_MODES.items():
                rates[name].append(peer_rate(bundle, mode, args.seconds))
            print(f"run {run + 1}: " + ", ".join(f"{k} {v[-1]:.0f}" for k, v in rates.items()), flush=True)
    medians = {name: statistics.median(values) for name, values in rates.items()}
    print(f"\nfull 4-player games per CPU second, best / median of {args.runs} runs of {args.seconds:g} s")
    print(f"{'':16}{'best':>9}{'median':>9}   sdk's median against it")
    for name, values in rates.items():
        print(f"{name:16}{max(values):9.0f}{medians[name]:9.0f}   {medians['sdk'] / medians[name]:.2f}x")


if __name__ == "__main__":
    main()
