//! The protocol side of a Kahuna Arena bot: connects to the referee, says
//! Hello, turns every ActionRequest into plain Rust values, calls your
//! `choose` and sends its answer back with the request's id.

#![allow(dead_code)] // a bot reads only some of these fields

use std::collections::HashMap;
use std::fmt;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Endpoint, Uri};

/// The generated protocol types (proto/kahuna/v1, prost + tonic).
pub mod pb {
    tonic::include_proto!("kahuna.v1");
}

use pb::play_request::Kind as Out;
use pb::play_response::Kind as In;
pub use pb::ActionType;

/// One action: a legal action offered by the referee, or your reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    pub kind: ActionType,
    /// place, discard: the card; draw: the face-up card, "" for the deck.
    pub card: String,
    /// remove: the two cards.
    pub cards: Vec<String>,
    /// place, remove: the line, e.g. "ELAI-HUNA".
    pub line: String,
}

impl fmt::Display for Action {
    /// docs/reference/RECORD.md text: "place HUNA ELAI-HUNA", "draw deck".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ActionType::Place => write!(f, "place {} {}", self.card, self.line),
            ActionType::Remove => write!(f, "remove {} {}", self.cards.join("+"), self.line),
            ActionType::Discard => write!(f, "discard {}", self.card),
            ActionType::Draw if self.card.is_empty() => write!(f, "draw deck"),
            ActionType::Draw => write!(f, "draw {}", self.card),
            ActionType::Pass => write!(f, "pass"),
            ActionType::Unspecified => write!(f, "?"),
        }
    }
}

/// One action of the game as your seat saw it.
#[derive(Clone, Debug)]
pub struct Event {
    pub seat: usize,
    pub action: Action,
    /// The card your own draw from the deck gave you.
    pub drawn: String,
    /// The opponent's face-down discard (its card is hidden).
    pub hidden: bool,
}

/// The time you have for this decision.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// The per-action limit.
    pub action: Duration,
    /// What is left of this game's bank.
    pub bank: Duration,
    /// When the request arrived.
    pub received: Instant,
}

impl Clock {
    /// The latest moment to reply without touching the bank.
    pub fn deadline(&self) -> Instant {
        self.received + self.action
    }
}

/// Everything your seat may know (docs/reference/RULES.md R9).
#[derive(Clone, Debug)]
pub struct Observation {
    pub game_index: u32,
    /// 0 or 1; seat 0 moves first.
    pub seat: usize,
    pub strategic: bool,
    pub tactical: bool,
    /// 1, 2 or 3.
    pub round: u32,
    /// The seat to act; None when the game is finished.
    pub to_move: Option<usize>,
    pub points: [u32; 2],
    /// line -> seat of the bridge on it.
    pub bridges: HashMap<String, usize>,
    /// island -> seat controlling it.
    pub controlled: HashMap<String, usize>,
    /// Bridges not on the board, per seat.
    pub supply: [u32; 2],
    pub hand: Vec<String>,
    pub opponent_hand_size: u32,
    /// Tactical: face-up-drawn cards still in hand, per seat.
    pub open_cards: [Vec<String>; 2],
    /// The face-up row; None for an empty slot.
    pub faceup: [Option<String>; 3],
    pub deck_size: u32,
    pub played_cards: Vec<String>,
    pub own_facedown_discards: Vec<String>,
    pub opponent_facedown_count: u32,
    pub final_turns: bool,
    pub opponent_passed: bool,
    pub turn_played_card: bool,
    pub turn_discarded: bool,
    /// The whole game so far, oldest first.
    pub history: Vec<Event>,
    pub clock: Clock,
}

fn action(kind: i32, card: &str, cards: &[String], line: &str) -> Action {
    Action {
        kind: ActionType::try_from(kind).unwrap_or(ActionType::Unspecified),
        card: card.to_owned(),
        cards: cards.to_vec(),
        line: line.to_owned(),
    }
}

fn pair(values: &[u32]) -> [u32; 2] {
    [values.first().copied().unwrap_or(0), values.get(1).copied().unwrap_or(0)]
}

fn observation(request: &pb::ActionRequest, history: &[Event], received: Instant) -> Observation {
    let o = request.observation.clone().unwrap_or_default();
    let variant = o.variant.unwrap_or_default();
    let slot = |i: usize| o.faceup.get(i).filter(|card| !card.is_empty()).cloned();
    let open = |i: usize| o.open_cards.get(i).map(|list| list.cards.clone()).unwrap_or_default();
    Observation {
        game_index: request.game_index,
        seat: o.seat as usize,
        strategic: variant.strategic,
        tactical: variant.tactical,
        round: o.round,
        to_move: o.to_move.map(|seat| seat as usize),
        points: pair(&o.points),
        bridges: o.bridges.iter().map(|b| (b.line.clone(), b.seat as usize)).collect(),
        controlled: o.controlled.iter().map(|c| (c.island.clone(), c.seat as usize)).collect(),
        supply: pair(&o.supply),
        hand: o.hand.clone(),
        opponent_hand_size: o.opponent_hand_size,
        open_cards: [open(0), open(1)],
        faceup: [slot(0), slot(1), slot(2)],
        deck_size: o.deck_size,
        played_cards: o.played_cards.clone(),
        own_facedown_discards: o.own_facedown_discards.clone(),
        opponent_facedown_count: o.opponent_facedown_count,
        final_turns: o.final_turns,
        opponent_passed: o.opponent_passed,
        turn_played_card: o.turn_played_card,
        turn_discarded: o.turn_discarded,
        history: history.to_vec(),
        clock: Clock {
            action: Duration::from_millis(request.action_deadline_ms.into()),
            bank: Duration::from_millis(request.time_bank_ms.into()),
            received,
        },
    }
}

