#!/usr/bin/env node
// Copies the protocol's .proto files from the repository (proto/kahuna/v1)
// into this bot's directory (proto/kahuna/v1), because the sandbox mounts only
// the bot directory. `node sync-protos.js --check` changes nothing and exits 1
// if the copies differ from the repository's (CI runs the same check as a test).
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const SOURCE = path.join(__dirname, "..", "..", "proto", "kahuna", "v1");
const TARGET = path.join(__dirname, "proto", "kahuna", "v1");

function protoNames(dir) {
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => name.endsWith(".proto")).sort() : [];
}

function main() {
  const check = process.argv.includes("--check");
  const sources = protoNames(SOURCE);
  if (sources.length === 0) {
    console.error(`sync-protos: no .proto files in ${SOURCE}`);
    return 2;
  }
  const stale = protoNames(TARGET).filter((name) => !sources.includes(name));
  const differing = sources.filter((name) => {
    const target = path.join(TARGET, name);
    return !fs.existsSync(target) || !fs.readFileSync(target).equals(fs.readFileSync(path.join(SOURCE, name)));
  });
  if (check) {
    for (const name of [...differing, ...stale]) {
      console.error(`sync-protos: ${name} differs from ${SOURCE} (run: npm run sync-protos)`);
    }
    return differing.length + stale.length === 0 ? 0 : 1;
  }
  fs.mkdirSync(TARGET, { recursive: true });
  for (const name of differing) fs.copyFileSync(path.join(SOURCE, name), path.join(TARGET, name));
  for (const name of stale) fs.unlinkSync(path.join(TARGET, name));
  console.log(`sync-protos: ${differing.length} copied, ${stale.length} removed`);
  return 0;
}

process.exitCode = main();
