package io.floe.demo.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class TripsGeneratorTest {

    private static final List<Trip> TRIPS = TripsGenerator.generate(300, 42);

    private static final Map<String, double[]> BOXES = Map.of(
            "San Francisco", new double[] {37.70, 37.82, -122.52, -122.38},
            "Austin", new double[] {30.22, 30.40, -97.80, -97.68},
            "Chicago", new double[] {41.85, 41.95, -87.70, -87.60},
            "Seattle", new double[] {47.55, 47.68, -122.40, -122.28});

    /** base, per mile, per minute. */
    private static final Map<String, double[]> RATES = Map.of(
            "UberX", new double[] {2.50, 1.75, 0.35},
            "Comfort", new double[] {3.50, 2.25, 0.45},
            "XL", new double[] {4.00, 2.50, 0.50},
            "Black", new double[] {7.00, 3.75, 0.65});

    @Test
    void sameSeedGivesTheSameTrips() {
        assertThat(TripsGenerator.generate(300, 42)).isEqualTo(TRIPS);
        assertThat(TripsGenerator.generate(300, 7)).isNotEqualTo(TRIPS);
        // A shorter run is a prefix: each trip depends only on the draws before it.
        assertThat(TripsGenerator.generate(10, 42)).isEqualTo(TRIPS.subList(0, 10));
    }

    @Test
    void generatesTheRequestedCountWithSequentialIds() {
        assertThat(TRIPS).hasSize(300);
        assertThat(TRIPS.get(0).tripId()).isEqualTo("TRIP-000001");
        assertThat(TRIPS.get(299).tripId()).isEqualTo("TRIP-000300");
        assertThat(TripsGenerator.generate(0, 42)).isEmpty();
        assertThatThrownBy(() -> TripsGenerator.generate(-1, 42)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void valuesFollowTheSchema() {
        String[] columns = TripsGenerator.SCHEMA_DDL.split(", ");
        assertThat(columns).hasSize(21);
        for (Trip trip : TRIPS) {
            List<Object> values = trip.values();
            assertThat(values).hasSize(21);
            for (int c = 0; c < columns.length; c++) {
                Object value = values.get(c);
                String type = columns[c].split(" ")[1];
                if (value == null) {
                    assertThat(columns[c]).isEqualTo("rating INT");
                    continue;
                }
                Class<?> expected = switch (type) {
                    case "STRING" -> String.class;
                    case "DOUBLE" -> Double.class;
                    case "INT" -> Integer.class;
                    default -> throw new AssertionError(type);
                };
                assertThat(value).as(columns[c]).isInstanceOf(expected);
            }
        }
        Trip first = TRIPS.get(0);
        assertThat(first.values().get(0)).isEqualTo(first.tripId());
        assertThat(first.values().get(20)).isEqualTo(first.status());
    }

    @Test
    void identifiersAndCategoriesComeFromTheTutorialsLists() {
        for (Trip trip : TRIPS) {
            assertThat(trip.driverId()).matches("DRV-\\d{4}");
            assertThat(Integer.parseInt(trip.driverId().substring(4))).isBetween(1000, 5000);
            assertThat(trip.riderId()).matches("RDR-\\d{5}");
            assertThat(BOXES).containsKey(trip.city());
            assertThat(RATES).containsKey(trip.vehicleType());
            assertThat(trip.paymentMethod()).isIn("credit_card", "debit_card", "apple_pay", "google_pay", "cash");
            assertThat(trip.status()).isIn("completed", "cancelled_rider", "cancelled_driver");
        }
        assertThat(TRIPS.stream().map(Trip::city).distinct()).hasSize(4);
        assertThat(TRIPS.stream().map(Trip::vehicleType).distinct()).hasSize(4);
    }

    @Test
    void coordinatesLieInTheCitysBoxWithSixDecimals() {
        for (Trip trip : TRIPS) {
            double[] box = BOXES.get(trip.city());
            for (double lat : new double[] {trip.pickupLat(), trip.dropoffLat()}) {
                assertThat(lat).isBetween(box[0], box[1]);
                assertThat(decimals(lat)).isLessThanOrEqualTo(6);
            }
            for (double lon : new double[] {trip.pickupLon(), trip.dropoffLon()}) {
                assertThat(lon).isBetween(box[2], box[3]);
                assertThat(decimals(lon)).isLessThanOrEqualTo(6);
            }
        }
    }

    @Test
    void faresFollowTheRateCard() {
        for (Trip trip : TRIPS) {
            double[] rate = RATES.get(trip.vehicleType());
            assertThat(trip.durationMinutes()).isBetween(5, 45);
            assertThat(trip.distanceMiles()).isBetween(1.0, 20.0);
            assertThat(decimals(trip.distanceMiles())).isLessThanOrEqualTo(1);
            assertThat(trip.surgeMultiplier()).isBetween(1.0, 2.5);
            assertThat(decimals(trip.surgeMultiplier())).isLessThanOrEqualTo(1);
            assertThat(trip.baseFare()).isEqualTo(rate[0]);
            double unrounded = (rate[0] + trip.distanceMiles() * rate[1] + trip.durationMinutes() * rate[2])
                    * trip.surgeMultiplier();
            assertThat(trip.tripFare()).isPositive().isCloseTo(unrounded, within(0.005 + 1e-9));
            assertThat(decimals(trip.tripFare())).isLessThanOrEqualTo(2);
            assertThat(trip.tipAmount()).isBetween(0.0, trip.tripFare() * 0.25 + 0.005);
            assertThat(trip.totalAmount()).isCloseTo(trip.tripFare() + trip.tipAmount(), within(0.005 + 1e-9));
            assertThat(decimals(trip.totalAmount())).isLessThanOrEqualTo(2);
        }
        // Surge (15-30% of trips by city) and tips (4 in 6) occur at about the tutorial's rates.
        long surged = TRIPS.stream().filter(t -> t.surgeMultiplier() > 1.0).count();
        assertThat(surged).isBetween(30L, 120L);
        long tipped = TRIPS.stream().filter(t -> t.tipAmount() > 0).count();
        assertThat(tipped).isBetween(150L, 260L);
    }

    @Test
    void timesSpanThreeDaysWithRushHourPeaks() {
        LocalDateTime first = LocalDateTime.of(2025, 12, 1, 0, 0);
        for (Trip trip : TRIPS) {
            assertThat(trip.tripStartTime()).matches("2025-12-0[1-3]T\\d{2}:\\d{2}:00");
            LocalDateTime start = LocalDateTime.parse(trip.tripStartTime());
            LocalDateTime end = LocalDateTime.parse(trip.tripEndTime());
            assertThat(start).isAfterOrEqualTo(first).isBefore(first.plusDays(3));
            assertThat(Duration.between(start, end).toMinutes()).isEqualTo(trip.durationMinutes());
        }
        Map<Integer, Long> byHour = TRIPS.stream()
                .collect(Collectors.groupingBy(t -> LocalDateTime.parse(t.tripStartTime()).getHour(), Collectors.counting()));
        long rush = byHour.getOrDefault(8, 0L) + byHour.getOrDefault(18, 0L);
        long night = byHour.getOrDefault(2, 0L) + byHour.getOrDefault(3, 0L);
        assertThat(rush).isGreaterThan(3 * night);
    }

    @Test
    void onlyCompletedTripsAreRated() {
        Map<String, Long> byStatus = TRIPS.stream().collect(Collectors.groupingBy(Trip::status, Collectors.counting()));
        assertThat(byStatus.get("completed")).isBetween(160L, 240L);
        for (Trip trip : TRIPS) {
            if (!trip.status().equals("completed")) {
                assertThat(trip.rating()).isNull();
            } else if (trip.rating() != null) {
                assertThat(trip.rating()).isIn(3, 4, 5);
            }
        }
        Set<Integer> ratings = TRIPS.stream()
                .map(Trip::rating)
                .filter(r -> r != null)
                .collect(Collectors.toSet());
        assertThat(ratings).containsExactlyInAnyOrder(3, 4, 5);
        assertThat(TRIPS.stream().filter(t -> t.status().equals("completed") && t.rating() == null)).isNotEmpty();
    }

    @Test
    void valuesListIsUnmodifiable() {
        assertThatThrownBy(() -> TRIPS.get(0).values().set(0, "x")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> TRIPS.add(TRIPS.get(0))).isInstanceOf(UnsupportedOperationException.class);
    }

    private static int decimals(double value) {
        return Math.max(0, new BigDecimal(Double.toString(value)).stripTrailingZeros().scale());
    }
}
