package io.floe.spark.oracle;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * Random materialized view definitions over the oracle's source tables (columns {@code id INT, k1
 * STRING, k2 INT, v DECIMAL(10,2), d DOUBLE, s STRING, ts TIMESTAMP}): linear ones, aggregates
 * that Floe maintains incrementally, and shapes it must refresh in full. Every output column has a
 * distinct name, so the oracle can compare the view with its recomputation column by column.
 */
final class DefinitionGenerator {
  private static final String[] PREDICATES = {
    "k2 > 1",
    "k2 IN (0, 2)",
    "k1 IS NULL",
    "k1 IS NOT NULL",
    "k1 IN ('a', 'b')",
    "v >= 2.50",
    "v IS NULL",
    "s LIKE 'x%'",
    "s LIKE '%-%'",
    "d < 0.75",
    "id % 2 = 0",
    "ts >= TIMESTAMP '2024-01-02 00:00:00'",
    "NOT (k2 <=> 1)",
    "upper(k1) = 'A'",
    "to_date(ts) = DATE '2024-01-01'",
    "v * 2 > d",
  };

  private static final String[] LINEAR_COLUMNS = {
    "id",
    "k1",
    "k2",
    "v",
    "d",
    "s",
    "ts",
    "CAST(k2 AS STRING) AS k2_text",
    "CAST(v AS DOUBLE) AS v_double",
    "CAST(id AS BIGINT) * 10 AS id_times_ten",
    "CASE WHEN v > 3 THEN 'high' WHEN v IS NULL THEN 'none' ELSE 'low' END AS v_band",
    "v * 2 + 1 AS v_scaled",
    "d * 3 - id AS d_shifted",
    "-d AS d_negated",
    "id + k2 AS id_plus_k2",
    "upper(k1) AS k1_upper",
    "lower(s) AS s_lower",
    "concat(k1, '-', s) AS k1_s",
    "substr(s, 1, 2) AS s_prefix",
    "date_trunc('HOUR', ts) AS ts_hour",
    "to_date(ts) AS ts_date",
    "coalesce(k1, 'none') AS k1_or_none",
  };

  /** Grouping expressions with the name they are selected under. */
  private static final String[][] GROUP_KEYS = {
    {"k1", "k1"},
    {"k2", "k2"},
    {"upper(k1)", "k1_upper"},
    {"date_trunc('DAY', ts)", "day"},
    {"k2 % 2", "k2_parity"},
    {"coalesce(k1, 'none')", "k1_or_none"},
    {"to_date(ts)", "ts_date"},
  };

  private static final String[] AGGREGATES = {
    "COUNT(*) AS n",
    "COUNT(v) AS v_count",
    "SUM(v) AS v_sum",
    "SUM(d) AS d_sum",
    "AVG(v) AS v_avg",
    "MIN(v) AS v_min",
    "MAX(s) AS s_max",
    "COUNT(DISTINCT s) AS s_distinct",
    "COUNT(1) AS n_one",
    "SUM(k2) AS k2_sum",
    "MIN(ts) AS ts_min",
    "MAX(d) AS d_max",
    "SUM(v * 2) AS v_doubled_sum",
    "SUM(v) + 1 AS v_sum_plus_one",
    "AVG(d) AS d_avg",
    "SUM(CASE WHEN s LIKE 'x%' THEN 1 ELSE 0 END) AS x_count",
    "SUM(DISTINCT v) AS v_distinct_sum",
    "COUNT(*) FILTER (WHERE k2 > 1) AS n_k2_above_one",
  };

  private final Random random;

  DefinitionGenerator(Random random) {
    this.random = random;
  }

  /**
   * Every column of {@code source}, filtered now and then: an upstream MV whose rows the other
   * shapes' definitions can read like a source table's.
   */
  OracleDefinition upstream(String source) {
    return new OracleDefinition(OracleShape.LINEAR, "SELECT * FROM {" + source + "}" + optionalWhere(3), List.of(source), "k2");
  }

