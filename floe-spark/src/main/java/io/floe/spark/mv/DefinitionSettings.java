package io.floe.spark.mv;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.spark.sql.classic.SparkSession;

/**
 * The SQL settings a materialized view's definition means what it says under: recorded at {@code
 * CREATE}, as Spark records them for its persistent views, and applied to every refresh, so that
 * the rows a refresh adds are computed as the rows already stored were, whatever session runs it.
 * {@code DATE(ts)} in another session time zone, or a {@code CAST} under another ANSI mode, would
 * otherwise give an MV rows of two meanings, which no full recomputation gives.
 *
 * <p>Recorded: the session time zone and ANSI mode always (their defaults depend on the JVM and
 * Spark version), and every other SQL setting the session set that Spark would capture for a view:
 * not the optimizer's, code generation's, execution's, shuffle's or adaptive execution's, which
 * change how a query runs rather than what it returns, nor the default catalog, which the view
 * records itself. They are view properties {@value #PREFIX}{@code <key>}.
 */
public final class DefinitionSettings {
  /** The view property prefix of a recorded setting. */
  public static final String PREFIX = "floe.sql-conf.";

  static final String TIME_ZONE = "spark.sql.session.timeZone";
  static final String ANSI = "spark.sql.ansi.enabled";

  private static final List<String> ALWAYS = List.of(TIME_ZONE, ANSI);

  /** Spark's own rule for the settings a persistent view does not capture. */
  private static final List<String> NOT_CAPTURED_PREFIXES =
      List.of(
          "spark.sql.optimizer.",
          "spark.sql.codegen.",
          "spark.sql.execution.",
          "spark.sql.shuffle.",
          "spark.sql.adaptive.",
          "spark.sql.hive.",
          "spark.sql.catalog.",
          "spark.sql.defaultCatalog",
          "spark.sql.maxNestedViewDepth",
          "spark.sql.ui.");

  private DefinitionSettings() {}

  /** The settings to record for a definition created in {@code spark}, as view properties. */
  public static Map<String, String> capture(SparkSession spark) {
    Map<String, String> captured = new TreeMap<>();
    setConfs(spark).forEach((key, value) -> {
      if (captures(spark, key)) {
        captured.put(PREFIX + key, value);
      }
    });
    for (String key : ALWAYS) {
      captured.put(PREFIX + key, spark.sessionState().conf().getConfString(key));
    }
    return captured;
  }

  /** The settings {@code spark} has set, by key. */
  private static Map<String, String> setConfs(SparkSession spark) {
    Map<String, String> set = new TreeMap<>();
    scala.collection.Iterator<scala.Tuple2<String, String>> all = spark.sessionState().conf().getAllConfs().iterator();
    while (all.hasNext()) {
      scala.Tuple2<String, String> entry = all.next();
      set.put(entry._1(), entry._2());
    }
    return set;
  }

  private static boolean captures(SparkSession spark, String key) {
    return key.startsWith("spark.sql.")
        && spark.conf().isModifiable(key)
        && NOT_CAPTURED_PREFIXES.stream().noneMatch(key::startsWith);
  }

  /** The settings {@code mv} recorded, by key; empty for a view created before Floe recorded them. */
  public static Map<String, String> of(MaterializedView mv) {
    Map<String, String> recorded = new TreeMap<>();
    mv.properties().forEach((key, value) -> {
      if (key.startsWith(PREFIX)) {
        recorded.put(key.substring(PREFIX.length()), value);
      }
    });
    return recorded;
  }

