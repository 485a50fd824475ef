"""Lines of an extract -> rows of the decoded table (events and rejects), in plain Python.

`decoded_rows` is what the Spark runner's `mapInArrow` function and the in-process decoder both
run over each line with its lineage: envelope unwrapping, CSV rows under their header, the codec,
the canonical finish. Every line gives at least one row: events, or one reject with its reason and
raw text; lines that are no message (a CSV header) give none.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Mapping

from cdc_pipelines.decode.messages import EMPTY_EVENT, EVENT_FIELDS, decode_message, raw_text
from cdc_pipelines.extract.messages import Line, csv_fields, unwrap_kcat
from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.base import Reject, max_message_chars
from cdc_pipelines.formats.registry import RegistryError
from cdc_pipelines.model import canonical as C
from cdc_pipelines.model import meta_keys

# a reject's row holds every column of the decoded table, the event's ones empty
_REJECT_ROW = dict.fromkeys(("event_id", *EVENT_FIELDS, "pair_key"), None) | {"row_index": 0, "messages": 1}
_NO_RAW = (None, None)


def _raw(line: Line, value: bytes) -> tuple[str, str]:
    """(raw, raw_encoding) of a message as its reject keeps it: `value` is the line, or the payload
    of its envelope once unwrapped."""
    return raw_text(value) if line.record is None else line.record.raw_text()


def tombstone_events(meta: Mapping[str, str] | None) -> list[dict]:
    """The one canonical event of a tombstone: op OTHER, raw_op TOMBSTONE, no table and no images (the
    Kafka key and coordinates are the envelope's meta). It changes nothing, so it has no event time;
    its sync time is the Kafka message's timestamp (`ts`, epoch ms) where the envelope has one.
    Counted as decoded; every encoder skips it."""
    ts = (meta or {}).get(meta_keys.KAFKA_PREFIX + "ts", "")
    sync_time = int(ts) * 1000 if ts.isascii() and ts.isdigit() else None
    return [EMPTY_EVENT | {"op": "OTHER", "raw_op": C.TOMBSTONE, "sync_time": sync_time}]


def _message(value: bytes, header: str | None) -> bytes | dict:
    if header is None:
        return value
    text, encoding = raw_text(value)
    if encoding != "text":
        raise Reject("message is not valid UTF-8")
    if not text.strip(" "):
        raise Reject("empty line")
    try:
        names, fields = csv_fields(header), csv_fields(text)
    except csv.Error as exc:
        raise Reject(f"not a CSV row: {exc}") from None
    if len(fields) != len(names):
        raise Reject(f"CSV row has {len(fields)} fields, its header {len(names)}")
    return dict(zip(names, fields, strict=True))


def decoded_rows(
    format_id: str,
    topic: str,
    lines: Iterable[Line],
    options: Mapping[str, str],
    envelope: str | None = None,
    limit: int | None = None,
) -> Iterator[dict]:
    """Rows of the decoded table for `lines`: one per event (`reject_reason` None) or one reject.

    Each row holds the event fields, its lineage and id, `row_index`, `pair_key`, `messages` (input
    messages it stands for) and, for rejects and split-update halves, the raw line. `limit` is the
    longest message parsed (default `max_message_chars()`, read where this runs). A decoder that
    fails in a way it did not foresee rejects the message with the error, never stops the run.
    """
    codec = get_codec(format_id)
    limit = max_message_chars() if limit is None else limit
    for line in lines:
        meta, value = None, line.value
        try:
            if line.pre_reject:
                raise Reject(line.pre_reject)
            if envelope is not None:
                value, meta = unwrap_kcat(value)
                if codec.decode_key is not None and meta.get(meta_keys.KAFKA_KEY) is not None:
                    meta[meta_keys.KAFKA_KEY] = codec.decode_key(meta[meta_keys.KAFKA_KEY], options)
            if value is None:
                events = tombstone_events(meta)
            else:
                message = _message(value, line.header) if line.record is None else line.record
                events = decode_message(codec, message, options, limit)
        except RegistryError:
            raise  # no verdict on the message: the run stops, nothing committed
        except Exception as exc:  # noqa: BLE001 - bad input never stops a run: it becomes a reject
            # the reason as text: an exception kept in a local would hold its traceback, and the traceback
            # this frame with the batch's lines, a cycle only the cycle collector frees
            why = str(exc) if isinstance(exc, Reject) else f"decoder error on this message: {type(exc).__name__}: {exc}"
            raw, encoding = _raw(line, value)
            yield _REJECT_ROW | {
                "source_file": line.source_file,
                "source_line": line.source_line,
                "reject_reason": why,
                "raw": raw,
                "raw_encoding": encoding,
            }
            continue
        for event in events:
            if meta:
                event["meta"] = {**(event["meta"] or {}), **meta}
            event["event_id"] = C.event_id(format_id, topic, line.source_file, line.source_line, event["row_index"])
            event["source_file"], event["source_line"] = line.source_file, line.source_line
            event["messages"], event["reject_reason"] = 1, None
            event["raw"], event["raw_encoding"] = _raw(line, value) if event["pair_key"] is not None else _NO_RAW
            yield event
