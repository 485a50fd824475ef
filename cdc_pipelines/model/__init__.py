"""The canonical change: its fields, ops, logical types, `cdc.*` meta keys, values and schemas; and what one
day of a Kafka topic read (`kafka_offsets`), which the extract, the lake and the quality rules share; and which
of a topic's tables to keep (`table_filter`), which the catalog, the CLI and the decode share."""
