package io.floe.spark.oracle;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Random source tables and random changes to them, as SQL statements: table creation in one of
 * three formats, inserts (exact duplicates of earlier rows included), updates and deletes of
 * random subsets (whole groups now and then), MERGE with updates and inserts, and compaction. Keys
 * have few values and NULLs, values repeat (MIN/MAX ties), groups empty out and come back.
 */
final class SourceWorkload {
  static final String COLUMNS = "id INT, k1 STRING, k2 INT, v DECIMAL(10,2), d DOUBLE, s STRING, ts TIMESTAMP";

  /** Table properties of the four source formats, by a short name. */
  static final Map<String, String> FORMATS =
      Map.of(
          "v2-cow", "'format-version'='2'",
          "v2-mor", "'format-version'='2', " + mergeOnRead(),
          "v3-cow", "'format-version'='3'",
          "v3-mor", "'format-version'='3', " + mergeOnRead());

  private static final String[] K1 = {"'a'", "'b'", "'c'", "'A'", "CAST(NULL AS STRING)"};
  private static final String[] S = {"'x'", "'y'", "'xa'", "'a-b'", "'zz'", "CAST(NULL AS STRING)"};

  private static final String[] ROW_FILTERS = {
    "id % 3 = 0",
    "id % 4 = 1",
    "k1 = 'a'",
    "k1 = 'b'",
    "k1 IS NULL",
    "k2 IS NULL",
    "k2 = 2",
    "v IS NULL",
    "v < 1.50",
    "id BETWEEN 5 AND 12",
    "s = 'x'",
    "d > 0",
    "ts < TIMESTAMP '2024-01-02 00:00:00'",
  };

  private static final String[] ASSIGNMENTS = {
    "v = v + 1.25",
    "v = NULL",
    "v = 2.50",
    "k1 = 'b'",
    "k1 = upper(k1)",
    "k1 = NULL",
    "k2 = NULL",
    "k2 = k2 + 1",
    "k2 = 0",
    "s = 'y'",
    "s = 'xa'",
    "d = d + 0.5",
    "d = -d",
    "ts = ts + INTERVAL 1 DAY",
  };

  private final Random random;
  private final Map<String, List<String>> insertedRows = new HashMap<>();

  SourceWorkload(Random random) {
    this.random = random;
  }

  private static String mergeOnRead() {
    return "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'";
  }

  /** One of the keys of {@link #FORMATS}. */
  String randomFormat() {
    List<String> names = List.of("v2-cow", "v2-mor", "v3-cow", "v3-mor");
    return names.get(random.nextInt(names.size()));
  }

  /** Unpartitioned two times in three, otherwise partitioned by a key, a bucket of id or the day. */
  String randomPartitioning() {
    String[] partitionings = {"", "", "", "", "", "k1", "bucket(4, id)", "days(ts)"};
    return partitionings[random.nextInt(partitionings.length)];
  }

  String createTable(String table, String format, String partitioning) {
    return "CREATE TABLE " + table + " (" + COLUMNS + ") USING iceberg"
        + (partitioning.isEmpty() ? "" : " PARTITIONED BY (" + partitioning + ")")
        + " TBLPROPERTIES (" + FORMATS.get(format) + ")";
  }

  /** An INSERT of {@code count} rows, some of them exact copies of rows inserted before. */
  String insert(String table, int count) {
    List<String> known = insertedRows.computeIfAbsent(table, t -> new ArrayList<>());
    List<String> rows = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String row = !known.isEmpty() && random.nextInt(4) == 0 ? known.get(random.nextInt(known.size())) : randomRow(randomId());
      rows.add(row);
    }
    known.addAll(rows);
    return "INSERT INTO " + table + " VALUES " + String.join(", ", rows);
  }

  /** One random change of {@code table}: {@code qualifiedName} is its name with the catalog, for CALL. */
  String randomChange(String table, String qualifiedName) {
    int choice = random.nextInt(100);
    if (choice < 30) {
      return insert(table, 1 + random.nextInt(6));
    }
    if (choice < 52) {
      List<String> assignments = pickDistinctColumns(1 + random.nextInt(2));
      return "UPDATE " + table + " SET " + String.join(", ", assignments) + " WHERE " + rowFilter();
    }
    if (choice < 72) {
      return "DELETE FROM " + table + " WHERE " + rowFilter();
    }
    if (choice < 90) {
      return merge(table);
    }
    return "CALL lake.system.rewrite_data_files(table => '" + qualifiedName + "', options => map('rewrite-all','true'))";
  }

  /** MERGE of a few rows with distinct ids: matched rows are updated (or deleted), others inserted. */
  private String merge(String table) {
    Set<Integer> ids = new LinkedHashSet<>();
    int count = 1 + random.nextInt(4);
    while (ids.size() < count) {
      ids.add(randomId());
    }
    List<String> rows = new ArrayList<>();
    ids.forEach(id -> rows.add(randomRow(id)));
    insertedRows.computeIfAbsent(table, t -> new ArrayList<>()).addAll(rows);
    String update =
        random.nextBoolean()
            ? "UPDATE SET t.k1 = src.k1, t.v = src.v, t.s = src.s"
            : "UPDATE SET t.k2 = src.k2, t.d = src.d, t.ts = src.ts";
    String delete = random.nextInt(4) == 0 ? " WHEN MATCHED AND src.k2 IS NULL THEN DELETE" : "";
    return "MERGE INTO " + table + " t USING (SELECT * FROM VALUES " + String.join(", ", rows)
        + " AS src(id, k1, k2, v, d, s, ts)) src ON t.id = src.id" + delete
        + " WHEN MATCHED THEN " + update + " WHEN NOT MATCHED THEN INSERT *";
  }

  private String rowFilter() {
    String first = ROW_FILTERS[random.nextInt(ROW_FILTERS.length)];
    return random.nextInt(3) == 0 ? first + " AND " + ROW_FILTERS[random.nextInt(ROW_FILTERS.length)] : first;
  }

  /** Assignments to distinct columns (an UPDATE may set each column once). */
  private List<String> pickDistinctColumns(int count) {
    List<String> assignments = new ArrayList<>();
    Set<String> columns = new LinkedHashSet<>();
    while (assignments.size() < count) {
      String assignment = ASSIGNMENTS[random.nextInt(ASSIGNMENTS.length)];
      if (columns.add(assignment.substring(0, assignment.indexOf(' ')))) {
        assignments.add(assignment);
      }
    }
    return assignments;
  }

  private int randomId() {
    return 1 + random.nextInt(30);
  }

  private String randomRow(int id) {
    String k2 = random.nextInt(6) == 0 ? "CAST(NULL AS INT)" : String.valueOf(random.nextInt(4));
    String v =
        random.nextInt(5) == 0
            ? "CAST(NULL AS DECIMAL(10,2))"
            : "CAST(" + (random.nextInt(24) / 4.0) + " AS DECIMAL(10,2))";
    String d = random.nextInt(8) == 0 ? "CAST(NULL AS DOUBLE)" : "CAST(" + ((random.nextInt(17) - 8) / 4.0) + " AS DOUBLE)";
    String ts =
        random.nextInt(10) == 0
            ? "CAST(NULL AS TIMESTAMP)"
            : String.format(
                "TIMESTAMP '2024-01-0%d %02d:%02d:00'", 1 + random.nextInt(3), random.nextInt(24), 15 * random.nextInt(4));
    return "(" + id + ", " + K1[random.nextInt(K1.length)] + ", " + k2 + ", " + v + ", " + d + ", "
        + S[random.nextInt(S.length)] + ", " + ts + ")";
  }
}