  /** Filters, projections and sometimes a generator over {@code source}. */
  OracleDefinition linear(String source) {
    List<String> select = pick(LINEAR_COLUMNS, 2 + random.nextInt(4));
    String from = "{" + source + "}";
    if (random.nextInt(5) == 0) {
      if (random.nextBoolean()) {
        from += " LATERAL VIEW explode(array(k2, id)) g AS x";
        select.add("x");
      } else {
        from += " LATERAL VIEW OUTER explode(split(s, '-')) g AS part";
        select.add("part");
      }
    }
    String sql = "SELECT " + String.join(", ", select) + " FROM " + from + optionalWhere(3);
    String partitionColumn =
        select.stream().filter(c -> List.of("id", "k1", "k2", "ts_date").contains(c.replaceAll(".* AS ", ""))).findFirst()
            .map(c -> c.replaceAll(".* AS ", "")).orElse(null);
    return new OracleDefinition(OracleShape.LINEAR, sql, List.of(source), partitionColumn);
  }

  /** A GROUP BY over {@code source} selecting every grouping expression, with a WHERE now and then. */
  OracleDefinition aggregate(String source) {
    List<String[]> keys = new ArrayList<>(List.of(GROUP_KEYS));
    Collections.shuffle(keys, random);
    keys = keys.subList(0, 1 + random.nextInt(2));
    List<String> select = new ArrayList<>();
    for (String[] key : keys) {
      select.add(key[0].equals(key[1]) ? key[0] : key[0] + " AS " + key[1]);
    }
    // Now and then no aggregate at all: a GROUP BY that only deduplicates its keys.
    select.addAll(pick(AGGREGATES, random.nextInt(8) == 0 ? 0 : 1 + random.nextInt(4)));
    if (random.nextBoolean()) {
      Collections.shuffle(select, random);
    }
    String from = "{" + source + "}";
    if (random.nextInt(8) == 0) {
      from += " LATERAL VIEW explode(array(v, v + 1)) g AS x";
      select.add("SUM(x) AS x_sum");
    }
    List<String> groupBy = new ArrayList<>();
    int style = random.nextInt(4);
    for (String[] key : keys) {
      if (style == 0) {
        groupBy.add(String.valueOf(select.indexOf(key[0].equals(key[1]) ? key[0] : key[0] + " AS " + key[1]) + 1));
      } else if (style == 1) {
        groupBy.add(key[1]);
      } else {
        groupBy.add(key[0]);
      }
    }
    String sql =
        "SELECT " + String.join(", ", select) + " FROM " + from + optionalWhere(2) + " GROUP BY " + String.join(", ", groupBy);
    return new OracleDefinition(OracleShape.AGGREGATE, sql, List.of(source), keys.get(0)[1]);
  }

  /** How many kinds {@link #rotatingShape(int)} knows. */
  static final int ROTATING_SHAPES = 9;

