-- The training run of bin/floe's class archive, on a throwaway warehouse: the statements load the
-- classes most floe commands use (Spark SQL, Iceberg tables, a materialized view and its refresh).
CREATE NAMESPACE lake.training;
CREATE TABLE lake.training.trips (id BIGINT, city STRING, fare DOUBLE) USING iceberg;
INSERT INTO lake.training.trips VALUES (1, 'a', 10.0), (2, 'b', 20.0);
CREATE MATERIALIZED VIEW lake.training.silver AS SELECT id, upper(city) AS city, fare FROM lake.training.trips WHERE fare > 0;
DELETE FROM lake.training.trips WHERE id = 2;
REFRESH MATERIALIZED VIEW lake.training.silver;
SELECT * FROM lake.training.silver;
