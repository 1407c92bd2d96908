/* Six Arena replay viewer.
 *
 * Draws the frames that arena/web/viewer.py computes from a verified replay
 * (docs/viewer.md). Every frame holds the whole table, so this file only draws: it
 * applies no game rule. Each game's table is drawn by the drawer its frames name
 * (DRAWERS: "nimmt", "sixes"); a game without one of its own gets "generic", which
 * shows each step's answers and events as JSON, so no game is drawn as another. Data comes from an embedded JSON script element with the id
 * replay-data (the standalone export) or from the URL in the viewer element's
 * data-frames-url attribute (the arena's game page). Cards are keyed by data-card, so a card
 * that moves between two frames (hand -> reveal -> row -> pile) slides there (FLIP).
 */
(function () {
  "use strict";

  var SPEEDS = [0.25, 0.5, 1, 2, 4, 8, 16];
  var DWELL = {
    draft: 1600, pick: 450, deal: 1700, reveal: 1500, place: 950, round_end: 2800, game_end: 3000,
    play: 700, pass: 700, start: 1500, step: 1200
  };
  var SUIT_GLYPHS = { o: "\u2666", c: "\u2665", e: "\u2660", b: "\u2663" };
  var REDUCED_MOTION = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  function h(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      for (var key in attrs) {
        if (!Object.prototype.hasOwnProperty.call(attrs, key) || attrs[key] === null || attrs[key] === undefined) continue;
        if (key === "class") node.className = attrs[key];
        else if (key === "text") node.textContent = attrs[key];
        else node.setAttribute(key, attrs[key]);
      }
    }
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function plural(n, noun) { return n + " " + noun + (n === 1 ? "" : "s"); }

  function ordinal(n) {
    var tens = n % 100;
    var suffix = tens >= 10 && tens <= 20 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th");
    return n + suffix;
  }

  /* JSON a person reads: an object one field a line, each value compact. */
  function readable(value) {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return JSON.stringify(value);
    var keys = Object.keys(value);
    if (!keys.length) return "{}";
    return "{\n" + keys.map(function (k) { return "  " + JSON.stringify(k) + ": " + JSON.stringify(value[k]); })
      .join(",\n") + "\n}";
  }

  /* A duration as m:ss, e.g. 0:33. */
  function clock(value) {
    var seconds = Math.round(value / 1000);
    return Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0");
  }

  function ms(value) {
    if (value === null || value === undefined) return "";
    if (value < 10) return value.toFixed(1) + " ms";
    if (value < 1000) return Math.round(value) + " ms";
    return (value / 1000).toFixed(2) + " s";
  }

  /* ---- cards ------------------------------------------------------------------------ */

  function nimmtCard(data, card, size) {
    var heads = data.heads[card];
    var marks = h("span", { class: "card-heads", "aria-hidden": "true" });
    for (var i = 0; i < heads; i++) marks.appendChild(h("i", { class: "hd" }));
    return h("div", {
      class: "card ncard h" + heads + (size ? " " + size : ""),
      "data-card": String(card),
      "data-heads": String(heads),
      role: "img",
      "aria-label": "card " + card + ", " + plural(heads, "head")
    }, [marks, h("span", { class: "card-num", "aria-hidden": "true", text: String(card) })]);
  }

  function sixesCard(data, card, size) {
    var rank = parseInt(card, 10);
    var suit = card.charAt(card.length - 1);
    var suitInfo = data.suits.filter(function (s) { return s.suit === suit; })[0];
    var rankName = data.rank_names[String(rank)] || String(rank);
    var glyph = SUIT_GLYPHS[suit];
    return h("div", {
      class: "card scard s-" + suit + (size ? " " + size : ""),
      "data-card": card,
      role: "img",
      "aria-label": rankName + " of " + suitInfo.name
    }, [
      h("span", { class: "card-corner", "aria-hidden": "true" }, [h("b", { text: String(rank) }), glyph]),
      h("span", { class: "card-pip", "aria-hidden": "true", text: glyph }),
      rank >= 10 ? h("span", { class: "card-face", "aria-hidden": "true", text: rankName }) : null
    ]);
  }

  /* ---- the viewer ------------------------------------------------------------------- */

  function Viewer(root, data) {
    this.root = root;
    this.data = data;
    this.frames = data.frames;
    this.index = 0;
    this.playing = false;
    this.speed = 1;
    this.timer = null;
    this.lastShown = 0;
    // frames of format 1 before the drawer field name their game, whose drawer it was
    var named = data.drawer || data.game;
    this.drawerName = Object.prototype.hasOwnProperty.call(DRAWERS, named) ? named : "generic";
    this.drawer = DRAWERS[this.drawerName];
    this.build();
    linkControls(this);
    var linked = fragmentFrame(this.frames, location.hash);
    this.show(linked || 0, false);
    if (linked !== null) this.reveal();
  }

  Viewer.prototype.card = function (card, size) {
    return this.drawer.card(this.data, card, size);
  };

  Viewer.prototype.build = function () {
    var self = this;
    var data = this.data;
    var root = this.root;
    root.textContent = "";
    root.classList.add("rv", "rv-" + this.drawerName);
    root.setAttribute("data-frame-count", String(this.frames.length));

    var meta = ["seed " + data.seed, "game " + data.game_no, plural(data.players, "seat")];
    if (data.started) meta.push("started " + data.started.replace("T", " ").replace("+00:00", " UTC"));
    root.appendChild(h("header", { class: "rv-head" }, [
      h("h2", { class: "rv-title" }, [data.title, h("span", { class: "rv-variant", text: " \u00b7 " + data.variant })]),
      h("p", { class: "rv-meta", text: meta.join(" \u00b7 ") })
    ]));

    function button(action, label, glyph, key) {
      var b = h("button", {
        type: "button", class: "rv-btn rv-" + action, "data-action": action,
        "aria-label": label, title: label + " (" + key + ")"
      }, [h("span", { "aria-hidden": "true", text: glyph })]);
      b.addEventListener("click", function () { self.act(action); });
      return b;
    }
    this.playButton = button("play", "Play", "\u25b6 Play", "Space");
    var rounds = h("select", { class: "rv-round", "aria-label": "Jump to round" });
    data.rounds.forEach(function (r, i) {
      rounds.appendChild(h("option", { value: String(i), text: "Round " + r.round }));
    });
    rounds.addEventListener("change", function () {
      self.show(data.rounds[+rounds.value].frame, false);
      rounds.blur(); // else the select keeps the keys: an arrow would change its round, Space reopen it
    });
    this.roundSelect = rounds;
    var speed = h("select", { class: "rv-speed", "aria-label": "Playback speed" });
    SPEEDS.forEach(function (s) {
      // each speed says how long the whole game takes at it, so a quick look is one choice away
      var option = h("option", { value: String(s), text: s + "\u00d7 \u00b7 " + clock(self.duration(s)) });
      if (s === 1) option.selected = true;
      speed.appendChild(option);
    });
    speed.addEventListener("change", function () { self.speed = +speed.value; self.schedule(); speed.blur(); });
    this.speedSelect = speed;
    this.counter = h("span", { class: "rv-counter", "data-frame-index": "0", "aria-live": "off" });
    this.scrub = h("input", {
      type: "range", class: "rv-scrub", min: "0", max: String(this.frames.length - 1), value: "0",
      "aria-label": "Frame"
    });
    this.scrub.addEventListener("input", function () { self.show(+self.scrub.value, false); });
    root.appendChild(h("div", { class: "rv-controls", role: "toolbar", "aria-label": "Replay controls" }, [
      h("div", { class: "rv-buttons" }, [
        button("first", "First frame", "\u21e4", "Home"),
        button("prev", "Step back", "\u25c0", "\u2190"),
        this.playButton,
        button("next", "Step forward", "\u25b6", "\u2192"),
        button("last", "Last frame", "\u21e5", "End")
      ]),
      h("label", { class: "rv-field" }, [h("span", { text: "round" }), rounds]),
      h("label", { class: "rv-field" }, [h("span", { text: "speed" }), speed]),
      this.counter,
      this.scrub
    ]));
    this.caption = h("p", { class: "rv-caption", "data-caption": "", "aria-live": "polite" });
    root.appendChild(this.caption);
    this.timeline = timeline(this);
    if (this.timeline) root.appendChild(this.timeline);

    this.board = h("div", { class: "rv-board" });
    this.table = h("section", { class: "rv-table", "aria-label": this.drawer.label });
    this.seats = h("section", { class: "rv-seats", "aria-label": "Seats" });
    this.board.appendChild(this.table);
    this.board.appendChild(this.seats);
    root.appendChild(this.board);

    root.appendChild(h("p", { class: "rv-help" }, [
      "Keys: ", h("kbd", { text: "Space" }), " play/pause \u00b7 ", h("kbd", { text: "\u2190" }), " ",
      h("kbd", { text: "\u2192" }), " step \u00b7 ", h("kbd", { text: "Home" }), " ", h("kbd", { text: "End" }),
      " first/last \u00b7 ", h("kbd", { text: "[" }), " ", h("kbd", { text: "]" }), " previous/next round \u00b7 ",
      h("kbd", { text: "1" }), "\u2013", h("kbd", { text: "9" }), " round 1\u20139"
    ]));
    root.appendChild(this.details());

    document.addEventListener("keydown", function (event) { self.key(event); });
    document.addEventListener("keyup", function (event) {
      // a button pressed with Space clicks on key up: the keydown already played or paused
      if (event.key === " " && event.target && event.target.tagName === "BUTTON") event.preventDefault();
    });
  };

  Viewer.prototype.details = function () {
    var data = this.data;
    var settings = Object.keys(data.settings).map(function (k) { return k + "=" + data.settings[k]; }).join(" ");
    var limits = Object.keys(data.limits).map(function (k) { return k + " " + data.limits[k]; }).join(", ");
    var list = h("ul", { class: "rv-seat-list" });
    data.seats.forEach(function (seat) {
      list.appendChild(h("li", {}, [
        h("b", { text: seat.letter + " " + seat.name }), " " + seat.version + " \u00b7 " + seat.isolation
      ]));
    });
    return h("details", { class: "rv-details" }, [
      h("summary", { text: "Game details" }),
      h("p", { text: "settings: " + settings }),
      h("p", { text: "limits: " + limits }),
      list
    ]);
  };

  Viewer.prototype.key = function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    var tag = target && target.tagName;
    // text fields keep every key; a focused round or speed select gives the viewer's keys to
    // the viewer (preventDefault below stops the select changing or opening as well)
    if (tag === "INPUT" && target.type !== "range" || tag === "TEXTAREA" || target && target.isContentEditable) return;
    if (tag === "SELECT" && !this.root.contains(target)) return;
    if (tag === "INPUT" && (event.key === "ArrowLeft" || event.key === "ArrowRight")) return;
    var k = event.key;
    var action = { " ": "play", ArrowRight: "next", ArrowLeft: "prev", Home: "first", End: "last", "[": "prevRound",
      "]": "nextRound" }[k];
    if (action) {
      event.preventDefault(); // Space must not also scroll the page or press the focused button
      this.act(action);
    } else if (/^[1-9]$/.test(k)) {
      var round = this.data.rounds[+k - 1];
      if (round) {
        event.preventDefault();
        this.show(round.frame, false);
      }
    }
  };

  Viewer.prototype.act = function (action) {
    var last = this.frames.length - 1;
    var roundNo = this.roundIndex();
    switch (action) {
      case "play": if (this.playing) this.pause(); else this.play(); return;
      case "next": this.pause(); this.show(this.index + 1, true); return;
      case "prev": this.pause(); this.show(this.index - 1, true); return;
      case "first": this.pause(); this.show(0, false); return;
      case "last": this.pause(); this.show(last, false); return;
      case "prevRound": {
        var start = this.data.rounds[roundNo].frame;
        var target = this.index > start || roundNo === 0 ? start : this.data.rounds[roundNo - 1].frame;
        this.show(target, false);
        return;
      }
      case "nextRound":
        if (roundNo + 1 < this.data.rounds.length) this.show(this.data.rounds[roundNo + 1].frame, false);
        else this.show(last, false);
        return;
    }
  };

  Viewer.prototype.roundIndex = function () {
    var rounds = this.data.rounds;
    var found = 0;
    for (var i = 0; i < rounds.length; i++) if (rounds[i].frame <= this.index) found = i;
    return found;
  };

  Viewer.prototype.play = function () {
    if (this.index >= this.frames.length - 1) this.show(0, false);
    this.playing = true;
    this.schedule();
    this.syncControls();
  };

  Viewer.prototype.pause = function () {
    this.playing = false;
    clearTimeout(this.timer);
    this.timer = null;
    this.syncControls();
  };

  /* How long playing every frame takes at ``speed``, in ms (each frame's dwell, as ``schedule`` waits). */
  Viewer.prototype.duration = function (speed) {
    var total = 0;
    for (var i = 0; i < this.frames.length - 1; i++) total += (DWELL[this.frames[i].kind] || 900) / speed;
    return total;
  };

  /* Where a frame link lands: the caption and the board, just under the controls (sticky
   * at the top of the screen), wherever the viewer sits on the page. */
  Viewer.prototype.reveal = function () {
    var controls = this.root.querySelector(".rv-controls");
    var stuck = controls && getComputedStyle(controls).position === "sticky" ? controls.offsetHeight : 0;
    this.caption.style.scrollMarginTop = stuck + 8 + "px";
    this.caption.scrollIntoView({ block: "start" });
  };

  Viewer.prototype.schedule = function () {
    var self = this;
    clearTimeout(this.timer);
    if (!this.playing) return;
    var frame = this.frames[this.index];
    var dwell = (DWELL[frame.kind] || 900) / this.speed;
    this.timer = setTimeout(function () {
      if (self.index < self.frames.length - 1) {
        self.show(self.index + 1, true);
        self.schedule();
      } else {
        self.pause();
      }
    }, dwell);
  };

  Viewer.prototype.show = function (index, animate) {
    index = Math.max(0, Math.min(this.frames.length - 1, index));
    // slide the cards only for a single step, and not while a key is held down or
    // play runs too fast to see a slide: then each frame is simply drawn
    var now = Date.now();
    var rapid = now - this.lastShown < 150;
    this.lastShown = now;
    var slide = animate && !rapid && !REDUCED_MOTION && Math.abs(index - this.index) === 1;
    var before = slide && this.slideTime(index) >= 60 ? this.snapshot() : null;
    this.index = index;
    var frame = this.frames[index];
    this.drawer.table(this, frame);
    this.drawSeats(frame);
    this.caption.textContent = frame.caption;
    this.syncControls();
    if (before) this.flip(before);
    linkFrame(this);
  };

  Viewer.prototype.syncControls = function () {
    var frame = this.frames[this.index];
    this.counter.setAttribute("data-frame-index", String(this.index));
    var where = "round " + frame.round + (frame.turn ? " \u00b7 turn " + frame.turn : "");
    this.counter.textContent = "frame " + (this.index + 1) + " / " + this.frames.length + " \u00b7 " + where;
    this.scrub.value = String(this.index);
    this.roundSelect.value = String(this.roundIndex());
    this.playButton.setAttribute("aria-label", this.playing ? "Pause" : "Play");
    this.playButton.setAttribute("aria-pressed", this.playing ? "true" : "false");
    this.playButton.firstChild.textContent = this.playing ? "\u275a\u275a Pause" : "\u25b6 Play";
    this.root.setAttribute("data-playing", this.playing ? "true" : "false");
    this.root.setAttribute("data-frame-kind", frame.kind);
    markTurn(this);
  };

  /* FLIP: remember where every card was, draw the new frame, then play each card's move
   * from its old place (and size) to its new one. */
  Viewer.prototype.snapshot = function () {
    var rects = {};
    this.root.querySelectorAll(".card[data-card]").forEach(function (node) {
      rects[node.getAttribute("data-card")] = node.getBoundingClientRect();
    });
    return rects;
  };

  Viewer.prototype.slideTime = function (index) {
    return Math.min(520, (DWELL[this.frames[index].kind] || 900) / this.speed * 0.6);
  };

  Viewer.prototype.flip = function (before) {
    var duration = this.slideTime(this.index);
    if (!Element.prototype.animate) return;
    // read every new place first, then start the animations: reads between animate()
    // calls would each force the page's style to be recomputed
    var moves = [];
    this.root.querySelectorAll(".card[data-card]").forEach(function (node) {
      moves.push([node, before[node.getAttribute("data-card")], node.getBoundingClientRect()]);
    });
    moves.forEach(function (move) {
      var node = move[0];
      var old = move[1];
      var now = move[2];
      if (!old) {
        node.animate([{ opacity: 0, transform: "scale(.85)" }, { opacity: 1, transform: "none" }],
          { duration: duration, easing: "ease-out" });
        return;
      }
      var dx = old.left - now.left;
      var dy = old.top - now.top;
      if (Math.abs(dx) < 1 && Math.abs(dy) < 1 && Math.abs(old.width - now.width) < 1) return;
      var sx = now.width ? old.width / now.width : 1;
      var sy = now.height ? old.height / now.height : 1;
      node.animate([
        { transformOrigin: "top left", transform: "translate(" + dx + "px," + dy + "px) scale(" + sx + "," + sy + ")", zIndex: 5 },
        { transformOrigin: "top left", transform: "none", zIndex: 5 }
      ], { duration: duration, easing: "cubic-bezier(.2,.7,.3,1)" });
    });
  };

  /* ---- 6 nimmt! --------------------------------------------------------------------- */

  function drawNimmt(self, frame) {
    var data = self.data;
    var table = self.table;
    table.textContent = "";
    var move = frame.move;

    if (frame.offer.length) {
      var offer = h("div", { class: "rv-offer", "data-offer": "" });
      frame.offer.forEach(function (c) { offer.appendChild(self.card(c, "sm")); });
      table.appendChild(h("div", { class: "rv-zone" }, [
        h("h3", { class: "rv-zone-title", text: "on offer \u00b7 " + plural(frame.offer.length, "card") }), offer
      ]));
    }

    var drafting = frame.kind === "draft" || frame.kind === "pick";
    var reveal = h("div", { class: "rv-reveal", "data-reveal": "", hidden: drafting ? "" : null });
    frame.revealed.forEach(function (play) {
      reveal.appendChild(h("div", { class: "rv-played seat-" + (play[1] % 10), "data-seat": String(play[1]) }, [
        self.card(play[0]), h("span", { class: "rv-tag", text: data.seats[play[1]].letter })
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
          var node = self.card(cards[s]);
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

  /* ---- Sixes ------------------------------------------------------------------------- */

  function drawSixes(self, frame) {
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
          var node = self.card(card);
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

  /* ---- any other game: its events as JSON ----------------------------------------- */

  function zone(title, body) {
    return h("div", { class: "rv-zone" }, [h("h3", { class: "rv-zone-title", text: title }), body]);
  }

  function drawEvents(self, frame) {
    var seats = self.data.seats;
    var table = self.table;
    table.textContent = "";
    var answers = frame.answers || [];
    if (answers.length) {
      var asked = h("ul", { class: "rv-answers", "data-answers": "" });
      answers.forEach(function (a) {
        asked.appendChild(h("li", { "data-answer-seat": String(a.seat) }, [
          h("span", { class: "rv-tag seat-" + (a.seat % 10), text: seats[a.seat].letter }),
          h("code", { text: JSON.stringify(a.answer) })
        ]));
      });
      table.appendChild(zone("answers \u00b7 " + frame.asked, asked));
    }
    var events = frame.events || [];
    var list = h("ol", { class: "rv-events", "data-events": "" });
    events.forEach(function (event) {
      var type = event && typeof event === "object" && typeof event.type === "string" ? event.type : "event";
      list.appendChild(h("li", { class: "rv-event", "data-event": type }, [h("pre", { text: readable(event) })]));
    });
    if (!events.length) list.appendChild(h("li", { class: "rv-placeholder", text: "no events" }));
    table.appendChild(zone(plural(events.length, "event"), list));
  }

  /* ---- seats ------------------------------------------------------------------------- */

  Viewer.prototype.drawSeats = function (frame) {
    var self = this;
    var data = this.data;
    var seats = this.seats;
    seats.textContent = "";
    var move = frame.move;
    var drawer = this.drawer;
    var final = !!frame.ranks; // only the last frame holds the ranks
    data.seats.forEach(function (seat, s) {
      var active = move && move.seat === s;
      var next = drawer.next(frame, s) && !active;
      var classes = "rv-seat seat-" + (s % 10) + (active ? " rv-active" : "") + (next ? " rv-next" : "");
      if (final && frame.ranks[s] === 1) classes += " rv-winner";
      var status = data.result.statuses[s];
      var unit = data.unit === "cards" ? "cards in hand" : data.unit;
      // a game drawn without a table of its own knows its scores only at the end
      var known = frame.scores !== null && frame.scores !== undefined;
      var score = h("span", { class: "rv-score" }, [
        h("b", { "data-seat-score": String(s), text: known ? String(frame.scores[s]) : "\u2014" }), " " + unit
      ]);
      var extra = drawer.stats(self, frame, s);
      var head = h("div", { class: "rv-seat-head" }, [
        h("span", { class: "rv-badge", "aria-hidden": "true", text: seat.letter }),
        h("span", { class: "rv-name", title: seat.isolation }, [
          h("b", { text: seat.name }), h("small", { text: " " + seat.version })
        ]),
        next ? h("span", { class: "rv-to-move", text: "to play" }) : null,
        final ? h("span", { class: "rv-rank", "data-seat-rank": String(s), text: ordinal(frame.ranks[s]) }) : null
      ]);
      var panel = h("article", { class: classes, "data-seat": String(s), "aria-label": "seat " + seat.letter + " " + seat.name },
        [head, h("div", { class: "rv-seat-stats" }, [score, extra])]);

      var time = frame.times ? frame.times[s] : null;
      var timeText = frame.time_texts ? frame.time_texts[s] : null;
      var bankText = frame.bank_texts ? frame.bank_texts[s] : null;
      var defaulted = frame.defaulted && frame.defaulted.indexOf(s) >= 0;
      if (time !== null && time !== undefined) {
        panel.appendChild(h("div", { class: "rv-time", "data-seat-time": String(s) }, [
          "answered in " + (timeText || ms(time)),
          bankText ? h("span", { class: "rv-bank", "data-seat-bank": String(s), text: " \u00b7 bank left " + bankText }) : null,
          defaulted ? h("span", { class: "rv-default", text: " \u00b7 default move played by the referee" }) : null
        ]));
      }
      var notes = (frame.notes || []).filter(function (n) { return n.seat === s; });
      if (notes.length) {
        var list = h("ul", { class: "rv-notes", "data-seat-notes": String(s) });
        notes.forEach(function (n) {
          list.appendChild(h("li", { class: n.kind === "dropped" ? "rv-dropped" : "rv-fault" }, [
            h("b", { text: n.kind === "dropped" ? "dropped line" : n.kind }), ": " + n.message,
            n.line ? h("code", { text: n.line }) : null
          ]));
        });
        panel.appendChild(list);
      }
      if (final && status.status !== "ok") {
        var kinds = status.faults.map(function (f) { return f.kind; }).join(", ");
        panel.appendChild(h("div", { class: "rv-status", text: status.status + (kinds ? " (" + kinds + ")" : "") }));
      }
      var more = drawer.extra(self, frame, s);
      if (more) panel.appendChild(more);
      if (drawer.card && frame.hands) {
        var hand = h("div", { class: "rv-hand", "data-hand": String(s), "aria-label": "hand" });
        frame.hands[s].forEach(function (c) { hand.appendChild(self.card(c, "sm")); });
        if (!frame.hands[s].length) hand.appendChild(h("span", { class: "rv-placeholder", text: "no cards" }));
        panel.appendChild(hand);
      }
      seats.appendChild(panel);
    });
  };

  /* ---- the drawers, by the name the frames give (data.drawer) ----------------------- *
   * label: the table's name for screen readers; card: one card (drawers of card games);
   * table: draws the frame's table; next, stats, extra: what a seat shows beyond its
   * name, score, time, faults and hand. */

  var DRAWERS = {
    nimmt: {
      label: "The rows",
      card: nimmtCard,
      table: drawNimmt,
      next: function () { return false; },
      stats: function (self, frame, s) {
        if (self.data.unit !== "heads" || frame.kind === "game_end") return null;
        return h("span", { class: "rv-round-heads" }, [
          "+", h("b", { "data-seat-round": String(s), text: String(frame.round_heads[s]) }), " this round"
        ]);
      },
      extra: function (self, frame, s) {
        if (!frame.piles[s].length) return null;
        var pile = h("div", { class: "rv-pile", "data-pile": String(s), "aria-label": "penalty pile" });
        frame.piles[s].forEach(function (c) { pile.appendChild(self.card(c, "xs")); });
        return h("div", { class: "rv-pile-wrap" }, [h("span", { class: "rv-label", text: "taken" }), pile]);
      }
    },
    sixes: {
      label: "The table",
      card: sixesCard,
      table: drawSixes,
      next: function (frame, s) { return frame.to_move === s; },
      stats: function () { return null; },
      extra: function (self, frame, s) {
        var chips = h("span", { class: "rv-chips", "aria-hidden": "true" });
        for (var c = 0; c < Math.min(frame.chips[s], 30); c++) chips.appendChild(h("i", { class: "rv-chip" }));
        return chips;
      }
    },
    generic: {
      label: "The events",
      card: null,
      table: drawEvents,
      next: function () { return false; },
      stats: function () { return null; },
      extra: function (self, frame, s) {
        var mine = (frame.answers || []).filter(function (a) { return a.seat === s; })[0];
        if (!mine) return null;
        return h("div", { class: "rv-answer", "data-seat-answer": String(s) }, [
          "answered ", h("code", { text: JSON.stringify(mine.answer) })
        ]);
      }
    }
  };

  /* ---- time strip ------------------------------------------------------------------------ */

  /* One mark per turn (the frames' "timeline", docs/viewer.md), coloured by its slowest
   * answer's share of the move limit, a turn with a fault marked; a click shows that
   * turn's frame. Frames without a timeline (older exports) get no strip. */
  function timeline(self) {
    var marks = self.data.timeline;
    if (!marks || !marks.length) return null;
    var limit = self.data.limits.move_ms;
    var strip = h("div", { class: "rv-timeline", role: "group", "aria-label": "Turns by the time taken" });
    self.marks = marks.map(function (m) {
      var words = "frame " + (m.frame + 1) + ": slowest answer " + m.text +
        (m.seat !== null ? " (seat " + self.data.seats[m.seat].letter + ")" : "") +
        (limit ? ", " + m.bin + " of the " + limit + " ms limit" : "") +
        (m.faults.length ? "; " + m.faults.join(", ") : "");
      var mark = h("button", {
        type: "button", class: "rv-mark rv-level-" + m.level + (m.faults.length ? " rv-mark-fault" : ""),
        "data-mark-frame": String(m.frame), title: words, "aria-label": words
      });
      mark.addEventListener("click", function () { self.pause(); self.show(m.frame, false); mark.blur(); });
      strip.appendChild(mark);
      return mark;
    });
    return strip;
  }

  /* Highlight the turn of the frame shown: the last mark at or before it. */
  function markTurn(self) {
    if (!self.marks) return;
    var current = -1;
    self.data.timeline.forEach(function (m, i) { if (m.frame <= self.index) current = i; });
    self.marks.forEach(function (mark, i) {
      mark.classList.toggle("rv-mark-current", i === current);
      if (i === current) mark.setAttribute("aria-current", "step"); else mark.removeAttribute("aria-current");
    });
  }

  /* ---- links into a replay ------------------------------------------------------------ *
   * The URL's fragment names the frame shown: #r3t7 is the first frame of round 3, turn 7
   * (turn 0: before the round's first turn), and #r3t7s2 the third frame of that turn.
   * A replay's frames never change, so a link shows the same frame on every load. */

  var FRAGMENT = /^#r(\d+)t(\d+)(?:s(\d+))?$/;

  function frameFragment(frames, index) {
    var frame = frames[index];
    var step = 0;
    for (var i = 0; i < index; i++) if (frames[i].round === frame.round && frames[i].turn === frame.turn) step++;
    return "#r" + frame.round + "t" + frame.turn + (step ? "s" + step : "");
  }

  /* The index of the frame a fragment names; null for a fragment that names none (another
   * anchor, a frame out of range). */
  function fragmentFrame(frames, hash) {
    var m = FRAGMENT.exec(hash || "");
    if (!m) return null;
    var step = m[3] ? +m[3] : 0;
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].round === +m[1] && frames[i].turn === +m[2] && step-- === 0) return i;
    }
    return null;
  }

  /* The hook where a frame is shown: the URL names it, replaced in place (stepping piles
   * no history entries). A page at its first frame keeps its URL, and any other anchor. */
  function linkFrame(self) {
    var hash = frameFragment(self.frames, self.index);
    if (location.hash === hash || (self.index === 0 && !FRAGMENT.test(location.hash))) return;
    try {
      history.replaceState(history.state, "", hash);
    } catch (error) { /* a page that may not change its URL still shows the frame */ }
    if (!self.linkField.hidden) self.linkField.value = frameLink(self);
  }

  function frameLink(self) {
    return location.href.split("#")[0] + frameFragment(self.frames, self.index);
  }

  /* "Copy link" (the URL of the frame shown) in the controls, and a field holding the link
   * where the clipboard cannot be written (a page not served over https or from this machine). */
  function linkControls(self) {
    var status = h("span", { class: "rv-copied", "data-copy-status": "", "aria-live": "polite" });
    var field = h("input", {
      type: "text", class: "rv-link-field", readonly: "", hidden: "", "aria-label": "Link to this frame",
      "data-link-field": ""
    });
    var button = h("button", {
      type: "button", class: "rv-btn rv-copy", "data-copy-link": "", "aria-label": "Copy link to this frame"
    }, ["Copy link"]);
    function typed() {
      field.hidden = false;
      field.value = frameLink(self);
      field.focus();
      field.select();
      var copied = false;
      try { copied = document.execCommand("copy"); } catch (error) { copied = false; }
      status.textContent = copied ? "copied" : "press Ctrl+C to copy";
    }
    button.addEventListener("click", function () {
      status.textContent = "";
      var link = frameLink(self);
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(link).then(function () {
          field.hidden = true;
          status.textContent = "copied";
        }, typed);
      } else {
        typed();
      }
    });
    self.linkField = field;
    var controls = self.root.querySelector(".rv-controls") || self.root;
    controls.appendChild(h("span", { class: "rv-link" }, [button, status, field]));
    window.addEventListener("hashchange", function () {
      var index = fragmentFrame(self.frames, location.hash);
      if (index !== null && index !== self.index) {
        self.pause();
        self.show(index, false);
        self.reveal();
      }
    });
  }

  Viewer.prototype.fragment = function (index) { return frameFragment(this.frames, index); };
  Viewer.prototype.frameOf = function (hash) { return fragmentFrame(this.frames, hash); };

  /* ---- start -------------------------------------------------------------------------- */

  function fail(root, message) {
    root.classList.add("rv", "rv-failed");
    root.textContent = "";
    root.appendChild(h("p", { class: "rv-error", role: "alert", text: "Could not show the replay: " + message }));
  }

  function boot() {
    var root = document.getElementById("replay-viewer");
    if (!root || root.getAttribute("data-started")) return;
    root.setAttribute("data-started", "true");
    var embedded = document.getElementById("replay-data");
    if (embedded) {
      try {
        window.replayViewer = new Viewer(root, JSON.parse(embedded.textContent));
      } catch (error) {
        fail(root, error.message);
      }
      return;
    }
    var url = root.getAttribute("data-frames-url");
    if (!url) return fail(root, "no data-frames-url and no embedded data");
    root.appendChild(h("p", { class: "rv-loading", text: "Loading the replay\u2026" }));
    fetch(url, { headers: { Accept: "application/json" } })
      .then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (body) {
          if (!response.ok) throw new Error(body.error || body.detail || "HTTP " + response.status);
          return body;
        });
      })
      .then(function (data) { window.replayViewer = new Viewer(root, data); })
      .catch(function (error) { fail(root, error.message); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})();
