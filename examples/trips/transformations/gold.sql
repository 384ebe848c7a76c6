-- Gold: daily metrics per city and vehicle performance, both read Silver.
CREATE MATERIALIZED VIEW mv_city_daily_metrics
COMMENT 'Gold layer: Daily aggregated metrics by city'
SCHEDULE REFRESH ON CHANGE
AS
SELECT
  city, DATE(trip_start_timestamp) AS trip_date,
  COUNT(*) AS total_trips,
  COUNT(DISTINCT driver_id) AS active_drivers,
  COUNT(DISTINCT rider_id) AS active_riders,
  SUM(total_amount) AS total_revenue,
  SUM(distance_miles) AS total_distance,
  SUM(tip_amount) AS total_tips
FROM mv_trips_silver
WHERE status = 'completed'
GROUP BY city, DATE(trip_start_timestamp);

CREATE MATERIALIZED VIEW mv_vehicle_performance
COMMENT 'Gold layer: Vehicle type performance metrics'
SCHEDULE REFRESH ON CHANGE
AS
SELECT
  vehicle_type, city,
  COUNT(*) AS trip_count,
  SUM(total_amount) AS total_revenue,
  SUM(distance_miles) AS total_distance,
  SUM(tip_amount) AS total_tips
FROM mv_trips_silver
WHERE status = 'completed'
GROUP BY vehicle_type, city;
