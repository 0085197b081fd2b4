// go_random: a Kahuna Arena bot in Go that plays a uniformly random legal action.
//
// Put your own logic in choose. Package kahuna (kahuna/) does the protocol:
// it connects to the referee, says Hello, calls choose for every request with
// the observation as Go values, replies with the request's id and returns once
// the match is over.
package main

import (
	"hash/fnv"
	"math/rand/v2"
	"os"

	"kahuna.arena/kahuna"
)

// choose returns one of legal (sorted by text notation, never empty). obs has
// your hand, the board, the face-up row, the whole game's history and your
// clock: reply before obs.Clock.Deadline().
func choose(obs *kahuna.Observation, legal []kahuna.Action) kahuna.Action {
	// Reproducible: seeded by KAHUNA_RANDOM_SEED, the game and the events seen.
	seed := fnv.New64a()
	seed.Write([]byte(os.Getenv("KAHUNA_RANDOM_SEED")))
	rng := rand.New(rand.NewPCG(seed.Sum64(), uint64(obs.GameIndex)<<32|uint64(len(obs.History))))
	return legal[rng.IntN(len(legal))]
}

func main() {
	os.Exit(kahuna.Run("go_random", choose))
}
