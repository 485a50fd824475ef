"""Pairing split updates: a before half and an after half that share a key become one UPDATE.

DataWorks writes UPDATE_BEFOR then UPDATE_AFTER with the same `sequenceId`, DataHub TUPLE two `U`
rows with the same `_sequence_id_`, DTS SharePlex `UPDATE BEFORE` / `UPDATE AFTER`. The halves may
sit anywhere in the input, so they are grouped by key (one shuffle, of the halves only). Within a
key, halves pair up in input order; a before half left without an after half is rejected with that
reason, never dropped; an after half left alone is an UPDATE without a before image.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdc_pipelines.formats.base import MESSAGES, PAIR_KEY, PRE_REJECT


def _merge(after: Column, before: Column) -> Column:
    """The after half's row with the before half's image and lineage folded in."""
    lineage = F.create_map(
        F.lit("cdc.before_source_file"),
        before["source_file"],
        F.lit("cdc.before_source_line"),
        before["source_line"].cast("string"),
        F.lit("cdc.before_raw_op"),
        before["raw_op"],
    )
    meta = F.map_concat(F.coalesce(after["meta"], F.create_map().cast("map<string,string>")), lineage)
    return after.withField("before_raw", before["before_raw"]).withField("meta", meta).withField(MESSAGES, F.lit(2))


def _input_order(left: Column, right: Column) -> Column:
    """Comparator: by file, then line (rows hold maps, which Spark cannot order by themselves)."""
    lf, rf, ll, rl = left["source_file"], right["source_file"], left["source_line"], right["source_line"]
    return F.when(lf < rf, -1).when(lf > rf, 1).when(ll < rl, -1).when(ll > rl, 1).otherwise(0)


def pair_split_updates(decoded: DataFrame) -> DataFrame:
    """Fold each before half (a row with `pair_key` and only a before image) into its after half."""
    halves = decoded.where(F.col(PAIR_KEY).isNotNull() & F.col(PRE_REJECT).isNull())
    others = decoded.where(F.col(PAIR_KEY).isNull() | F.col(PRE_REJECT).isNotNull())
    row = F.struct(*[F.col(c) for c in decoded.columns])
    grouped = halves.groupBy(PAIR_KEY).agg(F.array_sort(F.collect_list(row), _input_order).alias("_xhalves"))
    befores = F.filter("_xhalves", lambda h: h["after_raw"].isNull())
    afters = F.filter("_xhalves", lambda h: h["after_raw"].isNotNull())
    count = F.greatest(F.size(befores), F.size(afters))

    def pick(i: Column) -> Column:
        before = F.element_at(befores, i + 1)
        after = F.element_at(afters, i + 1)
        orphan = before.withField(
            "reject_reason",
            F.concat(
                before["raw_op"], F.lit(" without its matching after half (pair key "), before[PAIR_KEY], F.lit(")")
            ),
        )
        return F.when(i >= F.size(afters), orphan).when(i >= F.size(befores), after).otherwise(_merge(after, before))

    paired = grouped.select(F.explode(F.transform(F.sequence(F.lit(0), count - 1), pick)).alias("_xrow")).select(
        "_xrow.*"
    )
    return others.unionByName(paired)
