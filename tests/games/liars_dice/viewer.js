/* The Liar's dice drawer of the replay viewer, brought by the game from outside the
 * arena (its record's drawer): the round's bids on the table, and under each seat its
 * chips and its dice, face down until a call shows every die. It draws the frames of
 * frames.py beside it and registers itself as "liars-dice" (docs/viewer.md).
 */
(function (viewer) {
  "use strict";

  var h = viewer.h;
  var FACES = ["one", "two", "three", "four", "five", "six"];
  var PIPS = ["\u2680", "\u2681", "\u2682", "\u2683", "\u2684", "\u2685"];

  function bidText(quantity, face) { return quantity + " \u00d7 " + FACES[face - 1]; }

  function diceText(n) { return n === 1 ? "1 die" : n + " dice"; }

  /* One die: its face once shown, else face down (its value is not on the page). */
  function die(face, seat, index, hit) {
    if (face === null) {
      return h("span", { class: "ld-die ld-hidden", "data-die": "hidden", "data-piece": "d" + seat + "-" + index,
        role: "img", "aria-label": "a hidden die" }, ["?"]);
    }
    return h("span", { class: "ld-die" + (hit ? " ld-hit" : ""), "data-die": String(face),
      "data-piece": "d" + seat + "-" + index, role: "img", "aria-label": "a " + FACES[face - 1] }, [PIPS[face - 1]]);
  }

  function drawTable(self, frame) {
    var table = self.table;
    var seats = self.data.seats;
    table.textContent = "";
    var bids = h("ol", { class: "ld-bids", "data-bids": "" });
    frame.bids.forEach(function (bid, i) {
      var last = i === frame.bids.length - 1;
      bids.appendChild(h("li", { class: "ld-bid" + (last ? " ld-last" : ""), "data-bid": bid[1] + "x" + bid[2] }, [
        h("span", { class: "rv-tag seat-" + (bid[0] % 10), text: seats[bid[0]].letter }), " " + bidText(bid[1], bid[2])
      ]));
    });
    if (!frame.bids.length) bids.appendChild(h("li", { class: "rv-placeholder", text: "no bid yet this round" }));
    var inPlay = frame.cups.reduce(function (sum, n) { return sum + n; }, 0);
    table.appendChild(h("div", { class: "rv-zone" }, [
      h("h3", { class: "rv-zone-title", text: "bids \u00b7 round " + frame.round + " \u00b7 " + diceText(inPlay) + " in play" }),
      bids
    ]));
    var move = frame.move;
    if (frame.kind === "call" && move) {
      var held = move.count >= move.bid[0];
      table.appendChild(h("p", { class: "ld-verdict", "data-verdict": held ? "held" : "lie" }, [
        seats[move.seat].letter + " called " + bidText(move.bid[0], move.bid[1]) + ": " + move.count + " shown, " +
        (held ? "the bid holds" : "a lie") + "; " + seats[move.loser].letter + " pays a chip"
      ]));
    }
  }

  viewer.register("liars-dice", {
    label: "The bids",
    table: drawTable,
    dwell: { roll: 1400, bid: 800, call: 2600 },
    next: function (frame, s) { return frame.to_move === s; },
    stats: function () { return null; },
    extra: function (self, frame, s) {
      var chips = h("span", { class: "rv-chips", "data-chips": String(frame.chips[s]), "aria-hidden": "true" });
      for (var c = 0; c < Math.min(frame.chips[s], 30); c++) chips.appendChild(h("i", { class: "rv-chip" }));
      var face = frame.kind === "call" && frame.move ? frame.move.bid[1] : null;
      var cup = h("div", { class: "ld-cup", "data-dice": String(s), "aria-label": "dice" });
      for (var d = 0; d < frame.cups[s]; d++) {
        var shown = frame.dice ? frame.dice[s][d] : null;
        cup.appendChild(die(shown, s, d, shown !== null && shown === face));
      }
      if (!frame.cups[s]) cup.appendChild(h("span", { class: "rv-placeholder", text: "out of the game" }));
      return [chips, cup];
    }
  });
})(window.ArenaViewer);
