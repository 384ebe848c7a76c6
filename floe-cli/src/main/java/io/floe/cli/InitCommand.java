package io.floe.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.FloeException;
import io.floe.demo.data.Trip;
import io.floe.demo.data.TripsGenerator;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code floe init NAME}: scaffolds a pipeline project from the seed's ride-sharing example. */
@Command(
    name = "init",
    mixinStandardHelpOptions = true,
    versionProvider = Floe.Version.class,
    header = "Create a pipeline project from the ride-sharing example.",
    description = {
      "Create a pipeline project folder NAME from the ride-sharing example: raw trip files,",
      "a Bronze streaming table, a Silver and two Gold materialized views. Then: floe run NAME"
    })
final class InitCommand implements Callable<Integer> {
  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final List<String> TEMPLATE =
      List.of("floe.yml", "README.md", "transformations/bronze.sql", "transformations/silver.sql", "transformations/gold.sql");

  @Parameters(index = "0", paramLabel = "NAME", description = "Project name; also its folder and its namespace.")
  String name;

  @Option(names = "--dir", paramLabel = "DIR", description = "Create the folder here (default: the current folder).")
  Path parent = Paths.get("");

  @Option(names = "--trips", paramLabel = "N", defaultValue = "300", description = "Generated trips in the first raw file (default: ${DEFAULT-VALUE}).")
  int trips;

  @Override
  public Integer call() {
    if (!NAME.matcher(name).matches()) {
      throw new FloeException("Pipeline name '" + name + "' must be letters, digits and underscores, not starting with a digit");
    }
    if (trips < 1) {
      // Checked before anything is written: no half-made project to clean up. With no trip the
      // raw file is empty and the project's views have no columns to read.
      throw new FloeException("Cannot create pipeline " + name + ": --trips must be at least 1, not " + trips);
    }
    Path folder = parent.resolve(name);
    try {
      if (Files.exists(folder) && (!Files.isDirectory(folder) || Files.list(folder).findAny().isPresent())) {
        throw new FloeException("Cannot create pipeline " + name + ": " + folder + " exists and is not an empty folder");
      }
      for (String file : TEMPLATE) {
        Path target = folder.resolve(file);
        Files.createDirectories(target.getParent());
        Files.writeString(target, template(file).replace("${name}", name));
      }
      writeTrips(folder.resolve("data/trips/trips-0001.jsonl"), TripsGenerator.generate(trips, 42));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create pipeline " + name + " in " + folder, e);
    }
    System.out.printf("Created pipeline %s in %s%n  next: floe dry-run %s && floe run %s%n", name, folder.toAbsolutePath(), folder, folder);
    return 0;
  }

  private static String template(String file) throws IOException {
    try (InputStream in = InitCommand.class.getResourceAsStream("init/trips/" + file)) {
      if (in == null) {
        throw new IllegalStateException("The project template misses " + file);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** Writes trips as JSON lines, one object per trip, with the Bronze table's column names. */
  static void writeTrips(Path file, List<Trip> trips) throws IOException {
    Files.createDirectories(file.getParent());
    String[] columns =
        java.util.Arrays.stream(TripsGenerator.SCHEMA_DDL.split(",")).map(c -> c.trim().split("\\s+")[0]).toArray(String[]::new);
    ObjectMapper json = new ObjectMapper();
    try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (Trip trip : trips) {
        Map<String, Object> row = new LinkedHashMap<>();
        List<Object> values = trip.values();
        for (int i = 0; i < columns.length; i++) {
          row.put(columns[i], values.get(i));
        }
        out.write(json.writeValueAsString(row));
        out.write('\n');
      }
    }
  }
}