  /**
   * One of the rotating shapes, by {@code kind} modulo {@link #ROTATING_SHAPES}: join (of tables or
   * of aggregates on their grouping key), UNION ALL, DISTINCT or INTERSECT / EXCEPT, window functions, HAVING and outer joins (maintained incrementally, self-joins
   * and UNION ALL reading one table twice included, except a window without PARTITION BY and an outer join
   * without an equi-join key) and aggregates without GROUP BY over counters, MIN, MAX and
   * COUNT(DISTINCT) and AVG, filters by IN and EXISTS subqueries, keyed definitions and GROUP BY
   * that do not select their key; and aggregates without GROUP BY with SUM(DISTINCT), NOT IN and
   * scalar subqueries (refreshed in full).
   */
  OracleDefinition rotatingShape(int kind) {
    String t = "{" + (random.nextBoolean() ? "t1" : "t2") + "}";
    List<String> one = List.of(t.substring(1, 3));
    switch (Math.floorMod(kind, ROTATING_SHAPES)) {
      case 0:
        if (random.nextInt(4) == 0) {
          return joinedAggregates();
        }
        if (random.nextInt(3) == 0) {
          return random.nextBoolean()
              ? new OracleDefinition(
                  OracleShape.SELF_JOIN,
                  "SELECT a.id, a.k1, b.id AS b_id, b.v AS b_v FROM " + t + " a JOIN " + t + " b ON a.k1 = b.k1 AND a.k2 = b.k2",
                  one)
              : new OracleDefinition(
                  OracleShape.SELF_JOIN,
                  "SELECT a.k2, COUNT(*) AS n, SUM(b.d) AS b_d_sum FROM " + t + " a JOIN " + t + " b ON a.k2 = b.k2"
                      + " WHERE a.v < b.v GROUP BY a.k2",
                  one);
        }
        return random.nextBoolean()
            ? new OracleDefinition(
                OracleShape.JOIN,
                "SELECT a.id, a.k1, b.k2 AS b_k2, a.v, b.s AS b_s FROM {t1} a JOIN {t2} b ON a.id = b.id"
                    + (random.nextBoolean() ? " WHERE a.k2 IS NOT NULL" : ""),
                List.of("t1", "t2"))
            : new OracleDefinition(
                OracleShape.JOIN,
                "SELECT a.k1, COUNT(*) AS n, SUM(b.v) AS b_v_sum FROM {t1} a JOIN {t2} b ON a.k1 = b.k1 AND a.k2 = b.k2"
                    + " GROUP BY a.k1",
                List.of("t1", "t2"));
      case 1:
        if (random.nextInt(3) == 0) {
          // Through a common table expression, every column of both tables.
          return new OracleDefinition(
              OracleShape.UNION_ALL,
              "WITH kept AS (SELECT * FROM {t1}" + optionalWhere(2) + ") SELECT * FROM kept UNION ALL SELECT * FROM {t2}",
              List.of("t1", "t2"));
        }
        return random.nextBoolean()
            ? new OracleDefinition(
                OracleShape.UNION_ALL,
                "SELECT id, k1, v FROM {t1}" + optionalWhere(2) + " UNION ALL SELECT id, k1, v FROM {t2}" + optionalWhere(2),
                List.of("t1", "t2"))
            : new OracleDefinition(
                OracleShape.SELF_UNION_ALL,
                "SELECT id, k1, d FROM " + t + " WHERE k2 = 1 UNION ALL SELECT id, k1, d FROM " + t + " WHERE k2 <> 0",
                one);
      case 2:
        if (random.nextBoolean()) {
          return setOperation(t, one);
        }
        return new OracleDefinition(
            OracleShape.DISTINCT,
            random.nextBoolean()
                ? "SELECT DISTINCT k1, k2 FROM " + t + optionalWhere(2)
                : "SELECT DISTINCT upper(k1) AS k1_upper, s FROM " + t + optionalWhere(2),
            one);
      case 3:
        return window(t, one);
      case 4:
        String[] havings = {"COUNT(*) > 2", "SUM(v) IS NOT NULL", "MAX(s) >= 'x'"};
        String having = " GROUP BY k1 HAVING " + havings[random.nextInt(havings.length)];
        return new OracleDefinition(
            OracleShape.HAVING,
            random.nextBoolean()
                ? "SELECT k1, COUNT(*) AS n, SUM(v) AS v_sum FROM " + t + optionalWhere(3) + having
                : "WITH picked AS (SELECT k1, v, s FROM " + t + optionalWhere(3) + ")"
                    + " SELECT k1, COUNT(*) AS n, SUM(v) AS v_sum FROM picked" + having,
            one);
      case 5:
        return random.nextBoolean()
            ? new OracleDefinition(
                OracleShape.GLOBAL_AGGREGATE,
                "SELECT COUNT(*) AS n, SUM(v) AS v_sum, COUNT(s) AS s_count, SUM(d) AS d_sum, MAX(s) AS s_max, MIN(ts) AS ts_min,"
                    + " COUNT(DISTINCT k1) AS k1_distinct, AVG(v) AS v_avg, AVG(d) AS d_avg FROM " + t + optionalWhere(2),
                one)
            : new OracleDefinition(
                OracleShape.GLOBAL_AGGREGATE_RECOMPUTED,
                "SELECT COUNT(*) AS n, SUM(DISTINCT v) AS v_distinct_sum, COUNT(DISTINCT s) AS s_distinct FROM " + t + optionalWhere(2),
                one);
      case 8:
        return outerJoin();
      case 6:
        return subquery(t, one);
      default:
        if (random.nextInt(3) > 0) {
          return hiddenKey(t, one);
        }
        return new OracleDefinition(
            OracleShape.UNSELECTED_GROUP_KEY,
            random.nextBoolean()
                ? "SELECT COUNT(*) AS n, SUM(v) AS v_sum FROM " + t + " GROUP BY k1"
                : "SELECT k2, COUNT(DISTINCT s) AS s_distinct, MIN(v) AS v_min, AVG(d) AS d_avg FROM " + t + optionalWhere(2)
                    + " GROUP BY k1, k2",
            one);
    }
  }

