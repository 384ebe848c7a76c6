package io.floe.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ScheduleTest {

    @ParameterizedTest
    @CsvSource({
        "1, DAYS, EVERY 1 DAY",
        "2, HOURS, EVERY 2 HOURS",
        "30, MINUTES, EVERY 30 MINUTES",
        "1, MINUTES, EVERY 1 MINUTE",
        "7, DAYS, EVERY 7 DAYS"
    })
    void toSqlUsesSingularOnlyForOneAndParsesBack(long amount, ChronoUnit unit, String sql) {
        Schedule schedule = Schedule.every(amount, unit);

        assertThat(schedule.toSql()).isEqualTo(sql);
        assertThat(Schedule.parse(sql)).isEqualTo(schedule);
    }

    @Test
    void onChangeRoundTrips() {
        assertThat(Schedule.onChange().toSql()).isEqualTo("ON CHANGE");
        assertThat(Schedule.parse("ON CHANGE")).isEqualTo(Schedule.onChange());
        assertThat(Schedule.parse("  on\tchange ")).isEqualTo(Schedule.onChange());
    }

    @Test
    void parseAcceptsSqlFormsCaseInsensitively() {
        assertThat(Schedule.parse("EVERY 1 DAYS")).isEqualTo(Schedule.every(1, ChronoUnit.DAYS));
        assertThat(Schedule.parse("every 5 minute")).isEqualTo(Schedule.every(5, ChronoUnit.MINUTES));
        assertThat(Schedule.parse("  Every   3\nHours ")).isEqualTo(Schedule.every(3, ChronoUnit.HOURS));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "EVERY", "EVERY 1", "EVERY DAY", "EVERY 1 DAY NOW", "ON", "ON UPDATE",
        "SCHEDULE REFRESH EVERY 1 DAY", "1 DAY"})
    void parseRejectsOtherShapesNamingTheText(String text) {
        assertThatThrownBy(() -> Schedule.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Invalid schedule '" + text.strip() + "'");
    }

    @Test
    void parseRejectsBadUnitsAndAmounts() {
        assertThatThrownBy(() -> Schedule.parse("EVERY 2 WEEKS"))
                .hasMessage("Invalid schedule 'EVERY 2 WEEKS': "
                        + "expected a time unit MINUTE(S), HOUR(S) or DAY(S) but found 'WEEKS'");
        assertThatThrownBy(() -> Schedule.parse("EVERY 0 HOURS"))
                .hasMessage("Invalid schedule 'EVERY 0 HOURS': "
                        + "a schedule interval must be at least one minute but was 0 HOURS");
        assertThatThrownBy(() -> Schedule.parse("EVERY -1 HOURS"))
                .hasMessageContaining("expected a whole number after EVERY but found '-1'");
        assertThatThrownBy(() -> Schedule.parse("EVERY 99999999999999999999 DAYS"))
                .hasMessageContaining("is too large");
    }

    @Test
    void everyRejectsIntervalsBelowOneMinute() {
        assertThatThrownBy(() -> Schedule.every(30, ChronoUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("A schedule interval must be at least one minute but was 30 SECONDS; "
                        + "use MINUTES, HOURS or DAYS");
        assertThatThrownBy(() -> Schedule.every(0, ChronoUnit.MINUTES))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("A schedule interval must be at least one minute but was 0 MINUTES");
        assertThatThrownBy(() -> Schedule.every(-5, ChronoUnit.DAYS))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void everyRejectsUnitsOtherThanMinutesHoursAndDays() {
        assertThatThrownBy(() -> Schedule.every(1, ChronoUnit.WEEKS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Unsupported schedule unit WEEKS; use MINUTES, HOURS or DAYS");
        assertThatThrownBy(() -> Schedule.every(1, null))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void everyRejectsAbsurdlyLongIntervals() {
        assertThatThrownBy(() -> Schedule.every(Long.MAX_VALUE, ChronoUnit.DAYS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("too long");
        assertThat(Schedule.every(36_500, ChronoUnit.DAYS).interval()).contains(Duration.ofDays(36_500));
    }

    @Test
    void intervalIsEmptyOnlyForOnChange() {
        assertThat(Schedule.every(90, ChronoUnit.MINUTES).interval()).contains(Duration.ofMinutes(90));
        assertThat(Schedule.onChange().interval()).isEmpty();
    }

    @Test
    void nextRunIsLastRunPlusInterval() {
        Instant lastRun = Instant.parse("2025-03-01T23:30:00Z");

        assertThat(Schedule.every(1, ChronoUnit.DAYS).nextRunAfter(lastRun))
                .isEqualTo(Instant.parse("2025-03-02T23:30:00Z"));
        assertThat(Schedule.every(45, ChronoUnit.MINUTES).nextRunAfter(lastRun))
                .isEqualTo(Instant.parse("2025-03-02T00:15:00Z"));
    }

    @Test
    void onChangeHasNoNextRun() {
        assertThatThrownBy(() -> Schedule.onChange().nextRunAfter(Instant.EPOCH))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ON CHANGE");
    }

    @Test
    void onChangeCannotCarryAnInterval() {
        assertThatThrownBy(() -> new Schedule(Schedule.Kind.ON_CHANGE, 5, ChronoUnit.MINUTES))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
