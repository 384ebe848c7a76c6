package io.floe.demo.data;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * One ride-sharing trip of the seed data, a row of {@link TripsGenerator#SCHEMA_DDL}.
 *
 * <p>Times are ISO local date-times without zone ({@code 2025-12-02T08:05:00}), money is in
 * dollars rounded to cents, and {@code rating} is null for cancelled trips and for some completed
 * ones.
 */
public record Trip(
        String tripId,
        String driverId,
        String riderId,
        String city,
        String vehicleType,
        double pickupLat,
        double pickupLon,
        double dropoffLat,
        double dropoffLon,
        String tripStartTime,
        String tripEndTime,
        int durationMinutes,
        double distanceMiles,
        double surgeMultiplier,
        double baseFare,
        double tripFare,
        double tipAmount,
        double totalAmount,
        String paymentMethod,
        Integer rating,
        String status) {

    /**
     * The 21 column values in schema order, boxed, with {@code null} for a missing rating; ready to
     * become a Spark {@code Row}. The list is unmodifiable.
     */
    public List<Object> values() {
        return Collections.unmodifiableList(Arrays.asList(
                tripId,
                driverId,
                riderId,
                city,
                vehicleType,
                pickupLat,
                pickupLon,
                dropoffLat,
                dropoffLon,
                tripStartTime,
                tripEndTime,
                durationMinutes,
                distanceMiles,
                surgeMultiplier,
                baseFare,
                tripFare,
                tipAmount,
                totalAmount,
                paymentMethod,
                rating,
                status));
    }
}
