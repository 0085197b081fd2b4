// Each page's start-up, from the data-* attributes of the script tag that loads
// this module: no inline script, so the Content-Security-Policy can forbid it.

import { startViewer } from "/static/viewer.js";
import { pollLeaderboard, pollLiveGames, reloadWhileRunning } from "/static/live.js";
import { startSubmit } from "/static/submit.js";

const tag = document.querySelector("script[data-page]");
const data = tag ? tag.dataset : {};

if (data.page === "viewer") {
  startViewer(document.getElementById("viewer"));
} else if (data.page === "leaderboard") {
  pollLeaderboard(Number(data.pollMs));
} else if (data.page === "live-list") {
  pollLiveGames(Number(data.pollMs));
} else if (data.page === "tournament") {
  reloadWhileRunning(Number(data.tournament), data.stamp, Number(data.pollMs));
} else if (data.page === "submit") {
  startSubmit();
} else if (data.page === "replay-form") {
  const file = document.getElementById("record-file");
  file.addEventListener("change", async () => {
    if (file.files.length) document.getElementById("record-text").value = await file.files[0].text();
  });
}
