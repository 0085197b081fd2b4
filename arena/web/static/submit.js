// The /submit page: the token lives in this module's memory only and goes out
// as an Authorization header (no cookie, no storage); an archive is sent as
// it is, a folder packed here into a .tar.gz (ustar + CompressionStream).

const $ = (id) => document.getElementById(id);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function row(cells) {
  const tr = document.createElement("tr");
  for (const [text, className] of cells) tr.append(el("td", className || "", text));
  return tr;
}

const encoder = new TextEncoder();

function field(header, offset, length, text) {
  const bytes = encoder.encode(text);
  if (bytes.length > length) throw new Error(`"${text}" does not fit a tar header`);
  header.set(bytes, offset);
}

function octal(value, length) {
  return value.toString(8).padStart(length - 1, "0") + "\0";
}

function tarHeader(path, size, mtime) {
  const header = new Uint8Array(512);
  let name = path;
  let prefix = "";
  if (encoder.encode(path).length > 100) {
    const cut = path.lastIndexOf("/", path.length - 2);
    prefix = path.slice(0, cut);
    name = path.slice(cut + 1);
  }
  field(header, 0, 100, name);
  field(header, 100, 8, octal(0o644, 8));
  field(header, 108, 8, octal(0, 8));
  field(header, 116, 8, octal(0, 8));
  field(header, 124, 12, octal(size, 12));
  field(header, 136, 12, octal(mtime, 12));
  field(header, 148, 8, "        ");
  field(header, 156, 1, "0");
  field(header, 257, 6, "ustar\0");
  field(header, 263, 2, "00");
  field(header, 345, 155, prefix);
  let sum = 0;
  for (const byte of header) sum += byte;
  field(header, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return header;
}

export async function packFolder(files) {
  const parts = [];
  for (const file of files) {
    const data = new Uint8Array(await file.arrayBuffer());
    parts.push(tarHeader(file.webkitRelativePath || file.name, data.length, Math.floor(file.lastModified / 1000)));
    parts.push(data);
    const pad = (512 - (data.length % 512)) % 512;
    if (pad) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(1024));
  const stream = new Blob(parts).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function archiveFormat(name) {
  const lower = name.toLowerCase();
  if (lower.endsWith(".zip")) return "zip";
  if (lower.endsWith(".tar.gz") || lower.endsWith(".tgz")) return "tar.gz";
  return "";
}

async function call(path, token, options = {}) {
  const response = await fetch(path, {
    ...options,
    credentials: "omit",
    cache: "no-store",
    headers: { ...(options.headers || {}), Authorization: `Bearer ${token}` },
  });
  let payload;
  try {
    payload = await response.json();
  } catch (error) {
    payload = { error: `HTTP ${response.status}` };
  }
  return { status: response.status, payload };
}

function showFindings(conformance) {
  const body = $("findings").tBodies[0];
  const rows = (conformance ? conformance.scenarios : []).map((s) =>
    row([[s.name], [s.passed ? "passed" : "failed", s.passed ? "ok" : "failed"], [s.what, "muted"], [s.problem || ""]]),
  );
  body.replaceChildren(...rows);
  $("findings").hidden = rows.length === 0;
}

function versionTable(bot) {
  const table = el("table", "leaderboard");
  table.dataset.bot = bot.name;
  const head = document.createElement("thead");
  const titles = document.createElement("tr");
  for (const [text, className] of [["Version"], ["Submitted"], ["μ − 3σ", "num"], ["μ", "num"], ["σ", "num"], ["Games", "num"], ["W–D–L", "num"], ["Failures"]]) {
    titles.append(el("th", className || "", text));
  }
  head.append(titles);
  const body = document.createElement("tbody");
  for (const v of bot.versions) {
    const r = v.rating;
    const tr = row([
      [v.version.slice(0, 12), "version"], [v.created_at, "muted"], [r.conservative.toFixed(2), "num strong"],
      [r.mu.toFixed(2), "num"], [r.sigma.toFixed(2), "num"], [String(r.games), "num"],
      [`${r.wins}–${r.draws}–${r.losses}`, "num"], [r.failures, "failures"],
    ]);
    tr.dataset.version = v.version;
    body.append(tr);
  }
  table.append(head, body);
  return table;
}

async function showMine(token) {
  $("mine").hidden = false;
  if (!token) {
    $("who").textContent = "give your token first";
    $("bots").replaceChildren();
    return;
  }
  const { status, payload } = await call("/api/me", token);
  if (status !== 200) {
    $("who").textContent = payload.error || `HTTP ${status}`;
    $("bots").replaceChildren();
    return;
  }
  $("who").textContent = `${payload.user} (${payload.role}): ${payload.bots.length} bot(s)`;
  $("bots").replaceChildren(...payload.bots.map((bot) => {
    const box = el("div", "my-bot");
    const title = el("h3");
    const link = el("a", "", bot.name);
    link.href = `/bots/${encodeURIComponent(bot.name)}`;
    title.append(link);
    box.append(title, versionTable(bot));
    return box;
  }));
}

async function body() {
  const archive = $("archive").files[0];
  const folder = [...$("folder").files];
  if (archive) return { data: new Uint8Array(await archive.arrayBuffer()), format: archiveFormat(archive.name) };
  if (folder.length) return { data: await packFolder(folder), format: "tar.gz" };
  throw new Error("choose an archive or a folder");
}

export function startSubmit() {
  const form = $("submit-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = $("token").value.trim();
    const result = $("result");
    $("send").disabled = true;
    $("progress").textContent = "checking the bot: conformance scenarios, then a smoke match…";
    form.dataset.state = "sending";
    try {
      const upload = await body();
      const headers = { "Content-Type": "application/octet-stream" };
      if (upload.format) headers["X-Archive-Format"] = upload.format;
      const { status, payload } = await call("/api/submit", token, { method: "POST", headers, body: upload.data });
      result.hidden = false;
      const outcome = $("outcome");
      if (status === 200) {
        outcome.className = "result-line ok";
        outcome.textContent = `${payload.created ? "Stored" : "Already stored"}: ${payload.bot} version ${payload.version.slice(0, 12)}`;
      } else {
        outcome.className = "result-line failed";
        const next = status === 413 ? ": send less, leaving out what the bot does not run (.git, build caches, test data)" : "";
        outcome.textContent = `Refused (HTTP ${status}): ${payload.error}${next}`;
      }
      showFindings(payload.conformance);
      form.dataset.state = status === 200 ? "stored" : "refused";
      if (status !== 401) await showMine(token);
    } catch (error) {
      result.hidden = false;
      $("outcome").className = "result-line failed";
      $("outcome").textContent = `Not sent: ${error.message}`;
      showFindings(null);
      form.dataset.state = "error";
    } finally {
      $("send").disabled = false;
      $("progress").textContent = "";
    }
  });
  $("show-bots").addEventListener("click", () => showMine($("token").value.trim()));
  $("archive").addEventListener("change", () => { if ($("archive").files.length) $("folder").value = ""; });
  $("folder").addEventListener("change", () => { if ($("folder").files.length) $("archive").value = ""; });
}
