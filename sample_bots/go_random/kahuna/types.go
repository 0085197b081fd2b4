// Package kahuna is the protocol side of a Kahuna Arena bot: it connects to
// the referee, says Hello, turns every ActionRequest into plain Go values,
// calls your Choose function and sends its answer back with the request's id.
package kahuna

import (
	"strings"
	"time"

	pb "kahuna.arena/proto/kahuna/v1"
)

// ActionType is one of "place", "remove", "discard", "draw", "pass".
type ActionType string

// The action types of docs/reference/RECORD.md.
const (
	Place   ActionType = "place"
	Remove  ActionType = "remove"
	Discard ActionType = "discard"
	Draw    ActionType = "draw"
	Pass    ActionType = "pass"
)

// Action is one action: a legal action offered by the referee, or your reply.
type Action struct {
	Type  ActionType
	Card  string   // place, discard: the card; draw: the face-up card, "" for the deck
	Cards []string // remove: the two cards
	Line  string   // place, remove: the line, e.g. "ELAI-HUNA"
}

// String is the action in docs/reference/RECORD.md text: "place HUNA ELAI-HUNA", "draw deck".
func (a Action) String() string {
	switch a.Type {
	case Place:
		return "place " + a.Card + " " + a.Line
	case Remove:
		return "remove " + strings.Join(a.Cards, "+") + " " + a.Line
	case Discard:
		return "discard " + a.Card
	case Draw:
		if a.Card == "" {
			return "draw deck"
		}
		return "draw " + a.Card
	}
	return string(a.Type)
}

// Event is one action of the game as your seat saw it.
type Event struct {
	Action
	Seat   int
	Drawn  string // the card your own draw from the deck gave you
	Hidden bool   // the opponent's face-down discard (its card is hidden)
}

// Clock is the time you have for this decision.
type Clock struct {
	Action   time.Duration // the per-action limit
	Bank     time.Duration // what is left of this game's bank
	Received time.Time     // when the request arrived
}

// Deadline is the latest moment to reply without touching the bank.
func (c Clock) Deadline() time.Time { return c.Received.Add(c.Action) }

// Observation is everything your seat may know (docs/reference/RULES.md R9).
type Observation struct {
	GameIndex             int
	Seat                  int // 0 or 1; seat 0 moves first
	Strategic, Tactical   bool
	Round                 int // 1, 2 or 3
	ToMove                int // the seat to act, -1 when the game is finished
	Points                [2]int
	Bridges               map[string]int // line -> seat of the bridge on it
	Controlled            map[string]int // island -> seat controlling it
	Supply                [2]int         // bridges not on the board, per seat
	Hand                  []string
	OpponentHandSize      int
	OpenCards             [2][]string // Tactical: face-up-drawn cards in hand, per seat
	Faceup                [3]string   // "" for an empty slot
	DeckSize              int
	PlayedCards           []string
	OwnFacedownDiscards   []string
	OpponentFacedownCount int
	FinalTurns            bool
	OpponentPassed        bool
	TurnPlayedCard        bool
	TurnDiscarded         bool
	History               []Event // the whole game so far, oldest first
	Clock                 Clock
}

var actionTypes = map[pb.ActionType]ActionType{
	pb.ActionType_ACTION_TYPE_PLACE:   Place,
	pb.ActionType_ACTION_TYPE_REMOVE:  Remove,
	pb.ActionType_ACTION_TYPE_DISCARD: Discard,
	pb.ActionType_ACTION_TYPE_DRAW:    Draw,
	pb.ActionType_ACTION_TYPE_PASS:    Pass,
}

func fromProto(a *pb.Action) Action {
	return Action{Type: actionTypes[a.GetType()], Card: a.GetCard(), Cards: a.GetCards(), Line: a.GetLine()}
}

func toProto(a Action) *pb.Action {
	for wire, name := range actionTypes {
		if name == a.Type {
			return &pb.Action{Type: wire, Card: a.Card, Cards: a.Cards, Line: a.Line}
		}
	}
	return &pb.Action{} // not an action: the referee says MALFORMED_MESSAGE
}

func pair(values []uint32) (out [2]int) {
	for i := 0; i < len(values) && i < 2; i++ {
		out[i] = int(values[i])
	}
	return out
}

func observation(request *pb.ActionRequest, history []Event, received time.Time) *Observation {
	o := request.GetObservation()
	obs := &Observation{
		GameIndex:             int(request.GetGameIndex()),
		Seat:                  int(o.GetSeat()),
		Strategic:             o.GetVariant().GetStrategic(),
		Tactical:              o.GetVariant().GetTactical(),
		Round:                 int(o.GetRound()),
		ToMove:                -1,
		Points:                pair(o.GetPoints()),
		Bridges:               map[string]int{},
		Controlled:            map[string]int{},
		Supply:                pair(o.GetSupply()),
		Hand:                  o.GetHand(),
		OpponentHandSize:      int(o.GetOpponentHandSize()),
		DeckSize:              int(o.GetDeckSize()),
		PlayedCards:           o.GetPlayedCards(),
		OwnFacedownDiscards:   o.GetOwnFacedownDiscards(),
		OpponentFacedownCount: int(o.GetOpponentFacedownCount()),
		FinalTurns:            o.GetFinalTurns(),
		OpponentPassed:        o.GetOpponentPassed(),
		TurnPlayedCard:        o.GetTurnPlayedCard(),
		TurnDiscarded:         o.GetTurnDiscarded(),
		History:               history,
		Clock: Clock{
			Action:   time.Duration(request.GetActionDeadlineMs()) * time.Millisecond,
			Bank:     time.Duration(request.GetTimeBankMs()) * time.Millisecond,
			Received: received,
		},
	}
	if o.ToMove != nil {
		obs.ToMove = int(o.GetToMove())
	}
	for _, b := range o.GetBridges() {
		obs.Bridges[b.GetLine()] = int(b.GetSeat())
	}
	for _, c := range o.GetControlled() {
		obs.Controlled[c.GetIsland()] = int(c.GetSeat())
	}
	for i, cards := range o.GetOpenCards() {
		if i < 2 {
			obs.OpenCards[i] = cards.GetCards()
		}
	}
	copy(obs.Faceup[:], o.GetFaceup())
	return obs
}

func event(e *pb.SeenEvent) Event {
	return Event{
		Action: Action{Type: actionTypes[e.GetType()], Card: e.GetCard(), Cards: e.GetCards(), Line: e.GetLine()},
		Seat:   int(e.GetSeat()),
		Drawn:  e.GetDrawn(),
		Hidden: e.GetHidden(),
	}
}
