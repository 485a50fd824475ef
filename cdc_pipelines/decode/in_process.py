"""A small local extract decoded and committed in this process: no JVM for a quiet day.

A Spark session's start and Delta's first jobs cost 15-20 s however few lines a day holds, and most
days of a whole-database topic are small. So an extract of at most `max_bytes` on local disk, going to a
local lake, is decoded by the same per-line functions the Spark tasks run (`decode.local`), its
redeliveries marked by the same identity (`delivery.DeliveryIdentity.exact`, what
`redeliveries.find_duplicates` compares), its counts checked the same way, and its partitions of
`changes`, `rejects` and the run counts replaced with delta-rs (`lake.delta_rs`). Larger inputs go to a
pool of processes (`decode.pool`); Kafka, table filters, a catalog database and storage other than local
disk go through Spark.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow as pa

from cdc_pipelines.decode.delivery import DeliveryIdentity
from cdc_pipelines.decode.local import decoded_counts, decoded_paths
from cdc_pipelines.decode.runner import TABLE_PROPERTIES, check_message_counts, rows_to_batch
from cdc_pipelines.extract.files import list_input_files
from cdc_pipelines.formats import get_codec
from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.layout import CHANGES_DIR, COUNTS_DIR, REJECTS_DIR
from cdc_pipelines.lake.run_counts import COUNTS_SCHEMA
from cdc_pipelines.model.canonical import MESSAGE_COUNTS, PARTITION_COLUMNS
from cdc_pipelines.model.meta_keys import DUPLICATE_OF, ROW_INDEX
from cdc_pipelines.model.schema import CANONICAL_SCHEMA, REJECTS_SCHEMA
from cdc_pipelines.model.table_filter import TableFilter
from cdc_pipelines.runtime.session import asks_for_spark
from cdc_pipelines.runtime.storage import local_path

# the setting (`--conf` or CDC_SPARK_CONF) of the largest extract decoded in process; 0 turns it off.
# 8 MiB is about 18,000 canal messages, 1-2 s of one core: a Spark session costs 15-20 s before its first row
MAX_BYTES_SETTING = "cdc.decode.in_process_max_bytes"
DEFAULT_MAX_BYTES = 8 << 20


def local_files(
    inputs: Sequence[str],
    out: str,
    conf: Mapping[str, str],
    command_conf: Mapping[str, str] = (),
    spark_asked: bool | None = None,
) -> list[str] | None:
    """The files of `inputs` when they and the lake are on local disk and nothing asks for Spark, else None:
    what a decode without Spark needs. `spark_asked`: the caller's own judgement (the Dagster job's, from its
    session's settings), else `runtime.session.asks_for_spark`'s: a `spark.` setting on the command may name
    a catalog database, a master a cluster."""
    asked = asks_for_spark(conf, command_conf) if spark_asked is None else spark_asked
    if asked or delta_rs.local_table_path(out) is None:
        return None
    if any(local_path(i) is None for i in inputs):
        return None
    return list_input_files(inputs)


def fits_in_process(files: Sequence[str], conf: Mapping[str, str]) -> bool:
    """Whether local `files` hold at most `MAX_BYTES_SETTING` in all (0 turns the in-process decode off)."""
    limit = int(conf.get(MAX_BYTES_SETTING, DEFAULT_MAX_BYTES))
    return limit > 0 and sum(os.path.getsize(local_path(f)) for f in files) <= limit


def _row_index(event: dict) -> int:
    return int((event["meta"] or {}).get(ROW_INDEX, 0))


def mark_redeliveries(events: list[dict], delivery_fields: Sequence[str]) -> int:
    """Mark each event repeating an earlier one (by file, line, row) with `cdc.duplicate_of`, as the
    Spark decode does; the number marked."""
    identity = DeliveryIdentity(delivery_fields)
    first: dict[tuple, str] = {}
    marked = 0
    for event in sorted(events, key=lambda e: (e["source_file"], e["source_line"], _row_index(e))):
        key = identity.exact(event | {"row_index": _row_index(event)})
        original = first.setdefault(key, event["event_id"])
        if original != event["event_id"]:
            event["meta"] = {**(event["meta"] or {}), DUPLICATE_OF: original}
            marked += 1
    return marked


def lake_table(rows: list[dict], schema, constants: Mapping[str, object] | None = None) -> pa.Table:
    """Rows (every column of `schema` but `constants`, columns of one value; times as epoch micros) as an
    Arrow table of the lake's schema."""
    target = delta_rs.arrow_schema(schema)
    return pa.Table.from_batches([rows_to_batch(rows, target, constants)], schema=target)


