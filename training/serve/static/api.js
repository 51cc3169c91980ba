// Parlour's HTTP API as its pages call it (training/serve/api.py): one request, its JSON answer, and one line for any
// failure -- the server's own `error`, or why no answer came. A string body is sent as it is (a record's text); any
// other body as JSON.
"use strict";

window.parlourApi = async function parlourApi(method, path, body) {
  const init = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new Error("the server does not answer: is parlour serve still running?");
  }
  let data;
  try {
    data = await response.json();
  } catch (err) {
    throw new Error(`the server answered ${response.status} without JSON`);
  }
  if (!response.ok || (data && typeof data.error === "string")) {
    throw new Error(data && typeof data.error === "string" ? data.error : `the server answered ${response.status}`);
  }
  return data;
};

/** Fill a game's outcome table (``body``: its tbody): a row a seat -- its agent, its player's name, its score ("—"
 * without scores) -- the winners' rows marked; the play page and the replay viewer both show the end this way. */
window.parlourScoreRows = function parlourScoreRows(body, agents, players, winners, scores) {
  body.replaceChildren();
  agents.forEach((agent, s) => {
    const tr = document.createElement("tr");
    tr.dataset.agent = agent;
    if (winners.includes(s)) tr.className = "winner";
    for (const text of [agent, players[s], s < scores.length ? String(scores[s]) : "—"]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    body.append(tr);
  });
};
