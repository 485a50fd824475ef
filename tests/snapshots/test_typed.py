"""Column types of a snapshot table: typed only where every value fits without loss; bad values kept as text;
a column's type only widens (`widen`: tests/snapshots/test_values.py)."""

from cdc_pipelines.snapshots.typed import column_figures, invalid_cells, spark_type

IMAGES = (
    "db string, db_schema string, table_name string, row map<string,string>, column_types map<string,string>, "
    "_cdc_event_id string"
)

TYPES = {
    "d": "DATE", "ts": "TIMESTAMP", "ts_ns": "TIMESTAMP", "local": "DATETIME", "b": "BYTES", "bad_date": "DATE",
    "n": "INT", "huge": "INT", "wide": "DECIMAL", "j": "JSON", "u": "UNKNOWN",
}  # fmt: skip
ROWS = [
    {"d": "2024-02-29", "ts": "2020-11-24T16:01:02.012345Z", "ts_ns": "2020-11-24T16:01:02.012345678Z",
     "local": "2024-01-01 10:00:00.5", "b": "AAEC", "bad_date": "2024-02-30", "n": "-5", "huge": "1" * 39,
     "wide": "1" * 30 + "." + "2" * 9, "j": '{"a": 1}', "u": "x"},
    {"d": None, "ts": "2020-11-24T16:01:02.000000000Z", "ts_ns": None, "local": "2024-01-01 10:00:00",
     "b": "", "bad_date": "2024-01-01", "n": "9223372036854775807", "huge": "2", "wide": "0.5", "j": None, "u": None},
]  # fmt: skip


def test_types_follow_the_values(spark):
    state = spark.createDataFrame([("db", None, "t", r, TYPES, f"e{i}") for i, r in enumerate(ROWS)], IMAGES)
    types = {r["column"]: spark_type(r) for r in column_figures(state).collect()}
    assert types == {
        "d": "date", "ts": "timestamp", "ts_ns": "string", "local": "timestamp_ntz", "b": "binary",
        "bad_date": "string", "n": "bigint", "huge": "string", "wide": "string", "j": "string", "u": "string",
    }  # fmt: skip
    bad = [(r.event_id, r.detail) for r in invalid_cells(state).collect()]
    assert bad == [("e0", "bad_date is not DATE: 2024-02-30")]
