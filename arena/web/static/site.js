// Six Arena: the site's one script. Sortable tables, the filter form, and the live
// tournament page (polls /api/tournaments/NAME and redraws without a reload). The pages
// work without it; it only adds to them.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const POLL_MS = 1500;

  // --- sortable tables ---------------------------------------------------------------

  function cellValue(row, column, numeric) {
    const cell = row.cells[column];
    const raw = cell ? (cell.dataset.value ?? cell.textContent.trim()) : "";
    if (!numeric) return raw.toLowerCase();
    const number = parseFloat(raw);
    return Number.isNaN(number) ? -Infinity : number;
  }

  function sortTable(table, column, direction) {
    const th = table.tHead.rows[0].cells[column];
    const numeric = th.dataset.sort === "number";
    const body = table.tBodies[0];
    const rows = Array.from(body.rows).filter((row) => !row.classList.contains("empty"));
    const sign = direction === "ascending" ? 1 : -1;
    const keyed = rows.map((row, index) => [cellValue(row, column, numeric), index, row]);
    keyed.sort((a, b) => (a[0] < b[0] ? -sign : a[0] > b[0] ? sign : a[1] - b[1]));
    for (const [, , row] of keyed) body.appendChild(row);
    for (const cell of table.tHead.rows[0].cells) cell.removeAttribute("aria-sort");
    th.setAttribute("aria-sort", direction);
    table.dataset.sortColumn = String(column);
    table.dataset.sortDirection = direction;
  }

  function makeSortable(table) {
    const headers = table.tHead ? Array.from(table.tHead.rows[0].cells) : [];
    headers.forEach((th, column) => {
      const button = th.querySelector("button");
      if (!th.dataset.sort || !button) return;
      if (th.hasAttribute("aria-sort")) {
        table.dataset.sortColumn = String(column);
        table.dataset.sortDirection = th.getAttribute("aria-sort");
      }
      button.addEventListener("click", () => {
        const current = th.getAttribute("aria-sort");
        let direction;
        if (current === "ascending") direction = "descending";
        else if (current === "descending") direction = "ascending";
        else direction = th.dataset.sort === "number" ? "descending" : "ascending";
        sortTable(table, column, direction);
      });
    });
  }

  function resort(table) {
    if (table.dataset.sortColumn !== undefined) {
      sortTable(table, Number(table.dataset.sortColumn), table.dataset.sortDirection || "ascending");
    }
  }

  // --- drawing rows (mirrors templates/_macros.html) ------------------------------------

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    for (const child of children) node.append(child);
    return node;
  }

  function svg(tag, attributes) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
    return node;
  }

  function botLink(bot) {
    const link = el("a", { href: "/bots/" + encodeURIComponent(bot).replace(/%3A/g, ":") });
    const colon = bot.lastIndexOf(":");
    if (colon < 0) link.append(bot);
    else link.append(bot.slice(0, colon), el("wbr"), el("span", { class: "version" }, bot.slice(colon)));
    return link;
  }

  function barX(value, scale) {
    const [low, high] = scale;
    if (!(high > low)) return 50;
    return Math.round(Math.min(Math.max((value - low) / (high - low), 0), 1) * 10000) / 100;
  }

  const finite = (v) => typeof v === "number" && Number.isFinite(v);

  // Where a row's rating is drawn and sorted: its Elo, or its bound (mirrors charts.rated_at).
  const ratedAt = (row) => (row.bound === ">" ? row.low : row.bound === "<" ? row.high : row.elo);

  // How a row's interval is drawn (mirrors charts.errorbar): both ends, open to the
  // right for a lower bound, open to the left for an upper bound, or the point alone.
  function barOf(row, scale) {
    const fmt = (v) => Math.round(v).toString();
    const shown = finite(row.elo) ? fmt(row.elo) : "none";
    const point = ratedAt(row);
    const xe = finite(point) ? barX(point, scale) : 50;
    if (row.bound === ">" && finite(row.low)) {
      return { kind: "lower", xl: barX(row.low, scale), xh: 100, xe, text: `> ${fmt(row.low)}`, width: "Infinity",
        label: `at least ${fmt(row.low)} Elo: it won every comparison, so only a lower bound` };
    }
    if (row.bound === "<" && finite(row.high)) {
      return { kind: "upper", xl: 0, xh: barX(row.high, scale), xe, text: `< ${fmt(row.high)}`, width: "Infinity",
        label: `at most ${fmt(row.high)} Elo: it lost every comparison, so only an upper bound` };
    }
    if (finite(row.low) && finite(row.high)) {
      return { kind: "two", xl: barX(row.low, scale), xh: barX(row.high, scale), xe,
        text: `${fmt(row.low)}–${fmt(row.high)}`, width: String(Math.round((row.high - row.low) * 10) / 10),
        label: `Elo ${shown}, 95% interval ${fmt(row.low)} to ${fmt(row.high)}` };
    }
    return { kind: "none", xl: xe, xh: xe, xe, text: "—", width: "",
      label: `Elo ${shown}, no interval` + (row.note ? `: ${row.note}` : "") };
  }

  function errorBar(bar, note) {
    const picture = svg("svg", {
      class: "errorbar bar-" + bar.kind, viewBox: "0 0 100 12", preserveAspectRatio: "none", role: "img",
      "aria-label": bar.label,
    });
    picture.append(svg("line", { class: "track", x1: 0, y1: 6, x2: 100, y2: 6 }));
    if (bar.kind !== "none") {
      picture.append(svg("line", { class: "range", x1: bar.xl, y1: 6, x2: bar.xh, y2: 6 }));
      if (bar.kind !== "upper") picture.append(svg("line", { class: "whisker", x1: bar.xl, y1: 2, x2: bar.xl, y2: 10 }));
      if (bar.kind !== "lower") picture.append(svg("line", { class: "whisker", x1: bar.xh, y1: 2, x2: bar.xh, y2: 10 }));
      if (bar.kind === "lower") picture.append(svg("polyline", { class: "arrow", points: "97,2 100,6 97,10" }));
      if (bar.kind === "upper") picture.append(svg("polyline", { class: "arrow", points: "3,2 0,6 3,10" }));
    }
    picture.append(svg("line", { class: "point", x1: bar.xe, y1: 0, x2: bar.xe, y2: 12 }));
    const text = el("span", note ? { class: "ci-text", title: note } : { class: "ci-text" }, bar.text);
    return [text, picture];
  }

  // The marks beside a row: the board's caveats that name its bot (mirrors _ratings.html).
  function rowMarks(bot, caveats) {
    return (caveats || []).filter((c) => c.bots.includes(bot)).flatMap((c) => [
      " ", el("span", { class: "mark mark-" + c.kind, title: c.title }, c.short),
    ]);
  }

  function boardRow(row, scale, caveats) {
    const faults = row.timeouts + row.crashes + row.malformed + row.illegal;
    const num = (value, text) => el("td", { class: "num", "data-value": String(value) }, text ?? String(value));
    const bar = barOf(row, scale);
    return el(
      "tr", {},
      num(row.rank),
      el("td", { "data-value": row.bot }, botLink(row.bot), ...rowMarks(row.bot, caveats)),
      el("td", { class: "num elo", "data-value": String(ratedAt(row)) },
        row.bound ? bar.text : finite(row.elo) ? String(Math.round(row.elo)) : "—"),
      el("td", { class: "ci", "data-value": bar.width }, ...errorBar(bar, row.note)),
      num(row.games),
      num(row.wins),
      num(row.score_per_round, row.score_per_round.toFixed(2)),
      el("td", {
        class: "num" + (faults ? " has-faults" : ""), "data-value": String(faults),
        title: `${row.timeouts} timeouts, ${row.crashes} crashes, ${row.malformed} malformed, ${row.illegal} illegal`,
      }, String(faults)),
    );
  }

  // Each note of a board once, with its bots (mirrors charts.board_notes).
  function boardNotes(rows) {
    const byNote = new Map();
    for (const row of rows) {
      if (row.note) byNote.set(row.note, [...(byNote.get(row.note) || []), row.bot]);
    }
    return Array.from(byNote, ([note, bots]) => `${note} (${bots.length === rows.length && rows.length > 1 ? "every bot" : bots.join(", ")})`);
  }

  // ``2026-11-30T14:02:11+00:00`` as ``2026-11-30 14:02`` (mirrors games_query.short_time).
  const shortTime = (started) => started.slice(0, 16).replace("T", " ");

  function gameRow(game) {
    const seats = el("ol", { class: "seats", start: "0" });
    for (const seat of game.seats) {
      const item = el("li", { class: seat.rank === 1 ? "winner" : "" }, botLink(seat.bot), " ",
        el("span", { class: "score" }, String(seat.score)));
      if (seat.rank === 1) item.append(" ", el("span", { class: "badge first", title: "finished first" }, "1st"));
      if (seat.status !== "ok") item.append(" ", el("span", { class: "badge status-" + seat.status }, seat.status));
      seats.append(item);
    }
    const started = game.started || "";
    return el(
      "tr", {},
      el("td", { class: "num" }, el("a", { href: "/games/" + game.id }, "#" + game.id)),
      el("td", { class: "date" }, started ? el("time", { datetime: started }, shortTime(started)) : "—"),
      el("td", { class: "num wide-only" }, `${game.match_no} · ${game.deal}`),
      el("td", { class: "num wide-only" }, String(game.rounds)),
      el("td", {}, seats),
    );
  }

  // A submission in the ladder's pipeline (mirrors templates/ladder.html): never its report.
  function waitingRow(w) {
    return el(
      "tr", {},
      el("td", {}, w.bot),
      el("td", {}, w.author),
      el("td", {}, el("span", { class: "badge status-" + w.state }, w.state)),
      el("td", { class: "date" }, el("time", { datetime: w.since }, w.since.slice(0, 19).replace("T", " "))),
    );
  }

  function replaceRows(table, rows, emptyText, columns) {
    const body = table.tBodies[0];
    body.replaceChildren(...(rows.length ? rows : [el("tr", { class: "empty" }, el("td", { colspan: String(columns) }, emptyText))]));
  }

  // --- the live tournament page ------------------------------------------------------

  function setField(root, name, text) {
    for (const node of root.querySelectorAll(`[data-field="${name}"]`)) node.textContent = text;
  }

  function update(root, data) {
    setField(root, "games_done", String(data.games_done));
    if (data.games_planned != null) setField(root, "games_planned", String(data.games_planned));
    if (data.standing) {
      setField(root, "standing_progress", data.standing.progress);
      for (const badge of root.querySelectorAll('[data-field="standing_verdict"]')) {
        badge.className = "badge verdict-" + data.standing.decision;
        badge.textContent = data.standing.verdict;
      }
    }
    const bar = root.querySelector('progress[data-field="progress"]');
    if (bar) {
      bar.value = data.games_done;
      bar.textContent = `${data.games_done} / ${data.games_planned}`;
    }
    const health = data.health || { state: data.status, text: data.status, resume: null };
    for (const holder of root.querySelectorAll('[data-field="status"]')) {
      holder.replaceChildren(el("span", { class: "badge status-" + health.state }, health.state));
    }
    const resume = health.resume || "";
    const lead = resume && health.text.endsWith(resume) ? health.text.slice(0, -resume.length) : health.text;
    setField(root, "health_text", lead);
    for (const code of root.querySelectorAll('[data-field="resume"]')) {
      code.textContent = resume;
      code.hidden = !resume;
    }
    const started = health.last_game_started || "";
    for (const time of root.querySelectorAll('time[data-field="last_game_started"]')) {
      time.setAttribute("datetime", started);
      time.textContent = started.slice(0, 19).replace("T", " ");
    }
    for (const holder of root.querySelectorAll('[data-field="last_game"]')) holder.hidden = !started;
    if (data.finished) {
      for (const holder of root.querySelectorAll('[data-field="finished"]')) {
        holder.replaceChildren(el("time", { datetime: data.finished }, data.finished.replace("T", " ")));
      }
    }
    const standings = root.querySelector("#standings");
    if (standings) {
      const board = data.standings;
      standings.dataset.scale = board.scale.join(",");
      replaceRows(standings, board.rows.map((row) => boardRow(row, board.scale, board.caveats)), "No games rated yet.", 8);
      const callouts = root.querySelector('[data-caveats-for="standings"]');
      if (callouts) {
        callouts.replaceChildren(...(board.caveats || []).map((c) => el(
          "p", { class: "caveat caveat-" + c.kind, role: "note" }, el("strong", {}, c.title + "."), " " + c.text,
        )));
      }
      resort(standings);
      const notes = root.querySelector('[data-notes-for="standings"]');
      if (notes) {
        const lines = boardNotes(board.rows);
        notes.replaceChildren(...lines.map((line) => el("li", {}, line)));
        notes.hidden = lines.length === 0;
      }
      const note = standings.caption && standings.caption.querySelector(".stale");
      if (board.stale && !note) {
        standings.caption.append(" ", el("span", { class: "stale" }, "(updating: newer games are being rated)"));
      } else if (!board.stale && note) {
        note.previousSibling && note.previousSibling.nodeType === 3 && note.previousSibling.remove();
        note.remove();
      }
    }
    const workers = root.querySelector("#workers");
    if (workers && data.nodes) {
      const num = (text) => el("td", { class: "num" }, text);
      workers.tBodies[0].replaceChildren(...data.nodes.map((n) => el(
        "tr", {}, el("td", {}, n.node), num(n.slots == null ? "—" : String(n.slots)), num(String(n.games)),
        num(n.recent_per_s == null ? "—" : n.recent_per_s.toFixed(2)),
      )));
      for (const holder of root.querySelectorAll('[data-field="workers"]')) holder.hidden = data.nodes.length === 0;
    }
    const games = root.querySelector("#tournament-games");
    if (games) replaceRows(games, data.games.map(gameRow), "No games stored yet.", games.tHead.rows[0].cells.length);
    const waiting = root.querySelector("#ladder-waiting");
    if (waiting && data.waiting) replaceRows(waiting, data.waiting.map(waitingRow), "Nothing waiting.", 4);
    root.dataset.status = health.state;
    root.dataset.updated = String(Date.now());
  }

  // Polled only while an arena runs the tournament (running, or stalled: it may go on).
  const isLive = (state) => state === "running" || state === "stalled";

  function live(root) {
    const url = root.dataset.liveUrl;
    let failures = 0;
    async function poll() {
      if (!isLive(root.dataset.status)) {
        setField(root, "live_note", "");
        root.dataset.polling = "stopped";
        return;
      }
      root.dataset.polling = "on";
      try {
        const response = await fetch(url, { headers: { Accept: "application/json" }, cache: "no-store" });
        if (!response.ok) throw new Error("HTTP " + response.status);
        const data = await response.json();
        update(root, data);
        failures = 0;
        setField(root, "live_note", isLive(root.dataset.status) ? "· updates live" : "");
      } catch (error) {
        failures += 1;
        setField(root, "live_note", "· cannot reach the server, retrying");
      }
      if (isLive(root.dataset.status)) {
        setTimeout(poll, POLL_MS * Math.min(1 + failures, 8));
      } else {
        setField(root, "live_note", "");
        root.dataset.polling = "stopped";
      }
    }
    if (isLive(root.dataset.status)) setTimeout(poll, POLL_MS);
    else root.dataset.polling = "stopped";
  }

  // --- a page that follows the database (the leaderboard) ---------------------------------

  // Fetches the page again every data-refresh-ms and, when its part changed (new games
  // rated, a tournament or bot deleted, a board no longer updating), swaps that part in
  // without a reload. Stops while the tab is hidden; a failed fetch waits longer.
  function following(root) {
    let current = root;
    let failures = 0;
    let shown = current.innerHTML;
    async function again() {
      if (document.hidden) return setTimeout(again, Number(current.dataset.refreshMs));
      try {
        const response = await fetch(location.href, { headers: { Accept: "text/html" }, cache: "no-store" });
        if (!response.ok) throw new Error("HTTP " + response.status);
        const page = new DOMParser().parseFromString(await response.text(), "text/html");
        const fresh = page.querySelector("[data-refresh-ms]");
        if (fresh && fresh.innerHTML !== shown) {
          shown = fresh.innerHTML;
          const placed = document.importNode(fresh, true);
          current.replaceWith(placed);
          current = placed;
          current.querySelectorAll("table.sortable").forEach(makeSortable);
          document.body.dataset.redrawn = String(Number(document.body.dataset.redrawn || 0) + 1);
        }
        failures = 0;
      } catch (error) {
        failures += 1;
      }
      setTimeout(again, Number(current.dataset.refreshMs) * Math.min(1 + failures, 8));
    }
    setTimeout(again, Number(current.dataset.refreshMs));
  }

  // --- the theme control (theme.js applies and remembers the choice) -------------------

  function themeControl(nav) {
    const theme = window.arenaTheme;
    if (!theme || !nav) return;
    const select = el("select", { id: "theme-choice" });
    for (const choice of theme.CHOICES) select.append(el("option", { value: choice }, choice));
    select.value = theme.read();
    select.addEventListener("change", () => theme.choose(select.value));
    nav.append(el("label", { class: "theme-choice", for: "theme-choice" }, "Theme", select));
  }

  // --- start ---------------------------------------------------------------------------

  function start() {
    document.querySelectorAll("table.sortable").forEach(makeSortable);
    document.querySelectorAll("select[data-autosubmit]").forEach((select) => {
      select.addEventListener("change", () => select.form && select.form.submit());
    });
    document.querySelectorAll("[data-live-url]").forEach(live);
    document.querySelectorAll("[data-refresh-ms]").forEach(following);
    themeControl(document.querySelector(".site-header nav"));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
