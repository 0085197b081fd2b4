package arena.kahuna.bot;

import arena.kahuna.v1.ActionReply;
import arena.kahuna.v1.ActionRequest;
import arena.kahuna.v1.ActionType;
import arena.kahuna.v1.Hello;
import arena.kahuna.v1.PlayRequest;
import arena.kahuna.v1.PlayResponse;
import arena.kahuna.v1.RefereeServiceGrpc;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The protocol side of a Kahuna Arena bot: connects to the referee, says Hello, turns
 * every ActionRequest into plain Java records, calls your chooser and sends its answer
 * back with the request's id.
 */
public final class Kahuna {
  private Kahuna() {}

  // grpc-netty asks every channel for SO_KEEPALIVE, which a Unix socket lacks; Netty's
  // warning about it (a line of stderr at every start) costs about 30 ms of start-up.
  private static final Logger NETTY_BOOTSTRAP = Logger.getLogger("io.netty.bootstrap");

  static {
    NETTY_BOOTSTRAP.setLevel(Level.SEVERE);
  }

  /** Picks one of the legal actions for an observation. */
  @FunctionalInterface
  public interface Chooser {
    Action choose(Observation obs, List<Action> legal);
  }

  /**
   * One action: a legal action offered by the referee, or your reply. {@code card}:
   * place, discard: the card; draw: the face-up card, "" for the deck. {@code cards}:
   * remove: the two cards. {@code line}: place, remove: the line, e.g. "ELAI-HUNA".
   */
  public record Action(ActionType type, String card, List<String> cards, String line) {
    /** docs/reference/RECORD.md text: "place HUNA ELAI-HUNA", "draw deck". */
    @Override
    public String toString() {
      return switch (type) {
        case ACTION_TYPE_PLACE -> "place " + card + " " + line;
        case ACTION_TYPE_REMOVE -> "remove " + String.join("+", cards) + " " + line;
        case ACTION_TYPE_DISCARD -> "discard " + card;
        case ACTION_TYPE_DRAW -> card.isEmpty() ? "draw deck" : "draw " + card;
        case ACTION_TYPE_PASS -> "pass";
        default -> "?";
      };
    }

    static Action of(arena.kahuna.v1.Action a) {
      return new Action(a.getType(), a.getCard(), List.copyOf(a.getCardsList()), a.getLine());
    }

    arena.kahuna.v1.Action toProto() {
      return arena.kahuna.v1.Action.newBuilder()
          .setType(type).setCard(card).addAllCards(cards).setLine(line).build();
    }
  }

  /** One action of the game as your seat saw it; {@code hidden}: the opponent's face-down discard. */
  public record Event(int seat, Action action, String drawn, boolean hidden) {}

  /** The per-action limit and the bank left, in ms, and when the request arrived (System.nanoTime). */
  public record Clock(long actionMs, long bankMs, long receivedNanos) {
    /** The latest moment (System.nanoTime) to reply without touching the bank. */
    public long deadlineNanos() {
      return receivedNanos + TimeUnit.MILLISECONDS.toNanos(actionMs);
    }
  }

  /**
   * Everything your seat may know (docs/reference/RULES.md R9). {@code toMove} is -1 when the game
   * is finished; {@code bridges} maps a line to the seat of its bridge, {@code controlled}
   * an island to its seat; arrays of two are indexed by seat; {@code faceup} has three
   * slots, "" for an empty one; {@code history} is the whole game so far, oldest first.
   */
  public record Observation(
      int gameIndex, int seat, boolean strategic, boolean tactical, int round, int toMove,
      int[] points, Map<String, Integer> bridges, Map<String, Integer> controlled, int[] supply,
      List<String> hand, int opponentHandSize, List<List<String>> openCards, List<String> faceup,
      int deckSize, List<String> playedCards, List<String> ownFacedownDiscards,
      int opponentFacedownCount, boolean finalTurns, boolean opponentPassed,
      boolean turnPlayedCard, boolean turnDiscarded, List<Event> history, Clock clock) {

    static Observation of(ActionRequest request, List<Event> history, long received) {
      var o = request.getObservation();
      Map<String, Integer> bridges = new HashMap<>();
      o.getBridgesList().forEach(b -> bridges.put(b.getLine(), b.getSeat()));
      Map<String, Integer> controlled = new HashMap<>();
      o.getControlledList().forEach(c -> controlled.put(c.getIsland(), c.getSeat()));
      List<List<String>> open = new ArrayList<>();
      o.getOpenCardsList().forEach(list -> open.add(List.copyOf(list.getCardsList())));
      return new Observation(
          request.getGameIndex(), o.getSeat(), o.getVariant().getStrategic(),
          o.getVariant().getTactical(), o.getRound(), o.hasToMove() ? o.getToMove() : -1,
          pair(o.getPointsList()), bridges, controlled, pair(o.getSupplyList()),
          List.copyOf(o.getHandList()), o.getOpponentHandSize(), open,
          List.copyOf(o.getFaceupList()), o.getDeckSize(), List.copyOf(o.getPlayedCardsList()),
          List.copyOf(o.getOwnFacedownDiscardsList()), o.getOpponentFacedownCount(),
          o.getFinalTurns(), o.getOpponentPassed(), o.getTurnPlayedCard(), o.getTurnDiscarded(),
          List.copyOf(history),
          new Clock(request.getActionDeadlineMs(), request.getTimeBankMs(), received));
    }

    private static int[] pair(List<Integer> values) {
      int[] out = new int[2];
      for (int i = 0; i < Math.min(2, values.size()); i++) {
        out[i] = values.get(i);
      }
      return out;
    }
  }

