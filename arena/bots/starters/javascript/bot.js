// @NAME@: a Six Arena bot for @TITLE@, in JavaScript (Node.js).
//
// decide is asked for every move: kind says what is asked, view is everything this seat
// may see (view.hand, view.scores...; docs/protocol.md lists the fields), legal every
// answer the referee takes. It plays the first legal answer: make it better.
"use strict";

const { run } = require("./sdk.js");

run({
  name: "@NAME@",
  version: "0.1.0",
  games: ["@GAME@"],
  decide(kind, view, legal) {
    return legal[0];
  },
});
