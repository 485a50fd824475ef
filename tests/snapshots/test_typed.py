"""Column types of a snapshot table: typed only where every value fits without loss; bad values kept as text;
a column's type only widens (`widen`: tests/snapshots/test_values.py)."""

from cdc_pipelines.snapshots.values import figure_rows, invalid_cells, spark_type
from tests.snapshots.test_values import rows_of

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


def test_types_follow_the_values():
    rows = rows_of({c: (logical, [r[c] for r in ROWS]) for c, logical in TYPES.items()}, ids="e")
    types = {column: spark_type(f) for (_, column), f in figure_rows(rows).items()}
    assert types == {
        "d": "date", "ts": "timestamp", "ts_ns": "string", "local": "timestamp_ntz", "b": "binary",
        "bad_date": "string", "n": "bigint", "huge": "string", "wide": "string", "j": "string", "u": "string",
    }  # fmt: skip
    bad = [(r["event_id"], r["detail"]) for r in invalid_cells(rows).to_pylist()]
    assert bad == [("e0", "bad_date is not DATE: 2024-02-30")]
