// greedy-js: a 6 nimmt! bot in plain Node.js, no packages. Protocol: docs/protocol.md.
//
// Play: the card that goes onto a row with room (fewer than 5 cards) with the smallest
// gap to that row's end; if no card does, the lowest card. Row: the fewest heads.
// Draft: the lowest card on offer. Two cards a turn: the two best cards by that rule.
"use strict";

const readline = require("readline");

const NAME = "greedy-js";
const VERSION = "1.0.0";

function heads(card) {
  if (card === 55) return 7;
  if (card % 11 === 0) return 5;
  if (card % 10 === 0) return 3;
  if (card % 5 === 0) return 2;
  return 1;
}

function rowHeads(row) {
  return row.reduce((sum, card) => sum + heads(card), 0);
}

// Sort key of a card: [0, gap] if it goes onto a row with room, else [1, card].
function key(card, rows) {
  let best = -1;
  for (let i = 0; i < rows.length; i++) {
    const end = rows[i][rows[i].length - 1];
    if (end < card && (best < 0 || end > rows[best][rows[best].length - 1])) best = i;
  }
  if (best >= 0 && rows[best].length < 5) return [0, card - rows[best][rows[best].length - 1]];
  return [1, card];
}

function ranked(cards, rows) {
  return cards
    .map((card) => [key(card, rows), card])
    .sort((a, b) => a[0][0] - b[0][0] || a[0][1] - b[0][1] || a[1] - b[1])
    .map((entry) => entry[1]);
}

function decide(kind, view, legal) {
  const rows = view.rows || [];
  if (kind === "play" && Array.isArray(legal[0])) {
    // Two cards a turn: legal lists every pair [a, b], a < b; take the two best cards.
    const cards = [...new Set(legal.flat())];
    const best = ranked(cards, rows).slice(0, 2).sort((a, b) => a - b);
    const pair = legal.find((p) => p.length === best.length && p.every((c, i) => c === best[i]));
    return pair || legal[0];
  }
  if (kind === "play") return ranked(legal, rows)[0];
  if (kind === "row") {
    const cost = (r) => [rowHeads(rows[r]), rows[r].length, r];
    return legal.reduce((a, b) => {
      const [x, y] = [cost(a), cost(b)];
      return x[0] < y[0] || (x[0] === y[0] && (x[1] < y[1] || (x[1] === y[1] && x[2] <= y[2]))) ? a : b;
    });
  }
  if (kind === "draft") return Math.min(...legal);
  return legal[0];
}

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (err) {
    process.stderr.write(`greedy-js: not JSON: ${line.slice(0, 80)}\n`);
    return;
  }
  if (msg.type === "hello") {
    send({ type: "hello", name: NAME, version: VERSION, accept: msg.game === "nimmt" });
  } else if (msg.type === "request") {
    send({ type: "answer", id: msg.id, answer: decide(msg.kind, msg.view || {}, msg.legal) });
  } else if (msg.type === "bye") {
    input.close();
  }
});
input.on("close", () => process.exit(0));
