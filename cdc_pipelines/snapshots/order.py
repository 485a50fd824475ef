"""The order events of one day are applied in, as Spark sort columns.

`event_time` first; then `seq`, compared as a number where it is all digits (so `10` follows `9`;
digit strings of any length compare by length, then text) and placed after every digit seq as text
otherwise; then the lineage of the message (`source_file`, `source_line`, canal's
`meta['cdc.row_index']`); then `event_id`, which is unique, so the order is total and every run
applies the same day the same way. Null times and seqs sort first: they carry no order of their own.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from cdc_pipelines import meta_keys


def row_index() -> Column:
    """The row's index inside a multi-row message (0 where the format has one row per message)."""
    index = F.try_element_at(F.col("meta"), F.lit(meta_keys.ROW_INDEX)).try_cast("long")
    return F.coalesce(index, F.lit(0))


def event_order() -> list[Column]:
    seq = F.col("seq")
    digits = seq.rlike("^[0-9]+$")
    number = F.regexp_replace(seq, "^0+(?=[0-9])", "")
    return [
        F.col("event_time").asc_nulls_first(),
        F.when(digits, F.length(number)).asc_nulls_last(),
        F.when(digits, number).asc_nulls_last(),
        seq.asc_nulls_first(),
        F.col("source_file").asc_nulls_first(),
        F.col("source_line").asc_nulls_first(),
        row_index().asc(),
        F.col("event_id").asc(),
    ]