  /**
   * A keyed definition that does not select its key: an outer join's key, a HAVING's group, a
   * window's partition, the column an IN or EXISTS subquery or a semi join matches. The storage keeps the key in
   * a hidden column, so these are incremental too.
   */
  private OracleDefinition hiddenKey(String t, List<String> one) {
    List<String> both = List.of("t1", "t2");
    switch (random.nextInt(9)) {
      case 0:
        return new OracleDefinition(
            OracleShape.HIDDEN_KEY,
            "SELECT a.id, a.v, b.s AS b_s FROM {t1} a LEFT JOIN {t2} b ON "
                + (random.nextBoolean() ? "a.k1 = b.k1" : "a.k1 = b.k1 AND a.k2 = b.k2")
                + (random.nextBoolean() ? " WHERE b.s IS NULL OR a.k2 > 0" : ""),
            both);
      case 1:
        return new OracleDefinition(
            OracleShape.HIDDEN_KEY,
            "SELECT a.id, b.id AS b_id, coalesce(a.v, b.v) AS v FROM {t1} a FULL JOIN {t2} b ON a.k1 = b.k1",
            both);
      case 2:
        return new OracleDefinition(
            OracleShape.HIDDEN_KEY,
            "SELECT COUNT(*) AS n, SUM(v) AS v_sum FROM " + t + optionalWhere(3) + " GROUP BY k1 HAVING COUNT(*) > 1",
            one);
      case 3:
        return new OracleDefinition(
            OracleShape.HIDDEN_KEY,
            "SELECT id, v FROM (SELECT *, row_number() OVER (PARTITION BY k1 ORDER BY v DESC, id, s) AS rn FROM "
                + t + optionalWhere(2) + ") WHERE rn <= 2",
            one);
      case 4:
        return new OracleDefinition(
            OracleShape.HIDDEN_KEY,
            "SELECT id, v FROM {t1} WHERE k1 IN (SELECT k1 FROM {t2}" + optionalWhere(2) + ")",
            both);
      case 6:
        return new OracleDefinition(
            OracleShape.HIDDEN_KEY,
            "SELECT COUNT(*) AS n, MAX(a.v) AS v_max FROM {t1} a LEFT SEMI JOIN {t2} b ON a.k1 = b.k1 GROUP BY a.k1",
            both);
      case 7:
        return new OracleDefinition(
            OracleShape.HIDDEN_KEY,
            "SELECT b.s AS b_s, COUNT(*) AS n, SUM(a.v) AS v_sum FROM {t1} a LEFT JOIN {t2} b ON a.k1 = b.k1 GROUP BY a.k1, b.s",
            both);
      case 5:
        return new OracleDefinition(
            OracleShape.HIDDEN_KEY,
            "SELECT a.id, a.v FROM {t1} a LEFT " + (random.nextBoolean() ? "SEMI" : "ANTI") + " JOIN {t2} b ON a.k1 = b.k1",
            both);
      default:
        return new OracleDefinition(
            OracleShape.HIDDEN_KEY,
            "SELECT a.id, a.s FROM {t1} a WHERE EXISTS (SELECT 1 FROM {t2} b WHERE b.k1 = a.k1"
                + (random.nextBoolean() ? " AND b.v > a.v" : "") + ")",
            both);
    }
  }

  /**
   * INTERSECT or EXCEPT, ALL or not, of the two tables or of one table with itself; now and then
   * with a computed column, which the key leaves out.
   */
  private OracleDefinition setOperation(String t, List<String> one) {
    String[] operators = {"INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"};
    String operator = " " + operators[random.nextInt(operators.length)] + " ";
    String columns = random.nextInt(3) == 0 ? "k1, substr(s, 1, 1) AS s_initial" : "k1, k2";
    if (random.nextInt(3) == 0) {
      return new OracleDefinition(
          OracleShape.SET_OPERATION,
          "SELECT " + columns + " FROM " + t + " WHERE " + PREDICATES[random.nextInt(PREDICATES.length)] + operator
              + "SELECT " + columns + " FROM " + t + " WHERE " + PREDICATES[random.nextInt(PREDICATES.length)],
          one);
    }
    return new OracleDefinition(
        OracleShape.SET_OPERATION,
        "SELECT " + columns + " FROM {t1}" + optionalWhere(2) + operator + "SELECT " + columns + " FROM {t2}" + optionalWhere(2),
        List.of("t1", "t2"));
  }

