/* The 6 nimmt! drawer of the replay viewer (docs/viewer.md, "A game's drawer"): the
 * four rows with their six slots, the cards revealed in a turn, the draft's offer, and
 * under each seat its penalty pile and its hand. It draws the frames of
 * arena/games/nimmt/frames.py and registers itself as "nimmt"; a card is keyed by
 * data-piece, so it slides from hand to reveal to row to pile.
 */
(function (viewer) {
  "use strict";

  var h = viewer.h;
  var plural = viewer.plural;

  function face(data, card, size) {
    var heads = data.heads[card];
    var marks = h("span", { class: "card-heads", "aria-hidden": "true" });
    for (var i = 0; i < heads; i++) marks.appendChild(h("i", { class: "hd" }));
    return h("div", {
      class: "card ncard h" + heads + (size ? " " + size : ""),
      "data-card": String(card),
      "data-piece": String(card),
      "data-heads": String(heads),
      role: "img",
      "aria-label": "card " + card + ", " + plural(heads, "head")
    }, [marks, h("span", { class: "card-num", "aria-hidden": "true", text: String(card) })]);
  }

  /* A card nobody may see yet (a hand while its game is played: null): face down. */
  function back(size) {
    return h("div", { class: "card card-hidden" + (size ? " " + size : ""), role: "img", "aria-label": "a hidden card" });
  }

  /* A seat's hand, under its panel. */
  function hand(self, frame, s, face) {
    var cards = h("div", { class: "rv-hand", "data-hand": String(s), "aria-label": "hand" });
    frame.hands[s].forEach(function (c) { cards.appendChild(c === null ? back("sm") : face(self.data, c, "sm")); });
    if (!frame.hands[s].length) cards.appendChild(h("span", { class: "rv-placeholder", text: "no cards" }));
    return cards;
  }

  function drawTable(self, frame) {
    var data = self.data;
    var table = self.table;
    table.textContent = "";
    var move = frame.move;

    if (frame.offer.length) {
      var offer = h("div", { class: "rv-offer", "data-offer": "" });
      frame.offer.forEach(function (c) { offer.appendChild(face(data, c, "sm")); });
      table.appendChild(h("div", { class: "rv-zone" }, [
        h("h3", { class: "rv-zone-title", text: "on offer \u00b7 " + plural(frame.offer.length, "card") }), offer
      ]));
    }

    var drafting = frame.kind === "draft" || frame.kind === "pick";
    var reveal = h("div", { class: "rv-reveal", "data-reveal": "", hidden: drafting ? "" : null });
    frame.revealed.forEach(function (play) {
      reveal.appendChild(h("div", { class: "rv-played seat-" + (play[1] % 10), "data-seat": String(play[1]) }, [
        face(data, play[0]), h("span", { class: "rv-tag", text: data.seats[play[1]].letter })
      ]));
    });
    if (!frame.revealed.length) {
      reveal.appendChild(h("span", {
        class: "rv-placeholder",
        text: "the cards played this turn are revealed here"
      }));
    }
    table.appendChild(h("div", { class: "rv-zone rv-reveal-zone", hidden: drafting ? "" : null }, [
      h("h3", { class: "rv-zone-title", text: "revealed" }), reveal
    ]));

    var rows = h("div", { class: "rv-rows" });
    for (var r = 0; r < 4; r++) {
      var cards = frame.rows[r] || [];
      var heads = cards.reduce(function (sum, c) { return sum + data.heads[c]; }, 0);
      var classes = "rv-row" + (cards.length >= 5 ? " rv-full" : "");
      if (move && move.row === r && frame.kind === "place") {
        classes += move.taken.length ? " rv-taken" : " rv-target";
      }
      var slots = h("div", { class: "rv-slots" });
      for (var s = 0; s < 6; s++) {
        var slot = h("div", { class: "rv-slot" + (s === 5 ? " rv-slot-danger" : "") });
        if (s === 5) slot.appendChild(h("span", { class: "rv-slot-label", "aria-hidden": "true", text: "6th" }));
        if (cards[s] !== undefined) {
          var node = face(data, cards[s]);
          if (move && move.card === cards[s] && frame.kind === "place") node.classList.add("rv-moved");
          slot.appendChild(node);
        }
        slots.appendChild(slot);
      }
      var label = data.unit === "cards" ? plural(cards.length, "card") : plural(heads, "head");
      rows.appendChild(h("div", {
        class: classes, "data-row": String(r), "data-row-heads": String(heads),
        "aria-label": "row " + r + ": " + (cards.length ? cards.join(", ") : "empty") + ", " + label
      }, [
        h("div", { class: "rv-row-label" }, [h("b", { text: "row " + r }), h("span", { text: label })]),
        slots
      ]));
    }
    table.appendChild(rows);
  }

  viewer.register("nimmt", {
    label: "The rows",
    table: drawTable,
    dwell: { draft: 1600, pick: 450, deal: 1700, reveal: 1500, place: 950, round_end: 2800 },
    unit: function (data) { return data.unit === "cards" ? "cards in hand" : data.unit; },
    next: function () { return false; },
    stats: function (self, frame, s) {
      if (self.data.unit !== "heads" || frame.kind === "game_end") return null;
      return h("span", { class: "rv-round-heads" }, [
        "+", h("b", { "data-seat-round": String(s), text: String(frame.round_heads[s]) }), " this round"
      ]);
    },
    extra: function (self, frame, s) {
      var taken = null;
      if (frame.piles[s].length) {
        var pile = h("div", { class: "rv-pile", "data-pile": String(s), "aria-label": "penalty pile" });
        frame.piles[s].forEach(function (c) { pile.appendChild(face(self.data, c, "xs")); });
        taken = h("div", { class: "rv-pile-wrap" }, [h("span", { class: "rv-label", text: "taken" }), pile]);
      }
      return [taken, hand(self, frame, s, face)];
    }
  });
})(window.ArenaViewer);
