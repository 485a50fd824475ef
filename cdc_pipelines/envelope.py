"""Kafka dump envelopes: the message inside each line, and the Kafka coordinates kept as lineage.

`kcat -C -J` writes one JSON object per message: `{"topic", "partition", "offset", "tstype", "ts",
"key", "payload"}`, the payload being the message text as a JSON string. Unwrapping is a native
`from_json` on the line: the payload is a JSON string, so its text comes back unchanged (the float
rewriting of `from_json` only touches number tokens, and the coordinates are integers). The
coordinates go into `meta` under `cdc.kafka.` (the `cdc.` prefix keeps encoders from writing them
into messages); a line that is no envelope becomes a reject with its own reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

ENVELOPES = ("kcat",)
KCAT_FIELDS = ("topic", "partition", "offset", "tstype", "ts", "key", "payload")
KCAT_SCHEMA = T.StructType([T.StructField(f, T.StringType()) for f in KCAT_FIELDS])
META_PREFIX = "cdc.kafka."
ENVELOPE_META = "envelope_meta"
ENVELOPE_REJECT = "envelope_reject"
ENVELOPE_LINE = "envelope_line"
_LINEAGE_KEYS = ("source_file", "source_line")


class EnvelopeError(ValueError):
    """An envelope name that is not known."""


@dataclass
class Unwrapped:
    """`lines` hold the payloads (as `value`); `lineage` the coordinates and envelope rejects per line."""

    lines: DataFrame
    lineage: DataFrame


def check_envelope(name: str | None) -> None:
    if name is not None and name not in ENVELOPES:
        raise EnvelopeError(f"unknown envelope {name!r}; known: {', '.join(ENVELOPES)}")


def unwrap(lines: DataFrame, envelope: str) -> Unwrapped:
    """Replace each line (`value`, `source_file`, `source_line`) by the payload of its envelope."""
    check_envelope(envelope)
    parsed = F.from_json(F.col("value"), KCAT_SCHEMA)
    reason = (
        F.when(F.trim(F.col("value")) == "", F.lit("empty line"))
        .when(parsed.isNull() | parsed["offset"].isNull(), F.lit("not a kcat envelope (no offset)"))
        .when(parsed["partition"].isNull(), F.lit("not a kcat envelope (no partition)"))
        .when(parsed["payload"].isNull(), F.lit("kcat envelope without a payload (tombstone)"))
    )
    coordinates = F.map_filter(
        F.create_map(*[x for f in KCAT_FIELDS[:-1] for x in (F.lit(META_PREFIX + f), parsed[f])]),
        lambda _k, v: v.isNotNull(),
    )
    staged = lines.select(
        *_LINEAGE_KEYS,
        F.col("value").alias(ENVELOPE_LINE),
        parsed["payload"].alias("payload"),
        coordinates.alias(ENVELOPE_META),
        reason.alias(ENVELOPE_REJECT),
    )
    unwrapped = staged.select(F.when(F.col(ENVELOPE_REJECT).isNull(), F.col("payload")).alias("value"), *_LINEAGE_KEYS)
    lineage = staged.select(*_LINEAGE_KEYS, ENVELOPE_LINE, ENVELOPE_META, ENVELOPE_REJECT)
    return Unwrapped(lines=unwrapped, lineage=lineage)


def attach_lineage(combined: DataFrame, lineage: DataFrame, row_index: str) -> DataFrame:
    """Decoded rows with the Kafka coordinates in `meta`; a line that was no envelope rejected whole.

    The rejected line keeps its envelope text as `value`, so the reject shows what was read.
    """
    joined = combined.join(lineage, list(_LINEAGE_KEYS), "left")
    bad = F.col(ENVELOPE_REJECT).isNotNull()
    empty = F.create_map().cast(T.MapType(T.StringType(), T.StringType()))
    meta = F.map_concat(F.coalesce(F.col("meta"), empty), F.coalesce(F.col(ENVELOPE_META), empty))
    return (
        joined.where(~bad | (F.col(row_index) == 0))
        .withColumn("reject_reason", F.coalesce(F.col(ENVELOPE_REJECT), F.col("reject_reason")))
        .withColumn("value", F.when(bad, F.col(ENVELOPE_LINE)).otherwise(F.col("value")))
        .withColumn("meta", F.when(F.size(meta) > 0, meta))
        .drop(ENVELOPE_LINE, ENVELOPE_META, ENVELOPE_REJECT)
    )
