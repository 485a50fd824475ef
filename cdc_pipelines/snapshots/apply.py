"""A day's fold run by either engine: the effect stream (`effects.day_effects`) sorted by table, key and place,
walked by `fold.fold_stream`, its output split into the frames the writes read (`Applied`). Spark runs both in
`mapInArrow` (the keys live at the start of the day joined in as `live` rows), collecting only the tables, their
TRUNCATEs and the walks' figures; the local engine (`fold_local`) over Arrow tables in this process.
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema

from cdc_pipelines.schema_changes.routes import SOURCE_TABLE_COLUMN
from cdc_pipelines.snapshots import effects as fx
from cdc_pipelines.snapshots import values
from cdc_pipelines.snapshots.fold import (
    ANOMALY,
    ANOMALY_NAMES,
    CLOSE,
    FOLD_SCHEMA,
    NET,
    OPEN,
    TALLY,
    TableFigures,
    fold_stream,
    merged_figures,
    skipped_tables,
    truncations,
)
from cdc_pipelines.snapshots.schema import ANOMALY_COLUMNS, TABLE

_KEYED = (fx.SET, fx.DEL)
# the setting of the most events (the day's changes, all topics) folded in this process; 0: Spark folds
# every day. 50,000 events with their images are some 100 MB here, the bound the plans without adaptive
# execution already keep (`run.STATIC_PLAN_MAX_EVENTS`)
MAX_EVENTS_SETTING = "cdc.snapshots.driver_fold_max_events"
DEFAULT_MAX_EVENTS = 50_000


def max_events(spark: SparkSession) -> int:
    return int(spark.conf.get(MAX_EVENTS_SETTING, str(DEFAULT_MAX_EVENTS)))


@dataclass(frozen=True)
class Applied:
    """What one day does to the snapshot tables, and the day's anomalies: `net`, per touched key its last effect
    after its table's last TRUNCATE (`kind` `set` with the row image and its `_cdc_` columns, or `del`; `_k` the
    key's text); `opened`, a row per version a `set` opened (`_cdc_start_at`, `_cdc_end_at`: null while live);
    `closed`, the keys live at the start of the day and when their open version ended; `events`, those applied;
    `tables`, each changed or truncated table's figures (`fold.TableFigures.as_dict`; a truncated table's keys not
    in `net` are removed).
    """

    net: DataFrame
    opened: DataFrame
    closed: DataFrame
    anomalies: DataFrame
    events: DataFrame
    tables: list[dict]
    # the frames Spark keeps while the day is written (persisted: the effects, the live keys read, the
    # fold), dropped by `release`
    kept: tuple[DataFrame, ...] = ()

    def release(self) -> None:
        for frame in reversed(self.kept):
            frame.unpersist()


def fold_frames(folded: DataFrame) -> dict[str, DataFrame]:
    """The fold's rows (`fold.FOLD_SCHEMA`) as `Applied`'s `net`, `opened`, `closed` and `anomalies`."""
    out = F.col("_out")
    return {
        "net": folded.where(out == NET).select(*TABLE, "pk_columns", "_t", "_k", "kind", "row", "column_types",
                                               "_cdc_op", "_cdc_event_time", "_cdc_event_id"),
        "opened": folded.where(out == OPEN).select(*TABLE, "pk_columns", "_t", "_k", "row", "column_types", "_cdc_op",
                                                   "_cdc_event_id", "_cdc_start_at", "_cdc_end_at"),
        "closed": folded.where(out == CLOSE).select(*TABLE, "_t", "_k", "_cdc_end_at"),
        "anomalies": folded.where(out == ANOMALY).select(
            *[F.col(c).alias(ANOMALY_NAMES.get(c, c)) for c in folded.columns]
        ).select(*ANOMALY_COLUMNS),
    }  # fmt: skip


def effects_frame(
    changes: DataFrame, keys: Mapping[str, Sequence[str]] | None = None, kafka_keys: Collection[str] | bool = (),
    rewrite=None,
) -> DataFrame:  # fmt: skip
    """The effect stream of `changes` (`effects.day_effects`), unsorted, as Spark rows."""
    run = functools.partial(fx.day_effects, keys=dict(keys or {}), kafka_keys=kafka_keys, rewrite=rewrite)
    return changes.select(*fx.EVENT_COLUMNS).mapInArrow(run, from_arrow_schema(fx.EFFECT_SCHEMA))


def day_tables(effects: DataFrame) -> tuple[list[tuple], list[dict]]:
    """The tables an effect stream has rows for, and those whose row changes name no key columns (skipped,
    in table order), from one aggregate: small metadata, collected."""
    rows = effects.groupBy(*TABLE).agg(F.count(F.when(F.col("kind") == fx.NOKEY, 1)).alias("n")).collect()
    no_key = {tuple(r[c] for c in TABLE): r["n"] for r in rows}
    return list(no_key), skipped_tables(no_key)


def _skipped_texts(skipped: list[dict]) -> list[str]:
    return [fx.table_text([s[c] for c in TABLE]) for s in skipped]


def apply_effects(effects: DataFrame, previous_keys: DataFrame, skipped: list[dict], routed: bool = False) -> Applied:
    """What an effect stream does to tables whose live keys are `previous_keys` (`TABLE`, `_t`, `_k`), the
    `skipped` tables left out, folded by Spark (`routed`: see `fold.fold_stream`)."""
    gone = _skipped_texts(skipped)
    effects = effects.where(~F.col("_t").isin(gone)) if gone else effects
    effects = effects.persist(StorageLevel.DISK_ONLY)
    truncates = truncations(effects.where(F.col("kind") == fx.TRUNCATE).select(*TABLE, "_pos", "event_time").toArrow())
    keyed = effects.where(F.col("kind").isin(*_KEYED))
    touched = keyed.select("_t", "_k").distinct().withColumn("_touched", F.lit(True))
    truncated_ids = [fx.table_text(t) for t in truncates]
    wanted = F.col("_touched").isNotNull() | (F.col("_t").isin(truncated_ids) if truncated_ids else F.lit(False))
    live = previous_keys.select(*TABLE, "_t", "_k", "_shard").join(touched, ["_t", "_k"], "left")
    live = live.where(wanted).drop("_touched").persist(StorageLevel.MEMORY_AND_DISK)
    # a live key's shard as its marker's image (`fold`'s `shard_key_collision`)
    image = F.when(F.col("_shard").isNotNull(), F.create_map(F.lit(SOURCE_TABLE_COLUMN), F.col("_shard")))
    markers = live.select(*TABLE, "_t", "_k", F.lit(b"").alias("_pos"), F.lit(-2).alias("sub"),
                          F.lit(fx.LIVE).alias("kind"), image.alias("after"))  # fmt: skip
    stream = keyed.unionByName(markers, allowMissingColumns=True)
    walk = functools.partial(fold_stream, truncates=truncates, routed=routed)
    folded = (
        stream.repartition("_t", "_k")
        .sortWithinPartitions("_t", "_k", "_pos", "sub")
        .mapInArrow(walk, from_arrow_schema(FOLD_SCHEMA))
        .persist(StorageLevel.DISK_ONLY)
    )
    tallies = [r["_tally"] for r in folded.where(F.col("_out") == TALLY).select("_tally").collect()]
    figures = merged_figures(tallies, truncates)
    return Applied(
        **fold_frames(folded),
        events=effects.where(F.col("sub") == 0).select(*TABLE, "_t", "dt", "op", "event_id"),
        tables=[f.as_dict() for f in figures.values()],
        kept=(effects, live, folded),
    )


def local_effects(
    changes: pa.Table, keys: Mapping[str, Sequence[str]] | None = None, kafka_keys: Collection[str] | bool = (),
    rewrite=None,
) -> pa.Table:  # fmt: skip
    """`effects_frame` of a day held in this process."""
    batches = list(fx.day_effects(changes.to_batches(), keys, kafka_keys, rewrite))
    return pa.Table.from_batches(batches, fx.EFFECT_SCHEMA)


def local_tables(effects: pa.Table) -> tuple[list[tuple], list[dict]]:
    """`day_tables` of a local effect stream."""
    no_key: dict[tuple, int] = {}
    kinds = effects.column("kind").to_pylist()
    for table, kind in zip(zip(*(effects.column(c).to_pylist() for c in TABLE), strict=True), kinds, strict=True):
        no_key[table] = no_key.get(table, 0) + (kind == fx.NOKEY)
    return list(no_key), skipped_tables(no_key)


@dataclass(frozen=True)
class LocalFold:
    """A day `fold_local` folded: the effects applied, the fold's rows and the figures."""

    effects: pa.Table
    folded: pa.Table
    figures: dict[tuple, TableFigures]


