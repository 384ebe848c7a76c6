package io.floe.spark.capture;

import java.util.List;
import java.util.Objects;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * The change of one Iceberg table between two snapshots: either a {@link Delta} holding it as a
 * Z-set, or the reason it cannot be captured incrementally, in which case the caller refreshes in
 * full.
 */
public sealed interface CapturedChange permits CapturedChange.Delta, CapturedChange.Unsupported {

  /**
   * The change as a Z-set.
   *
   * @param zset the table's columns (as of the newer snapshot) plus {@link ChangeCapture#WEIGHT}:
   *     one row per distinct changed row, weighted +n when it appeared n more times and −n when it
   *     disappeared n more times; never a zero weight. It is already computed (held by Spark as a
   *     local checkpoint), so reading it again does not read the table again.
   * @param kind which weights can occur
   * @param rowsScanned rows stored in the data files read to compute the change, before delete
   *     files or filters were applied: a file read whole at both snapshots counts twice, a file
   *     read once for its newly deleted positions counts once; 0 when nothing had to be read
   * @param operations the Iceberg operations of the snapshots in the range, oldest first
   */
  record Delta(Dataset<Row> zset, ChangeKind kind, long rowsScanned, List<String> operations)
      implements CapturedChange {
    public Delta {
      Objects.requireNonNull(zset, "zset");
      Objects.requireNonNull(kind, "kind");
      operations = List.copyOf(operations);
    }
  }

  /**
   * The change cannot be captured incrementally.
   *
   * @param reason why, readable by a user, e.g. to record with the full refresh it causes
   */
  record Unsupported(String reason) implements CapturedChange {
    public Unsupported {
      Objects.requireNonNull(reason, "reason");
    }
  }
}
