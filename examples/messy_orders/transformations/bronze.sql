-- Bronze: every raw order file, loaded once; the schema is inferred (the crawler's job) and
-- lines that do not parse are kept in _rescued_data.
CREATE STREAMING TABLE bronze_orders
AS SELECT * FROM STREAM read_files('data/orders', format => 'json');