def live_among(live: pa.Table, touched: set[tuple[str, str]], truncated: set[str]) -> pa.Table:
    """The rows of `live` (`_t`, `_k`) the day can change: the touched `(_t, _k)` and every key of a table it
    truncates (its `_t` in `truncated`): what `fold_local`'s `live_keys` gives."""
    pairs = zip(live.column("_t").to_pylist(), live.column("_k").to_pylist(), strict=True)
    return live.filter(pa.array([(t, k) in touched or t in truncated for t, k in pairs], pa.bool_()))


def fold_local(
    effects: pa.Table, skipped: list[dict], live_keys: Callable[[set[tuple[str, str]], set[str]], pa.Table],
    routed: bool = False,
) -> LocalFold:  # fmt: skip
    """`apply_effects` in this process. `live_keys(touched, truncated)` gives the live keys (`TABLE`, `_t`,
    `_k`, `_shard`) among the touched `(_t, _k)` and of the truncated tables (their `_t`)."""
    gone = _skipped_texts(skipped)
    if gone:
        effects = effects.filter(pc.invert(pc.is_in(effects.column("_t"), pa.array(gone, pa.string()))))
    kinds = effects.column("kind")
    truncates = truncations(effects.filter(pc.equal(kinds, fx.TRUNCATE)))
    keyed = effects.select(["_t", "_k"]).filter(pc.is_in(kinds, pa.array(_KEYED)))
    touched = set(zip(keyed.column("_t").to_pylist(), keyed.column("_k").to_pylist(), strict=True))
    live = live_keys(touched, {fx.table_text(t) for t in truncates})
    n = live.num_rows
    markers = {f.name: pa.nulls(n, f.type) for f in effects.schema}
    markers |= {c: live.column(c).cast(pa.string()) for c in (*TABLE, "_t", "_k")}
    markers |= {"_pos": pa.array([b""] * n, pa.binary()), "sub": pa.array([-2] * n, pa.int32()),
                "kind": pa.array([fx.LIVE] * n, pa.string())}  # fmt: skip
    # a live key's shard as its marker's image (`fold`'s `shard_key_collision`)
    shards = live.column("_shard").to_pylist()
    markers["after"] = pa.array([[(SOURCE_TABLE_COLUMN, s)] if s is not None else None for s in shards],
                                effects.schema.field("after").type)  # fmt: skip
    stream = pa.concat_tables([pa.table(markers, schema=effects.schema), effects])
    # the keyed rows ordered by their light columns, the images moved once (a filter and a sort would copy twice)
    rows = pc.indices_nonzero(pc.is_in(stream.column("kind"), pa.array([fx.LIVE, *_KEYED])))
    order = [(c, "ascending") for c in ("_t", "_k", "_pos", "sub")]
    stream = stream.take(pc.take(rows, pc.sort_indices(stream.select([c for c, _ in order]).take(rows), order)))
    *rows, tally = fold_stream(stream.to_batches(), truncates, routed)  # its one `tally` row comes last
    figures = merged_figures(tally.column("_tally").to_pylist(), truncates)
    return LocalFold(effects, pa.Table.from_batches(rows, FOLD_SCHEMA), figures)


