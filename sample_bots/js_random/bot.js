#!/usr/bin/env node
// A Kahuna Arena bot in JavaScript: plays a uniformly random legal action.
//
// It speaks the kahuna.v1 protocol with @grpc/grpc-js, loading the .proto
// files at run time from ./proto (copied from the repository's proto/ by
// `npm run sync-protos`; the sandbox mounts only this directory). Each
// decision is drawn from a generator seeded with KAHUNA_RANDOM_SEED (default
// 0), the game index and the number of events seen, so play is reproducible.
"use strict";

const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const PROTOCOL_VERSION = 1;
const BOT_NAME = "js_random";
const SEED = process.env.KAHUNA_RANDOM_SEED || "0";

function fail(message, status) {
  console.error(`js_random: ${message}`);
  process.exit(status);
}

function loadService() {
  const definition = protoLoader.loadSync("kahuna/v1/referee.proto", {
    includeDirs: [path.join(__dirname, "proto")],
    keepCase: true, // field names as in the .proto: request_id, legal_actions
    longs: String, // uint64 request_id arrives as a decimal string; echo it back
    enums: String, // "ACTION_TYPE_PLACE"
    defaults: true,
    oneofs: true, // message.kind names the field that is set
  });
  return grpc.loadPackageDefinition(definition).kahuna.v1.RefereeService;
}

// FNV-1a hash of a string, then mulberry32: a small, reproducible generator.
function seededRandom(text) {
  let state = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    state = Math.imul(state ^ text.charCodeAt(i), 0x01000193) >>> 0;
  }
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function actionText(action) {
  const kind = action.type.replace("ACTION_TYPE_", "").toLowerCase();
  if (kind === "place") return `place ${action.card} ${action.line}`;
  if (kind === "remove") return `remove ${action.cards.join("+")} ${action.line}`;
  if (kind === "discard") return `discard ${action.card}`;
  if (kind === "draw") return `draw ${action.card || "deck"}`;
  return kind;
}

function main() {
  const target = process.env.KAHUNA_REFEREE;
  const token = process.env.KAHUNA_TOKEN;
  if (!target) fail("KAHUNA_REFEREE is not set (expected unix:///path/to/socket or host:port)", 2);
  if (!token) fail("KAHUNA_TOKEN is not set (the arena gives each bot its token)", 2);

  const RefereeService = loadService();
  const client = new RefereeService(target, grpc.credentials.createInsecure());
  const call = client.Play();
  let history = []; // the current game's full history, reassembled
  let matchOver = false;
  let goodbye = null;

  call.on("data", (message) => {
    switch (message.kind) {
      case "game_start":
        history = [];
        break;
      case "action_request": {
        const request = message.action_request;
        const observation = request.observation;
        if (observation.history_start !== history.length) {
          fail(`history starts at ${observation.history_start}, ${history.length} events known`, 1);
        }
        history.push(...observation.history);
        const random = seededRandom(`${SEED}:${request.game_index}:${history.length}`);
        const legal = request.legal_actions;
        if (legal.length === 0) fail(`protocol error: request ${request.request_id} has no legal actions`, 1);
        const action = legal[Math.floor(random() * legal.length)];
        call.write({ action_reply: { request_id: request.request_id, action } });
        if (process.env.KAHUNA_DEBUG) console.error(`request ${request.request_id}: ${actionText(action)}`);
        break;
      }
      case "match_over":
        matchOver = true;
        call.end(); // half-close: the referee closes the stream
        break;
      case "goodbye":
        goodbye = `${message.goodbye.status}: ${message.goodbye.reason}`;
        call.end();
        break;
      default: // welcome, game_over: nothing to do for a random bot
        break;
    }
  });
  call.on("error", (error) => {
    if (!matchOver) fail(`the stream failed: ${error.code} ${error.details}`, 1);
  });
  call.on("end", () => {
    client.close();
    if (goodbye) fail(`the referee cut this bot off: ${goodbye}`, 1);
    if (!matchOver) fail("the referee closed the stream before the match was over", 1);
    process.exitCode = 0;
  });
  call.write({
    hello: { token, bot_name: BOT_NAME, bot_version: "1", protocol_version: PROTOCOL_VERSION },
  });
}

main();
