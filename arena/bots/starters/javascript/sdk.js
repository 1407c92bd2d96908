// The Six Arena protocol in plain Node.js (no packages): one JSON object a line on stdin,
// one on stdout. run(bot) answers hello, asks bot.decide(kind, view, legal) for every
// request and writes its answer; bot.newGame, bot.events and bot.gameOver are called
// when there (optional). Anything the bot prints must go to stderr (console.error):
// stdout is the protocol's. docs/protocol.md has every message.
"use strict";

const readline = require("readline");

function write(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

function run(bot) {
  const lines = readline.createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch (error) {
      console.error("not JSON: " + line.slice(0, 80));
      return;
    }
    switch (message.type) {
      case "hello":
        write({ type: "hello", name: bot.name, version: bot.version, accept: (bot.games || [message.game]).includes(message.game) });
        break;
      case "request":
        write({ type: "answer", id: message.id, answer: bot.decide(message.kind, message.view, message.legal) });
        break;
      case "new_game":
        if (bot.newGame) bot.newGame(message);
        break;
      case "events":
        if (bot.events) bot.events(message.events);
        break;
      case "game_over":
        if (bot.gameOver) bot.gameOver(message);
        break;
      case "bye":
        lines.close();
        process.exit(0);
    }
  });
}

module.exports = { run };
