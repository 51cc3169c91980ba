// Parlour's play page: one seat of a game against Parlour's bots, through the HTTP API of `parlour serve`
// (training/serve/api.py). The page shows exactly the seat's payload (its view, whose turn, its legal actions by name,
// the outcome at the end): nothing else about the table is ever sent to it. Every text from the server goes in as
// text (textContent), never as markup.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);

  /** The envs the server offers: {id: {title, players: [min, max], default_players, policies}}. */
  let envs = {};
  /** The table being played: its id, the setup it was started with, and its latest payload. */
  let table = null;
  let setup = null;
  let payload = null;
  let busy = false;
  /** Number keys typed so far (an action's place in the list), and the timer that plays them. */
  let digits = "";
  let digitTimer = null;

  /** The server's API (api.js): its JSON answer, or an error of one line. */
  const api = (method, path, body) => window.parlourApi(method, path, body);

  function showError(message) {
    const el = $("error");
    el.textContent = message || "";
    el.hidden = !message;
  }

  function option(value, text, selected) {
    const o = document.createElement("option");
    o.value = String(value);
    o.textContent = text;
    if (selected) o.selected = true;
    return o;
  }

  /** The policy the other seats get unless chosen otherwise: the server's default if it names one, else the game's
   * heuristic: never only random. */
  function defaultPolicy(info) {
    const policies = info.policies;
    if (policies.includes(info.default_opponent)) return info.default_opponent;
    return policies.find((p) => p.endsWith("_heuristic")) || policies.find((p) => p !== "random") || policies[0];
  }

  function policyLabel(name, fallback) {
    return name === fallback ? `${name} (default)` : name;
  }

  // ---- the setup form ------------------------------------------------------------------------------------------

  function fillEnvs() {
    const select = $("env");
    select.replaceChildren();
    const wanted = new URLSearchParams(location.search).get("env");
    for (const [id, info] of Object.entries(envs)) {
      select.append(option(id, `${info.title} (${id})`, id === wanted));
    }
    fillPlayers();
  }

  function fillPlayers() {
    const info = envs[$("env").value];
    const select = $("num-players");
    select.replaceChildren();
    if (!info) return;
    for (let n = info.players[0]; n <= info.players[1]; n++) {
      select.append(option(n, `${n} players`, n === info.default_players));
    }
    fillSeats();
  }

  function fillSeats() {
    const n = Number($("num-players").value);
    const select = $("seat");
    const before = Number(select.value) || 0;
    select.replaceChildren();
    for (let s = 0; s < n; s++) select.append(option(s, `player_${s}`, s === Math.min(before, n - 1)));
    fillOpponents();
  }

  function fillOpponents() {
    const info = envs[$("env").value];
    const box = $("opponents");
    const chosen = {};
    for (const sel of box.querySelectorAll("select")) chosen[sel.dataset.seat] = sel.value;
    box.replaceChildren();
    if (!info) return;
    const n = Number($("num-players").value);
    const mine = Number($("seat").value);
    const fallback = defaultPolicy(info);
    for (let s = 0; s < n; s++) {
      if (s === mine) continue;
      const label = document.createElement("label");
      label.append(`player_${s}`);
      const sel = document.createElement("select");
      sel.dataset.seat = String(s);
      sel.className = "opponent";
      sel.id = `opponent-${s}`;
      const keep = info.policies.includes(chosen[s]) ? chosen[s] : fallback;
      for (const p of info.policies) sel.append(option(p, policyLabel(p, fallback), p === keep));
      label.append(sel);
      box.append(label);
    }
    $("start").disabled = false;
  }

  function readSetup() {
    const env = $("env").value;
    const seat = Number($("seat").value);
    const numPlayers = Number($("num-players").value);
    const others = [...$("opponents").querySelectorAll("select")].sort(
      (a, b) => Number(a.dataset.seat) - Number(b.dataset.seat),
    );
    const request = { env, seat, num_players: numPlayers, opponents: others.map((s) => s.value) };
    const seed = $("seed").value.trim();
    if (seed !== "") request.seed = Number(seed);
    const names = {};
    for (const s of others) names[`player_${s.dataset.seat}`] = s.value;
    return { request, names };
  }

  async function start(event) {
    event.preventDefault();
    if (busy) return;
    const chosen = readSetup();
    busy = true;
    $("start").disabled = true;
    showError("");
    try {
      const data = await api("POST", "/api/tables", chosen.request);
      table = data.table;
      setup = chosen;
      $("log").replaceChildren();
      const game = $("game");
      game.dataset.table = table;
      game.dataset.env = data.env;
      game.dataset.seat = data.seat;
      $("setup").hidden = true;
      game.hidden = false;
      busy = false;
      render(data);
    } catch (err) {
      showError(err.message);
    } finally {
      busy = false;
      $("start").disabled = false;
    }
  }

  // ---- the game ------------------------------------------------------------------------------------------------

  function seatName(agent) {
    if (payload && agent === payload.seat) return "you";
    return (setup && setup.names[agent]) || agent;
  }

  function render(p) {
    payload = p;
    $("view").textContent = p.view;
    const status = $("status");
    if (p.over) {
      status.textContent = "The game is over.";
      status.dataset.state = "over";
    } else if (p.your_turn) {
      status.textContent = `Your turn (${p.seat}): choose one of your ${p.legal.length} legal actions.`;
      status.dataset.state = "your-turn";
    } else {
      status.textContent = `${p.to_act} (${seatName(p.to_act)}) is to act.`;
      status.dataset.state = "waiting";
    }
    status.dataset.toAct = p.to_act || "";

    const seats = $("seats");
    seats.replaceChildren();
    for (const agent of p.players) {
      const li = document.createElement("li");
      li.dataset.agent = agent;
      li.textContent = `${agent}: ${seatName(agent)}`;
      if (agent === p.to_act) li.classList.add("to-act");
      seats.append(li);
    }

    const legal = $("legal");
    legal.replaceChildren();
    p.legal.forEach((name, i) => {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.action = name;
      b.dataset.index = String(i + 1);
      const k = document.createElement("kbd");
      k.textContent = String(i + 1);
      const span = document.createElement("span");
      span.className = "name";
      span.textContent = name;
      b.append(k, span);
      b.addEventListener("click", () => act(name));
      legal.append(b);
    });
    if (!p.legal.length) {
      const none = document.createElement("p");
      none.className = "note";
      none.textContent = p.over ? "None: the game is over." : "None now.";
      legal.append(none);
    }
    setBusy(false);

    const rules = rulesOf(p.prompt);
    $("rules-text").textContent = rules;
    $("rules").hidden = !rules;
    renderOutcome(p);
  }

  /** The rules in brief, from the seat's prompt (the text between its "Rules, in brief:" and "What you see now:"). */
  function rulesOf(prompt) {
    const text = String(prompt || "");
    const start = text.indexOf("Rules, in brief:\n");
    const end = text.indexOf("\n\nWhat you see now:");
    return start >= 0 && end > start ? text.slice(start + "Rules, in brief:\n".length, end) : "";
  }

  function renderOutcome(p) {
    const box = $("outcome");
    if (!p.over) {
      box.hidden = true;
      return;
    }
    const outcome = p.outcome || {};
    const winners = Array.isArray(outcome.winners) ? outcome.winners : [];
    const scores = Array.isArray(outcome.scores) ? outcome.scores : [];
    const mine = p.players.indexOf(p.seat);
    box.dataset.winners = winners.join(",");
    const names = winners.map((w) => `${p.players[w] ?? w} (${seatName(p.players[w])})`);
    let line = names.length ? `Winners: ${names.join(", ")}.` : "Nobody won.";
    if (winners.includes(mine)) line += " You won!";
    $("winners").textContent = line;
    window.parlourScoreRows($("scores").querySelector("tbody"), p.players, p.players.map(seatName), winners, scores);
    $("scores").hidden = !scores.length;
    $("outcome-details").textContent = JSON.stringify(outcome, null, 2);
    const record = `/api/tables/${encodeURIComponent(table)}/record`;
    const download = $("download");
    download.href = record;
    download.setAttribute("download", `${p.env}_browser_record.json`);
    $("open-replay").href = `/replay?table=${encodeURIComponent(table)}`;
    const first = box.hidden;
    box.hidden = false;
    if (first) box.scrollIntoView({ block: "nearest" });
  }

  function setBusy(on) {
    busy = on;
    for (const b of $("legal").querySelectorAll("button")) b.disabled = on;
    $("legal").setAttribute("aria-busy", on ? "true" : "false");
  }

  /** Play ``answer`` (a legal action's name; a number is its place in the list): the server plays it and the other
   * seats until it is this seat's turn again or the game is over. A refusal is the server's one line. */
  async function act(answer) {
    if (busy || !table || !payload || payload.over) return;
    setBusy(true);
    $("status").textContent = "The other seats are playing…";
    $("status").dataset.state = "busy";
    try {
      const data = await api("POST", `/api/tables/${encodeURIComponent(table)}/act`, { action: answer });
      const li = document.createElement("li");
      li.textContent = typeof answer === "string" ? answer : payload.legal[answer - 1] || String(answer);
      li.dataset.action = li.textContent;
      $("log").append(li);
      $("log-box").scrollTop = $("log-box").scrollHeight; // the latest move in sight
      showError("");
      render(data);
    } catch (err) {
      showError(err.message);
      render(payload); // the table is as it was: the same payload, the buttons back
    }
  }

  // ---- keys: a number picks the action at that place in the list (1 = the first) ----------------------------------

  function playDigits() {
    clearTimeout(digitTimer);
    digitTimer = null;
    const typed = digits;
    digits = "";
    $("keys").textContent = "";
    if (!typed || !payload || !payload.your_turn) return;
    const k = Number(typed);
    // a place on the list plays that action by name; any other number goes to the server, which says what is legal
    act(k >= 1 && k <= payload.legal.length ? payload.legal[k - 1] : k);
  }

  function onKey(event) {
    const target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (target && ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName)) return;
    if (!payload || !payload.your_turn || busy || $("game").hidden) return;
    if (/^[0-9]$/.test(event.key)) {
      event.preventDefault();
      digits += event.key;
      $("keys").textContent = `typed: ${digits}`;
      clearTimeout(digitTimer);
      // at once when no longer number fits the list (with 1–9 actions: every key); else wait for the next digit
      if (Number(digits) * 10 > payload.legal.length) playDigits();
      else digitTimer = setTimeout(playDigits, 900);
    } else if (event.key === "Enter" && digits) {
      event.preventDefault();
      playDigits();
    } else if (event.key === "Escape" && digits) {
      clearTimeout(digitTimer);
      digits = "";
      $("keys").textContent = "";
    }
  }

  function newGame() {
    $("game").hidden = true;
    $("setup").hidden = false;
    showError("");
    payload = null;
    table = null;
    $("env").focus();
  }

  async function init() {
    $("setup").addEventListener("submit", start);
    $("env").addEventListener("change", fillPlayers);
    $("num-players").addEventListener("change", fillSeats);
    $("seat").addEventListener("change", fillOpponents);
    $("new-game").addEventListener("click", newGame);
    document.addEventListener("keydown", onKey);
    try {
      envs = await api("GET", "/api/envs");
      fillEnvs();
      document.body.dataset.ready = "true";
    } catch (err) {
      showError(err.message);
    }
  }

  // for the tests and the curious: play an answer as the buttons do
  window.parlourPlay = { act, state: () => ({ table, payload }) };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