  /**
   * Plays one match: reads KAHUNA_REFEREE (a gRPC target such as
   * unix:///run/kahuna/referee.sock) and KAHUNA_TOKEN, and returns the exit status: 0
   * once MatchOver arrived, 1 if the bot was cut off or the stream failed, 2 if the
   * environment is missing.
   */
  public static int run(String name, Chooser chooser) {
    String target = System.getenv("KAHUNA_REFEREE");
    String token = System.getenv("KAHUNA_TOKEN");
    if (target == null) {
      System.err.println(name + ": KAHUNA_REFEREE is not set (expected unix:///path/to/socket or host:port)");
      return 2;
    }
    if (token == null) {
      System.err.println(name + ": KAHUNA_TOKEN is not set (the arena gives each bot its token)");
      return 2;
    }
    // unix:///path works with Netty's epoll transport; directExecutor: no thread pool;
    // disableRetry: the one Play stream is never replayed (and 24 fewer classes to load).
    ManagedChannel channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create())
        .directExecutor().disableRetry().build();
    try {
      play(channel, token, name, chooser);
      return 0;
    } catch (RuntimeException | InterruptedException error) {
      System.err.println(name + ": " + error.getMessage());
      return 1;
    } finally {
      channel.shutdownNow();
    }
  }

  /** What the stream delivers: a message, or its end (error null: closed cleanly). */
  private record Incoming(PlayResponse message, Throwable error) {}

  private static void play(ManagedChannel channel, String token, String name, Chooser chooser)
      throws InterruptedException {
    BlockingQueue<Incoming> inbox = new LinkedBlockingQueue<>();
    StreamObserver<PlayRequest> out = RefereeServiceGrpc.newStub(channel).play(
        new StreamObserver<>() {
          @Override public void onNext(PlayResponse message) { inbox.add(new Incoming(message, null)); }
          @Override public void onError(Throwable error) { inbox.add(new Incoming(null, error)); }
          @Override public void onCompleted() { inbox.add(new Incoming(null, null)); }
        });
    out.onNext(PlayRequest.newBuilder().setHello(Hello.newBuilder()
        .setToken(token).setBotName(name).setBotVersion("1").setProtocolVersion(1)).build());
    List<Event> history = new ArrayList<>(); // this game's full history
    boolean matchOver = false;
    while (true) {
      Incoming next = inbox.take();
      if (next.message() == null) {
        if (matchOver) return;
        throw new IllegalStateException(next.error() == null
            ? "the referee closed the stream before MatchOver"
            : "the stream failed: " + next.error());
      }
      PlayResponse message = next.message();
      switch (message.getKindCase()) {
        case GAME_START -> history.clear();
        case ACTION_REQUEST -> {
          long received = System.nanoTime();
          ActionRequest request = message.getActionRequest();
          var o = request.getObservation();
          if (o.getHistoryStart() != history.size()) {
            throw new IllegalStateException("history starts at " + o.getHistoryStart()
                + " but " + history.size() + " events are known");
          }
          o.getHistoryList().forEach(e -> history.add(new Event(e.getSeat(),
              new Action(e.getType(), e.getCard(), List.copyOf(e.getCardsList()), e.getLine()),
              e.getDrawn(), e.getHidden())));
          if (request.getLegalActionsCount() == 0) { // the chooser is promised a choice
            throw new IllegalStateException("protocol error: request "
                + Long.toUnsignedString(request.getRequestId()) + " has no legal actions");
          }
          List<Action> legal = request.getLegalActionsList().stream().map(Action::of).toList();
          Action action = chooser.choose(Observation.of(request, history, received), legal);
          out.onNext(PlayRequest.newBuilder().setActionReply(ActionReply.newBuilder()
              .setRequestId(request.getRequestId()).setAction(action.toProto())).build());
        }
        case MATCH_OVER -> {
          matchOver = true;
          out.onCompleted(); // the referee closes the stream; read until it does
        }
        case GOODBYE -> {
          if (matchOver) return; // the match is over: a later Goodbye does not undo it
          out.onCompleted();
          throw new IllegalStateException("cut off by the referee: "
              + message.getGoodbye().getStatus() + ": " + message.getGoodbye().getReason());
        }
        default -> { } // Welcome, GameOver: nothing to do here
      }
    }
  }
}
