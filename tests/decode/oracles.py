"""Decoding and encoding in this process, without Spark or files written: the tests' oracles.

The same per-line function as the runners (`rows.decoded_rows`) and the same split-update pairing
(`messages.pair_halves_in_memory`); only the reading (`pool.file_lines`) and the grouping of halves (a sort in
memory instead of a shuffle) differ. Rows come out as the canonical table's rows read back from Spark look:
times as naive UTC datetimes, maps as dicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path

from cdc_pipelines.decode.messages import EVENT_FIELDS, decoded_counts, is_half, pair_halves_in_memory
from cdc_pipelines.decode.pool import file_lines
from cdc_pipelines.decode.rows import decoded_rows
from cdc_pipelines.extract.files import list_input_files
from cdc_pipelines.extract.messages import Line
from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.encoding import Unsupported
from cdc_pipelines.model import canonical as C
from cdc_pipelines.model import meta_keys


def decoded_paths(
    format_id: str,
    paths: Iterable[str | Path],
    *,
    topic: str,
    options: Mapping[str, str] | None = None,
    envelope: str | None = None,
) -> tuple[list[dict], int]:
    """(rows of the decoded table, messages read) of files decoded in process, split updates paired."""
    lines = [line for p in paths for f in list_input_files([p]) for line in file_lines(f, format_id)]
    return decoded_lines(format_id, lines, topic=topic, options=options, envelope=envelope), len(lines)


def decoded_lines(
    format_id: str,
    lines: Iterable[Line],
    *,
    topic: str,
    options: Mapping[str, str] | None = None,
    envelope: str | None = None,
) -> list[dict]:
    """Rows of the decoded table of `lines` decoded in process (a file's, a Kafka day's), split updates paired."""
    codec = get_codec(format_id)
    resolved = codec.resolve_options(dict(options or {}))
    rows = list(decoded_rows(format_id, topic, lines, resolved, envelope))
    halves = [r for r in rows if is_half(r)]
    return [r for r in rows if not is_half(r)] + list(pair_halves_in_memory(halves, codec.update_has_before))


@dataclass
class LocalDecode:
    """Events and rejects of an in-process decode, with the run's counts."""

    events: list[dict] = field(default_factory=list)
    rejects: list[dict] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def decode_paths(
    format_id: str,
    paths: Iterable[str | Path],
    *,
    topic: str = "t",
    dt: str = "2024-01-01",
    options: Mapping[str, str] | None = None,
    envelope: str | None = None,
) -> LocalDecode:
    """Decode files in process: events in input order, rejects by line, counts checked for conservation."""
    rows, read = decoded_paths(format_id, paths, topic=topic, options=options, envelope=envelope)
    out = LocalDecode()
    for row in rows:
        if row["reject_reason"] is None:
            event = {"event_id": row["event_id"], "source_format": format_id, "source_topic": topic}
            event |= {"source_file": row["source_file"], "source_line": row["source_line"]}
            event |= {name: row[name] for name in EVENT_FIELDS} | {"dt": dt}
            event["event_time"] = C.micros_to_datetime(row["event_time"])
            event["sync_time"] = C.micros_to_datetime(row["sync_time"])
            out.events.append(event)
        else:
            reject = {"source_format": format_id, "source_topic": topic, "source_file": row["source_file"]}
            reject |= {"source_line": row["source_line"], "raw": row["raw"], "raw_encoding": row["raw_encoding"]}
            out.rejects.append(reject | {"reason": row["reject_reason"], "dt": dt})
    out.events.sort(key=lambda e: (e["source_file"], e["source_line"], meta_keys.row_index(e)))
    out.rejects.sort(key=lambda r: (r["source_file"], r["source_line"]))
    out.counts = decoded_counts(rows, read)
    return out


# what the Spark encoder leaves out of the event dict it gives an encoder (lineage, never read by one)
_NOT_ENCODED = ("dt", "source_topic", "source_file", "source_line", "event_time_unit")


def encoder_event(event: dict) -> dict:
    """A canonical event as encoders get it from Spark: times as aware UTC datetimes, lineage left out."""
    out = {k: v for k, v in event.items() if k not in _NOT_ENCODED}
    for key in ("event_time", "sync_time"):
        if out.get(key) is not None and out[key].tzinfo is None:
            out[key] = out[key].replace(tzinfo=UTC)
    return out


def encode_local(events: Iterable[dict], format_id: str, options: Mapping[str, str] | None = None):
    """(messages, skipped) of canonical events encoded in process: messages as (event, part, message),
    skipped as (event, reason). Binary messages stay bytes."""
    codec = get_codec(format_id)
    resolved = codec.resolve_options(dict(options or {}))
    messages, skipped = [], []
    for event in events:
        try:
            encoded = codec.encode_event(encoder_event(event), resolved)
        except Unsupported as why:
            skipped.append((event, str(why)))
            continue
        messages.extend((event, part, message) for part, message in enumerate(encoded))
    return messages, skipped