def decode_in_process(
    format_id: str,
    files: Sequence[str],
    *,
    topic: str,
    dt: str,
    out: str | Path,
    options: Mapping[str, str] | None = None,
    envelope: str | None = None,
    tables: TableFilter | None = None,
) -> dict[str, int]:
    """Decode `files` and replace the `(dt, topic)` partition of the lake's `changes`, `rejects` and
    run counts (events first, counts last, as the Spark decode commits them); the counts, checked."""
    events, rejects, counts = decoded_events(format_id, files, topic=topic, dt=dt, options=options, envelope=envelope,
                                             tables=tables)  # fmt: skip
    return replace_decoded(events, rejects, counts, format_id=format_id, dt=dt, topic=topic, out=out)


def replace_decoded(
    events: pa.Table, rejects: list[dict], counts: dict[str, int], *, format_id: str, dt: str, topic: str,
    out: str | Path,
) -> dict[str, int]:  # fmt: skip
    """`decoded_events`' results committed: the `(dt, topic)` partition of `changes`, then of `rejects` and the
    run counts (`replace_rejects_and_counts`); the counts, checked."""
    root = local_path(out)
    replace = [{"dt": dt, "source_topic": topic}]
    delta_rs.replace_partitions(events, os.path.join(root, CHANGES_DIR), replace, CANONICAL_SCHEMA,
                                PARTITION_COLUMNS, TABLE_PROPERTIES[CHANGES_DIR])  # fmt: skip
    return replace_rejects_and_counts(root, rejects, counts, format_id=format_id, dt=dt, topic=topic)


def decoded_events(
    format_id: str,
    files: Sequence[str],
    *,
    topic: str,
    dt: str,
    options: Mapping[str, str] | None = None,
    envelope: str | None = None,
    tables: TableFilter | None = None,
) -> tuple[pa.Table, list[dict], dict[str, int]]:
    """`files` decoded as the `(dt, topic)` partition of the lake's `changes`: its rows (redeliveries
    marked; those of the tables `tables` leaves out counted as filtered), the reject rows, and the run's
    counts."""
    rows, read = decoded_paths(format_id, files, topic=topic, options=options, envelope=envelope)
    return events_of_rows(format_id, rows, read, topic=topic, dt=dt, tables=tables)


def events_of_rows(
    format_id: str, rows: list[dict], read: int, *, topic: str, dt: str, tables: TableFilter | None = None
) -> tuple[pa.Table, list[dict], dict[str, int]]:
    """`decoded_events` of rows already decoded (`local.decoded_lines`) from `read` messages."""
    if tables is not None:
        for row in rows:
            row["filtered"] = row["reject_reason"] is None and not tables.keeps(row["db"], row["table_name"])
    fixed = {"source_format": format_id, "source_topic": topic, "dt": dt}
    events = [row | fixed for row in rows if row["reject_reason"] is None and not row.get("filtered")]
    rejects = [row for row in rows if row["reject_reason"] is not None]
    mark_redeliveries(events, get_codec(format_id).delivery_fields)
    first_ok = (r for r in rows if r["row_index"] == 0 and r["reject_reason"] is None and r.get("filtered"))
    filtered = sum(r["messages"] for r in first_ok)
    return lake_table(events, CANONICAL_SCHEMA), rejects, decoded_counts(rows, read) | {"filtered": filtered}


def replace_rejects_and_counts(
    root: str, rejects: list[dict], counts: dict[str, int], *, format_id: str, dt: str, topic: str
) -> dict[str, int]:
    """After `changes`: the counts checked for conservation, then the `(dt, topic)` partition of `rejects`
    (the decoded table's reject rows) and of the run counts replaced, in the Spark decode's order; the counts."""
    check_message_counts(counts)
    fixed = {"source_format": format_id, "source_topic": topic, "dt": dt}
    delta_rs.replace_partitions(
        lake_table([row | {"reason": row["reject_reason"]} for row in rejects], REJECTS_SCHEMA, fixed),
        os.path.join(root, REJECTS_DIR), [{"dt": dt, "source_topic": topic}], REJECTS_SCHEMA, PARTITION_COLUMNS,
        TABLE_PROPERTIES[REJECTS_DIR],
    )  # fmt: skip
    return replace_counts(root, counts, dt=dt, topic=topic)


def replace_counts(root: str, counts: dict[str, int], *, dt: str, topic: str) -> dict[str, int]:
    """The `(dt, topic)` partition of the run counts replaced (the last of a decode's commits); the counts."""
    delta_rs.replace_partitions(lake_table([counts | {"dt": dt, "source_topic": topic}], COUNTS_SCHEMA),
                                os.path.join(root, COUNTS_DIR), [{"dt": dt, "source_topic": topic}], COUNTS_SCHEMA,
                                PARTITION_COLUMNS)  # fmt: skip
    return {k: counts[k] for k in MESSAGE_COUNTS}
