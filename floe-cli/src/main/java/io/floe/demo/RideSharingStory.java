package io.floe.demo;

import io.floe.demo.data.Trip;
import io.floe.demo.data.TripsGenerator;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;

/**
 * The ride-sharing medallion pipeline of the "medallion architecture with Iceberg materialized
 * views" blog post: Bronze trips, a Silver MV, two Gold MVs on top of it, then an INSERT, a MERGE
 * and a DELETE in Bronze that reach Gold through refreshes. The SQL is the post's, with the catalog
 * name changed.
 */
final class RideSharingStory {
  static final String NAMESPACE = "urbanride";

  private final DemoConsole console;
  private final String catalog;

  RideSharingStory(DemoConsole console, String catalog) {
    this.console = console;
    this.catalog = catalog;
  }

  private String db() {
    return catalog + "." + NAMESPACE;
  }

  void tell() {
    console.heading("Story 1: ride-sharing medallion pipeline (Bronze -> Silver -> Gold)");
    console.run("CREATE NAMESPACE IF NOT EXISTS " + db());
    List<Trip> trips = TripsGenerator.generate(300, 42);
    List<Row> rows = new ArrayList<>();
    for (Trip trip : trips) {
      rows.add(RowFactory.create(trip.values().toArray()));
    }
    Dataset<Row> df = console.spark().createDataFrame(rows, StructType.fromDDL(TripsGenerator.SCHEMA_DDL));
    try {
      df.writeTo(db() + ".trips_bronze").createOrReplace();
    } catch (Exception e) {
      throw new IllegalStateException("Cannot create " + db() + ".trips_bronze: " + e.getMessage(), e);
    }
    console.say("Generated 300 trips (seed 42) and wrote them to Bronze table " + db() + ".trips_bronze");

    console.run(
        "SELECT COUNT(*) as total_trips, COUNT(DISTINCT city) as cities,\n"
            + "COUNT(DISTINCT vehicle_type) as vehicle_types,\n"
            + "MIN(trip_start_time) as earliest, MAX(trip_start_time) as latest\n"
            + "FROM "
            + db()
            + ".trips_bronze");

    console.say("\nSilver: one SQL statement cleans, types and derives columns.");
    console.run(
        "CREATE MATERIALIZED VIEW IF NOT EXISTS "
            + db()
            + ".mv_trips_silver\n"
            + "COMMENT 'Silver layer: Cleaned trip data with proper types and derived columns'\n"
            + "SCHEDULE REFRESH EVERY 1 DAY\n"
            + "AS\n"
            + "SELECT\n"
            + "trip_id, driver_id, rider_id, city, vehicle_type,\n"
            + "pickup_lat, pickup_lon, dropoff_lat, dropoff_lon,\n"
            + "CAST(trip_start_time AS TIMESTAMP) as trip_start_timestamp,\n"
            + "CAST(trip_end_time AS TIMESTAMP) as trip_end_timestamp,\n"
            + "duration_minutes, distance_miles, surge_multiplier,\n"
            + "base_fare, trip_fare, tip_amount, total_amount,\n"
            + "payment_method, rating, status,\n"
            + "CASE WHEN distance_miles > 0 THEN total_amount / distance_miles ELSE 0 END as revenue_per_mile,\n"
            + "CASE WHEN rating >= 4 THEN 'High' WHEN rating >= 3 THEN 'Medium' ELSE 'Low' END as rating_category\n"
            + "FROM "
            + db()
            + ".trips_bronze\n"
            + "WHERE trip_id IS NOT NULL AND driver_id IS NOT NULL AND rider_id IS NOT NULL\n"
            + "AND total_amount >= 0 AND distance_miles >= 0");
    console.run(
        "SELECT trip_id, city, vehicle_type, total_amount,\n"
            + "ROUND(revenue_per_mile, 2) as rev_per_mile, rating_category\n"
            + "FROM "
            + db()
            + ".mv_trips_silver LIMIT 5");

    console.say("\nGold: two MVs read the Silver MV (MVs over an MV).");
    console.run(
        "CREATE MATERIALIZED VIEW IF NOT EXISTS "
            + db()
            + ".mv_city_daily_metrics\n"
            + "COMMENT 'Gold layer: Daily aggregated metrics by city'\n"
            + "SCHEDULE REFRESH EVERY 1 DAY\n"
            + "AS\n"
            + "SELECT\n"
            + "city, DATE(trip_start_timestamp) as trip_date,\n"
            + "COUNT(*) as total_trips,\n"
            + "COUNT(DISTINCT driver_id) as active_drivers,\n"
            + "COUNT(DISTINCT rider_id) as active_riders,\n"
            + "SUM(total_amount) as total_revenue,\n"
            + "SUM(distance_miles) as total_distance,\n"
            + "SUM(tip_amount) as total_tips\n"
            + "FROM "
            + db()
            + ".mv_trips_silver\n"
            + "WHERE status = 'completed'\n"
            + "GROUP BY city, DATE(trip_start_timestamp)");
    console.run(
        "CREATE MATERIALIZED VIEW IF NOT EXISTS "
            + db()
            + ".mv_vehicle_performance\n"
            + "COMMENT 'Gold layer: Vehicle type performance metrics'\n"
            + "SCHEDULE REFRESH EVERY 1 DAY\n"
            + "AS\n"
            + "SELECT\n"
            + "vehicle_type, city,\n"
            + "COUNT(*) as trip_count,\n"
            + "SUM(total_amount) as total_revenue,\n"
            + "SUM(distance_miles) as total_distance,\n"
            + "SUM(tip_amount) as total_tips\n"
            + "FROM "
            + db()
            + ".mv_trips_silver\n"
            + "WHERE status = 'completed'\n"
            + "GROUP BY vehicle_type, city");
    console.run("SHOW MATERIALIZED VIEWS IN " + db());
    console.run(
        "SELECT city, trip_date, total_trips, active_drivers,\n"
            + "ROUND(total_revenue, 2) as revenue,\n"
            + "ROUND(total_revenue / total_trips, 2) as avg_per_trip\n"
            + "FROM "
            + db()
            + ".mv_city_daily_metrics\n"
            + "ORDER BY trip_date DESC, revenue DESC LIMIT 15");
    console.run(
        "SELECT vehicle_type, city, trip_count,\n"
            + "ROUND(total_revenue, 2) as revenue,\n"
            + "ROUND(total_revenue / trip_count, 2) as avg_per_trip\n"
            + "FROM "
            + db()
            + ".mv_vehicle_performance\n"
            + "ORDER BY revenue DESC");

    console.say("\nChange propagation: INSERT three trips into Bronze, then refresh layer by layer.");
    // The post leaves Portland unquoted, which no SQL engine accepts; it is quoted here.
    console.run(
        "INSERT INTO "
            + db()
            + ".trips_bronze VALUES\n"
            + "('DEMO_TRIP_001', 'DRIVER_999', 'RIDER_888', 'Seattle', 'UberX',\n"
            + "47.6062, -122.3321, 47.6205, -122.3493,\n"
            + "'2024-12-15 14:30:00', '2024-12-15 14:50:00',\n"
            + "20, 5.2, 1.0, 10.0, 15.0, 3.0, 18.0, 'credit_card', 5, 'completed'),\n"
            + "('DEMO_TRIP_002', 'DRIVER_888', 'RIDER_777', 'Seattle', 'XL',\n"
            + "47.6101, -122.3300, 47.6550, -122.3080,\n"
            + "'2024-12-15 15:00:00', '2024-12-15 15:35:00',\n"
            + "35, 8.5, 1.5, 15.0, 30.0, 5.0, 35.0, 'cash', 4, 'completed'),\n"
            + "('DEMO_TRIP_003', 'DRIVER_777', 'RIDER_666', 'Portland', 'Comfort',\n"
            + "30.2672, -97.7431, 30.2800, -97.7400,\n"
            + "'2024-12-15 16:00:00', '2024-12-15 16:15:00',\n"
            + "15, 3.0, 1.0, 8.0, 12.0, 2.0, 14.0, 'credit_card', 5, 'completed')");
    console.say("Bronze moved, so every layer above it is now stale:");
    console.run("SHOW MATERIALIZED VIEWS IN " + db());
    console.run("EXPLAIN REFRESH MATERIALIZED VIEW " + db() + ".mv_trips_silver");
    refresh("mv_trips_silver");
    console.run(
        "SELECT trip_id, city, total_amount, ROUND(revenue_per_mile, 2) as rev_per_mile, rating_category\n"
            + "FROM "
            + db()
            + ".mv_trips_silver\n"
            + "WHERE trip_id LIKE 'DEMO_TRIP_%' ORDER BY trip_id");
    refresh("mv_city_daily_metrics");
    refresh("mv_vehicle_performance");
    showDemoDay();

    console.say("\nUPDATE through MERGE: DEMO_TRIP_002 gets rating 5 and a $20 tip.");
    console.run(
        "MERGE INTO "
            + db()
            + ".trips_bronze AS target\n"
            + "USING (SELECT 'DEMO_TRIP_002' as trip_id, 5 as new_rating, 20.0 as new_tip) AS source\n"
            + "ON target.trip_id = source.trip_id\n"
            + "WHEN MATCHED THEN UPDATE SET\n"
            + "target.rating = source.new_rating,\n"
            + "target.tip_amount = source.new_tip,\n"
            + "target.total_amount = target.trip_fare + source.new_tip");
    refresh("mv_trips_silver");
    console.run(
        "SELECT trip_id, rating, rating_category, tip_amount, total_amount,\n"
            + "ROUND(revenue_per_mile, 2) as rev_per_mile\n"
            + "FROM "
            + db()
            + ".mv_trips_silver WHERE trip_id = 'DEMO_TRIP_002'");
    refresh("mv_city_daily_metrics");
    showDemoDay();

    console.say("\nDELETE: DEMO_TRIP_003 is removed from Bronze; the deletion reaches Gold too.");
    console.run("DELETE FROM " + db() + ".trips_bronze WHERE trip_id = 'DEMO_TRIP_003'");
    refresh("mv_trips_silver");
    console.run("EXPLAIN REFRESH MATERIALIZED VIEW " + db() + ".mv_city_daily_metrics");
    refresh("mv_city_daily_metrics");
    refresh("mv_vehicle_performance");
    showDemoDay();
    console.run("SHOW MATERIALIZED VIEWS IN " + db());
  }

  private void refresh(String mv) {
    console.run("REFRESH MATERIALIZED VIEW " + db() + "." + mv);
  }

  private void showDemoDay() {
    console.run(
        "SELECT city, trip_date, total_trips, ROUND(total_revenue, 2) as revenue\n"
            + "FROM "
            + db()
            + ".mv_city_daily_metrics\n"
            + "WHERE trip_date = '2024-12-15' ORDER BY city");
  }
}
