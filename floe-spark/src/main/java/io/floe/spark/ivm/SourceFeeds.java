package io.floe.spark.ivm;


import io.floe.ErrorMessages;
import io.floe.spark.capture.CapturedChange;
import io.floe.spark.capture.ChangeFeed;
import io.floe.spark.refresh.Source;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.classic.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change feeds of sources that are MVs of plain rows matched by value ({@link ChangeFeed}):
 * which are kept, opened for a reader, and read instead of the source's storage files.
 */
public final class SourceFeeds {
  private static final Logger LOG = LoggerFactory.getLogger(SourceFeeds.class);

  private SourceFeeds() {}

  /**
   * The change of a source MV with {@link StorageLayout#ROWS} storage from the feed its refreshes
   * recorded, when the feed holds the whole range; reading it costs the change's size, not that of
   * the storage files it touched.
   */
  static Optional<CapturedChange.Delta> fromFeed(SparkSession spark, Source source, Long from, long to) {
    if (!recordsFeed(source, from)) {
      return Optional.empty();
    }
    return ChangeFeed.capture(spark, source.table(), IncrementalRefresh.sparkName(source), from, to, StorageLayout.COUNT);
  }

  /**
   * Whether the change of {@code source} after {@code from} up to {@code to} is read from its
   * change feed (what {@code EXPLAIN REFRESH} shows); reads table metadata only.
   */
  public static boolean readsFromFeed(Source source, Long from, long to) {
    return recordsFeed(source, from) && ChangeFeed.covers(source.table(), from, to);
  }

  /**
   * Opens the change feed of each source that is an MV with {@link StorageLayout#ROWS} storage, so
   * that its refreshes record their changes for this reader from now on ({@link ChangeFeed}). A
   * change the source committed before it was opened is read from its storage files, and so is
   * every change of a source whose feed cannot be opened (a reader not allowed to write to the
   * source's storage table): that costs time, not correctness, so it does not fail the refresh and
   * is returned as a warning instead.
   */
  public static List<String> openFeeds(List<Source> sources) {
    List<String> warnings = new ArrayList<>();
    for (Source source : sources) {
      if (keepsFeed(source)) {
        try {
          ChangeFeed.open(source.table());
        } catch (RuntimeException e) {
          LOG.warn("Cannot open the change feed of {}", source.name(), e);
          warnings.add("cannot open the change feed of " + source.name() + " (" + ErrorMessages.firstLine(e.getMessage())
              + "), so its changes are read from its storage files");
        }
      }
    }
    return warnings;
  }

  /** Whether the source is an MV whose refreshes record a change feed, and a recorded snapshot to read it from. */
  private static boolean recordsFeed(Source source, Long from) {
    return from != null && keepsFeed(source);
  }

  /**
   * Whether the source is an MV with {@link StorageLayout#ROWS} storage whose rows are matched by
   * value: one with a change feed for its readers. The refreshes of one whose rows are keyed by
   * row lineage ({@link RowLineage}) know a removed row by its id alone, not by the values a
   * reader needs: its readers read its storage files for the columns they use instead.
   */
  private static boolean keepsFeed(Source source) {
    return source.materializedView().map(m -> m.layout() == StorageLayout.ROWS).orElse(false)
        && !source.snapshot().map(s -> RowLineage.keys(source.table(), s)).orElse(false);
  }
}
