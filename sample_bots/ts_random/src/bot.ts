// A Kahuna Arena bot in TypeScript: plays a uniformly random legal action.
//
// This file is yours: put your own logic in choose(). kahuna.ts gives you the
// game as TypeScript types (Observation, Action, Clock) and run() does the
// whole protocol (connect, Hello, answer each request by its id, exit after
// MatchOver). Build with ./build.sh, which writes dist/.
import { Action, Observation, run } from "./kahuna";

const SEED = process.env.KAHUNA_RANDOM_SEED ?? "0";

// Called once per request. Return one of `legal` (sorted by text notation, never empty).
// observation.history is the whole game so far; observation.clock says how
// long you may think (observation.clock.expired() turns true a safe margin
// before the referee's deadline).
function choose(observation: Observation, legal: readonly Action[]): Action {
  // Reproducible: seeded with KAHUNA_RANDOM_SEED, the game and the events seen.
  const random = seededRandom(`${SEED}:${observation.gameIndex}:${observation.history.length}`);
  return legal[Math.floor(random() * legal.length)];
}

// FNV-1a hash of a string, then mulberry32: a small, reproducible generator.
function seededRandom(text: string): () => number {
  let state = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) state = Math.imul(state ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

run(choose, { name: "ts_random" });
