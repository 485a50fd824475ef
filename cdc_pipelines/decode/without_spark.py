"""The decode of a local extract without Spark, where one applies: the one choice the `decode` command and
the daily asset make.

Local files going to a local lake are the local engine's (`decode.pool`: in this process up to
`pool.MAX_BYTES_SETTING`, where starting processes costs more than such a day's work, else a pool of
processes); storage other than local disk is Spark's, and so is a large extract when `pool.PROCESSES_SETTING`
is 0. Whether the settings ask for Spark is the engine table's question (`engines.choice`), asked before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from cdc_pipelines.decode import pool
from cdc_pipelines.model.table_filter import TableFilter


def decode_without_spark(
    format_id: str,
    inputs: Sequence[str],
    *,
    topic: str,
    dt: str,
    out: str | Path,
    conf: Mapping[str, str],
    options: Mapping[str, str] | None = None,
    envelope: str | None = None,
    tables: TableFilter | None = None,
) -> dict[str, int] | None:
    """Decode `inputs` into the `(dt, topic)` partition of the lake `out` in this process or by the pool,
    and commit `changes`, `rejects` and the run counts; the counts, or None where Spark has to decode them
    (nothing written). `conf`: the process's settings and the command's."""
    workers, files = local_engine(inputs, str(out), conf)
    if not workers:
        return None
    return pool.decode_with_processes(format_id, files, topic=topic, dt=dt, out=out, workers=workers, options=options,
                                      envelope=envelope, tables=tables)  # fmt: skip


def local_engine(inputs: Sequence[str], out: str, conf: Mapping[str, str]) -> tuple[int, list[str]]:
    """(the processes that decode `inputs` without Spark, the files), or (0, []) where Spark decodes them: the
    choice `decode_without_spark` makes, the inputs listed once."""
    files = pool.local_files(inputs, out)
    workers = 0 if files is None else pool.processes(conf, files)
    return (workers, files) if workers else (0, [])
