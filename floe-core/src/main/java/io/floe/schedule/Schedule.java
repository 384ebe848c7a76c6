package io.floe.schedule;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * When a materialized view is refreshed automatically: either at a fixed interval
 * ({@code EVERY n MINUTE(S)|HOUR(S)|DAY(S)}) or whenever one of its sources changes ({@code ON CHANGE}).
 *
 * <p>For {@link Kind#EVERY} the amount is at least 1 and the unit is {@link ChronoUnit#MINUTES},
 * {@link ChronoUnit#HOURS} or {@link ChronoUnit#DAYS}. For {@link Kind#ON_CHANGE} the amount is 0 and the
 * unit is {@code null}; use the factories {@link #every(long, ChronoUnit)} and {@link #onChange()} rather than
 * the canonical constructor.
 *
 * <p>{@link #toSql()} and {@link #parse(String)} round-trip, so the SQL form is also the storage form.
 */
public record Schedule(Kind kind, long amount, ChronoUnit unit) {

    /** The two ways a schedule can trigger a refresh. */
    public enum Kind {
        /** At a fixed interval after the previous run. */
        EVERY,
        /** When a source table of the view changes. */
        ON_CHANGE
    }

    // A schedule longer than this is almost certainly a typo, and far larger ones overflow Instant arithmetic.
    private static final Duration LONGEST_INTERVAL = Duration.ofDays(36_500);

    private static final String SYNTAX = "EVERY <n> MINUTE[S]|HOUR[S]|DAY[S] or ON CHANGE";

    public Schedule {
        Objects.requireNonNull(kind, "kind");
        if (kind == Kind.ON_CHANGE) {
            if (amount != 0 || unit != null) {
                throw new IllegalArgumentException(
                        "An ON CHANGE schedule has no interval; use Schedule.onChange() (got amount "
                                + amount + " and unit " + unit + ")");
            }
        } else {
            validateInterval(amount, unit);
        }
    }

    /**
     * A schedule that refreshes every {@code amount} {@code unit}s.
     *
     * @throws IllegalArgumentException if the unit is not MINUTES, HOURS or DAYS, the amount is below 1,
     *     or the interval is longer than 36500 days
     */
    public static Schedule every(long amount, ChronoUnit unit) {
        return new Schedule(Kind.EVERY, amount, unit);
    }

    /** A schedule that refreshes whenever a source of the view changes. */
    public static Schedule onChange() {
        return new Schedule(Kind.ON_CHANGE, 0, null);
    }

    /** The fixed interval between runs; empty for {@code ON CHANGE}. */
    public Optional<Duration> interval() {
        return kind == Kind.EVERY ? Optional.of(Duration.of(amount, unit)) : Optional.empty();
    }

    /**
     * When the next run is due, given when the last one ran: {@code lastRun + interval}.
     *
     * @throws IllegalStateException for an {@code ON CHANGE} schedule, which has no time-based next run
     */
    public Instant nextRunAfter(Instant lastRun) {
        Objects.requireNonNull(lastRun, "lastRun");
        if (kind == Kind.ON_CHANGE) {
            throw new IllegalStateException(
                    "An ON CHANGE schedule has no time-based next run; it runs when a source table changes");
        }
        return lastRun.plus(amount, unit);
    }

    /**
     * The SQL form of this schedule as written after {@code SCHEDULE REFRESH}: {@code EVERY 1 DAY},
     * {@code EVERY 2 HOURS}, {@code EVERY 30 MINUTES} or {@code ON CHANGE}.
     */
    public String toSql() {
        if (kind == Kind.ON_CHANGE) {
            return "ON CHANGE";
        }
        String singular = switch (unit) {
            case MINUTES -> "MINUTE";
            case HOURS -> "HOUR";
            default -> "DAY";
        };
        return "EVERY " + amount + " " + singular + (amount == 1 ? "" : "S");
    }

    @Override
    public String toString() {
        return toSql();
    }

    /**
     * Reads a schedule in the form {@link #toSql()} produces or as written in SQL: {@code EVERY 1 DAYS},
     * {@code every 5 minute}, {@code ON CHANGE}. Keywords and units are case-insensitive, singular or plural,
     * separated by any whitespace.
     *
     * @throws IllegalArgumentException naming the text and what was wrong with it
     */
    public static Schedule parse(String text) {
        Objects.requireNonNull(text, "schedule text");
        String trimmed = text.strip();
        String[] words = trimmed.isEmpty() ? new String[0] : trimmed.split("\\s+");
        if (words.length == 2 && words[0].equalsIgnoreCase("ON") && words[1].equalsIgnoreCase("CHANGE")) {
            return onChange();
        }
        if (words.length == 3 && words[0].equalsIgnoreCase("EVERY")) {
            long amount = parseAmount(words[1], trimmed);
            ChronoUnit unit = parseUnit(words[2], trimmed);
            try {
                return every(amount, unit);
            } catch (IllegalArgumentException e) {
                String reason = e.getMessage();
                throw new IllegalArgumentException("Invalid schedule '" + trimmed + "': "
                        + Character.toLowerCase(reason.charAt(0)) + reason.substring(1), e);
            }
        }
        throw new IllegalArgumentException("Invalid schedule '" + trimmed + "': expected " + SYNTAX);
    }

    private static long parseAmount(String word, String text) {
        if (!word.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("Invalid schedule '" + text
                    + "': expected a whole number after EVERY but found '" + word + "'");
        }
        try {
            return Long.parseLong(word);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Invalid schedule '" + text + "': the amount " + word
                    + " is too large; the longest schedule is " + LONGEST_INTERVAL.toDays() + " DAYS", e);
        }
    }

    private static ChronoUnit parseUnit(String word, String text) {
        return switch (word.toUpperCase(Locale.ROOT)) {
            case "MINUTE", "MINUTES" -> ChronoUnit.MINUTES;
            case "HOUR", "HOURS" -> ChronoUnit.HOURS;
            case "DAY", "DAYS" -> ChronoUnit.DAYS;
            default -> throw new IllegalArgumentException("Invalid schedule '" + text
                    + "': expected a time unit MINUTE(S), HOUR(S) or DAY(S) but found '" + word + "'");
        };
    }

    private static void validateInterval(long amount, ChronoUnit unit) {
        if (unit == null) {
            throw new IllegalArgumentException("An EVERY schedule needs a unit: MINUTES, HOURS or DAYS");
        }
        switch (unit) {
            case MINUTES, HOURS, DAYS -> { }
            case NANOS, MICROS, MILLIS, SECONDS -> throw new IllegalArgumentException(
                    "A schedule interval must be at least one minute but was " + amount + " " + unit.name()
                            + "; use MINUTES, HOURS or DAYS");
            default -> throw new IllegalArgumentException(
                    "Unsupported schedule unit " + unit.name() + "; use MINUTES, HOURS or DAYS");
        }
        if (amount < 1) {
            throw new IllegalArgumentException(
                    "A schedule interval must be at least one minute but was " + amount + " " + unit.name());
        }
        if (amount > LONGEST_INTERVAL.dividedBy(unit.getDuration())) {
            throw new IllegalArgumentException("A schedule interval of " + amount + " " + unit.name()
                    + " is too long; the longest schedule is " + LONGEST_INTERVAL.toDays() + " DAYS");
        }
    }
}
