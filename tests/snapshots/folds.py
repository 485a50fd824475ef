"""One day folded by either engine, as plain rows: the local engine's Arrow walk in this process, or
Spark's (`apply_day`), so one test body holds both to a behaviour."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from cdc_pipelines.snapshots import apply
from cdc_pipelines.snapshots.fold import ANOMALY, CLOSE, NET, OPEN
from cdc_pipelines.snapshots.schema import ANOMALY_COLUMNS, TABLE
from tests.snapshots.events import changes_arrow, changes_df, live_keys, live_rows

NET_COLUMNS = (*TABLE, "pk_columns", "_t", "_k", "kind", "row", "column_types", "_cdc_op", "_cdc_event_time",
               "_cdc_event_id")  # fmt: skip
OPEN_COLUMNS = (*TABLE, "pk_columns", "_t", "_k", "row", "column_types", "_cdc_op", "_cdc_event_id", "_cdc_start_at",
                "_cdc_end_at")  # fmt: skip
CLOSE_COLUMNS = (*TABLE, "_t", "_k", "_cdc_end_at")


def _value(name: str, value):
    """A value as Spark's `collect` gives it: maps as dicts, times naive in the session's zone (UTC)."""
    if name in ("row", "column_types") and value:
        return dict(value)
    return value.replace(tzinfo=None) if isinstance(value, dt.datetime) else value


def _rows(records: list[dict]) -> list[SimpleNamespace]:
    return [SimpleNamespace(**{k: _value(k, v) for k, v in r.items()}) for r in records]


def _spark_rows(frame) -> list[SimpleNamespace]:
    return _rows([r.asDict(recursive=True) for r in frame.collect()])


def fold_local(events: list[dict], previous: dict, keys=None) -> SimpleNamespace:
    effects = apply.local_effects(changes_arrow(events), keys)
    _, skipped = apply.local_tables(effects)
    rows = live_rows(previous)
    held = pa.table({c: pa.array([r[i] for r in rows], pa.string())
                     for i, c in enumerate((*TABLE, "_t", "_k", "_shard"))})  # fmt: skip
    read = []  # the live keys the fold asked for

    def live_keys(touched, truncated):
        read.append(apply.live_among(held, touched, truncated))
        return read[-1]

    day = apply.fold_local(effects, skipped, live_keys)

    def part(out: str, columns: tuple) -> list[SimpleNamespace]:
        return _rows(day.folded.filter(pc.equal(day.folded["_out"], out)).select(list(columns)).to_pylist())

    anomalies = [SimpleNamespace(**{**vars(a), "event_id": a._cdc_event_id, "op": a._cdc_op})
                 for a in part(ANOMALY, (*TABLE, "kind", "_cdc_event_id", "_cdc_op", "detail"))]  # fmt: skip
    events_applied = day.effects.filter(pc.equal(day.effects["sub"], 0))
    return SimpleNamespace(
        net=part(NET, NET_COLUMNS), opened=part(OPEN, OPEN_COLUMNS), closed=part(CLOSE, CLOSE_COLUMNS),
        anomalies=[SimpleNamespace(**{c: getattr(a, c) for c in ANOMALY_COLUMNS}) for a in anomalies],
        skipped=skipped, tables=[f.as_dict() for f in day.figures.values()], events=events_applied.num_rows,
        live_before=_rows(read[0].select([*TABLE, "_t", "_k"]).to_pylist()),
    )  # fmt: skip


def apply_day(
    previous_keys,
    changes,
    keys: Mapping[str, Sequence[str]] | None = None,
    kafka_keys: Collection[str] | bool = (),
) -> tuple[apply.Applied, list[dict]]:
    """What `changes` (one day of the canonical table, a Spark frame) do to tables whose live keys are
    `previous_keys`, folded by Spark; and the tables skipped (their row changes name no key columns: nor
    one in `keys`, nor, for the `kafka_keys` topics, in the Kafka message key), whose rows stay."""
    effects = apply.effects_frame(changes, keys, kafka_keys)
    skipped = apply.day_tables(effects)[1]
    return apply.apply_effects(effects, previous_keys, skipped), skipped


def fold_spark(spark, events: list[dict], previous: dict, keys=None) -> SimpleNamespace:
    applied, skipped = apply_day(live_keys(spark, previous), changes_df(spark, events), keys)
    _, live, _ = applied.kept  # the effects, the live keys the fold read, the fold
    try:
        return SimpleNamespace(
            net=_spark_rows(applied.net), opened=_spark_rows(applied.opened), closed=_spark_rows(applied.closed),
            anomalies=_spark_rows(applied.anomalies), skipped=skipped, tables=applied.tables,
            events=applied.events.count(), live_before=_spark_rows(live.select(*TABLE, "_t", "_k")),
        )  # fmt: skip
    finally:
        applied.release()


@pytest.fixture(params=["local", pytest.param("spark", marks=pytest.mark.spark)])
def fold_day(request):
    """Each engine's fold in turn: `fold_day(events, previous, keys=None)`."""
    if request.param == "local":
        return fold_local
    spark = request.getfixturevalue("spark")
    return lambda events, previous, keys=None: fold_spark(spark, events, previous, keys)
