// A Kahuna Arena bot in C++: plays a uniformly random legal action.
//
// This file is yours: put your own logic in choose(). kahuna.h gives you the
// game as plain C++ types (Observation, Action, Clock) and kahuna::run() does
// the whole protocol (connect, Hello, answer each request by its id, exit
// after MatchOver). Build with ./build.sh, which writes ./bot.
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kahuna.h"

using kahuna::Action;
using kahuna::Observation;

// Called once per request. Return one of `legal` (sorted by text notation, never empty).
// observation.history is the whole game so far; observation.clock says how
// long you may think (observation.clock.expired() turns true a safe margin
// before the referee's deadline).
Action choose(const Observation& observation, const std::vector<Action>& legal) {
  // Reproducible: seeded with KAHUNA_RANDOM_SEED, the game and the events seen.
  const char* seed = std::getenv("KAHUNA_RANDOM_SEED");
  std::string key = std::string(seed ? seed : "0") + ":" +
                    std::to_string(observation.game_index) + ":" +
                    std::to_string(observation.history.size());
  std::seed_seq sequence(key.begin(), key.end());
  std::mt19937 random(sequence);
  std::uniform_int_distribution<std::size_t> pick(0, legal.size() - 1);
  return legal[pick(random)];
}

int main() { return kahuna::run(choose, "cpp_random"); }
