// The /play page: a person's seat. The token lives in this module's memory only
// and goes out as an Authorization header (no cookie, no storage). The page shows
// the JSON of /api/play/ID, which holds only what the referee sent the seat.

const $ = (id) => document.getElementById(id);
// How often to ask for the table while the bot moves (PlayOptions.poll_ms).
const POLL_MS = Number(document.querySelector('script[src^="/static/play.js"]').dataset.pollMs);
let token = "";
let tableId = null;
let table = null;
let shown = -1;
let filter = null; // {kind, name}: the board element the person clicked
let sending = false;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function cardNode(name, where) {
  const node = el("span", `card card-${name.toLowerCase()}`, name);
  node.dataset.card = name;
  node.dataset.where = where;
  return node;
}

async function api(method, path, body, as = token) {
  const init = { method, headers: { Authorization: `Bearer ${as}` } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const payload = await response.json();
  if (!response.ok) throw new Error(payload.error || `HTTP ${response.status}`);
  return payload;
}

function matches(action, f) {
  if (f === null) return true;
  if (f.kind === "line") return action.line === f.name;
  if (f.kind === "faceup") return action.type === "draw" && action.card === f.name;
  if (f.kind === "hand") {
    return action.type !== "draw" && (action.card === f.name || (action.cards || []).includes(f.name));
  }
  return false;
}

function fill(node, cards, where) {
  node.replaceChildren(...cards.map((name) => cardNode(name, where)));
}

function renderView(view) {
  const seat = view.seat;
  for (const bridge of document.querySelectorAll("#board .bridge")) {
    const owner = view.bridges[bridge.dataset.line];
    bridge.dataset.owner = owner === undefined ? "" : String(owner);
  }
  for (const island of document.querySelectorAll("#board .island")) {
    const owner = view.controlled[island.dataset.island];
    const value = owner === undefined ? "" : String(owner);
    island.dataset.controller = value;
    island.querySelector(".token").dataset.controller = value;
  }
  $("you-seat").textContent = `seat ${seat}`;
  $("you-seat").dataset.seat = String(seat);
  $("round").textContent = String(view.round);
  $("points").textContent = `you ${view.points[seat]} · bot ${view.points[1 - seat]}`;
  $("supply").textContent = `you ${view.supply[seat]} · bot ${view.supply[1 - seat]}`;
  $("opp-hand").textContent = `${view.opponent_hand_size} card${view.opponent_hand_size === 1 ? "" : "s"}`;
  $("opp-facedown").textContent = String(view.opponent_facedown_count);
  $("opp-passed").textContent = view.opponent_passed ? " · the bot passed" : "";
  fill($("opp-open"), view.open_cards[1 - seat], "opp-open");
  fill($("faceup"), view.faceup.filter((c) => c !== null), "faceup");
  $("deck").textContent = `${view.deck_size} cards`;
  fill($("hand"), view.hand, "hand");
  fill($("own-open"), view.open_cards[seat], "own-open");
  $("own-facedown").textContent = view.own_facedown_discards.join(", ") || "none";
  const items = view.history.slice(-12).map((e) => {
    const who = e.seat === seat ? "you" : "bot";
    const what = e.hidden ? `${e.type} (hidden)` : [e.type, e.card, (e.cards || []).join("+"), e.line, e.drawn ? `drew ${e.drawn}` : ""].filter(Boolean).join(" ");
    return el("li", "", `${who}: ${what}`);
  });
  $("history").replaceChildren(...items);
}

function renderLegal() {
  const legal = table.legal || [];
  for (const node of document.querySelectorAll(".legal, .chosen")) node.classList.remove("legal", "chosen");
  const candidates = legal.filter((a) => matches(a, filter));
  for (const action of candidates) {
    if (action.line) {
      $(`line-${action.line}`).classList.add("legal");
      $(`bridge-${action.line}`).classList.add("legal");
    }
    for (const card of document.querySelectorAll("#hand .card, #faceup .card")) {
      const kind = card.dataset.where;
      if (matches(action, { kind, name: card.dataset.card })) card.classList.add("legal");
    }
  }
  if (filter !== null && filter.kind !== "line") {
    for (const card of document.querySelectorAll(`#${filter.kind} .card`)) {
      if (card.dataset.card === filter.name) card.classList.add("chosen");
    }
  }
  const buttons = candidates.map((action) => {
    const button = el("button", "choice", action.text);
    button.type = "button";
    button.dataset.action = action.text;
    return button;
  });
  $("choices").replaceChildren(...buttons);
}

function renderStatus() {
  const section = $("table");
  section.dataset.status = table.status;
  section.dataset.request = table.request === undefined || table.request === null ? "" : String(table.request);
  const status = $("status");
  const seat = table.seat;
  if (table.status === "stored" || table.status === "over") {
    const result = table.result;
    let text = "The game is over";
    if (result) {
      const won = result.winner_seat === null ? "a draw" : result.winner_seat === seat ? "you won" : "the bot won";
      text = `The game is over: ${won} (${result.reason})`;
    } else if (table.goodbye) {
      text = `The game ended: ${table.goodbye}`;
    }
    status.replaceChildren(el("span", "", `${text}. `));
    if (table.game !== null) {
      const link = el("a", "", `Replay game ${table.game}`);
      link.id = "game-link";
      link.href = `/games/${table.game}`;
      status.append(link);
    }
  } else if (table.status === "failed") {
    status.textContent = table.error || "the game could not be played";
  } else if (table.status === "your_turn") {
    status.textContent = "Your move";
  } else if (table.status === "waiting") {
    status.textContent = `${table.bot} is thinking`;
  } else {
    status.textContent = "Seating you and the bot";
  }
  renderDuplicate();
  const rated = $("rated");
  rated.dataset.rated = String(table.rated);
  rated.textContent = table.rated
    ? "This game is rated in the people's ratings: leaving it or running out of time is a loss."
    : `This game is unrated: ${table.unrated_reason}.`;
  $("clock").textContent = table.clock_ms === null || table.clock_ms === undefined ? "-" : `${Math.ceil(table.clock_ms / 1000)} s`;
}

function pointsText(points) {
  return points ? `${points[table.seat]}-${points[1 - table.seat]}` : "no points";
}

function renderDuplicate() {
  const node = $("duplicate");
  node.hidden = !table.reference;
  if (!table.reference) return;
  const dup = table.duplicate;
  if (!dup) {
    node.textContent = `Duplicate: ${table.reference} plays the same deal from your seat after your game`;
    return;
  }
  const outcome = (winner) => winner === null ? "a draw" : winner === table.seat ? "won" : "lost";
  node.textContent = `Duplicate, the same deal from your seat: you ${outcome(dup.person_winner_seat)} `
    + `${pointsText(dup.person_points)}; ${dup.bot} ${outcome(dup.winner_seat)} ${pointsText(dup.points)} (${dup.reason})`;
  node.dataset.done = "true";
}

function render(next) {
  // Answers may come back out of order (a poll sent before a move, answered after the
  // move's own answer): one older than what is shown would bring back a settled request.
  if (table !== null && next.version < shown) return;
  const fresh = table === null || next.request !== table.request;
  table = next;
  if (fresh) filter = null;
  if (table.view) renderView(table.view);
  renderStatus();
  renderLegal();
  shown = table.version;
}

async function poll() {
  try {
    const next = await api("GET", `/api/play/${tableId}`);
    if (!sending && (next.version !== shown || next.request !== table.request)) render(next);
    else if (!sending) { table.clock_ms = next.clock_ms; renderStatus(); }
    if (next.status === "stored" || next.status === "failed") {
      showGames();
      return;
    }
  } catch (error) {
    $("status").textContent = String(error.message || error);
  }
  setTimeout(poll, POLL_MS);
}

async function play(text) {
  if (sending || table === null || table.request === null) return;
  sending = true;
  try {
    render(await api("POST", `/api/play/${tableId}/action`, { action: text, request: table.request }));
  } catch (error) {
    $("status").textContent = String(error.message || error);
  } finally {
    sending = false;
  }
}

function choose(kind, name) {
  if (table === null || !table.legal || table.legal.length === 0) return;
  const next = { kind, name };
  const candidates = table.legal.filter((a) => matches(a, next));
  if (candidates.length === 0) return;
  if (candidates.length === 1) {
    play(candidates[0].text);
    return;
  }
  filter = next;
  renderLegal();
}

async function start(event) {
  event.preventDefault();
  token = $("token").value.trim();
  $("progress").textContent = "starting...";
  try {
    const body = {
      bot: $("bot").value, seat: Number($("seat").value),
      strategic: $("strategic").checked, tactical: $("tactical").checked,
      reference: $("reference").value,
    };
    const opened = await api("POST", "/api/play", body);
    tableId = opened.table;
    $("progress").textContent = `playing ${opened.bot}`;
    $("start").disabled = true;
    $("table").hidden = false;
    render(opened);
    setTimeout(poll, POLL_MS);
  } catch (error) {
    $("progress").textContent = String(error.message || error);
  }
}

function ratingText(rating) {
  return rating ? `${rating.rating.toFixed(2)} (μ ${rating.mu.toFixed(2)}, σ ${rating.sigma.toFixed(2)})` : "-";
}

function gameRow(game) {
  const row = el("tr");
  row.dataset.tournament = String(game.tournament);
  const cell = (text, className) => row.append(el("td", className || "", text));
  const first = el("td");
  if (game.game !== null) {
    const link = el("a", "", `game ${game.game}`);
    link.href = `/games/${game.game}`;
    first.append(link);
  } else {
    first.textContent = "not played";
  }
  row.append(first);
  cell(game.bot);
  cell(String(game.seat), "num");
  cell(game.result === null ? "-" : `${game.result}${game.reason ? ` (${game.reason})` : ""}`);
  cell(game.rated ? "rated" : `unrated: ${game.unrated_reason}`);
  cell(ratingText(game.rating_after), "num");
  cell(game.created_at.slice(0, 16).replace("T", " "));
  return row;
}

async function showGames() {
  // the token as the field has it now (one mended after a refusal), else the game's
  const given = $("token").value.trim() || token;
  if (!given) {
    $("games-progress").textContent = "give your token first";
    return;
  }
  try {
    const payload = await api("GET", "/api/play/games", undefined, given);
    const rows = payload.games.map(gameRow);
    $("games-table").querySelector("tbody").replaceChildren(...rows);
    $("games-table").hidden = false;
    const rated = payload.rated_play ? "your new games are rated in the people's ratings"
      : "your new games are unrated";
    $("games-progress").textContent = rows.length ? rated : `no games yet; ${rated}`;
  } catch (error) {
    $("games-progress").textContent = String(error.message || error);
  }
}

async function loadBots() {
  const response = await fetch("/api/play/bots");
  if (!response.ok) return;
  const payload = await response.json();
  const options = () => payload.bots.map((name) => {
    const option = el("option", "", name);
    option.value = name;
    return option;
  });
  $("bot").replaceChildren(...options());
  $("reference").append(...options());
}

$("play-form").addEventListener("submit", start);
for (const node of document.querySelectorAll("#board .line, #board .bridge")) {
  const line = node.id.slice(node.id.indexOf("-") + 1);
  node.addEventListener("click", () => choose("line", line));
}
for (const id of ["hand", "faceup"]) {
  $(id).addEventListener("click", (event) => {
    const card = event.target.closest(".card");
    if (card) choose(id, card.dataset.card);
  });
}
$("choices").addEventListener("click", (event) => {
  const button = event.target.closest("button.choice");
  if (button) play(button.dataset.action);
});
$("all-actions").addEventListener("click", () => { filter = null; renderLegal(); });
$("show-games").addEventListener("click", showGames);
loadBots();
