// The Kahuna protocol kept out of your way: the game as TypeScript types and
// run(), which plays a whole match by calling your choose() for each request.
// The wire types in ./gen are generated from ./proto by `npm run generate`.
// You should not need to change this file.
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { ProtoGrpcType } from "./gen/referee";
import type { Action as WireAction } from "./gen/kahuna/v1/Action";
import type { ActionRequest__Output } from "./gen/kahuna/v1/ActionRequest";
import type { PlayRequest } from "./gen/kahuna/v1/PlayRequest";
import type { PlayResponse__Output } from "./gen/kahuna/v1/PlayResponse";
import type { SeenEvent__Output } from "./gen/kahuna/v1/SeenEvent";

export type ActionType = "place" | "remove" | "discard" | "draw" | "pass";

/** One action, as in legal_actions; actionText() gives docs/reference/RECORD.md notation. */
export interface Action {
  type: ActionType;
  card: string; // place, discard, draw ("" = the deck)
  cards: string[]; // remove: the two cards
  line: string; // place, remove: e.g. "ELAI-HUNA"
}

/** One event of the game's history as your seat saw it. */
export interface SeenEvent extends Action {
  seat: number;
  drawn: string; // the card your own deck draw gave you
  hidden: boolean; // the opponent's face-down discard or deck draw
}

/** How long you may think: wall time, measured by the referee. */
export class Clock {
  constructor(
    readonly actionDeadlineMs: number, // the per-action limit
    readonly timeBankMs: number, // what is left of this game's bank
    readonly receivedAt: number = performance.now(),
  ) {}

  /** A budget inside the per-action limit, leaving 10% (at least 50 ms) for the reply. */
  budgetMs(): number {
    const limit = this.actionDeadlineMs;
    return Math.max(limit / 2, limit - Math.max(50, limit / 10));
  }

  expired(): boolean {
    return performance.now() >= this.receivedAt + this.budgetMs();
  }
}

/** What your seat may know (docs/reference/RULES.md R9); see sample_bots/README.md. */
export interface Observation {
  gameIndex: number;
  seat: number;
  strategic: boolean; // variant (R8)
  tactical: boolean;
  round: number;
  toMove: number | null;
  points: number[]; // by seat
  bridges: Map<string, number>; // line -> seat owning its bridge
  controlled: Map<string, number>; // island -> seat controlling it
  supply: number[]; // bridges not on the board, by seat
  hand: string[]; // your cards, sorted
  opponentHandSize: number;
  openCards: string[][]; // tactical, by seat
  faceup: (string | null)[]; // three slots, null when empty
  deckSize: number;
  playedCards: string[];
  ownFacedownDiscards: string[];
  opponentFacedownCount: number;
  finalTurns: boolean;
  opponentPassed: boolean;
  turnPlayedCard: boolean;
  turnDiscarded: boolean;
  history: SeenEvent[]; // the whole game so far
  clock: Clock;
  opponent: string;
}

export type Chooser = (observation: Observation, legal: readonly Action[]) => Action;

export function actionText(action: Action): string {
  switch (action.type) {
    case "place": return `place ${action.card} ${action.line}`;
    case "remove": return `remove ${action.cards.join("+")} ${action.line}`;
    case "discard": return `discard ${action.card}`;
    case "draw": return `draw ${action.card || "deck"}`;
    case "pass": return "pass";
  }
}

const PROTOCOL_VERSION = 1;
const PREFIX = "ACTION_TYPE_";

function actionFromWire(wire: { type: string; card: string; cards: string[]; line: string }): Action {
  const type = wire.type.slice(PREFIX.length).toLowerCase() as ActionType;
  return { type, card: wire.card, cards: [...wire.cards], line: wire.line };
}

function actionToWire(action: Action): WireAction {
  return { type: PREFIX + action.type.toUpperCase(), card: action.card, cards: action.cards, line: action.line } as WireAction;
}

function eventFromWire(event: SeenEvent__Output): SeenEvent {
  return { ...actionFromWire(event), seat: event.seat, drawn: event.drawn, hidden: event.hidden };
}

