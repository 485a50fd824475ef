"""The canonical change: its fields, ops, logical types, `cdc.*` meta keys, values and schemas; and what one
day of a Kafka topic read (`kafka_offsets`), which the extract, the lake and the quality rules share."""
