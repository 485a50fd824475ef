"""DTS Avro on Spark: fastavro in vectorised batches (`mapInArrow`), never a per-row UDF.

Input is either JSON lines whose `value_b64` holds one raw schemaless Avro message (a Kafka dump),
or Avro container files (`.avro`) of `Record`s. Both become the same staged rows; the Python side
(`dts_avro_records`) turns each Record into canonical fields with their exact text.
"""

from __future__ import annotations

import base64
import io as pyio
from collections.abc import Iterator, Mapping

import fastavro
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from cdc_pipelines import canonical as C
from cdc_pipelines import io
from cdc_pipelines import jsontext as J
from cdc_pipelines.formats.base import (
    IS_MESSAGE,
    PRE_REJECT,
    RAW_ENCODING,
    Codec,
    emit,
    first_reason,
    msg,
    raw_line,
    unreadable_line,
)
from cdc_pipelines.formats.dts_avro_records import decode_message, encode_record, record_schemas

_TEXT = T.StringType()
FIELDS_SCHEMA = T.StructType(
    [
        T.StructField("error", _TEXT),
        *[
            T.StructField(n, _TEXT)
            for n in ("raw_op", "op", "db", "db_schema", "table_name", "event_time", "sync_time")
        ],
        *[T.StructField(n, _TEXT) for n in ("tx_id", "seq", "position", "ddl")],
        T.StructField("pk_columns", T.ArrayType(_TEXT)),
        *[T.StructField(n, J.TEXT_MAP) for n in ("before", "after", "column_types", "source_types", "meta")],
    ]
)
STAGED_SCHEMA = T.StructType(
    [
        T.StructField("value", _TEXT),
        T.StructField("source_file", _TEXT),
        T.StructField("source_line", T.LongType()),
        T.StructField("msg", FIELDS_SCHEMA),
        T.StructField(PRE_REJECT, _TEXT),
        T.StructField(IS_MESSAGE, T.BooleanType()),
        T.StructField(RAW_ENCODING, _TEXT),
    ]
)
_ENVELOPE = T.StructType([T.StructField("value_b64", _TEXT)])


def _row(value: str, file: str, line: int, fields: dict | None, reason: str | None, encoding: str) -> dict:
    if fields is not None and "error" in fields:
        fields, reason = None, fields["error"]
    return {
        "value": value,
        "source_file": file,
        "source_line": line,
        "msg": fields,
        PRE_REJECT: reason,
        IS_MESSAGE: True,
        RAW_ENCODING: encoding,
    }


def _decode_envelopes(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    schema = to_arrow_schema(STAGED_SCHEMA)
    for batch in batches:
        rows = []
        for r in batch.to_pylist():
            fields = None
            reason = r[PRE_REJECT]
            if reason is None:
                try:
                    fields = decode_message(base64.b64decode(r["b64"], validate=True))
                except ValueError as exc:
                    reason = f"value_b64 is not base64: {exc}"
            rows.append(_row(r["value"], r["source_file"], r["source_line"], fields, reason, r[RAW_ENCODING]))
        yield pa.RecordBatch.from_pylist(rows, schema=schema)


def _decode_containers(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    schema = to_arrow_schema(STAGED_SCHEMA)
    for batch in batches:
        for r in batch.to_pylist():
            rows, n = [], 0
            try:
                for record in fastavro.reader(pyio.BytesIO(r["content"]), return_record_name=True):
                    n += 1
                    buf = pyio.BytesIO()
                    fastavro.schemaless_writer(buf, record_schemas()[0 if "bornTimestamp" in record else 1], record)
                    raw = base64.b64encode(buf.getvalue()).decode()
                    rows.append(_row(raw, r["path"], n, decode_message(buf.getvalue()), None, "base64"))
            except Exception as exc:  # noqa: BLE001 - a corrupt container must become a reject, not a crash
                rows.append(
                    _row("", r["path"], n + 1, None, f"corrupt Avro container after {n} records: {exc}", "base64")
                )
            yield pa.RecordBatch.from_pylist(rows, schema=schema)


def read_dts_avro(spark: SparkSession, files: list[str]) -> DataFrame:
    """Staged rows from `.avro` container files and from JSON lines holding `value_b64`."""
    containers = [f for f in files if f.lower().endswith(".avro")]
    lines_files = [f for f in files if not f.lower().endswith(".avro")]
    parts = []
    if lines_files:
        lines = io.read_lines(spark, lines_files)
        unreadable = unreadable_line(F.col("value"))
        envelope = J.parse_exact(F.when(unreadable.isNull(), F.col("value")), _ENVELOPE)
        b64 = J.text(envelope["value_b64"])
        raw, encoding = raw_line(F.col("value"))
        staged = lines.select(
            raw.alias("value"),
            "source_file",
            "source_line",
            b64.alias("b64"),
            encoding.alias(RAW_ENCODING),
            first_reason(
                (unreadable.isNotNull(), unreadable),
                (F.trim("value") == "", "empty line"),
                (
                    envelope.isNull() | envelope[J.CORRUPT_FIELD].isNotNull() | ~J.ends_object(F.col("value")),
                    "not a valid JSON object",
                ),
                (b64.isNull(), "no value_b64 field"),
            ).alias(PRE_REJECT),
        )
        parts.append(staged.mapInArrow(_decode_envelopes, STAGED_SCHEMA))
    if containers:
        binary = spark.read.format("binaryFile").load(containers).select("path", "content")
        parts.append(binary.mapInArrow(_decode_containers, STAGED_SCHEMA))
    out = parts[0]
    for part in parts[1:]:
        out = out.unionByName(part)
    return out


def decode_dts_avro(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
    event_time, unit = C.time_of(msg("event_time"))
    sync_time, _ = C.time_of(msg("sync_time"))
    names = ("op", "raw_op", "db", "db_schema", "table_name", "tx_id", "seq", "position", "pk_columns", "ddl")
    fields = {name: msg(name) for name in names} | {
        "event_time": event_time,
        "event_time_unit": unit,
        "sync_time": sync_time,
        "before_raw": msg("before"),
        "after_raw": msg("after"),
        "column_types": msg("column_types"),
        "source_types": msg("source_types"),
        "meta": msg("meta"),
    }
    return emit(df, fields, first_reason())


DTS_AVRO = Codec(
    "dts-avro",
    FIELDS_SCHEMA,
    decode_dts_avro,
    read=read_dts_avro,
    marked_json=False,
    encode=encode_record,
    binary_messages=True,
    description="DTS Avro Record (schemaless messages in value_b64 JSON lines, or .avro container files)",
)
