"""Raw messages as the extract holds them: one `Line` each with its lineage, unwrapped from a `kcat -J`
envelope, a CSV row under its header, or a record of a DTS Avro container file.

What a message *is* belongs to its format (`formats/`); how it sat in a file or a Kafka record is
decided here, before any codec runs.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass

import fastavro

from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import Reject
from cdc_pipelines.formats.dts_avro import ContainerRecord
from cdc_pipelines.model import meta_keys

# kcat -J writes a record's headers as one flat list [name, value, name, value, ...] (a null value null);
# the meta keeps it as that list's compact JSON (`cdc.kafka.headers`)
KCAT_FIELDS = ("topic", "partition", "offset", "tstype", "ts", "headers", "key")
ENVELOPES = ("kcat",)


class EnvelopeError(ValueError):
    """An envelope name that is not known, or one given to a format that reads its own files."""


def check_envelope(name: str | None) -> None:
    if name is not None and name not in ENVELOPES:
        raise EnvelopeError(f"unknown envelope {name!r}; known: {', '.join(ENVELOPES)}")


@dataclass(slots=True)
class Line:
    """One input line: its bytes and lineage, a reason found before decoding, a CSV header.

    Slotted, not frozen: a frozen dataclass sets each field through `object.__setattr__`, which was a
    microsecond of every line. `record` is a message its file reader already decoded (a DTS Avro
    container record, see `formats.dts_avro.container_lines`): the decoder gets it in place of
    `value`, and a reject shows it as `record.raw_text()` gives it.
    """

    source_file: str
    source_line: int
    value: bytes
    pre_reject: str | None = None
    header: str | None = None
    record: object = None


def unwrap_kcat(line: bytes) -> tuple[bytes | None, dict[str, str]]:
    """(payload, `cdc.kafka.*` meta) of a `kcat -C -J` envelope; Reject when the line is none.

    The payload is None for a tombstone (a Kafka message with a null value: Debezium sends one after
    each delete so that log compaction can drop the key)."""
    if not line.strip(b" "):
        raise Reject("empty line")
    try:
        envelope = J.parse_object(line)
    except J.NotJsonObject:
        raise Reject("not a kcat envelope (no offset)") from None
    if envelope.get("offset") is None:
        raise Reject("not a kcat envelope (no offset)")
    if envelope.get("partition") is None:
        raise Reject("not a kcat envelope (no partition)")
    payload = envelope.get("payload")
    meta = {meta_keys.KAFKA_PREFIX + f: J.text(envelope[f]) for f in KCAT_FIELDS if envelope.get(f) is not None}
    return (None if payload is None else J.text(payload).encode()), meta


def csv_fields(line: str) -> list[str | None]:
    """The fields of one RFC 4180 CSV line: quotes removed, `""` unescaped; an empty unquoted field is None."""
    text = line.rstrip("\r\n")
    fields = next(csv.reader([text]), [])
    quoted = _quoted_flags(text)
    return [None if f == "" and not q else f for f, q in zip(fields, quoted, strict=False)]


def _quoted_flags(text: str) -> list[bool]:
    """Per field, whether it began with a quote (quoting only toggles inside such a field)."""
    flags, at_start, quoted, in_quotes = [], True, False, False
    for ch in text:
        if at_start:
            at_start = False
            quoted = in_quotes = ch == '"'
            flags.append(quoted)
            if ch == ",":
                at_start = True
            continue
        if quoted and ch == '"':
            in_quotes = not in_quotes
        elif ch == "," and not in_quotes:
            at_start = True
    if at_start:
        flags.append(False)
    return flags


def container_lines(uri: str, content: bytes) -> Iterator[Line]:
    """One Line per record of an `.avro` container (numbered from 1), then one reject if it is damaged."""
    n = 0
    try:
        # return_named_type: an enum member of a union (EmptyObject) is a (name, value) pair even where the
        # writer schema defines it inline, as the schemaless reader gives it (return_record_name does not)
        for record in fastavro.reader(io.BytesIO(content), return_named_type=True):
            n += 1
            yield Line(uri, n, b"", record=ContainerRecord(record))
    except Exception as exc:  # noqa: BLE001 - a corrupt container must become a reject, not a crash
        reason = f"corrupt Avro container after {n} records: {exc}"
        yield Line(uri, n + 1, b"", pre_reject=reason, record=ContainerRecord(None))
