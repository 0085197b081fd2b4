// Live updates without a framework: poll the JSON beside the page and
// redraw the table bodies. Plain ES module, no build step.

function cell(text, className) {
  const td = document.createElement("td");
  if (className) td.className = className;
  td.textContent = text;
  return td;
}

function link(href, text, className) {
  const td = document.createElement("td");
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  if (className) a.className = className;
  td.append(a);
  return td;
}

function leaderboardRow(row) {
  const tr = document.createElement("tr");
  tr.dataset.bot = row.bot;
  tr.append(
    cell(String(row.rank), "num"),
    link(`/bots/${encodeURIComponent(row.bot)}`, row.bot, "bot"),
    cell((row.version || "").slice(0, 12), "version"),
    cell(row.conservative.toFixed(2), "num strong"),
    cell(row.mu.toFixed(2), "num"),
    cell(row.sigma.toFixed(2), "num"),
    cell(String(row.games), "num"),
    cell(`${row.wins}–${row.draws}–${row.losses}`, "num"),
    cell(row.interval_text.score, "num interval"),
    cell(row.interval_text.elo, "num interval"),
    cell(row.interval_text.pairs, "num"),
    cell(row.failures, "failures"),
  );
  return tr;
}

function tournamentRow(t) {
  const tr = document.createElement("tr");
  tr.dataset.tournament = String(t.id);
  const status = cell("");
  const badge = document.createElement("span");
  badge.className = `status status-${t.status}`;
  badge.textContent = t.status;
  if (t.status === "interrupted") {  // a ladder is run by arena serve (_macros.html restart_command)
    const how = t.format === "ladder" ? `arena serve --ladder --ladder-name ${t.name}` : `arena tournament resume ${t.name}`;
    badge.title = `no process is running it: ${how}`;
  }
  status.append(badge);
  const matches = t.games_scheduled === null ? String(t.games_played) : `${t.games_played} / ${t.games_scheduled}`;
  tr.append(
    link(`/tournaments/${t.id}`, t.name),
    cell(t.format),
    status,
    cell(String(t.bots), "num"),
    cell(matches, "num"),
    cell(t.created_at, "muted"),
  );
  return tr;
}

function replaceBody(table, rows, emptyText, columns) {
  if (rows.length === 0) {
    const tr = document.createElement("tr");
    tr.className = "empty";
    const td = cell(emptyText);
    td.colSpan = columns;
    tr.append(td);
    rows = [tr];
  }
  table.tBodies[0].replaceChildren(...rows);
}

export function pollLeaderboard(intervalMs) {
  const badge = document.getElementById("live");
  async function refresh() {
    try {
      const response = await fetch("/api/leaderboard", { cache: "no-store" });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const data = await response.json();
      replaceBody(document.getElementById("leaderboard"), data.leaderboard.map(leaderboardRow), "No rated bots yet.", 12);
      replaceBody(document.getElementById("tournaments"), data.tournaments.map(tournamentRow), "No tournaments yet.", 6);
      badge.classList.remove("stale");
      badge.dataset.updated = new Date().toISOString();
    } catch (error) {
      badge.classList.add("stale");
      badge.title = `update failed: ${error.message}`;
    }
  }
  setInterval(refresh, intervalMs);
}

function liveGameRow(g) {
  const tr = document.createElement("tr");
  tr.dataset.live = `${g.match_id}/${g.game_index}`;
  tr.dataset.started = g.started_at;
  const seat = (index) => {
    const td = link(`/bots/${encodeURIComponent(g.bots[index])}`, g.bots[index], "bot");
    const dot = document.createElement("span");
    dot.className = `seat seat-${index}`;
    td.prepend(dot);
    return td;
  };
  tr.append(
    link(g.url, `game ${g.game_index} of match ${g.match_id}`),
    seat(0),
    seat(1),
    link(`/tournaments/${g.tournament_id}`, g.tournament),
    cell(g.started_at.slice(0, 19).replace("T", " "), "muted"),
  );
  return tr;
}

export function pollLiveGames(intervalMs) {
  // The games in play: rows of games that started since the page loaded come,
  // finished ones go. The body is redrawn only when the list changed (a game
  // played anew by a resumed match has a new start).
  const badge = document.getElementById("live");
  const table = document.getElementById("live-games");
  const key = (live, started) => `${live}@${started}`;
  let shown = Array.from(table.tBodies[0].rows, (tr) =>
    tr.dataset.live ? key(tr.dataset.live, tr.dataset.started) : "").join(",");
  async function refresh() {
    try {
      const response = await fetch("/api/live", { cache: "no-store" });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const data = await response.json();
      const games = data.games.map((g) => key(`${g.match_id}/${g.game_index}`, g.started_at)).join(",");
      if (games !== shown) {
        replaceBody(table, data.games.map(liveGameRow), "No game is being played right now.", 5);
        shown = games;
      }
      badge.classList.remove("stale");
      badge.dataset.updated = new Date().toISOString();
    } catch (error) {
      badge.classList.add("stale");
      badge.title = `update failed: ${error.message}`;
    }
  }
  setInterval(refresh, intervalMs);
}

export function reloadWhileRunning(tournamentId, shownStamp, intervalMs) {
  // Standings, crosstable and games all change together: poll the JSON and
  // reload the page once it differs from what the server rendered
  // (`shownStamp` is "status:games played" at render time).
  const timer = setInterval(async () => {
    try {
      const response = await fetch(`/api/tournaments/${tournamentId}`, { cache: "no-store" });
      if (!response.ok) return;
      const data = await response.json();
      const stamp = `${data.tournament.status}:${data.tournament.games_played}`;
      if (stamp !== shownStamp) {
        clearInterval(timer);
        location.reload();
      }
    } catch (error) {
      // the server may be restarting: try again at the next tick
    }
  }, intervalMs);
}
