package io.floe.demo.data;

import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * Deterministic ride-sharing trips, a Java port of the ride-sharing tutorial's Python generator.
 *
 * <p>Trips fall in four cities over 2025-12-01 to 2025-12-03, with rush-hour peaks, a city-specific
 * chance of surge pricing, fares from per-vehicle base, per-mile and per-minute rates, and one
 * trip in three cancelled. The same {@code count} and {@code seed} always give the same list; the
 * values differ from the Python original (different random generator) but the shape, counts and
 * distributions are the same.
 */
public final class TripsGenerator {

    /** Spark SQL DDL of the trips table; column order matches {@link Trip#values()}. */
    public static final String SCHEMA_DDL = "trip_id STRING, driver_id STRING, rider_id STRING, city STRING, "
            + "vehicle_type STRING, pickup_lat DOUBLE, pickup_lon DOUBLE, dropoff_lat DOUBLE, dropoff_lon DOUBLE, "
            + "trip_start_time STRING, trip_end_time STRING, duration_minutes INT, distance_miles DOUBLE, "
            + "surge_multiplier DOUBLE, base_fare DOUBLE, trip_fare DOUBLE, tip_amount DOUBLE, "
            + "total_amount DOUBLE, payment_method STRING, rating INT, status STRING";

    /** A city's bounding box and how often its trips are surge priced. */
    private record City(String name, double latMin, double latMax, double lonMin, double lonMax, double surgeProbability) {}

    /** A vehicle type's fare: base plus per mile plus per minute, in dollars. */
    private record Rate(String vehicleType, double base, double perMile, double perMinute) {}

    private static final List<City> CITIES = List.of(
            new City("San Francisco", 37.70, 37.82, -122.52, -122.38, 0.3),
            new City("Austin", 30.22, 30.40, -97.80, -97.68, 0.15),
            new City("Chicago", 41.85, 41.95, -87.70, -87.60, 0.2),
            new City("Seattle", 47.55, 47.68, -122.40, -122.28, 0.25));

    private static final List<Rate> VEHICLES = List.of(
            new Rate("UberX", 2.50, 1.75, 0.35),
            new Rate("Comfort", 3.50, 2.25, 0.45),
            new Rate("XL", 4.00, 2.50, 0.50),
            new Rate("Black", 7.00, 3.75, 0.65));

    private static final List<String> PAYMENT_METHODS =
            List.of("credit_card", "debit_card", "apple_pay", "google_pay", "cash");

    /** Two in three trips complete. */
    private static final List<String> STATUSES = List.of(
            "completed", "completed", "completed", "completed", "cancelled_rider", "cancelled_driver");

    private static final List<Double> TIP_SHARES = List.of(0.0, 0.0, 0.1, 0.15, 0.2, 0.25);

    /** Ratings of completed trips; null is a rider who did not rate. */
    private static final List<Integer> RATINGS = Collections.unmodifiableList(Arrays.asList(null, 3, 4, 4, 5, 5, 5));

    /** Relative trip count per hour of day 0..23: morning and evening rush hours. */
    private static final int[] HOUR_WEIGHTS = {1, 1, 1, 1, 1, 2, 4, 8, 10, 8, 6, 5, 6, 5, 5, 5, 6, 8, 10, 8, 6, 4, 2, 1};

    private static final LocalDateTime FIRST_DAY = LocalDateTime.of(2025, 12, 1, 0, 0);

    /** Python's {@code datetime.isoformat()}: always prints the seconds, unlike LocalDateTime.toString(). */
    private static final DateTimeFormatter ISO_SECONDS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss");

    private TripsGenerator() {}

    /**
     * Generates {@code count} trips with ids {@code TRIP-000001} upwards.
     *
     * @throws IllegalArgumentException if {@code count} is negative
     */
    public static List<Trip> generate(int count, long seed) {
        if (count < 0) {
            throw new IllegalArgumentException("Negative trip count: " + count);
        }
        PythonRandom random = new PythonRandom(seed);
        List<Trip> trips = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            trips.add(trip(i, random));
        }
        return List.copyOf(trips);
    }

    /** One trip; the draws happen in the order of the Python original. */
    private static Trip trip(int index, PythonRandom random) {
        City city = random.choice(CITIES);
        Rate vehicle = random.choice(VEHICLES);
        int duration = random.randint(5, 45);
        double distance = PythonRound.round(random.uniform(1.0, 20.0), 1);
        double surge = random.random() < city.surgeProbability()
                ? PythonRound.round(random.uniform(1.0, 2.5), 1)
                : 1.0;
        double fare = PythonRound.round(
                (vehicle.base() + distance * vehicle.perMile() + duration * vehicle.perMinute()) * surge, 2);
        double tip = PythonRound.round(fare * random.choice(TIP_SHARES), 2);
        String status = random.choice(STATUSES);
        int day = random.randint(0, 2);
        int hour = random.weightedIndex(HOUR_WEIGHTS);
        LocalDateTime start = FIRST_DAY.plusDays(day).plusHours(hour).plusMinutes(random.randint(0, 59));

        String tripId = String.format(Locale.ROOT, "TRIP-%06d", index + 1);
        String driverId = "DRV-" + random.randint(1000, 5000);
        String riderId = "RDR-" + random.randint(10000, 99999);
        double pickupLat = PythonRound.round(random.uniform(city.latMin(), city.latMax()), 6);
        double pickupLon = PythonRound.round(random.uniform(city.lonMin(), city.lonMax()), 6);
        double dropoffLat = PythonRound.round(random.uniform(city.latMin(), city.latMax()), 6);
        double dropoffLon = PythonRound.round(random.uniform(city.lonMin(), city.lonMax()), 6);
        double total = PythonRound.round(fare + tip, 2);
        String payment = random.choice(PAYMENT_METHODS);
        Integer rating = status.equals("completed") ? random.choice(RATINGS) : null;

        return new Trip(
                tripId,
                driverId,
                riderId,
                city.name(),
                vehicle.vehicleType(),
                pickupLat,
                pickupLon,
                dropoffLat,
                dropoffLon,
                ISO_SECONDS.format(start),
                ISO_SECONDS.format(start.plusMinutes(duration)),
                duration,
                distance,
                surge,
                vehicle.base(),
                fare,
                tip,
                total,
                payment,
                rating,
                status);
    }
}
