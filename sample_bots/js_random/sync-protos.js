#!/usr/bin/env node
// Copies the bot-facing .proto files from the repository (proto/kahuna/v1:
// referee.proto and every file it imports, transitively) into this bot's
// directory (proto/kahuna/v1), because the sandbox mounts only the bot
// directory. `node sync-protos.js --check` changes nothing and exits 1 if the
// copies differ from the repository's (CI runs the same check as a test).
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const PROTO_ROOT = path.join(__dirname, "..", "..", "proto");
const TARGET_ROOT = path.join(__dirname, "proto");
const ENTRY = "kahuna/v1/referee.proto";

// referee.proto and its imports, as paths relative to the proto root.
function botProtos() {
  const found = [];
  const pending = [ENTRY];
  while (pending.length > 0) {
    const name = pending.pop();
    if (found.includes(name)) continue;
    found.push(name);
    const text = fs.readFileSync(path.join(PROTO_ROOT, name), "utf8");
    for (const match of text.matchAll(/^import\s+"([^"]+)";/gm)) {
      if (!match[1].startsWith("google/")) pending.push(match[1]);
    }
  }
  return found.sort();
}

function copiedProtos(dir = TARGET_ROOT, prefix = "") {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return copiedProtos(path.join(dir, entry.name), relative);
    return entry.name.endsWith(".proto") ? [relative] : [];
  });
}

function main() {
  const check = process.argv.includes("--check");
  const wanted = botProtos();
  const stale = copiedProtos().filter((name) => !wanted.includes(name));
  const differing = wanted.filter((name) => {
    const target = path.join(TARGET_ROOT, name);
    const source = fs.readFileSync(path.join(PROTO_ROOT, name));
    return !fs.existsSync(target) || !fs.readFileSync(target).equals(source);
  });
  if (check) {
    for (const name of differing) console.error(`sync-protos: ${name} differs from proto/${name}`);
    for (const name of stale) console.error(`sync-protos: ${name} is not a bot-facing proto`);
    if (differing.length + stale.length > 0) console.error("sync-protos: run npm run sync-protos");
    return differing.length + stale.length === 0 ? 0 : 1;
  }
  for (const name of differing) {
    fs.mkdirSync(path.dirname(path.join(TARGET_ROOT, name)), { recursive: true });
    fs.copyFileSync(path.join(PROTO_ROOT, name), path.join(TARGET_ROOT, name));
  }
  for (const name of stale) fs.unlinkSync(path.join(TARGET_ROOT, name));
  console.log(`sync-protos: ${differing.length} copied, ${stale.length} removed`);
  return 0;
}

process.exitCode = main();