/// Plays one match and returns the exit status: 0 once MatchOver arrived, 1 if
/// the bot was cut off or the stream failed, 2 if the environment is missing.
/// `choose` gets the observation and the legal actions (sorted by text
/// notation, never empty) and must answer before `obs.clock.deadline()`.
pub fn run(name: &str, choose: fn(&Observation, &[Action]) -> Action) -> ExitCode {
    let Ok(target) = std::env::var("KAHUNA_REFEREE") else {
        eprintln!("{name}: KAHUNA_REFEREE is not set (expected unix:///path/to/socket or host:port)");
        return ExitCode::from(2);
    };
    let Ok(token) = std::env::var("KAHUNA_TOKEN") else {
        eprintln!("{name}: KAHUNA_TOKEN is not set (the arena gives each bot its token)");
        return ExitCode::from(2);
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    let result = match runtime {
        Ok(runtime) => runtime.block_on(play(&target, token, name, choose)),
        Err(error) => Err(format!("cannot start tokio: {error}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{name}: {error}");
            ExitCode::from(1)
        }
    }
}

async fn connect(target: &str) -> Result<tonic::transport::Channel, String> {
    let failed = |error: tonic::transport::Error| format!("cannot connect to {target}: {error}");
    match target.strip_prefix("unix://") {
        // tonic dials TCP only: a Unix socket needs a connector (the URI is unused).
        Some(path) => {
            let path = path.to_owned();
            let connector = tower::service_fn(move |_: Uri| {
                let path = path.clone();
                async move { Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(path).await?)) }
            });
            Endpoint::from_static("http://localhost").connect_with_connector(connector).await.map_err(failed)
        }
        None => Endpoint::from_shared(format!("http://{target}"))
            .map_err(failed)?
            .connect()
            .await
            .map_err(failed),
    }
}

async fn play(
    target: &str,
    token: String,
    name: &str,
    choose: fn(&Observation, &[Action]) -> Action,
) -> Result<(), String> {
    let mut client = pb::referee_service_client::RefereeServiceClient::new(connect(target).await?);
    let (sender, receiver) = mpsc::channel::<pb::PlayRequest>(4);
    let hello = pb::Hello { token, bot_name: name.into(), bot_version: "1".into(), protocol_version: 1 };
    let _ = sender.send(pb::PlayRequest { kind: Some(Out::Hello(hello)) }).await;
    let mut sender = Some(sender); // dropped to close our side of the stream
    let mut stream = client
        .play(ReceiverStream::new(receiver)) // one stream for the whole match
        .await
        .map_err(|status| format!("cannot open the Play stream: {status}"))?
        .into_inner();
    let mut history: Vec<Event> = Vec::new(); // this game's full history
    let mut match_over = false;
    loop {
        let message = match stream.message().await {
            Ok(Some(message)) => message,
            Ok(None) | Err(_) if match_over => return Ok(()),
            Ok(None) => return Err("the referee closed the stream before MatchOver".into()),
            Err(status) => return Err(format!("the stream failed: {status}")),
        };
        match message.kind {
            Some(In::GameStart(_)) => history.clear(),
            Some(In::ActionRequest(request)) => {
                let received = Instant::now();
                let o = request.observation.as_ref();
                let start = o.map_or(0, |o| o.history_start) as usize;
                if start != history.len() {
                    return Err(format!("history starts at {start} but {} events are known", history.len()));
                }
                for e in o.map_or(&[][..], |o| &o.history[..]) {
                    let seen = action(e.r#type, &e.card, &e.cards, &e.line);
                    history.push(Event { seat: e.seat as usize, action: seen, drawn: e.drawn.clone(), hidden: e.hidden });
                }
                if request.legal_actions.is_empty() { // choose is promised a choice
                    return Err(format!("protocol error: request {} has no legal actions", request.request_id));
                }
                let legal: Vec<Action> =
                    request.legal_actions.iter().map(|a| action(a.r#type, &a.card, &a.cards, &a.line)).collect();
                let chosen = choose(&observation(&request, &history, received), &legal);
                let reply = pb::ActionReply {
                    request_id: request.request_id,
                    action: Some(pb::Action {
                        r#type: chosen.kind.into(),
                        card: chosen.card,
                        cards: chosen.cards,
                        line: chosen.line,
                    }),
                };
                let out = sender.as_ref().ok_or("a request after MatchOver")?;
                out.send(pb::PlayRequest { kind: Some(Out::ActionReply(reply)) })
                    .await
                    .map_err(|_| format!("cannot reply to request {}", request.request_id))?;
            }
            Some(In::MatchOver(_)) => {
                match_over = true;
                sender = None; // the referee closes the stream; read until it does
            }
            Some(In::Goodbye(_)) if match_over => return Ok(()), // a later Goodbye does not undo it
            Some(In::Goodbye(goodbye)) => {
                let status = pb::BotStatus::try_from(goodbye.status).unwrap_or_default();
                return Err(format!("cut off by the referee: {}: {}", status.as_str_name(), goodbye.reason));
            }
            _ => {} // Welcome, GameOver: nothing to do here
        }
    }
}
