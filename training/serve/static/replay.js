// Parlour's replay viewer: step through a game's frames (parlour.training.tables.record_frames: before every move
// and after the last, each seat's view and legal actions, the umpire's view, the move made) through any seat's eyes
// or the umpire's. A viewer file (JSON with "frames", or this page written by `parlour replay RECORD --html OUT.html`
// with the frames inside) needs no server; a plain record is turned into frames by `parlour serve` (POST /api/frames).
// As in `parlour replay`, a seat's eyes see its own moves named and the others' only announced (a move's name can tell
// what only its player knows); the umpire sees every move named. Text from a file goes in as text, never as markup.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const UMPIRE = "umpire";
  const served = location.protocol === "http:" || location.protocol === "https:";

  /** The frames shown ({env, players, agents, game_seed, frames, outcome}), the position and the eyes. */
  let data = null;
  let step = 0;
  let eyes = UMPIRE;

  function say(text, isError) {
    const el = $("message");
    el.textContent = text || "";
    el.className = isError ? "error" : "note";
  }

  const last = () => data.frames.length - 1;
  const nameOf = (agent) => {
    const i = data.agents.indexOf(agent);
    const name = i >= 0 && i < data.players.length ? String(data.players[i]) : "";
    return name && name !== agent ? `${agent} (${name})` : agent;
  };
  const shownTo = (move) => eyes === UMPIRE || move.agent === eyes;

  /** A viewer file's content checked enough to be shown (the server makes them; a hand-made one may be anything). */
  function checkFrames(d) {
    if (!d || typeof d !== "object" || !Array.isArray(d.frames) || !d.frames.length) {
      throw new Error("no frames in it");
    }
    if (!Array.isArray(d.agents) || !d.agents.length || !d.agents.every((a) => typeof a === "string")) {
      throw new Error('its "agents" is not a list of seats');
    }
    for (const [i, f] of d.frames.entries()) {
      if (!f || typeof f !== "object" || !f.seats || typeof f.seats !== "object") {
        throw new Error(`frame ${i} is not a frame`);
      }
      if (i < d.frames.length - 1 && (!f.move || typeof f.move !== "object")) throw new Error(`frame ${i} has no move`);
    }
    return {
      env: String(d.env ?? "?"),
      players: Array.isArray(d.players) ? d.players.map(String) : d.agents,
      agents: d.agents,
      game_seed: d.game_seed,
      frames: d.frames,
      outcome: d.outcome && typeof d.outcome === "object" ? d.outcome : null,
      perspective: d.perspective,
    };
  }

  function show(d, start) {
    data = checkFrames(d);
    const wanted = start ?? data.perspective;
    eyes = data.agents.includes(wanted) || wanted === UMPIRE ? wanted : data.agents[0];
    const select = $("perspective");
    select.replaceChildren();
    for (const agent of data.agents) select.append(new Option(nameOf(agent), agent, false, agent === eyes));
    select.append(new Option("umpire: everything revealed", UMPIRE, false, eyes === UMPIRE));
    const n = last();
    $("title").textContent =
      `${data.env}, ${data.agents.length} players, seed ${data.game_seed}, ${n} move${n === 1 ? "" : "s"}. ` +
      `Players: ${data.agents.map(nameOf).join(", ")}.`;
    const slider = $("slider");
    slider.max = String(n);
    const box = $("replay");
    box.dataset.env = data.env;
    box.dataset.moves = String(n);
    box.hidden = false;
    listMoves();
    go(0);
  }

  function listMoves() {
    const list = $("moves");
    list.replaceChildren();
    data.frames.slice(0, -1).forEach((f, i) => {
      const li = document.createElement("li");
      li.dataset.step = String(i);
      li.dataset.agent = String(f.move.agent);
      li.textContent = shownTo(f.move) ? `${f.move.agent}: ${f.move.name}` : `${f.move.agent} moves`;
      li.addEventListener("click", () => go(i));
      list.append(li);
    });
  }

  function go(k) {
    if (!data) return;
    step = Math.max(0, Math.min(last(), Number(k) || 0));
    const frame = data.frames[step];
    const n = last();
    const stepEl = $("step");
    stepEl.dataset.step = String(step);
    stepEl.textContent = step < n ? `move ${step + 1} of ${n}` : `the end (after ${n} move${n === 1 ? "" : "s"})`;
    $("slider").value = String(step);
    $("first").disabled = $("prev").disabled = step === 0;
    $("next").disabled = $("last").disabled = step === n;

    const toAct = $("to-act");
    toAct.dataset.agent = frame.to_act || "";
    toAct.textContent = frame.to_act ? `${nameOf(frame.to_act)} is to act.` : "The game is over.";

    const moveEl = $("move");
    const move = step < n ? frame.move : null;
    moveEl.dataset.agent = move ? String(move.agent) : "";
    moveEl.dataset.name = move && shownTo(move) ? String(move.name) : "";
    if (!move) moveEl.textContent = "No more moves.";
    else if (shownTo(move)) moveEl.textContent = `${nameOf(move.agent)} chose: ${move.name}`;
    else moveEl.textContent = `${nameOf(move.agent)} moves (what it chose is named through its own eyes, or the umpire's).`;

    const seat = eyes === UMPIRE ? null : frame.seats[eyes];
    $("view").textContent =
      eyes === UMPIRE ? String(frame.umpire ?? "") : seat ? String(seat.view) : `${eyes} is not at the table now.`;

    const whose = eyes === UMPIRE ? frame.to_act : eyes;
    const legal = whose && frame.seats[whose] && Array.isArray(frame.seats[whose].legal) ? frame.seats[whose].legal : [];
    $("legal-title").textContent = whose ? `${whose}'s legal actions` : "Legal actions";
    const list = $("legal");
    list.replaceChildren();
    for (const name of legal) {
      const li = document.createElement("li");
      li.dataset.action = String(name);
      li.textContent = String(name);
      if (move && shownTo(move) && move.agent === whose && move.name === name) li.dataset.chosen = "true";
      list.append(li);
    }
    if (!legal.length) {
      const li = document.createElement("li");
      li.className = "note";
      li.dataset.none = "true";
      li.textContent = frame.to_act ? `none: ${frame.to_act} is to act` : "none: the game is over";
      list.append(li);
    }

    for (const li of $("moves").children) {
      if (Number(li.dataset.step) === step) {
        li.setAttribute("aria-current", "step");
        keepInSight(li);
      } else li.removeAttribute("aria-current");
    }
    showOutcome(step === n ? frame : null);
  }

  /** Scroll the list of moves (only it, not the page) so that ``li`` is in sight. */
  function keepInSight(li) {
    const box = $("moves-box");
    const top = li.offsetTop;
    const bottom = top + li.offsetHeight;
    if (top < box.scrollTop) box.scrollTop = top;
    else if (bottom > box.scrollTop + box.clientHeight) box.scrollTop = bottom - box.clientHeight;
  }

  function showOutcome(end) {
    const box = $("outcome");
    box.hidden = !end;
    if (!end) return;
    const outcome = data.outcome || {};
    const winners = Array.isArray(outcome.winners) ? outcome.winners : [];
    const scores = Array.isArray(outcome.scores) ? outcome.scores : [];
    box.dataset.winners = winners.join(",");
    const names = winners.map((w) => nameOf(data.agents[w] ?? String(w)));
    $("winners").textContent = names.length ? `Winners: ${names.join(", ")}.` : "Winners: nobody.";
    const forfeit = $("forfeit");
    forfeit.hidden = !end.forfeit;
    forfeit.textContent = end.forfeit ? `Forfeit: ${JSON.stringify(end.forfeit)}` : "";
    const players = data.agents.map((agent, s) => (s < data.players.length ? data.players[s] : agent));
    window.parlourScoreRows($("scores").querySelector("tbody"), data.agents, players, winners, scores);
    $("scores").hidden = !scores.length;
    $("outcome-details").textContent = JSON.stringify(outcome, null, 2);
  }

  /** A plain record's frames, from the server that serves this page (it replays and checks the record). */
  async function framesOf(recordText) {
    return window.parlourApi("POST", "/api/frames", recordText);
  }

  /** The seat to watch first in a record: the person's (a record of parlour play or of the play page), as replay does. */
  function seatOf(record) {
    return record && Number.isInteger(record.human_seat) ? `player_${record.human_seat}` : undefined;
  }

  async function open(name, text) {
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      say(`${name} is not JSON: ${err.message}`, true);
      return;
    }
    try {
      if (parsed && typeof parsed === "object" && "frames" in parsed) {
        show(parsed);
      } else if (!served) {
        say(
          `${name} is a game record, not a viewer file: a page opened from a file cannot replay it. ` +
            `Export it with: parlour replay ${name} --html OUT.html`,
          true,
        );
        return;
      } else {
        say(`Replaying ${name} on the server…`);
        show(await framesOf(text), seatOf(parsed));
      }
      say(`${name}: ${data.env}, ${last()} moves. Keys: ← → step, Home/End the first/last position.`);
    } catch (err) {
      say(`${name}: ${err.message}`, true);
    }
  }

  async function openTable(key) {
    try {
      const response = await fetch(`/api/tables/${encodeURIComponent(key)}/record`);
      const text = await response.text();
      const record = JSON.parse(text);
      if (!response.ok || typeof record.error === "string") throw new Error(record.error || `HTTP ${response.status}`);
      show(await framesOf(text), seatOf(record));
      say(`The game just played: ${data.env}, ${last()} moves. Keys: ← → step, Home/End the first/last position.`);
    } catch (err) {
      say(`table ${key}: ${err.message}`, true);
    }
  }

  function onKey(event) {
    if (!data || event.ctrlKey || event.metaKey || event.altKey) return;
    const tag = event.target && event.target.tagName;
    if (tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA") return;
    const to = { ArrowLeft: step - 1, ArrowRight: step + 1, Home: 0, End: last() }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    go(to);
  }

  function init() {
    if (!served) $("nav").hidden = true; // its links lead to parlour serve's pages
    $("file").addEventListener("change", async () => {
      const file = $("file").files[0];
      if (file) await open(file.name, await file.text());
    });
    $("first").addEventListener("click", () => go(0));
    $("prev").addEventListener("click", () => go(step - 1));
    $("next").addEventListener("click", () => go(step + 1));
    $("last").addEventListener("click", () => go(last()));
    $("slider").addEventListener("input", () => go($("slider").value));
    $("perspective").addEventListener("change", () => {
      eyes = $("perspective").value;
      listMoves();
      go(step);
    });
    document.addEventListener("keydown", onKey);

    const embedded = $("frames").textContent.trim();
    const key = new URLSearchParams(location.search).get("table");
    if (embedded) {
      try {
        show(JSON.parse(embedded));
        say(`${data.env}, ${last()} moves. Keys: ← → step, Home/End the first/last position.`);
      } catch (err) {
        say(`the frames in this page cannot be shown: ${err.message}`, true);
      }
    } else if (key && served) {
      openTable(key);
    } else {
      say(
        served
          ? "Open a record (from parlour play, match --records, or this server's play page) or a viewer file."
          : "Open a viewer file (JSON with frames); a plain record needs parlour serve, or " +
              "parlour replay RECORD --html OUT.html.",
      );
    }
    document.body.dataset.ready = "true";
  }

  window.parlourReplay = { go, show, state: () => ({ step, eyes, data }) };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
