/* Six Arena: a person's seat in the browser (arena serve --play).
 *
 * The seat's state comes as server-sent events from data-seat-url (the whole state each
 * time it changes: what is asked, what is legal, the seat's view drawn as text, the end);
 * the table is the replay viewer's live mode, from the viewer element's data-live-url.
 * An answer is one of the legal answers the server sent, posted to data-answer-url: a
 * button to click or tap, arrows to move between them and Enter to answer, or typed into
 * the box. Nothing here knows a game: answers are the protocol's JSON values.
 */
(function () {
  "use strict";

  function h(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) {
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  /* An answer as a person reads and types it. */
  function label(answer) {
    if (typeof answer === "string") return answer;
    if (Array.isArray(answer)) return answer.map(label).join(" ");
    return JSON.stringify(answer);
  }

  function start(root) {
    var status = root.querySelector("[data-play-status]");
    var asked = null; // the request on show
    var sending = false;
    var timer = null;
    var source = new EventSource(root.getAttribute("data-seat-url"));

    function say(text, kind) {
      status.textContent = text;
      status.setAttribute("data-kind", kind || "");
    }

    function clear() {
      Array.prototype.slice.call(root.querySelectorAll("[data-play-ask]")).forEach(function (n) { n.remove(); });
      root.removeAttribute("data-ask");
      if (timer) clearInterval(timer);
      timer = null;
    }

    function send(answer) {
      if (!asked || sending) return;
      sending = true;
      var id = asked.id;
      fetch(root.getAttribute("data-answer-url"), {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ id: id, answer: answer }),
        credentials: "same-origin"
      }).then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (body) {
          sending = false;
          if (!response.ok) return say(body.error || "HTTP " + response.status, "error");
          if (asked && asked.id === id) { asked = null; clear(); say("Answered: " + label(answer) + ". Waiting for the others\u2026"); }
        });
      }).catch(function (error) { sending = false; say("Not sent: " + error.message, "error"); });
    }

    function show(ask) {
      clear();
      asked = ask;
      root.setAttribute("data-ask", String(ask.id));
      var buttons = ask.legal.map(function (answer, i) {
        var b = h("button", { type: "button", class: "play-answer", "data-answer": JSON.stringify(answer), text: label(answer) });
        b.addEventListener("click", function () { send(answer); });
        b.addEventListener("keydown", function (event) {
          var step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
          if (!step) return;
          event.preventDefault(); // the viewer's own arrow keys step through the table's frames
          buttons[(i + step + buttons.length) % buttons.length].focus();
        });
        return b;
      });
      var typed = h("input", { type: "text", class: "play-typed", "aria-label": "Type your answer", autocomplete: "off", placeholder: "or type it, then Enter" });
      typed.addEventListener("keydown", function (event) {
        if (event.key !== "Enter") return;
        var text = typed.value.trim().toLowerCase();
        var found = ask.legal.filter(function (a) { return label(a).toLowerCase() === text; });
        if (found.length) send(found[0]);
        else say("\u201c" + typed.value.trim().slice(0, 40) + "\u201d is not " + ask.what + " you may play here", "error");
      });
      var clock = h("span", { class: "play-clock" });
      root.appendChild(h("pre", { class: "play-view", "data-play-ask": "" , text: ask.picture }));
      root.appendChild(h("div", { class: "play-answers", role: "group", "aria-label": "Legal answers", "data-play-ask": "" }, buttons));
      root.appendChild(h("p", { "data-play-ask": "" }, [typed, " ", clock]));
      var ends = ask.asked_at * 1000 + ask.move_ms;
      function tick() { clock.textContent = Math.max(0, Math.ceil((ends - Date.now()) / 1000)) + " s left"; }
      tick();
      timer = setInterval(tick, 1000);
      say("Your move: choose " + ask.what + ".", "ask");
      if (buttons.length && !root.contains(document.activeElement)) buttons[0].focus();
    }

    source.addEventListener("seat", function (event) {
      var state = JSON.parse(event.data);
      root.setAttribute("data-state", state.state);
      if (state.state === "over" || state.state === "failed") {
        source.close();
        asked = null;
        clear();
        if (state.state === "failed") return say(state.message || "The game could not be played.", "error");
        var result = state.result;
        var text = "The game has ended" + (result ? ": your score " + result.scores[state.seat] + ", rank " + result.ranks[state.seat] + " of " + result.ranks.length : "") + ". ";
        say(text, "over");
        if (state.game_url) status.appendChild(h("a", { href: state.game_url, "data-play-game": "", text: "Its replay" }));
        status.appendChild(document.createTextNode(" \u00b7 "));
        status.appendChild(h("a", { href: "/play", text: "Play again" }));
        return;
      }
      if (state.ask && (!asked || asked.id !== state.ask.id)) return show(state.ask);
      if (!state.ask && asked) { asked = null; clear(); }
      if (!state.ask) say(state.state === "starting" ? "Setting the table\u2026" : "Waiting for the others\u2026");
    });
    source.onerror = function () {
      // a lost connection: EventSource opens it again, and the seat's state comes anew
      if (source.readyState === EventSource.CLOSED) say("This game is not yours, or is over: the play page starts one.", "error");
    };
  }

  function boot() {
    var root = document.getElementById("play-seat");
    if (root && !root.getAttribute("data-started")) {
      root.setAttribute("data-started", "true");
      start(root);
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})();
