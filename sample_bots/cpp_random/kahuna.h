// The Kahuna protocol kept out of your way: the game as plain C++ types and
// run(), which plays a whole match by calling your choose() for each request.
// You should not need to change this file or kahuna.cc.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kahuna {

enum class ActionType { Place, Remove, Discard, Draw, Pass };

// One action, as in legal_actions. text() is docs/reference/RECORD.md notation:
// "place HUNA ELAI-HUNA", "remove ELAI+HUNA ELAI-HUNA", "discard HUNA",
// "draw HUNA", "draw deck", "pass".
struct Action {
  ActionType type = ActionType::Pass;
  std::string card;                // place, discard, draw ("" = the deck)
  std::vector<std::string> cards;  // remove: the two cards
  std::string line;                // place, remove: e.g. "ELAI-HUNA"
  std::string text() const;
  bool ends_turn() const { return type == ActionType::Draw || type == ActionType::Pass; }
};

// One event of the game's history as your seat saw it.
struct SeenEvent {
  int seat = 0;
  Action action;       // the card is "" when hidden
  std::string drawn;   // the card your own deck draw gave you
  bool hidden = false; // the opponent's face-down discard or deck draw
};

// How long you may think about this request. Wall time, measured by the
// referee from sending the request to receiving your reply.
struct Clock {
  std::uint32_t action_deadline_ms = 0;  // the per-action limit
  std::uint32_t time_bank_ms = 0;        // what is left of this game's bank
  std::chrono::steady_clock::time_point received;  // when the request arrived
  // A budget that stays inside the per-action limit with a margin for the
  // reply's trip; spend more (up to the bank) only if you mean to.
  std::chrono::milliseconds budget() const;
  bool expired() const { return std::chrono::steady_clock::now() >= received + budget(); }
};

// What your seat may know (docs/reference/RULES.md R9); see sample_bots/README.md.
struct Observation {
  int game_index = 0;
  int seat = 0;
  bool strategic = false, tactical = false;  // variant (R8)
  int round = 1;
  std::optional<int> to_move;
  std::vector<int> points;                   // by seat
  std::map<std::string, int> bridges;        // line -> seat owning its bridge
  std::map<std::string, int> controlled;     // island -> seat controlling it
  std::vector<int> supply;                   // bridges not on the board, by seat
  std::vector<std::string> hand;             // your cards, sorted
  int opponent_hand_size = 0;
  std::vector<std::vector<std::string>> open_cards;  // tactical, by seat
  std::vector<std::string> faceup;           // three slots, "" when empty
  int deck_size = 0;
  std::vector<std::string> played_cards;
  std::vector<std::string> own_facedown_discards;
  int opponent_facedown_count = 0;
  bool final_turns = false, opponent_passed = false;
  bool turn_played_card = false, turn_discarded = false;
  std::vector<SeenEvent> history;            // the whole game so far
  Clock clock;
  std::string opponent;
};

using Chooser = std::function<Action(const Observation&, const std::vector<Action>&)>;

// Plays the match the arena started this process for: reads KAHUNA_REFEREE
// (unix:///... or host:port) and KAHUNA_TOKEN, says Hello, answers every
// request with choose()'s action and returns the exit status: 0 once
// MatchOver arrived, 1 when cut off or the stream failed, 2 when the
// environment is missing.
int run(const Chooser& choose, const std::string& bot_name, const std::string& bot_version = "1");

}  // namespace kahuna