  /**
   * A filter by IN, EXISTS or NOT EXISTS, or their join forms LEFT SEMI and LEFT ANTI JOIN, on a
   * selected column (of the other table or of the same one: the rows with no greater value of their
   * key), now and then under a GROUP BY or a window partitioned by that column, or by NOT IN
   * (maintained by key while its subquery keeps its emptiness and NULLs; of two values, refreshed
   * in full) or a scalar subquery (refreshed in full).
   */
  private OracleDefinition subquery(String t, List<String> one) {
    List<String> both = List.of("t1", "t2");
    switch (random.nextInt(9)) {
      case 0:
        return new OracleDefinition(
            OracleShape.SUBQUERY,
            "SELECT id, k1, v FROM {t1} WHERE k1 IN (SELECT k1 FROM {t2}" + optionalWhere(2) + ")",
            both);
      case 1:
        return new OracleDefinition(
            OracleShape.SUBQUERY,
            "SELECT a.id, a.k1, a.k2 FROM {t1} a WHERE EXISTS (SELECT 1 FROM {t2} b WHERE b.k1 = a.k1 AND b.k2 = a.k2"
                + (random.nextBoolean() ? " AND b.v > a.v" : "") + ")",
            both);
      case 2:
        return new OracleDefinition(
            OracleShape.SUBQUERY,
            "SELECT id, k1, k2, s FROM {t1} WHERE d < 0.5 OR k2 IN (SELECT k2 FROM {t2} WHERE s LIKE 'x%')",
            both);
      case 3:
        return new OracleDefinition(
            OracleShape.SUBQUERY,
            "SELECT a.id, a.k1, a.v FROM " + t + " a WHERE NOT EXISTS (SELECT 1 FROM " + t + " b WHERE b.k1 = a.k1 AND b.v > a.v)",
            one);
      case 4:
        return new OracleDefinition(
            OracleShape.SUBQUERY,
            "SELECT a.id, a.k1, a.v FROM {t1} a LEFT SEMI JOIN {t2} b ON a.k1 = b.k1"
                + (random.nextBoolean() ? " AND b.k2 = a.k2" : "") + (random.nextBoolean() ? " WHERE a.v > 0" : ""),
            both);
      case 5:
        return random.nextBoolean()
            ? new OracleDefinition(
                OracleShape.SUBQUERY,
                "SELECT a.id, a.k1, a.s FROM {t1} a LEFT ANTI JOIN {t2} b ON b.k1 = a.k1" + (random.nextBoolean() ? " AND b.v > a.v" : ""),
                both)
            : new OracleDefinition(
                OracleShape.SUBQUERY,
                "SELECT a.id, a.k1, a.v FROM " + t + " a LEFT ANTI JOIN " + t + " b ON b.k1 = a.k1 AND b.v > a.v",
                one);
      case 6:
        return random.nextBoolean()
            ? new OracleDefinition(
                OracleShape.SUBQUERY,
                "SELECT k1, COUNT(*) AS n, SUM(v) AS v_sum, COUNT(DISTINCT s) AS s_distinct FROM {t1}"
                    + " WHERE k1 IN (SELECT k1 FROM {t2}" + optionalWhere(2) + ") GROUP BY k1",
                both)
            : random.nextBoolean()
                ? new OracleDefinition(
                    OracleShape.SUBQUERY,
                    "SELECT a.k1, a.k2, COUNT(*) AS n, MIN(a.v) AS v_min FROM {t1} a LEFT ANTI JOIN {t2} b ON b.k1 = a.k1"
                        + " GROUP BY a.k1, a.k2",
                    both)
                : new OracleDefinition(
                    OracleShape.SUBQUERY,
                    "SELECT a.id, a.k1, dense_rank() OVER (PARTITION BY a.k1 ORDER BY a.v) AS v_rank FROM {t1} a"
                        + " LEFT SEMI JOIN {t2} b ON b.k1 = a.k1",
                    both);
      case 7:
        return random.nextBoolean()
            ? OracleDefinition.notIn(
                "SELECT id, k1, v FROM {t1} WHERE k1 NOT IN (SELECT k1 FROM {t2} WHERE k2 = 1)",
                both,
                "SELECT k1 FROM {t2} WHERE k2 = 1")
            : new OracleDefinition(
                OracleShape.SUBQUERY_UNKEYED,
                "SELECT id, k1, v FROM {t1} WHERE (k1, k2) NOT IN (SELECT k1, k2 FROM {t2} WHERE v > 0)",
                both);
      default:
        return new OracleDefinition(
            OracleShape.SUBQUERY_UNKEYED,
            "SELECT id, k1, v FROM {t1} WHERE v > (SELECT AVG(v) FROM {t2})",
            both);
    }
  }

