-- Bronze: every raw trip file in data/trips, each loaded exactly once.
CREATE STREAMING TABLE trips_bronze
AS SELECT * FROM STREAM read_files('data/trips', format => 'json');
