"""The order events of one day are applied in, as one comparable Spark value.

`event_time` first; then `seq`, compared as a number where it is all digits (so `10` follows `9`;
digit strings of any length compare by length, then text) and placed after every digit seq as text
otherwise; then the lineage of the message (`source_file`, `source_line`, canal's
`meta['cdc.row_index']`); then `event_id`, which is unique, so the order is total and every run
applies the same day the same way. Null times and seqs sort first: they carry no order of their own.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from cdc_pipelines.model import meta_keys


def row_index() -> Column:
    """The row's index inside a multi-row message (0 where the format has one row per message)."""
    index = F.try_element_at(F.col("meta"), F.lit(meta_keys.ROW_INDEX)).try_cast("long")
    return F.coalesce(index, F.lit(0))


def event_position() -> Column:
    """An event's place in the order as one comparable value: a struct compares field by field, nulls
    first, so no table's events need numbering (a numbering window gathered each table's day in one
    task to sort it). Digit seqs come before other seqs through the leading flag."""
    seq = F.col("seq")
    digits = seq.rlike("^[0-9]+$")
    number = F.regexp_replace(seq, "^0+(?=[0-9])", "")
    return F.struct(
        F.col("event_time").alias("event_time"),
        F.when(digits, 0).otherwise(1).alias("text_seq"),
        F.when(digits, F.length(number)).alias("digits"),
        F.when(digits, number).alias("number"),
        seq.alias("seq"),
        F.col("source_file").alias("source_file"),
        F.col("source_line").alias("source_line"),
        row_index().alias("row_index"),
        F.col("event_id").alias("event_id"),
    )
