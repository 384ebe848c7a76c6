package io.floe.spark.ingest;

import io.floe.FloeException;
import io.floe.sql.FileSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The format of a streaming table's files when {@code read_files} names none (neither {@code format =>} nor a
 * path's extension): the one their extensions name ({@link FileSource#formatOfName}). Files with other names do
 * not vote; with none that does, the files are JSON lines. Files of two formats in one folder are refused, since
 * one table parses all its files one way.
 */
final class FolderFormat {
  private FolderFormat() {}

  /**
   * @param table the table being loaded, for the message
   * @param folder the folder as recorded, for the message
   * @param files the files about to be loaded
   */
  static String of(String table, String folder, List<SourceFile> files) {
    Map<String, List<String>> namesByFormat = new TreeMap<>();
    for (SourceFile file : files) {
      String name = file.path().substring(file.path().lastIndexOf('/') + 1);
      FileSource.formatOfName(name).ifPresent(format -> namesByFormat.computeIfAbsent(format, f -> new ArrayList<>()).add(name));
    }
    if (namesByFormat.size() > 1) {
      String found =
          namesByFormat.entrySet().stream()
              .map(e -> e.getKey().toUpperCase(Locale.ROOT) + " files (" + examples(e.getValue()) + ")")
              .collect(Collectors.joining(" and "));
      throw new FloeException(
          "Cannot ingest into " + table + ": " + folder + " holds " + found + " and read_files names no format;"
              + " name one, e.g. read_files('" + folder + "', format => '" + namesByFormat.keySet().iterator().next()
              + "'), or keep one format per folder");
    }
    return namesByFormat.isEmpty() ? "json" : namesByFormat.keySet().iterator().next();
  }

  private static String examples(List<String> names) {
    String shown = names.stream().limit(2).collect(Collectors.joining(", "));
    return names.size() > 2 ? shown + ", ... " + names.size() + " in all" : shown;
  }
}
