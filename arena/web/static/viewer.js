/* Six Arena replay viewer.
 *
 * Draws the frames that arena/web/viewer.py computes from a verified replay
 * (docs/viewer.md). Every frame holds the whole table, so this file only draws: it
 * applies no game rule. This file is the viewer and its generic drawer, which shows
 * each step's answers and events as JSON; a game's own table is drawn by the drawer its
 * frames name, a script of the game's folder that registers itself here
 * (window.ArenaViewer.register), so no game is drawn as another. The arena's game page
 * loads that script from /drawers/GAME.js once the frames name it; the standalone
 * export holds it inline. Data comes from an embedded JSON script element with the id
 * replay-data (the standalone export) or from the URL in the viewer element's
 * data-frames-url attribute (the arena's game page), or, for a game being played, as
 * server-sent events from the URL in its data-live-url attribute: the frames come as
 * the turns are played (a hand is a list of nulls, drawn face down, until the end), the
 * viewer follows the newest unless the viewer steps back or pauses ("Live" jumps to it
 * again), and at the end the stored game's frames replace them (where its page shows them). A drawn piece is keyed by
 * data-piece, so a piece that moves between two frames slides there (FLIP).
 */
(function () {
  "use strict";

  var SPEEDS = [0.25, 0.5, 1, 2, 4, 8, 16];
  var DWELL = { start: 1500, step: 1200, round_end: 2800, game_end: 3000 };
  /* How long a frame of each kind stays at 1x, in ms; a drawer adds its own kinds (dwell). */
  var DRAWER_URL = "/drawers/";
  var LIVE_STEP_MS = 200; /* a live game's new frames, one after another, this far apart */
  var LIVE_CATCH_UP = 12; /* more new frames than this at once: shown the newest at once */
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
    this.live = !!data.live; // frames still arriving (watchLive)
    this.following = this.live; // each new frame is shown as it comes
    this.retired = false; // replaced by the finished game's viewer: its keys are no longer its own
    // frames of format 1 before the drawer field name their game, whose drawer it was
    var named = data.drawer || data.game;
    this.drawerName = Object.prototype.hasOwnProperty.call(DRAWERS, named) ? named : "generic";
    this.drawer = DRAWERS[this.drawerName];
    this.dwell = Object.assign({}, DWELL, this.drawer.dwell || {});
    this.build();
    linkControls(this);
    var linked = fragmentFrame(this.frames, location.hash);
    this.show(linked || 0, false);
    if (linked !== null) this.reveal();
  }

  /* A game's style sheet, sent with its drawer, added once to the page (style-src allows
   * inline styles). */
  function addStyle(name, css) {
    if (document.querySelector("style[data-drawer-style=\"" + name + "\"]")) return;
    document.head.appendChild(h("style", { "data-drawer-style": name, text: css }));
  }

  Viewer.prototype.build = function () {
    var self = this;
    var data = this.data;
    var root = this.root;
    root.textContent = "";
    root.classList.add("rv", "rv-" + this.drawerName);
    root.setAttribute("data-frame-count", String(this.frames.length));

    var meta = data.seed === null ? [] : ["seed " + data.seed]; // a live game's is kept back: it deals every hand
    meta.push("game " + data.game_no, plural(data.players, "seat"));
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
    this.scrub.addEventListener("input", function () {
      self.following = false;
      self.show(+self.scrub.value, false);
    });
    root.appendChild(h("div", { class: "rv-controls", role: "toolbar", "aria-label": "Replay controls" }, [
      h("div", { class: "rv-buttons" }, [
        button("first", "First frame", "\u21e4", "Home"),
        button("prev", "Step back", "\u25c0", "\u2190"),
        this.playButton,
        button("next", "Step forward", "\u25b6", "\u2192"),
        button("last", "Last frame", "\u21e5", "End"),
        this.live ? button("live", "Jump to live", "\u25cf Live", "L") : null
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
    if (this.retired || event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    var tag = target && target.tagName;
    // text fields keep every key; a focused round or speed select gives the viewer's keys to
    // the viewer (preventDefault below stops the select changing or opening as well)
    if (tag === "INPUT" && target.type !== "range" || tag === "TEXTAREA" || target && target.isContentEditable) return;
    if (tag === "SELECT" && !this.root.contains(target)) return;
    if (tag === "INPUT" && (event.key === "ArrowLeft" || event.key === "ArrowRight")) return;
    var k = event.key;
    var action = { " ": "play", ArrowRight: "next", ArrowLeft: "prev", Home: "first", End: "last", "[": "prevRound",
      "]": "nextRound", l: this.live ? "live" : null, L: this.live ? "live" : null }[k];
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
    if (this.live) this.following = action === "live";
    switch (action) {
      case "live": this.pause(); this.show(last, false); return;
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
    for (var i = 0; i < this.frames.length - 1; i++) total += (this.dwell[this.frames[i].kind] || 900) / speed;
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
    var dwell = (this.dwell[frame.kind] || 900) / this.speed;
    this.timer = setTimeout(function () {
      if (self.index < self.frames.length - 1) {
        self.show(self.index + 1, true);
        self.schedule();
      } else if (self.live) {
        self.following = true; // played up to the newest: from here on it follows
        self.pause();
      } else {
        self.pause();
      }
    }, dwell);
  };

  Viewer.prototype.show = function (index, animate) {
    index = Math.max(0, Math.min(this.frames.length - 1, index));
    // slide the pieces only for a single step, and not while a key is held down or
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
    this.root.setAttribute("data-live", this.live ? (this.following ? "following" : "behind") : "ended");
    if (this.live) this.counter.textContent += this.following ? " \u00b7 live" : " \u00b7 behind live";
    markTurn(this);
  };

  /* The game being played has ended: the viewer no longer follows nor offers Live. */
  Viewer.prototype.ended = function () {
    this.live = false;
    this.following = false;
    var live = this.root.querySelector("button.rv-live");
    if (live) live.remove();
    this.syncControls();
  };

  /* Frames of a game being played, as they arrive: the scrub, the rounds and the counter
   * grow; the newest is shown while the viewer follows. */
  Viewer.prototype.append = function (frames) {
    var self = this;
    frames.forEach(function (frame) {
      var rounds = self.data.rounds;
      self.frames.push(frame);
      if (!rounds.length || rounds[rounds.length - 1].round !== frame.round) {
        rounds.push({ round: frame.round, frame: self.frames.length - 1 });
        self.roundSelect.appendChild(h("option", { value: String(rounds.length - 1), text: "Round " + frame.round }));
      }
    });
    this.scrub.max = String(this.frames.length - 1);
    this.root.setAttribute("data-frame-count", String(this.frames.length));
    if (this.following) this.catchUp();
    else this.syncControls();
  };

  /* While following a game being played, step to each new frame in turn (a turn's
   * frames come together), sliding its pieces; a backlog longer than LIVE_CATCH_UP
   * frames (a page opened mid-game) is jumped over to the newest. */
  Viewer.prototype.catchUp = function () {
    var self = this;
    var behind = this.frames.length - 1 - this.index;
    if (this.catching || !this.following || behind <= 0) return;
    if (behind > LIVE_CATCH_UP) return this.show(this.frames.length - 1, false);
    this.catching = true;
    this.show(this.index + 1, true);
    setTimeout(function () {
      self.catching = false;
      self.catchUp();
    }, LIVE_STEP_MS);
  };

  /* FLIP: remember where every piece was, draw the new frame, then play each piece's move
   * from its old place (and size) to its new one. */
  Viewer.prototype.snapshot = function () {
    var rects = {};
    this.root.querySelectorAll("[data-piece]").forEach(function (node) {
      rects[node.getAttribute("data-piece")] = node.getBoundingClientRect();
    });
    return rects;
  };

  Viewer.prototype.slideTime = function (index) {
    return Math.min(520, (this.dwell[this.frames[index].kind] || 900) / this.speed * 0.6);
  };

  Viewer.prototype.flip = function (before) {
    var duration = this.slideTime(this.index);
    if (!Element.prototype.animate) return;
    // read every new place first, then start the animations: reads between animate()
    // calls would each force the page's style to be recomputed
    var moves = [];
    this.root.querySelectorAll("[data-piece]").forEach(function (node) {
      moves.push([node, before[node.getAttribute("data-piece")], node.getBoundingClientRect()]);
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
      var status = data.result ? data.result.statuses[s] : null; // a game being played has none yet
      var unit = drawer.unit ? drawer.unit(data) : data.unit;
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
            h("b", { text: n.kind === "dropped" ? "dropped line" : n.kind }), n.message ? ": " + n.message : "",
            n.line ? h("code", { text: n.line }) : null
          ]));
        });
        panel.appendChild(list);
      }
      if (final && status && status.status !== "ok") {
        var kinds = status.faults.map(function (f) { return f.kind; }).join(", ");
        panel.appendChild(h("div", { class: "rv-status", text: status.status + (kinds ? " (" + kinds + ")" : "") }));
      }
      [].concat(drawer.extra(self, frame, s) || []).forEach(function (more) { if (more) panel.appendChild(more); });
      seats.appendChild(panel);
    });
  };

  /* ---- the drawers, by the name the frames give (data.drawer) ----------------------- *
   * A game's drawer registers itself: ArenaViewer.register(name, drawer), where drawer
   * has label: the table's name for screen readers; table(viewer, frame): draws the
   * frame's table into viewer.table; next(frame, s): whether seat s is to move;
   * stats(viewer, frame, s) and extra(viewer, frame, s): what a seat shows beyond its
   * name, score, time and faults (a node, a list of nodes, or null); and optionally
   * unit(data): the score's words under each seat, dwell: {kind: ms} for its frame
   * kinds. The server sends a game's style sheet with its drawer, as a call to
   * ArenaViewer.addStyle(game, css). docs/viewer.md has the whole contract. */

  var DRAWERS = {
    generic: {
      label: "The events",
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

  window.ArenaViewer = {
    /* Add the drawer that frames naming ``name`` are drawn with. */
    register: function (name, drawer) { DRAWERS[name] = drawer; },
    /* Add game ``name``'s style sheet to the page, once. */
    addStyle: addStyle,
    h: h,
    plural: plural,
    ordinal: ordinal
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
      if (self.retired) return;
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

  /* The frames, once the drawer they name is registered: a drawer not on the page yet is
   * the game's script, loaded from the server; one that cannot be loaded leaves the
   * generic drawer to draw. */
  function withDrawer(data) {
    var named = data.drawer || data.game;
    if (named === "generic" || Object.prototype.hasOwnProperty.call(DRAWERS, named)) return data;
    return new Promise(function (resolve) {
      var script = document.createElement("script");
      script.setAttribute("src", DRAWER_URL + encodeURIComponent(data.game) + ".js");
      script.onload = script.onerror = function () { resolve(data); };
      document.head.appendChild(script);
    });
  }

  /* A game being played, from its server-sent events (arena/web/live.py): "meta", then a
   * "frame" per frame, then "end" with the whole finished game (hands shown) or "gone".
   * Frames that arrive together are drawn once, at the next animation frame. */
  function watchLive(root, url) {
    var waiting = h("p", { class: "rv-loading", "data-live-waiting": "", text: "Waiting for the game\u2026" });
    root.appendChild(waiting);
    var source = new EventSource(url);
    var meta = null;
    var viewer = null;
    var pending = [];
    var drawing = false;
    var ready = false; // the game's drawer is on the page (or cannot be)
    function draw() {
      drawing = false;
      if (!ready || !pending.length) return;
      var frames = pending;
      pending = [];
      if (viewer) return viewer.append(frames);
      var data = Object.assign({}, meta, { frames: frames, rounds: [], timeline: null, result: null });
      frames.forEach(function (frame, i) {
        if (!data.rounds.length || data.rounds[data.rounds.length - 1].round !== frame.round) {
          data.rounds.push({ round: frame.round, frame: i });
        }
      });
      viewer = window.replayViewer = new Viewer(root, data);
      viewer.show(frames.length - 1, false);
    }
    source.addEventListener("meta", function (event) {
      meta = JSON.parse(event.data);
      Promise.resolve(withDrawer(meta)).then(function () {
        ready = true;
        draw();
      });
    });
    var received = 0; // a stream that reconnects starts again from the first frame
    source.addEventListener("frame", function (event) {
      var frame = JSON.parse(event.data);
      if (frame.index < received) return;
      received = frame.index + 1;
      pending.push(frame);
      if (!drawing) {
        drawing = true;
        requestAnimationFrame(draw);
      }
    });
    source.addEventListener("end", function (event) {
      // the game is stored: its page's frames (hands and all, once no rotation of its
      // deal is left to be played) replace the live ones; until then the table stays
      source.close();
      var ended = JSON.parse(event.data);
      draw();
      if (viewer) viewer.ended();
      if (!ended.frames_url) return note(root, "The game has ended.", null);
      fetchJSON(ended.frames_url)
        .then(withDrawer)
        .then(function (data) {
          var at = viewer && !viewer.following ? viewer.index : data.frames.length - 1;
          if (viewer) viewer.retired = true;
          viewer = window.replayViewer = new Viewer(root, data);
          viewer.show(Math.min(at, data.frames.length - 1), false);
          note(root, "The game has ended: ", ended.url);
        })
        .catch(function (error) { note(root, "The game has ended; " + error.message + ": ", ended.url); });
    });
    source.addEventListener("gone", function (event) {
      source.close();
      var reason = JSON.parse(event.data).reason;
      root.setAttribute("data-live", "gone");
      root.insertBefore(h("p", { class: "rv-error", role: "alert", text: "The game is no longer live: " + reason }),
        root.firstChild);
    });
    source.onerror = function () {
      // the server refused (no such game, too many watching) or went away: EventSource
      // retries a stream that was open; one that never opened is over
      if (source.readyState === EventSource.CLOSED && !viewer) fail(root, "no such game is being played");
    };
  }

  /* The JSON at ``url``; an error answer's own words (``error``) as the failure. */
  function fetchJSON(url) {
    return fetch(url, { headers: { Accept: "application/json" } }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (!response.ok) throw new Error(body.error || body.detail || "HTTP " + response.status);
        return body;
      });
    });
  }

  /* A line above the viewer once its live game has ended, linking the stored game. */
  function note(root, text, url) {
    root.setAttribute("data-live", "ended");
    var line = h("p", { class: "rv-live-note", "data-live-note": "" }, [text]);
    if (url) line.appendChild(h("a", { href: url, text: "its page" }));
    root.insertBefore(line, root.firstChild);
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
    var live = root.getAttribute("data-live-url");
    if (live) return watchLive(root, live);
    var url = root.getAttribute("data-frames-url");
    if (!url) return fail(root, "no data-frames-url and no embedded data");
    root.appendChild(h("p", { class: "rv-loading", text: "Loading the replay\u2026" }));
    fetchJSON(url)
      .then(withDrawer)
      .then(function (data) { window.replayViewer = new Viewer(root, data); })
      .catch(function (error) { fail(root, error.message); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})();
