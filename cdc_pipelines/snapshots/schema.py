"""The snapshot datasets as Spark schemas: the `_cdc_` columns of each source table's **current** table (one row
per live key) and **history** table (one row per version of a key), after the typed source columns; the
`dt -> version` record, anomalies and DDL history. `_cdc_key` is the key's canonical text (a JSON array of its
values in `pk_columns` order): the writes match on it, whatever its columns' types became.
"""

from __future__ import annotations

from pyspark.sql import types as T

from cdc_pipelines.snapshots.effects import TABLE
from cdc_pipelines.snapshots.values import ANOMALY_COLUMNS

_TEXT = T.StringType()

CURRENT_CDC = (("_cdc_op", "string"), ("_cdc_event_time", "timestamp"), ("_cdc_event_id", "string"),
               ("_cdc_key", "string"))  # fmt: skip
HISTORY_CDC = (("_cdc_op", "string"), ("_cdc_event_id", "string"), ("_cdc_start_at", "timestamp"),
               ("_cdc_end_at", "timestamp"), ("_cdc_key", "string"))  # fmt: skip
CDC_COLUMNS = frozenset(name for name, _ in (*CURRENT_CDC, *HISTORY_CDC))

# one row per table and applied day: the versions that day's MERGEs committed, and the live rows
_COUNT = ("current_version", "history_version", "rows")
VERSIONS_SCHEMA = T.StructType(
    [T.StructField(c, T.LongType() if c in _COUNT else _TEXT) for c in (*TABLE, "current", "history", *_COUNT, "dt")]
)

# kind: update_of_missing_key, delete_of_missing_key, insert_of_existing_key, late_event, cast_failed, ddl_unread
# a late day's event that a run of the day before did not apply: its kind and detail on both engines
LATE_EVENT, LATE_DETAIL = "late_event", "arrived after a later day was applied"
ANOMALY_SCHEMA = T.StructType([*(T.StructField(c, _TEXT) for c in ANOMALY_COLUMNS), T.StructField("dt", _TEXT)])

# the event ids each day applied
APPLIED_SCHEMA = T.StructType([T.StructField("event_id", _TEXT), T.StructField("dt", _TEXT)])

DDL_COLUMNS = (*TABLE, "event_time", "seq", "event_id", "source_topic", "ddl")
# the day's DDL events; `unread`: why a statement of one could not be read (null where every one was)
DDL_SCHEMA = T.StructType(
    [T.StructField(c, T.TimestampType() if c == "event_time" else _TEXT) for c in (*DDL_COLUMNS, "unread", "dt")]
)
