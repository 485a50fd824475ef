"""The decode of a local extract without Spark, where one applies: the one choice the `decode` command and
the daily asset make.

In this process up to `in_process.MAX_BYTES_SETTING` (a JVM's start costs more than such a day's work), a
pool of processes for larger files of plain lines (`decode.pool`: Spark's decode took twice its time on
one machine), else Spark: Kafka, table filters, compressed or Avro files, CSV tuples, storage other than
local disk, and settings that ask for Spark (`runtime.session.asks_for_spark`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from cdc_pipelines.decode import pool
from cdc_pipelines.decode.in_process import decode_in_process, fits_in_process, local_files
from cdc_pipelines.model.table_filter import TableFilter

IN_PROCESS, POOL = "in process", "pool"


def decode_without_spark(
    format_id: str,
    inputs: Sequence[str],
    *,
    topic: str,
    dt: str,
    out: str | Path,
    conf: Mapping[str, str],
    command_conf: Mapping[str, str] = (),
    spark_asked: bool | None = None,
    options: Mapping[str, str] | None = None,
    envelope: str | None = None,
    tables: TableFilter | None = None,
) -> dict[str, int] | None:
    """Decode `inputs` into the `(dt, topic)` partition of the lake `out` in this process or by the pool,
    and commit `changes`, `rejects` and the run counts; the counts, or None where Spark has to decode them
    (nothing written). `conf`: the process's settings and the command's, `command_conf` the command's;
    `spark_asked` as `in_process.local_files` takes it."""
    engine, files = local_engine(format_id, inputs, str(out), conf, command_conf, spark_asked, tables is not None)
    if engine == IN_PROCESS:
        return decode_in_process(format_id, files, topic=topic, dt=dt, out=out, options=options, envelope=envelope,
                                 tables=tables)  # fmt: skip
    if engine == POOL:
        return pool.decode_with_processes(format_id, files, topic=topic, dt=dt, out=out,
                                          workers=pool.processes(conf), options=options, envelope=envelope)  # fmt: skip
    return None


def local_engine(
    format_id: str,
    inputs: Sequence[str],
    out: str,
    conf: Mapping[str, str],
    command_conf: Mapping[str, str] = (),
    spark_asked: bool | None = None,
    filtered: bool = False,
) -> tuple[str | None, list[str] | None]:
    """(`IN_PROCESS` or `POOL`, the files) for the engine that decodes `inputs` without Spark, else
    (None, None): the choice `decode_without_spark` makes, the inputs listed once. A table filter
    (`filtered`) is applied in this process only: the pool does not filter."""
    files = local_files(inputs, out, conf, command_conf, spark_asked)
    if files is None:
        return None, None
    if fits_in_process(files, conf):
        return IN_PROCESS, files
    if not filtered and pool.takes(format_id, files, conf):
        return POOL, files
    return None, None
