"""The lake's top-level folders, named once: every stage that writes or reads the lake takes them from here.

`<lake>/changes`, `rejects` and `counts` are Delta tables by `dt`/`source_topic` (the decode's);
`targets/<format-id>/` the re-encoded messages (`_skipped` beside them: events a target cannot carry);
`snapshots/` the per-table current and history tables (their inner layout is `snapshots.store`'s);
`reports/dt=.../` the quality reports; `kafka_offsets` (Delta, by `dt`/`source_topic`) the offsets each day
of a Kafka topic read.
"""

CHANGES_DIR = "changes"
REJECTS_DIR = "rejects"
COUNTS_DIR = "counts"
TARGETS_DIR = "targets"
SKIPPED_DIR = "_skipped"
SNAPSHOTS_DIR = "snapshots"
REPORTS_DIR = "reports"
KAFKA_OFFSETS_DIR = "kafka_offsets"  # the offsets each day of a Kafka topic read (lake.kafka_offsets)
DECODED_TABLES = (CHANGES_DIR, REJECTS_DIR)
