// Replay viewer: fetches frames computed server-side (arena.web.frames) for one
// perspective and draws frame N onto the board the server rendered.
// No build step: a plain ES module.

const KEYS = { ArrowRight: 1, ArrowLeft: -1 };

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function card(name, extra) {
  const node = el("span", `card card-${name ? name.toLowerCase() : "empty"} ${extra || ""}`, name || "empty");
  node.dataset.card = name || "";
  return node;
}

// Scroll only the action list (scrollIntoView would scroll the page too).
function keepVisible(list, item) {
  const top = item.offsetTop;
  const bottom = top + item.offsetHeight;
  if (top < list.scrollTop) list.scrollTop = top;
  else if (bottom > list.scrollTop + list.clientHeight) list.scrollTop = bottom - list.clientHeight;
}

export function startViewer(root) {
  const gameId = root.dataset.game;
  const bots = [root.dataset.bot0, root.dataset.bot1];
  const cache = new Map();
  const $ = (id) => document.getElementById(id);
  let perspective = "all";
  let frames = [];
  let step = 0;

  const embedded = document.getElementById("frames-data");
  if (embedded) {
    const all = JSON.parse(embedded.textContent);
    for (const [name, payload] of Object.entries(all)) cache.set(name, payload);
  }

  async function load(name) {
    if (!cache.has(name)) {
      const response = await fetch(`/api/games/${gameId}/frames?perspective=${name}`);
      const payload = await response.json();
      if (!response.ok) throw new Error(payload.error || `HTTP ${response.status}`);
      cache.set(name, payload);
    }
    return cache.get(name);
  }

  function renderBoard(frame) {
    for (const bridge of root.querySelectorAll(".bridge")) {
      const owner = frame.bridges[bridge.dataset.line];
      bridge.dataset.owner = owner === undefined ? "" : String(owner);
      const last = frame.action && frame.action.line === bridge.dataset.line;
      bridge.classList.toggle("last", Boolean(last));
    }
    for (const island of root.querySelectorAll(".island")) {
      const owner = frame.controlled[island.dataset.island];
      const value = owner === undefined ? "" : String(owner);
      island.dataset.controller = value;
      island.querySelector(".token").dataset.controller = value;
    }
  }

  function renderCards(frame) {
    const faceup = $("faceup");
    faceup.replaceChildren(...frame.faceup.map((name) => card(name)));
    $("deck-size").textContent = String(frame.deck_size);
    const facedown = frame.facedown_counts[0] + frame.facedown_counts[1];
    $("discard-size").textContent = String(frame.played_cards.length + facedown);
    for (const seat of [0, 1]) {
      const hand = frame.hands[seat];
      const open = [...(frame.open_cards[seat] || [])];
      const box = $(`hand-${seat}`);
      if (hand === null) {
        const backs = [];
        for (let i = 0; i < frame.hand_sizes[seat]; i += 1) {
          const name = open.shift();
          backs.push(name ? card(name, "open") : card("", "back"));
        }
        box.replaceChildren(...backs);
        box.dataset.hidden = "true";
      } else {
        box.replaceChildren(...hand.map((name) => {
          const at = open.indexOf(name);
          if (at >= 0) open.splice(at, 1);
          return card(name, at >= 0 ? "open" : "");
        }));
        box.dataset.hidden = "false";
      }
      if (box.childElementCount === 0) box.append(el("span", "muted", "no cards"));
      const facedown = frame.facedown_discards[seat];
      $(`facedown-cards-${seat}`).textContent =
        facedown && facedown.length ? `discarded face down this round: ${facedown.join(", ")}` : "";
    }
  }

  function renderFacts(frame) {
    $("round").textContent = String(frame.round);
    const islands = [0, 0];
    for (const owner of Object.values(frame.controlled)) islands[owner] += 1;
    for (const seat of [0, 1]) {
      $(`points-${seat}`).textContent = String(frame.points[seat]);
      $(`islands-${seat}`).textContent = String(islands[seat]);
      $(`supply-${seat}`).textContent = String(frame.supply[seat]);
      $(`facedown-${seat}`).textContent = String(frame.facedown_counts[seat]);
      $(`seat-${seat}`).classList.toggle("to-move", frame.to_move === seat);
    }
    const toMove = $("to-move");
    if (frame.to_move === null) {
      toMove.textContent = frame.finished ? "game over" : "";
    } else {
      toMove.textContent = `${bots[frame.to_move]} (seat ${frame.to_move}) to move`;
    }
    if (frame.final_turns && !frame.finished) toMove.textContent += " · final turns";
  }

  function actionText(frame) {
    if (!frame.action) return "start of the game";
    const a = frame.action;
    let text = a.text;
    if (a.drawn) text += ` → ${a.drawn}`;
    return text;
  }

  function renderAction(frame) {
    const box = $("action");
    box.replaceChildren();
    if (frame.action) {
      box.append(el("span", `seat seat-${frame.action.seat}`), el("span", "who", `${bots[frame.action.seat]}: `));
    }
    box.append(el("code", "notation", actionText(frame)));
    box.dataset.seat = frame.action ? String(frame.action.seat) : "";
    const notes = [];
    if (frame.note) notes.push(frame.note);
    if (frame.finished && frame.outcome) {
      const o = frame.outcome;
      const who = o.winner === null ? "draw" : `${bots[o.winner]} won (${o.reason})`;
      notes.push(`${root.dataset.over || who}, points ${o.points[0]}–${o.points[1]}`);
    } else if (step === frames.length - 1 && root.dataset.over) {
      notes.push(`game over: ${root.dataset.over}`);
    }
    if (step === frames.length - 1 && current.error) notes.push(`replay stopped: ${current.error}`);
    $("note").textContent = notes.join(" · ");
  }

  function historyItem(frame, index) {
    const item = el("li", `seat-${frame.action.seat}`);
    const link = el("a", "", actionText(frame));
    link.href = `#step=${index + 1}`;
    link.addEventListener("click", (event) => { event.preventDefault(); show(index + 1); });
    item.append(link);
    return item;
  }

  function renderHistory() {
    $("history").replaceChildren(...frames.slice(1).map(historyItem));
  }

  let current = { frames: [], error: null };

  // Points after each scoring: at the first frame of the next round (the interim
  // scoring is added as the round starts), and at the game's last frame.
  function renderRoundScores() {
    const rows = [];
    for (let i = 1; i < frames.length; i += 1) {
      if (frames[i].round !== frames[i - 1].round) rows.push([`round ${frames[i - 1].round}`, frames[i].points]);
    }
    const last = frames[frames.length - 1];
    if (last && last.finished) rows.push(["the end", last.points]);
    $("round-scores").tBodies[0].replaceChildren(...rows.map(([label, points]) => {
      const row = el("tr");
      row.append(el("td", "", label), el("td", "num", String(points[0])), el("td", "num", String(points[1])));
      return row;
    }));
  }

  // Play: one step per tick at the chosen speed, stopping at the last frame.
  let timer = null;
  function pause() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    $("play").textContent = "▶ Play";
    $("play").setAttribute("aria-pressed", "false");
    root.dataset.playing = "false";
  }
  function play() {
    if (frames.length === 0) return;
    if (step >= frames.length - 1) show(0);
    if (timer !== null) clearInterval(timer);
    timer = setInterval(() => {
      if (step >= frames.length - 1) pause();
      else show(step + 1);
    }, Number($("speed").value) || 500);
    $("play").textContent = "❚❚ Pause";
    $("play").setAttribute("aria-pressed", "true");
    root.dataset.playing = "true";
  }

  function show(index) {
    if (frames.length === 0) return;
    step = Math.max(0, Math.min(frames.length - 1, index));
    const frame = frames[step];
    renderBoard(frame);
    renderCards(frame);
    renderFacts(frame);
    renderAction(frame);
    $("step").textContent = `${step} / ${frames.length - 1}`;
    $("scrubber").max = String(frames.length - 1);
    $("scrubber").value = String(step);
    root.dataset.step = String(step);
    const items = $("history").children;
    for (let i = 0; i < items.length; i += 1) items[i].classList.toggle("current", i === step - 1);
    if (step > 0 && items[step - 1]) keepVisible($("history"), items[step - 1]);
    history.replaceState(null, "", `#step=${step}&perspective=${perspective}`);
  }

  async function setPerspective(name) {
    root.dataset.ready = "false";
    current = await load(name);
    perspective = name;
    frames = current.frames;
    root.dataset.perspective = name;
    renderHistory();
    renderRoundScores();
    show(step);
    root.dataset.ready = "true";
  }

  $("play").addEventListener("click", () => (timer === null ? play() : pause()));
  $("speed").addEventListener("change", () => { if (timer !== null) play(); });
  $("scrubber").addEventListener("input", () => { pause(); show(Number($("scrubber").value)); });
  $("first").addEventListener("click", () => show(0));
  $("prev").addEventListener("click", () => show(step - 1));
  $("next").addEventListener("click", () => show(step + 1));
  $("last").addEventListener("click", () => show(frames.length - 1));
  for (const radio of root.querySelectorAll('input[name="perspective"]')) {
    radio.addEventListener("change", () => {
      radio.blur(); // arrow keys step through the game, not through the radio group
      setPerspective(radio.value).catch(fail);
    });
  }
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    // a focused control handles its own keys (a button's Space, the scrubber's and speed's arrows)
    const tag = event.target.tagName;
    if (tag === "SELECT" || (tag === "INPUT" && event.target.type === "range")) return;
    if (tag === "BUTTON" && (event.key === " " || event.key === "Enter")) return;
    if (event.key === " ") {
      if (timer === null) play(); else pause();
    } else if (event.key in KEYS) show(step + KEYS[event.key]);
    else if (event.key === "Home") show(0);
    else if (event.key === "End") show(frames.length - 1);
    else return;
    event.preventDefault();
  });

  function fail(error) {
    $("action").textContent = `could not load the replay: ${error.message}`;
    root.dataset.ready = "error";
  }

  // A game in play: poll /api/live/MATCH/GAME for the public frames after the
  // last one shown; follow the newest unless the visitor stepped back; open
  // the full replay once the game is stored.
  function followLive(url, pollMs) {
    let liveId = null;
    perspective = "public";
    root.dataset.perspective = "public";
    const state = $("live-state");
    async function tick() {
      let again = pollMs;
      try {
        const response = await fetch(`/api/live/${url}?after=${frames.length - 1}`, { cache: "no-store" });
        const data = await response.json();
        if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
        if (data.status === "finished") {
          location.replace(`/games/${data.game_id}#step=${Math.max(frames.length - 1, 0)}&perspective=all`);
          return;
        }
        if (data.live_id !== liveId) {
          const restart = liveId !== null; // a resumed match plays the game anew
          liveId = data.live_id;
          frames = [];
          current = { frames, error: null };
          $("history").replaceChildren();
          if (restart) {
            data.frames = []; // asked after a step of the other run: ask again from the start
            again = 0;
          }
        }
        if (data.frames.length) {
          const following = frames.length === 0 || step === frames.length - 1;
          const shownMs = Date.now();
          for (const frame of data.frames) {
            if (frame.step !== frames.length) continue; // not the next one: a repeat
            frames.push(frame);
            if (frame.step > 0) {
              const item = historyItem(frame, frame.step - 1);
              item.dataset.atMs = frame.at_ms === null ? "" : String(frame.at_ms);
              item.dataset.shownMs = String(shownMs);
              $("history").append(item);
            }
          }
          current = { frames, error: data.error };
          if (data.over) root.dataset.over = data.over; // the result in words, from the server
          renderRoundScores();
          if (following) show(frames.length - 1);
          else $("step").textContent = `${step} / ${frames.length - 1}`;
        }
        const delay = data.delay_s ? ` · delayed by ${data.delay_s} s` : "";
        state.textContent = data.status === "waiting" ? `waiting for the game to start${delay}` : `live${delay}`;
        root.dataset.status = data.status;
        root.dataset.ready = "true";
        state.classList.remove("stale");
      } catch (error) {
        state.textContent = `update failed: ${error.message}; retrying`;
        state.classList.add("stale");
      }
      setTimeout(tick, again);
    }
    tick();
  }

  if (root.dataset.live) {
    followLive(root.dataset.live, Number(root.dataset.pollMs) || 250);
    return;
  }

  const params = new URLSearchParams(location.hash.slice(1));
  step = Number.parseInt(params.get("step") || "0", 10) || 0;
  const wanted = params.get("perspective");
  // the perspectives the page offers (only "public" while the game's deal is still to be played)
  const offered = [...root.querySelectorAll('input[name="perspective"]')].map((input) => input.value);
  const start = offered.includes(wanted) ? wanted : offered.includes("all") ? "all" : offered[0] || "all";
  const radio = root.querySelector(`input[name="perspective"][value="${start}"]`);
  if (radio) radio.checked = true;
  setPerspective(start).catch(fail);
}