  /**
   * Window functions over one table: partitioned by selected columns or by selected expressions of
   * them (several source values in one partition, NULL in a named one), or not (refreshed in full).
   */
  private OracleDefinition window(String t, List<String> one) {
    switch (random.nextInt(7)) {
      case 0:
        return new OracleDefinition(
            OracleShape.WINDOW,
            "SELECT id, k1, k2, v, SUM(v) OVER (PARTITION BY k1) AS k1_v_sum,"
                + " rank() OVER (PARTITION BY k2 ORDER BY v) AS v_rank FROM " + t + optionalWhere(2),
            one);
      case 1:
        return new OracleDefinition(
            OracleShape.WINDOW,
            "SELECT id, k1, k2, d, COUNT(*) OVER (PARTITION BY k1, k2) AS n,"
                + " MAX(d) OVER (PARTITION BY k1) AS k1_d_max FROM " + t + optionalWhere(2),
            one);
      case 2:
        return new OracleDefinition(
            OracleShape.WINDOW,
            "SELECT id, k1, s, v FROM (SELECT id, k1, s, v, row_number() OVER (PARTITION BY k1 ORDER BY v DESC, id, s) AS rn"
                + " FROM " + t + optionalWhere(2) + ") WHERE rn = 1",
            one);
      case 3:
        return new OracleDefinition(
            OracleShape.HIDDEN_KEY,
            "SELECT id, k2, d, COUNT(*) OVER (PARTITION BY k1, k2) AS n FROM " + t + optionalWhere(2),
            one);
      case 4:
        return new OracleDefinition(
            OracleShape.WINDOW_UNKEYED,
            "SELECT id, v, rank() OVER (ORDER BY v) AS v_rank FROM " + t + optionalWhere(2),
            one);
      case 5:
        return new OracleDefinition(
            OracleShape.WINDOW,
            "SELECT k2 % 3 AS k2_mod, coalesce(upper(k1), 'none') AS ck, id, v,"
                + " SUM(v) OVER (PARTITION BY k2 % 3) AS mod_v_sum,"
                + " row_number() OVER (PARTITION BY coalesce(upper(k1), 'none') ORDER BY v DESC, id, s) AS rn"
                + " FROM " + t + optionalWhere(2),
            one);
      default:
        return new OracleDefinition(
            OracleShape.WINDOW,
            "WITH c AS (SELECT id, coalesce(upper(k1), 'none') AS ck, v, s FROM " + t + optionalWhere(2) + ")"
                + " SELECT ck, v FROM (SELECT ck, v, row_number() OVER (PARTITION BY ck ORDER BY v DESC, id, s) AS rn"
                + " FROM c) WHERE rn = 1",
            one);
    }
  }

  /**
   * Aggregates of the two tables joined on the key k1 they both group by (FULL, LEFT or inner; the
   * NULL groups never match), an aggregate joined back to the other table's rows, or a rollup (a
   * GROUP BY k1 over a GROUP BY k1, k2, with HAVING now and then): recomputed by that key.
   */
  private OracleDefinition joinedAggregates() {
    List<String> both = List.of("t1", "t2");
    String a = "(SELECT k1, COUNT(*) AS n, SUM(v) AS v_sum, MIN(d) AS d_min FROM {t1}" + optionalWhere(2) + " GROUP BY k1) a";
    String b = "(SELECT k1, k2, COUNT(*) AS b_n, MAX(s) AS s_max FROM {t2} GROUP BY k1, k2) b";
    switch (random.nextInt(5)) {
      case 4:
        return new OracleDefinition(
            OracleShape.ROLLUP,
            "SELECT k1, COUNT(*) AS k2s, SUM(b_n) AS n, MAX(s_max) AS s_max FROM " + b + " GROUP BY k1"
                + (random.nextBoolean() ? " HAVING SUM(b_n) > 1" : ""),
            List.of("t2"));
      case 0:
        return new OracleDefinition(
            OracleShape.JOINED_AGGREGATES,
            "SELECT coalesce(a.k1, b.k1) AS k1, a.n, a.v_sum, a.d_min, b.k2 AS b_k2, b.b_n, b.s_max FROM " + a
                + " FULL JOIN " + b + " ON a.k1 = b.k1",
            both);
      case 1:
        return new OracleDefinition(
            OracleShape.JOINED_AGGREGATES,
            "SELECT a.k1, a.n, a.v_sum, b.k2 AS b_k2, b.b_n FROM " + a + " LEFT JOIN " + b + " ON a.k1 = b.k1",
            both);
      case 2:
        return new OracleDefinition(
            OracleShape.JOINED_AGGREGATES,
            "SELECT a.k1, a.n, a.d_min, b.b_n, b.s_max FROM " + a + " JOIN " + b + " ON a.k1 = b.k1",
            both);
      default:
        return new OracleDefinition(
            OracleShape.JOINED_AGGREGATES,
            "SELECT r.id, r.k1, r.v, a.n, a.v_sum FROM {t2} r LEFT JOIN " + a + " ON r.k1 = a.k1",
            both);
    }
  }

