"""Where decode and encode time goes: the conversion cut after each stage, each cut run to a no-op sink.

Cut k runs stages 1..k and throws the rows away (Spark's `noop` writer), so cut k minus cut k-1 is
the cost of stage k; the last cut is the whole conversion, outputs written. Cuts run after the timed
conversion of the same file, on a warm JVM, so they add up to somewhat less than that (cold) run.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_pipelines import io
from cdc_pipelines.encode import encode_events, write_encoded
from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.base import IS_MESSAGE, parse_json_lines
from cdc_pipelines.pipeline import decode_files, persisted, write_decoded

DECODE_CUTS = ("read lines", "parse JSON", "decode fields", "normalise, pair and check", "write changes and rejects")
ENCODE_CUTS = ("read canonical", "encode in Python", "sort and write")


def _drained(frame: DataFrame) -> None:
    frame.write.format("noop").mode("overwrite").save()


def _seconds(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _events_drained(spark: SparkSession, format_id: str, source: Path) -> None:
    """Decoded events to the sink, with the frames the real write persists persisted likewise."""
    decoded = decode_files(spark, format_id, [source], topic="bench", dt="2024-01-01")
    with persisted(*decoded.reused):
        _drained(decoded.events)


def decode_cuts(spark: SparkSession, format_id: str, source: Path, scratch: Path) -> list[tuple[str, float]]:
    """(cut, seconds) for each of `DECODE_CUTS` on `source`; a format that reads its own files (DTS
    Avro: Python) parses in its reader."""
    codec = get_codec(format_id)
    options = codec.resolve_options({})

    def staged() -> DataFrame:
        if codec.read is not None:
            return codec.read(spark, [str(source)])
        return parse_json_lines(io.read_lines(spark, [str(source)]), codec.schema)

    def fields() -> DataFrame:
        return codec.decode(staged().where(F.col(IS_MESSAGE)).drop(IS_MESSAGE), options)

    def written() -> None:
        write_decoded(decode_files(spark, format_id, [source], topic="bench", dt="2024-01-01"), scratch)
        shutil.rmtree(scratch)

    runs = (
        lambda: _drained(io.read_lines(spark, [str(source)])),
        lambda: _drained(staged()),
        lambda: _drained(fields()),
        lambda: _events_drained(spark, format_id, source),
        written,
    )
    return [(cut, _seconds(run)) for cut, run in zip(DECODE_CUTS, runs, strict=True)]


def encode_cuts(spark: SparkSession, format_id: str, changes: Path, scratch: Path) -> list[tuple[str, float]]:
    """(cut, seconds) for each of `ENCODE_CUTS`, encoding the canonical table `changes`."""

    def written() -> None:
        write_encoded(encode_events(io.read_canonical(spark, changes), format_id), scratch, format_id)
        shutil.rmtree(scratch)

    runs = (
        lambda: _drained(io.read_canonical(spark, changes)),
        lambda: _drained(encode_events(io.read_canonical(spark, changes), format_id).all_rows),
        written,
    )
    return [(cut, _seconds(run)) for cut, run in zip(ENCODE_CUTS, runs, strict=True)]
