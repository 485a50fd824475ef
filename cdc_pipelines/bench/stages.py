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

from cdc_pipelines.decode.runner import decode_files, write_decoded
from cdc_pipelines.encode.runner import encode_events, write_encoded
from cdc_pipelines.extract.lines import read_extract_lines
from cdc_pipelines.formats import get_codec
from cdc_pipelines.lake import io

DECODE_CUTS = ("read and count lines", "decode in Python (and pair)", "write changes and rejects")
ENCODE_CUTS = ("read canonical", "encode in Python", "sort and write")


def _drained(frame: DataFrame) -> None:
    frame.write.format("noop").mode("overwrite").save()


def _seconds(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def decode_cuts(spark: SparkSession, format_id: str, source: Path, scratch: Path) -> list[tuple[str, float]]:
    """(cut, seconds) for each of `DECODE_CUTS` on `source`."""
    codec = get_codec(format_id)

    def lines() -> None:
        _drained(read_extract_lines(spark, [str(source)], codec, None).frame)

    def decoded() -> None:
        _drained(decode_files(spark, format_id, [source], topic="bench", dt="2024-01-01").combined)

    def written() -> None:
        write_decoded(decode_files(spark, format_id, [source], topic="bench", dt="2024-01-01"), scratch)
        shutil.rmtree(scratch)

    return [(cut, _seconds(run)) for cut, run in zip(DECODE_CUTS, (lines, decoded, written), strict=True)]


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