  /**
   * LEFT, RIGHT or FULL joins of the two tables on k1 (NULLs and duplicates on both sides), the
   * key selected from the sides that keep unmatched rows, now and then under a GROUP BY or a
   * window partitioned by it; or a join whose key is not selected or grouped by (refreshed in full).
   */
  private OracleDefinition outerJoin() {
    List<String> both = List.of("t1", "t2");
    String on = random.nextBoolean() ? "a.k1 = b.k1" : "a.k1 = b.k1 AND a.k2 = b.k2";
    if (random.nextInt(3) == 0) {
      return outerJoinDelta(on);
    }
    switch (random.nextInt(9)) {
      case 0:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN,
            "SELECT a.id, a.k1, a.v, b.id AS b_id, b.s AS b_s FROM {t1} a LEFT JOIN {t2} b ON " + on
                + (random.nextBoolean() ? " WHERE b.s IS NULL OR a.k2 > 0" : ""),
            both);
      case 1:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN,
            "SELECT a.id, b.id AS b_id, b.k1 AS b_k1, b.d AS b_d FROM {t1} a RIGHT JOIN {t2} b ON " + on,
            both);
      case 2:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN,
            "SELECT a.id, a.k1, b.id AS b_id, b.k1 AS b_k1, coalesce(a.v, b.v) AS v FROM {t1} a FULL JOIN {t2} b ON " + on
                + (random.nextBoolean() ? " WHERE a.k2 IS NULL OR b.v > 1.00" : ""),
            both);
      case 3:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN,
            "SELECT k1, a.id, b.id AS b_id, b.ts AS b_ts FROM {t1} a FULL JOIN {t2} b USING (k1)",
            both);
      case 4:
        return new OracleDefinition(
            OracleShape.HIDDEN_KEY,
            "SELECT a.id, b.id AS b_id, b.k1 AS b_k1 FROM {t1} a FULL JOIN {t2} b ON a.k1 = b.k1",
            both);
      case 5:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN,
            (random.nextBoolean() ? "SELECT a.k1, b.s AS b_s" : "SELECT b.k1 AS b_k1, b.s AS b_s")
                + ", COUNT(*) AS n, SUM(a.v) AS v_sum, COUNT(DISTINCT b.id) AS b_ids, MIN(b.d) AS b_d_min"
                + " FROM {t1} a LEFT JOIN {t2} b ON " + on + " GROUP BY b.k1, a.k1, b.s"
                + (random.nextBoolean() ? " HAVING COUNT(*) > 1" : ""),
            both);
      case 6:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN,
            (random.nextBoolean() ? "SELECT a.k1, b.k1 AS b_k1" : "SELECT b.k1 AS b_k1, a.k1")
                + ", COUNT(a.id) AS n, AVG(b.v) AS b_v_avg FROM {t1} a FULL JOIN {t2} b ON " + on
                + (random.nextBoolean() ? " GROUP BY a.k1, b.k1" : " GROUP BY b.k1, a.k1"),
            both);
      case 7:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN,
            "SELECT a.id, a.k1, b.s AS b_s, COUNT(*) OVER (PARTITION BY a.k1) AS per_k1,"
                + " SUM(b.v) OVER (PARTITION BY a.k1) AS b_v_sum FROM {t1} a LEFT JOIN {t2} b ON " + on,
            both);
      default:
        return random.nextBoolean()
            ? new OracleDefinition(
                OracleShape.OUTER_JOIN_UNKEYED,
                "SELECT a.id, a.k1, b.id AS b_id FROM {t1} a LEFT JOIN {t2} b ON a.k2 < b.k2",
                both)
            : new OracleDefinition(
                OracleShape.OUTER_JOIN_UNKEYED,
                "SELECT b.s AS b_s, SUM(a.v) AS v_sum FROM {t1} a LEFT JOIN ({t2} b FULL JOIN {t1} c ON b.k2 = c.k2) ON "
                    + on + " GROUP BY b.s",
                both);
    }
  }

  /**
   * LEFT, RIGHT and FULL joins neither selected nor grouped by their key: grouped by the columns of
   * a side that may not match, DISTINCT, a select list without the key, a chain of two outer joins
   * reading a table twice, through a common table expression. They follow the outer join's own
   * delta rule.
   */
  private OracleDefinition outerJoinDelta(String on) {
    List<String> both = List.of("t1", "t2");
    String where = random.nextBoolean() ? " WHERE a.v > 1.00 OR b.s IS NULL" : "";
    switch (random.nextInt(9)) {
      case 6:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN_DELTA,
            "SELECT b.s AS b_s, COUNT(*) AS n, COUNT(a.id) AS a_n, SUM(a.v) AS v_sum, MIN(a.d) AS a_d_min,"
                + " COUNT(DISTINCT a.k2) AS k2s FROM {t1} a FULL JOIN {t2} b ON " + on + where + " GROUP BY b.s",
            both);
      case 7:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN_DELTA,
            random.nextBoolean()
                ? "SELECT DISTINCT a.s AS a_s, b.k2 AS b_k2 FROM {t1} a FULL JOIN {t2} b ON " + on + where
                : "SELECT a.id, a.s AS a_s, b.v AS b_v FROM {t1} a FULL JOIN {t2} b ON " + on + where,
            both);
      case 8:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN_DELTA,
            "SELECT c.s AS c_s, a.k2, COUNT(*) AS n, SUM(b.v) AS v_sum FROM {t1} a FULL JOIN {t2} b ON " + on
                + " LEFT JOIN {t1} c ON b.k2 = c.k2 GROUP BY c.s, a.k2",
            both);
      case 5:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN_DELTA,
            "WITH b AS (SELECT * FROM {t2} WHERE k2 IS NULL OR k2 < 3) SELECT b.s AS b_s, b.k2 AS b_k2, COUNT(*) AS n,"
                + " MAX(a.v) AS v_max FROM {t1} a LEFT JOIN b ON " + on + " GROUP BY b.s, b.k2",
            both);
      case 0:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN_DELTA,
            "SELECT b.s AS b_s, COUNT(*) AS n, COUNT(b.id) AS matched, SUM(a.v) AS v_sum, AVG(a.v) AS v_avg,"
                + " MIN(a.v) AS v_min, MAX(b.d) AS b_d_max, COUNT(DISTINCT a.k2) AS k2s FROM {t1} a LEFT JOIN {t2} b ON "
                + on + where + " GROUP BY b.s",
            both);
      case 1:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN_DELTA,
            "SELECT a.s AS a_s, b.k2 AS b_k2, COUNT(a.id) AS n, SUM(b.v) AS v_sum FROM {t1} a RIGHT JOIN {t2} b ON " + on
                + " GROUP BY a.s, b.k2",
            both);
      case 2:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN_DELTA,
            "SELECT DISTINCT a.k2, b.s AS b_s FROM {t1} a LEFT JOIN {t2} b ON " + on + where,
            both);
      case 3:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN_DELTA,
            "SELECT a.id, a.v, b.s AS b_s, b.d AS b_d FROM {t1} a LEFT JOIN {t2} b ON " + on + where,
            both);
      default:
        return new OracleDefinition(
            OracleShape.OUTER_JOIN_DELTA,
            "SELECT c.s AS c_s, b.s AS b_s, COUNT(*) AS n, SUM(a.v) AS v_sum FROM {t1} a LEFT JOIN {t2} b ON " + on
                + " LEFT JOIN {t1} c ON b.k2 = c.k2 GROUP BY c.s, b.s",
            both);
    }
  }

  /** " WHERE ..." with one or two predicates, one time in {@code oneIn}, otherwise "". */
  private String optionalWhere(int oneIn) {
    if (random.nextInt(oneIn) == 0) {
      return "";
    }
    String first = PREDICATES[random.nextInt(PREDICATES.length)];
    switch (random.nextInt(3)) {
      case 0:
        return " WHERE " + first + " AND " + PREDICATES[random.nextInt(PREDICATES.length)];
      case 1:
        return " WHERE (" + first + " OR " + PREDICATES[random.nextInt(PREDICATES.length)] + ")";
      default:
        return " WHERE " + first;
    }
  }

  private List<String> pick(String[] pool, int count) {
    List<String> shuffled = new ArrayList<>(List.of(pool));
    Collections.shuffle(shuffled, random);
    return new ArrayList<>(shuffled.subList(0, Math.min(count, shuffled.size())));
  }
}