  /**
   * The settings {@code spark} must change to run {@code mv}'s definition as it was created: each
   * recorded setting it has another value for, and each setting it set that the view did not
   * record, which maps to null (unset: its default, as the creating session had it). Empty for a
   * view created before Floe recorded settings.
   */
  public static Map<String, String> differing(SparkSession spark, MaterializedView mv) {
    Map<String, String> recorded = of(mv);
    Map<String, String> differing = new TreeMap<>();
    if (recorded.isEmpty()) {
      return differing;
    }
    recorded.forEach((key, value) -> {
      if (!Objects.equals(current(spark, key), value)) {
        differing.put(key, value);
      }
    });
    capture(spark).forEach((property, value) -> {
      String key = property.substring(PREFIX.length());
      if (!recorded.containsKey(key) && !isDefault(key, value)) {
        differing.put(key, null);
      }
    });
    return differing;
  }

  /** Whether {@code value} is Spark's default for {@code key}: setting it changes nothing. */
  private static boolean isDefault(String key, String value) {
    try {
      return value.equals(DEFAULTS.getConfString(key));
    } catch (java.util.NoSuchElementException e) {
      return false;
    }
  }

  /** Settings nobody set: each key's default. */
  private static final org.apache.spark.sql.internal.SQLConf DEFAULTS = new org.apache.spark.sql.internal.SQLConf();

  /** The value {@code key} has in {@code spark}, its default when unset; null for an unset key Spark does not know. */
  private static String current(SparkSession spark, String key) {
    try {
      return spark.sessionState().conf().getConfString(key);
    } catch (java.util.NoSuchElementException e) {
      return null;
    }
  }

  /** How {@code differing} departs from {@code spark}'s settings, for a message: {@code key=recorded (here: current)}. */
  public static String describe(SparkSession spark, Map<String, String> differing) {
    StringBuilder text = new StringBuilder();
    differing.forEach((key, value) -> {
      if (text.length() > 0) {
        text.append(", ");
      }
      text.append(key).append('=').append(value == null ? "unset" : value).append(" (here: ")
          .append(Objects.requireNonNullElse(current(spark, key), "unset")).append(')');
    });
    return text.toString();
  }

  /**
   * A session of its own for work under {@code differing}: a copy of {@code spark} (its settings,
   * catalogs and temporary views) with those settings, leaving {@code spark} as it is for the
   * threads that share it.
   */
  public static SparkSession sessionWith(SparkSession spark, Map<String, String> differing) {
    // One copy per session and settings, reused: a copy starts catalogs of its own, which are
    // never closed. A change of the session's settings makes a new copy.
    List<Map<String, String>> key = List.of(setConfs(spark), new TreeMap<>(differing));
    synchronized (COPIES) {
      Map<List<Map<String, String>>, SparkSession> copies = COPIES.computeIfAbsent(spark, s -> new java.util.LinkedHashMap<>(4, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<List<Map<String, String>>, SparkSession> eldest) {
          return size() > MAX_COPIES;
        }
      });
      return copies.computeIfAbsent(key, k -> {
        SparkSession copy = spark.cloneSession();
        differing.forEach((name, value) -> {
          if (value == null) {
            copy.sessionState().conf().unsetConf(name);
          } else {
            copy.sessionState().conf().setConfString(name, value);
          }
        });
        return copy;
      });
    }
  }

  private static final int MAX_COPIES = 8;

  /** Copies of a session with other settings, by the session, its settings and those the copy changes. */
  private static final Map<SparkSession, Map<List<Map<String, String>>, SparkSession>> COPIES = new java.util.WeakHashMap<>();

  /**
   * Runs {@code work} with {@code session} as this thread's active session: Spark's parser builds
   * some expressions (a {@code CAST}'s ANSI mode) from the active session's settings, not from
   * the session that runs the plan.
   */
  public static <T> T activeIn(SparkSession session, java.util.function.Supplier<T> work) {
    scala.Option<org.apache.spark.sql.SparkSession> previous = org.apache.spark.sql.SparkSession.getActiveSession();
    org.apache.spark.sql.SparkSession.setActiveSession(session);
    try {
      return work.get();
    } finally {
      if (previous.isDefined()) {
        org.apache.spark.sql.SparkSession.setActiveSession(previous.get());
      } else {
        org.apache.spark.sql.SparkSession.clearActiveSession();
      }
    }
  }
}
