"""The architecture floors: our decode's and encode's Spark paths with the Python work taken out.

Each runs exactly what `decode_files` + `write_decoded` (or `encode_events` + `write_encoded`) run:
the line read and count, the Arrow round trip of every batch through a Python worker, the
conservation counts, the rejects reported beside the rows, the partitioned atomic writes of the same
columns (with no delivery hash: hashing is the codec's work). Only the codec is replaced:
the Python function replays rows decoded (or messages encoded) once beforehand from the head of the
same input, one output row per input row, so the rows written are real ones and the counts add up.
What our decode or encode takes beyond its replay is the cost of the Python codecs; what the replay
takes beyond the Spark floor is the cost of this design (Python workers, the canonical table's
columns), which no codec can win back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession

from cdc_pipelines.decode.pass_results import PassResults, TaskReports
from cdc_pipelines.decode.rows import decoded_rows
from cdc_pipelines.decode.runner import DECODED_SCHEMA, decoded_extract, rows_to_batch, write_decoded
from cdc_pipelines.encode.runner import ENCODED_SCHEMA, LINEAGE, EncodedTable, encode_events, write_encoded
from cdc_pipelines.extract.files import list_input_files
from cdc_pipelines.extract.lines import read_extract_lines
from cdc_pipelines.extract.messages import Line
from cdc_pipelines.formats import get_codec
from cdc_pipelines.lake.io import read_canonical
from cdc_pipelines.runtime.inputs import spark_file_uri

HEAD = 10_000  # input rows decoded or encoded beforehand; the replay cycles through them


def _ipc(batch: pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def _cycled(block: pa.RecordBatch, rows: int) -> pa.RecordBatch:
    """`rows` rows of `block`, from its start, repeated as often as needed."""
    if rows <= block.num_rows:
        return block.slice(0, rows)
    copies = [block] * (rows // block.num_rows) + [block.slice(0, rows % block.num_rows)]
    return pa.Table.from_batches(copies).combine_chunks().to_batches()[0]


def _distinct(batch: pa.RecordBatch) -> pa.RecordBatch:
    """`batch` with a source `position` and line of its own on every row: decoded rows alike would be
    redelivered messages to the decode (`cdc_pipelines.decode.redeliveries`), which the real input's messages
    are not, and a reject is one message's (`decode.pass_results`). The position identifies a delivery in
    every format; `seq` did not in canal's (its batch id is a field a replay sets anew)."""
    rng = np.random.default_rng()
    position = pa.array(rng.integers(0, 2**62, batch.num_rows)).cast(pa.string())
    batch = batch.set_column(batch.schema.get_field_index("position"), "position", position)
    line = pa.array(rng.integers(0, 2**62, batch.num_rows), pa.int64())
    return batch.set_column(batch.schema.get_field_index("source_line"), "source_line", line)


_REJECT_COLUMNS = ["source_file", "source_line", "raw", "raw_encoding", "reject_reason"]


def _rejects(batch: pa.RecordBatch) -> list[tuple]:
    """The replayed rejects of `batch`, as the decoding tasks report them (`PassResults`)."""
    rejected = batch.filter(pc.is_valid(batch.column("reject_reason"))).select(_REJECT_COLUMNS)
    return list(zip(*(rejected.column(c).to_pylist() for c in _REJECT_COLUMNS), strict=True))


def _replay_rows(blob: bytes, results: PassResults):
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        block = pa.ipc.open_stream(blob).read_next_batch()
        reports = TaskReports(results)
        for batch in batches:
            replayed = _distinct(_cycled(block, batch.num_rows))
            reports.add(None, _rejects(replayed))
            yield replayed

    return run


def decode_replay(spark: SparkSession, format_id: str, source: Path, out: Path) -> Callable[[], dict[str, int]]:
    """`write_decoded(decode_files(...))` of one line file, the decoding replayed (see the module): the
    run to time, with the head already decoded (that is the replay's set-up, not the path's cost)."""
    codec = get_codec(format_id)
    uri = spark_file_uri(str(source))
    with open(source, "rb") as handle:
        head = [Line(uri, n, line.rstrip(b"\n")) for n, line in enumerate(islice(handle, HEAD), start=1)]
    rows = decoded_rows(format_id, "bench", head, codec.resolve_options({}))
    block = rows_to_batch([row for row in rows if row["row_index"] == 0])  # one row per message
    blob = _ipc(block)

    def run() -> dict[str, int]:
        lines = read_extract_lines(spark, list_input_files([source]), codec, None)
        results = PassResults.create(spark.sparkContext)
        replayed = lines.frame.mapInArrow(_replay_rows(blob, results), DECODED_SCHEMA)
        decoded = decoded_extract(replayed, format_id, topic="bench", dt="2024-01-01", read=lines.read, results=results)
        return write_decoded(decoded, out)

    return run


def _replay_messages(blob: bytes):
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        block = pa.ipc.open_stream(blob).read_next_batch()
        names = ENCODED_SCHEMA.fieldNames()
        for batch in batches:
            messages = _cycled(block, batch.num_rows)
            columns = [*batch.select(list(LINEAGE)).columns, *messages.columns]
            yield pa.RecordBatch.from_arrays(columns, names=names)

    return run


def encode_replay(spark: SparkSession, format_id: str, changes: Path, target: Path) -> Callable[[], dict[str, int]]:
    """`write_encoded(encode_events(...))` of a canonical table, the encoding replayed (see the module):
    the run to time, with the head already encoded (the replay's set-up, not the path's cost)."""
    head = encode_events(read_canonical(spark, changes).limit(HEAD), format_id).all_rows
    block = head.where("part = 0").select(*[n for n in ENCODED_SCHEMA.fieldNames() if n not in LINEAGE]).toArrow()
    blob = _ipc(block.combine_chunks().to_batches()[0])

    def run() -> dict[str, int]:
        replayed = read_canonical(spark, changes).mapInArrow(_replay_messages(blob), ENCODED_SCHEMA)
        return write_encoded(EncodedTable(replayed), target, format_id)

    return run