function observationFromWire(request: ActionRequest__Output, history: SeenEvent[], opponent: string): Observation {
  const wire = request.observation!;
  return {
    gameIndex: request.game_index,
    seat: wire.seat,
    strategic: wire.variant?.strategic ?? false,
    tactical: wire.variant?.tactical ?? false,
    round: wire.round,
    toMove: wire.to_move ?? null,
    points: wire.points,
    bridges: new Map(wire.bridges.map((owner) => [owner.line, owner.seat])),
    controlled: new Map(wire.controlled.map((owner) => [owner.island, owner.seat])),
    supply: wire.supply,
    hand: wire.hand,
    opponentHandSize: wire.opponent_hand_size,
    openCards: wire.open_cards.map((list) => list.cards),
    faceup: wire.faceup.map((card) => card || null),
    deckSize: wire.deck_size,
    playedCards: wire.played_cards,
    ownFacedownDiscards: wire.own_facedown_discards,
    opponentFacedownCount: wire.opponent_facedown_count,
    finalTurns: wire.final_turns,
    opponentPassed: wire.opponent_passed,
    turnPlayedCard: wire.turn_played_card,
    turnDiscarded: wire.turn_discarded,
    history,
    clock: new Clock(request.action_deadline_ms, request.time_bank_ms),
    opponent,
  };
}

function loadClient(target: string) {
  const definition = protoLoader.loadSync("kahuna/v1/referee.proto", {
    includeDirs: [path.join(__dirname, "..", "proto")],
    keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,  // as in `npm run generate`
  });
  const proto = grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
  // grpc-js dials unix:///run/kahuna/referee.sock as it is; no TLS.
  return new proto.kahuna.v1.RefereeService(target, grpc.credentials.createInsecure());
}

/**
 * Plays the match the arena started this process for: reads KAHUNA_REFEREE
 * (unix:///... or host:port) and KAHUNA_TOKEN, says Hello, answers every
 * request with choose()'s action, and sets the exit status: 0 once MatchOver
 * arrived, 1 when cut off or the stream failed, 2 when the environment is missing.
 */
export function run(choose: Chooser, bot: { name: string; version?: string }): void {
  const fail = (message: string, status: number): void => {
    console.error(`${bot.name}: ${message}`);
    process.exit(status);
  };
  const target = process.env.KAHUNA_REFEREE;
  const token = process.env.KAHUNA_TOKEN;
  if (!target) return fail("KAHUNA_REFEREE is not set (expected unix:///path/to/socket or host:port)", 2);
  if (!token) return fail("KAHUNA_TOKEN is not set (the arena gives each bot its token)", 2);

  const client = loadClient(target);
  const call = client.Play();
  let history: SeenEvent[] = []; // the current game's full history, reassembled
  let opponent = "";
  let matchOver = false;
  let goodbye = "";

  call.on("data", (message: PlayResponse__Output) => {
    switch (message.kind) {
      case "welcome":
        opponent = message.welcome!.opponent_name;
        break;
      case "game_start":
        history = [];
        opponent = message.game_start!.opponent_name || opponent;
        break;
      case "action_request": {
        const request = message.action_request!;
        const increment = request.observation!;
        if (increment.history_start !== history.length) {
          return fail(`history starts at ${increment.history_start}, ${history.length} events known`, 1);
        }
        history.push(...increment.history.map(eventFromWire));
        if (request.legal_actions.length === 0) { // choose is promised a choice
          return fail(`protocol error: request ${request.request_id} has no legal actions`, 1);
        }
        const observation = observationFromWire(request, history, opponent);
        const action = choose(observation, request.legal_actions.map(actionFromWire));
        const reply: PlayRequest = { action_reply: { request_id: request.request_id, action: actionToWire(action) } };
        call.write(reply);
        if (process.env.KAHUNA_DEBUG) console.error(`request ${request.request_id}: ${actionText(action)}`);
        break;
      }
      case "match_over":
        matchOver = true;
        call.end(); // half-close: the referee closes the stream
        break;
      case "goodbye":
        goodbye = `${message.goodbye!.status}: ${message.goodbye!.reason}`;
        call.end();
        break;
      default: // game_over: the record is in message.game_over.record_json
        break;
    }
  });
  call.on("error", (error: grpc.ServiceError) => {
    if (!matchOver) fail(`the stream failed: ${error.code} ${error.details}`, 1);
  });
  call.on("end", () => {
    client.close();
    if (matchOver) return; // whatever follows MatchOver does not undo the match
    if (goodbye) return fail(`the referee cut this bot off: ${goodbye}`, 1);
    fail("the referee closed the stream before the match was over", 1);
  });
  const hello: PlayRequest = {
    hello: { token, bot_name: bot.name, bot_version: bot.version ?? "1", protocol_version: PROTOCOL_VERSION },
  };
  call.write(hello);
}
