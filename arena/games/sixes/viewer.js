/* The Sixes drawer of the replay viewer (docs/viewer.md, "A game's drawer"): the four
 * suit columns, the pot, and under each seat its chips and its hand. It draws the
 * frames of arena/games/sixes/frames.py and registers itself as "sixes"; a card is
 * keyed by data-piece, so it slides from hand to its suit's column.
 */
(function (viewer) {
  "use strict";

  var h = viewer.h;
  var plural = viewer.plural;
  var SUIT_GLYPHS = { o: "\u2666", c: "\u2665", e: "\u2660", b: "\u2663" };

  function face(data, card, size) {
    var rank = parseInt(card, 10);
    var suit = card.charAt(card.length - 1);
    var suitInfo = data.suits.filter(function (s) { return s.suit === suit; })[0];
    var rankName = data.rank_names[String(rank)] || String(rank);
    var glyph = SUIT_GLYPHS[suit];
    return h("div", {
      class: "card scard s-" + suit + (size ? " " + size : ""),
      "data-card": card,
      "data-piece": card,
      role: "img",
      "aria-label": rankName + " of " + suitInfo.name
    }, [
      h("span", { class: "card-corner", "aria-hidden": "true" }, [h("b", { text: String(rank) }), glyph]),
      h("span", { class: "card-pip", "aria-hidden": "true", text: glyph }),
      rank >= 10 ? h("span", { class: "card-face", "aria-hidden": "true", text: rankName }) : null
    ]);
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
    var suits = h("div", { class: "rv-suits" });
    data.suits.forEach(function (suit, i) {
      var run = frame.runs[i];
      var column = h("div", {
        class: "rv-suit s-" + suit.suit, "data-suit": suit.suit,
        "aria-label": suit.name + ": " + (run.length ? run.join(", ") : "not started")
      }, [h("h3", { class: "rv-suit-title" }, [
        h("span", { class: "rv-suit-glyph", "aria-hidden": "true", text: SUIT_GLYPHS[suit.suit] }),
        " " + suit.name
      ])]);
      var slots = h("div", { class: "rv-suit-slots" });
      data.ranks.slice().reverse().forEach(function (rank) {
        var card = rank + suit.suit;
        var slot = h("div", { class: "rv-sslot" + (rank === 6 ? " rv-sslot-six" : ""), "data-rank": String(rank) });
        if (run.indexOf(card) >= 0) {
          var node = face(data, card);
          if (move && move.card === card) node.classList.add("rv-moved");
          slot.appendChild(node);
        } else {
          slot.appendChild(h("span", { class: "rv-sslot-label", "aria-hidden": "true", text: String(rank) }));
        }
        slots.appendChild(slot);
      });
      column.appendChild(slots);
      suits.appendChild(column);
    });
    table.appendChild(suits);
    var chips = h("span", { class: "rv-chips", "aria-hidden": "true" });
    for (var c = 0; c < Math.min(frame.pot, 30); c++) chips.appendChild(h("i", { class: "rv-chip" }));
    table.appendChild(h("div", { class: "rv-pot", "aria-label": "pot: " + plural(frame.pot, "chip") }, [
      h("span", { text: "pot " }), h("b", { "data-pot": "", text: String(frame.pot) }), chips
    ]));
  }

  viewer.register("sixes", {
    label: "The table",
    table: drawTable,
    dwell: { deal: 1700, play: 700, pass: 700, round_end: 2800 },
    next: function (frame, s) { return frame.to_move === s; },
    stats: function () { return null; },
    extra: function (self, frame, s) {
      var chips = h("span", { class: "rv-chips", "aria-hidden": "true" });
      for (var c = 0; c < Math.min(frame.chips[s], 30); c++) chips.appendChild(h("i", { class: "rv-chip" }));
      return [chips, hand(self, frame, s, face)];
    }
  });
})(window.ArenaViewer);
