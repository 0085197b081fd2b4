package arena.kahuna.bot;

import arena.kahuna.bot.Kahuna.Action;
import arena.kahuna.bot.Kahuna.Observation;
import java.util.List;
import java.util.SplittableRandom;

/**
 * java_random: a Kahuna Arena bot in Java that plays a uniformly random legal action.
 *
 * <p>Put your own logic in {@link #choose}. {@link Kahuna} does the protocol: it connects
 * to the referee, says Hello, calls {@code choose} for every request with the
 * observation as Java records, replies with the request's id and returns once the
 * match is over.
 */
public final class RandomBot {
  private static final String SEED = System.getenv().getOrDefault("KAHUNA_RANDOM_SEED", "");

  /**
   * Returns one of {@code legal} (sorted by text notation, never empty). {@code obs}
   * has your hand, the board, the face-up row, the whole game's history and your
   * clock: reply before {@code obs.clock().deadlineNanos()}.
   */
  static Action choose(Observation obs, List<Action> legal) {
    // Reproducible: seeded by KAHUNA_RANDOM_SEED, the game and the events seen.
    long seed = ((long) SEED.hashCode() << 40) ^ ((long) obs.gameIndex() << 20) ^ obs.history().size();
    return legal.get(new SplittableRandom(seed).nextInt(legal.size()));
  }

  public static void main(String[] args) {
    System.exit(Kahuna.run("java_random", RandomBot::choose));
  }
}
