"""Extract files as Spark reads them: each line's bytes with the lineage to number it.

Spark's file readers give no line numbers, and a big file is read in several splits. So Spark first
counts the lines of every split (a plain text scan, no parsing: also the `read` side of the
conservation check); then, inside the Python decode, a line's number is its position in its split
plus the lines of the earlier splits of its file. DTS Avro containers are read whole (`binaryFile`)
and numbered by record; a damaged `.gz` is read from a copy of its complete lines, plus one reject
row for the loss; a DataHub CSV file's header (its first line) is read once on the driver.
"""

from __future__ import annotations

import functools
import gzip
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import fastavro
import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines.extract.damaged_gzip import check_gzip_inputs
from cdc_pipelines.extract.files import has_csv_header, is_avro_container
from cdc_pipelines.extract.messages import EnvelopeError, Line
from cdc_pipelines.formats.base import Codec
from cdc_pipelines.runtime.inputs import open_input, spark_file_uri

LINE_SCHEMA = T.StructType(
    [
        T.StructField("value", T.BinaryType()),
        T.StructField("source_file", T.StringType()),
        T.StructField("block", T.LongType()),
        T.StructField("kind", T.StringType()),
        T.StructField("reason", T.StringType()),
    ]
)
# a MESSAGE row is numbered already: its `block` is its line number (a Kafka record's offset)
LINE, CONTAINER, REJECT, MESSAGE = "line", "container", "reject", "message"


@dataclass
class LineNumbering:
    """What numbering the lines needs (shipped to the Python workers).

    `first_line` is the number of the first line of each (file, split); `renamed` maps a damaged
    file's copy back to the file; `headers` the CSV header line of each CSV file.
    """

    first_line: dict[tuple[str, int], int] = field(default_factory=dict)
    renamed: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    def lines(self) -> Callable[[pa.RecordBatch], Iterator[Line]]:
        """A function from the batches of one partition (in order) to numbered `Line`s."""
        seen: dict[tuple[str, int], int] = {}
        first_line, renamed, headers = self.first_line, self.renamed, self.headers

        def lines(batch: pa.RecordBatch) -> Iterator[Line]:
            values, files, blocks, kinds, reasons = (batch.column(i).to_pylist() for i in range(5))
            for value, file, block, kind, reason in zip(values, files, blocks, kinds, reasons, strict=True):
                if kind == LINE:
                    split = (file, block)
                    offset = seen.get(split, 0)
                    seen[split] = offset + 1
                    number = first_line[split] + offset
                    source = renamed.get(file, file)
                    header = headers.get(source)
                    if header is not None and number == 1:
                        continue  # the CSV header is no message
                    yield Line(source, number, value, header=header)
                elif kind == MESSAGE:
                    yield Line(file, block, value)
                elif kind == CONTAINER:
                    from cdc_pipelines.extract.messages import container_lines

                    yield from container_lines(file, value)
                else:
                    yield Line(file, block, b"", pre_reject=reason)

        return lines


@dataclass
class ExtractLines:
    """The lines to decode (`frame`, LINE_SCHEMA), how to number them, and the messages per file
    (`read`, header lines not counted: the left side of the conservation check)."""

    frame: DataFrame
    numbering: LineNumbering = field(default_factory=LineNumbering)
    read: dict[str, int] = field(default_factory=dict)


def _first_line(path: str) -> str:
    with open_input(path) as raw:
        fh = gzip.open(raw, "rb") if path.lower().endswith(".gz") else raw
        return fh.readline().decode("utf-8", "replace").rstrip("\r\n")


def _container_records(path: str) -> int:
    """Messages of a container as its decode sees them: its records, plus one for damage after them."""
    count = 0
    try:
        with open_input(path) as fh:
            for _ in fastavro.reader(fh):
                count += 1
    except Exception:  # noqa: BLE001 - a corrupt container reads as its good records plus one reject
        return count + 1
    return count


def _as_lines(frame: DataFrame, value: Column, file: Column, block: Column, kind: str) -> DataFrame:
    """`frame` as `LINE_SCHEMA` rows of `kind`, with no reason."""
    reason = F.lit(None).cast("string")
    return frame.select(value.alias("value"), file.alias("source_file"), block.alias("block"),
                        F.lit(kind).alias("kind"), reason.alias("reason"))  # fmt: skip


def read_extract_lines(spark: SparkSession, files: list[str], codec: Codec, envelope: str | None) -> ExtractLines:
    """The lines of `files` for `codec`, counted per split, ready for `mapInArrow`."""
    containers = [f for f in files if is_avro_container(f, codec)]
    if containers and envelope is not None:
        # kcat lines of a binary format carry a `{"value_b64": ...}` payload (as the Kafka source gives
        # them, `extract.kafka`); an `.avro` container holds no envelope
        raise EnvelopeError(f"format {codec.format_id} reads its own files and takes no envelope")
    text_files = [f for f in files if f not in containers]
    damage = check_gzip_inputs(text_files)
    out = ExtractLines(frame=spark.createDataFrame([], LINE_SCHEMA))
    frames = []
    if text_files:
        text = _as_lines(spark.read.format("text").load(damage.readable_files(text_files)),
                         F.col("value").cast("binary"), F.col("_metadata.file_path"),
                         F.col("_metadata.file_block_start"), LINE)  # fmt: skip
        splits = sorted(text.groupBy("source_file", "block").count().collect())  # one row per file split
        renamed = damage.copies.items()
        out.numbering.renamed = {spark_file_uri(copy): spark_file_uri(original) for original, copy in renamed}
        before: dict[str, int] = {}
        for file, block, count in splits:
            out.numbering.first_line[(file, block)] = before.get(file, 0) + 1
            before[file] = before.get(file, 0) + count
        for file, count in before.items():
            source = out.numbering.renamed.get(file, file)
            out.read[source] = count
        for path in text_files:
            if has_csv_header(path, codec):
                out.numbering.headers[spark_file_uri(path)] = _first_line(path)
                if spark_file_uri(path) in out.read:
                    out.read[spark_file_uri(path)] -= 1
        frames.append(text)
    if containers:
        binary = spark.read.format("binaryFile").load(containers)
        frames.append(_as_lines(binary, F.col("content"), F.col("path"), F.lit(0).cast("long"), CONTAINER))
        out.read |= {spark_file_uri(path): _container_records(path) for path in containers}
    rejects = [(b"", spark_file_uri(path), line, REJECT, reason) for path, line, reason in damage.reject_lines()]
    for _, file, _, _, _ in rejects:
        out.read[file] = out.read.get(file, 0) + 1
    if rejects:
        frames.append(spark.createDataFrame(rejects, LINE_SCHEMA))
    if frames:
        out.frame = functools.reduce(DataFrame.unionByName, frames)
    return out