def local_frame(spark: SparkSession, rows: pa.Table, schema: str | T.StructType | None = None) -> DataFrame:
    """Local rows as a Spark frame (its types `rows`' where no `schema`); an empty table as one empty chunk
    (Spark cannot read none), any other as one chunk: Spark 4.2 drops the rows after an empty batch past the
    first (a filtered or concatenated table has them)."""
    return spark.createDataFrame(rows.combine_chunks() if rows.num_rows else rows.schema.empty_table(),
                                 schema or from_arrow_schema(rows.schema))  # fmt: skip


_OPENED_CELLS = (*TABLE, "row", "column_types", "_cdc_event_id")


def opened_rows(day: LocalFold) -> pa.Table:
    """The versions a day folded in this process opens, with what `values` reads of them."""
    return day.folded.filter(pc.equal(day.folded.column("_out"), OPEN)).select(list(_OPENED_CELLS))


def _figure_tally(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    figures = functools.reduce(values.merged, map(values.figure_rows, batches), {})
    yield pa.RecordBatch.from_pydict({"_tally": [pickle.dumps(figures)]}, pa.schema([("_tally", pa.binary())]))


def column_figures(applied: Applied) -> dict[tuple[tuple, str], values.ColumnFigures]:
    """The figures of each table and column the day's versions write (`values.figure_rows`), which decide
    its type, merged from one tally per Spark task (`opened_rows`' in this process)."""
    tallies = applied.opened.select(*_OPENED_CELLS).mapInArrow(_figure_tally, "_tally binary").collect()
    return functools.reduce(values.merged, (pickle.loads(row["_tally"]) for row in tallies), {})


def invalid_cells(applied: Applied) -> DataFrame:
    """The values the day writes that are not valid for their logical type (`values.invalid_cells`)."""
    schema = ", ".join(f"{c} string" for c in ANOMALY_COLUMNS)
    return applied.opened.select(*_OPENED_CELLS).mapInArrow(
        lambda batches: (part for batch in batches for part in values.invalid_cells(batch).to_batches()), schema
    )
