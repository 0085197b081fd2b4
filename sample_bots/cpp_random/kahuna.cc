// The protocol side of kahuna.h: one gRPC stream to the referee, protobuf
// messages turned into the plain types of kahuna.h and back.
#include "kahuna.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "kahuna/v1/referee.grpc.pb.h"

namespace kahuna {
namespace {

namespace pb = ::kahuna::v1;
constexpr std::uint32_t kProtocolVersion = 1;

ActionType from_proto(pb::ActionType type) {
  switch (type) {
    case pb::ACTION_TYPE_PLACE: return ActionType::Place;
    case pb::ACTION_TYPE_REMOVE: return ActionType::Remove;
    case pb::ACTION_TYPE_DISCARD: return ActionType::Discard;
    case pb::ACTION_TYPE_DRAW: return ActionType::Draw;
    default: return ActionType::Pass;
  }
}

pb::ActionType to_proto(ActionType type) {
  switch (type) {
    case ActionType::Place: return pb::ACTION_TYPE_PLACE;
    case ActionType::Remove: return pb::ACTION_TYPE_REMOVE;
    case ActionType::Discard: return pb::ACTION_TYPE_DISCARD;
    case ActionType::Draw: return pb::ACTION_TYPE_DRAW;
    case ActionType::Pass: return pb::ACTION_TYPE_PASS;
  }
  return pb::ACTION_TYPE_PASS;
}

template <typename Repeated>
std::vector<std::string> strings(const Repeated& values) {
  return std::vector<std::string>(values.begin(), values.end());
}

template <typename Repeated>
std::vector<int> ints(const Repeated& values) {
  return std::vector<int>(values.begin(), values.end());
}

Action from_proto(const pb::Action& action) {
  return Action{from_proto(action.type()), action.card(), strings(action.cards()), action.line()};
}

void to_proto(const Action& action, pb::Action* out) {
  out->set_type(to_proto(action.type));
  out->set_card(action.card);
  for (const auto& card : action.cards) out->add_cards(card);
  out->set_line(action.line);
}

SeenEvent from_proto(const pb::SeenEvent& event) {
  Action action{from_proto(event.type()), event.card(), strings(event.cards()), event.line()};
  return SeenEvent{static_cast<int>(event.seat()), action, event.drawn(), event.hidden()};
}

// Everything but the history, which the caller keeps (it arrives in increments).
void fill(Observation& out, const pb::ActionRequest& request) {
  const pb::Observation& in = request.observation();
  out.game_index = static_cast<int>(request.game_index());
  out.seat = static_cast<int>(in.seat());
  out.strategic = in.variant().strategic();
  out.tactical = in.variant().tactical();
  out.round = static_cast<int>(in.round());
  out.to_move = in.has_to_move() ? std::optional<int>(in.to_move()) : std::nullopt;
  out.points = ints(in.points());
  out.bridges.clear();
  for (const auto& owner : in.bridges()) out.bridges[owner.line()] = owner.seat();
  out.controlled.clear();
  for (const auto& owner : in.controlled()) out.controlled[owner.island()] = owner.seat();
  out.supply = ints(in.supply());
  out.hand = strings(in.hand());
  out.opponent_hand_size = static_cast<int>(in.opponent_hand_size());
  out.open_cards.clear();
  for (const auto& list : in.open_cards()) out.open_cards.push_back(strings(list.cards()));
  out.faceup = strings(in.faceup());
  out.deck_size = static_cast<int>(in.deck_size());
  out.played_cards = strings(in.played_cards());
  out.own_facedown_discards = strings(in.own_facedown_discards());
  out.opponent_facedown_count = static_cast<int>(in.opponent_facedown_count());
  out.final_turns = in.final_turns();
  out.opponent_passed = in.opponent_passed();
  out.turn_played_card = in.turn_played_card();
  out.turn_discarded = in.turn_discarded();
  out.clock = Clock{request.action_deadline_ms(), request.time_bank_ms(),
                    std::chrono::steady_clock::now()};
}

int fail(const std::string& bot_name, const std::string& message, int status) {
  std::cerr << bot_name << ": " << message << std::endl;
  return status;
}

}  // namespace

std::string Action::text() const {
  switch (type) {
    case ActionType::Place: return "place " + card + " " + line;
    case ActionType::Remove: {
      std::string joined;
      for (const auto& c : cards) joined += (joined.empty() ? "" : "+") + c;
      return "remove " + joined + " " + line;
    }
    case ActionType::Discard: return "discard " + card;
    case ActionType::Draw: return "draw " + (card.empty() ? std::string("deck") : card);
    case ActionType::Pass: return "pass";
  }
  return "pass";
}

std::chrono::milliseconds Clock::budget() const {
  // 10% of the limit, at least 50 ms, is left for the reply to reach the referee.
  const std::int64_t limit = action_deadline_ms;
  const std::int64_t margin = std::max<std::int64_t>(50, limit / 10);
  return std::chrono::milliseconds(std::max<std::int64_t>(limit / 2, limit - margin));
}

int run(const Chooser& choose, const std::string& bot_name, const std::string& bot_version) {
  const char* target = std::getenv("KAHUNA_REFEREE");
  const char* token = std::getenv("KAHUNA_TOKEN");
  if (!target || !*target)
    return fail(bot_name, "KAHUNA_REFEREE is not set (expected unix:///path or host:port)", 2);
  if (!token || !*token)
    return fail(bot_name, "KAHUNA_TOKEN is not set (the arena gives each bot its token)", 2);

  // gRPC C++ dials unix:///run/kahuna/referee.sock as it is; no TLS.
  auto channel = grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  auto stub = pb::RefereeService::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->Play(&context);

  pb::PlayRequest hello;
  hello.mutable_hello()->set_token(token);
  hello.mutable_hello()->set_bot_name(bot_name);
  hello.mutable_hello()->set_bot_version(bot_version);
  hello.mutable_hello()->set_protocol_version(kProtocolVersion);
  if (!stream->Write(hello)) return fail(bot_name, "cannot reach the referee at " + std::string(target), 2);

  Observation observation;  // one per game: the history grows with each request
  std::string opponent;
  bool match_over = false;
  bool half_closed = false;
  auto close_sending = [&] {  // half-close once; the referee then closes the stream
    if (!half_closed) stream->WritesDone();
    half_closed = true;
  };
  std::string goodbye;
  pb::PlayResponse message;
  while (stream->Read(&message)) {
    switch (message.kind_case()) {
      case pb::PlayResponse::kWelcome:
        opponent = message.welcome().opponent_name();
        break;
      case pb::PlayResponse::kGameStart:
        observation = Observation{};
        observation.opponent = message.game_start().opponent_name();
        break;
      case pb::PlayResponse::kActionRequest: {
        const pb::ActionRequest& request = message.action_request();
        const auto& increment = request.observation();
        if (increment.history_start() != observation.history.size()) {
          return fail(bot_name, "history starts at " + std::to_string(increment.history_start()) +
                                    ", " + std::to_string(observation.history.size()) + " events known", 1);
        }
        for (const auto& event : increment.history()) observation.history.push_back(from_proto(event));
        if (request.legal_actions_size() == 0)  // choose() is promised a choice
          return fail(bot_name, "protocol error: request " + std::to_string(request.request_id()) +
                                    " has no legal actions", 1);
        fill(observation, request);
        if (observation.opponent.empty()) observation.opponent = opponent;
        std::vector<Action> legal;
        legal.reserve(request.legal_actions_size());
        for (const auto& action : request.legal_actions()) legal.push_back(from_proto(action));
        const Action action = choose(observation, legal);
        pb::PlayRequest reply;
        reply.mutable_action_reply()->set_request_id(request.request_id());
        to_proto(action, reply.mutable_action_reply()->mutable_action());
        if (!stream->Write(reply)) return fail(bot_name, "the stream broke while replying", 1);
        if (std::getenv("KAHUNA_DEBUG"))
          std::cerr << "request " << request.request_id() << ": " << action.text() << std::endl;
        break;
      }
      case pb::PlayResponse::kMatchOver:
        match_over = true;
        close_sending();
        break;
      case pb::PlayResponse::kGoodbye:
        goodbye = pb::BotStatus_Name(message.goodbye().status()) + ": " + message.goodbye().reason();
        close_sending();
        break;
      default:  // game_over: the record is in message.game_over().record_json()
        break;
    }
  }
  const grpc::Status status = stream->Finish();
  if (match_over) return 0;  // whatever follows MatchOver does not undo the match
  if (!goodbye.empty()) return fail(bot_name, "the referee cut this bot off: " + goodbye, 1);
  if (!status.ok()) return fail(bot_name, "the stream failed: " + status.error_message(), 1);
  return fail(bot_name, "the referee closed the stream before the match was over", 1);
}

}  // namespace kahuna
