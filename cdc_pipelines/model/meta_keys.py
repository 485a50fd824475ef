"""The `cdc.*` keys this project writes into an event's `meta`, in one table (as Flink's
`ReadableMetadata`), so that codecs, quality rules and lake readers spell each one the same way.

A format's own fields keep their own names in `meta`; only what the project adds has the `cdc.`
prefix. Values are text, as every `meta` value is.
"""

from __future__ import annotations

from functools import lru_cache

import orjson

PREFIX = "cdc."  # what every key here begins with, and no field of a message in `meta`
JSON_NUMBERS = "cdc.json_numbers"
CHANGED_COLUMNS = "cdc.changed_columns"
ROW_INDEX = "cdc.row_index"
ROW_COUNT = "cdc.row_count"
BEFORE_RAW_OP = "cdc.before_raw_op"
BEFORE_SOURCE_FILE = "cdc.before_source_file"
BEFORE_SOURCE_LINE = "cdc.before_source_line"
SCHEMA = "cdc.schema"
EXTRA = "cdc.extra"
EXTRA_METADATA = "cdc.extra_metadata"
BEFORE_IMAGE_FIELD = "cdc.before_image_field"
NONE_COLUMNS = "cdc.none_columns"
AVRO_VALUE_TYPES = "cdc.avro_value_types"
KAFKA_PREFIX = "cdc.kafka."
KAFKA_KEY = KAFKA_PREFIX + "key"
DUPLICATE_OF = "cdc.duplicate_of"

MEANINGS = {
    JSON_NUMBERS: "JSON array of the image columns the source wrote as JSON numbers (as text they look alike)",
    CHANGED_COLUMNS: "JSON array of the columns an UPDATE changed, as the message lists them",
    ROW_INDEX: "the row of a multi-row message this event is, from 0",
    ROW_COUNT: "how many rows the multi-row message carried",
    BEFORE_RAW_OP: "the op the before half of a paired split update was written with",
    BEFORE_SOURCE_FILE: "the file of the before half of a paired split update",
    BEFORE_SOURCE_LINE: "the line of the before half of a paired split update",
    SCHEMA: "true where a Debezium message had a Connect schema",
    EXTRA: "JSON object of the top-level fields a format does not know, each kept exact",
    EXTRA_METADATA: "JSON object of the AWS DMS metadata fields it does not know",
    BEFORE_IMAGE_FIELD: "the AWS DMS top-level field the before image came from",
    NONE_COLUMNS: "JSON array of DTS Avro columns whose value was NONE (left out of the image)",
    AVRO_VALUE_TYPES: "JSON object naming the DTS Avro union member of each column's value",
    DUPLICATE_OF: "the event id of the first delivery of the change this event delivers again",
    KAFKA_PREFIX: "prefix of the Kafka record's fields a kcat envelope gave (topic, partition, offset, ts, ...)",
}


def row_index(event: dict) -> int:
    """The event's row in its message (`meta[ROW_INDEX]`, 0 where absent)."""
    return int((event.get("meta") or {}).get(ROW_INDEX, 0))


@lru_cache(maxsize=4096)
def changed_columns_text(names: tuple[str, ...]) -> str:
    """`meta[CHANGED_COLUMNS]` of the columns an UPDATE's message lists (a table's few lists repeat)."""
    return orjson.dumps(list(names)).decode()
