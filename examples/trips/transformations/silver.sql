-- Silver: cleaned trips with proper types and derived columns.
CREATE MATERIALIZED VIEW mv_trips_silver
COMMENT 'Silver layer: Cleaned trip data with proper types and derived columns'
AS
SELECT
  trip_id, driver_id, rider_id, city, vehicle_type,
  pickup_lat, pickup_lon, dropoff_lat, dropoff_lon,
  CAST(trip_start_time AS TIMESTAMP) AS trip_start_timestamp,
  CAST(trip_end_time AS TIMESTAMP) AS trip_end_timestamp,
  duration_minutes, distance_miles, surge_multiplier,
  base_fare, trip_fare, tip_amount, total_amount,
  payment_method, rating, status,
  CASE WHEN distance_miles > 0 THEN total_amount / distance_miles ELSE 0 END AS revenue_per_mile,
  CASE WHEN rating >= 4 THEN 'High' WHEN rating >= 3 THEN 'Medium' ELSE 'Low' END AS rating_category
FROM trips_bronze
WHERE trip_id IS NOT NULL AND driver_id IS NOT NULL AND rider_id IS NOT NULL
  AND total_amount >= 0 AND distance_miles >= 0;
