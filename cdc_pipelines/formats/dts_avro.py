"""DTS Avro: one schemaless Avro `Record` per message, decoded by fastavro in plain Python.

Input is either JSON lines whose `value_b64` holds one schemaless Record (a Kafka dump), or Avro
container files (`.avro`) of Records. A line's decoder reads its `value_b64`; a container is read once
by `extract.messages.container_lines`, and each of its records reaches the decoder as read (a `ContainerRecord`), with
no second serialisation. `dts_avro_records` turns a Record into canonical fields with their exact text:
the images are text already (DTS Avro values are no JSON, so no number is detected).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from dataclasses import dataclass

import fastavro

from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import BAD_SYNC_TIME, Codec, RawEvent, Reject
from cdc_pipelines.formats.dts_avro_records import encode_record, read_record, record_schemas, record_to_fields
from cdc_pipelines.model import canonical as C


@dataclass(slots=True, eq=False)  # compared and hashed by identity, as a plain object
class ContainerRecord:
    """A Record read from an `.avro` container (a `Line.record`); None for a damaged container's reject.

    A reject shows it as the schemaless message it is (its bytes in base64, as a `value_b64` holds
    them), serialised only then.
    """

    record: dict | None

    def raw_text(self) -> tuple[str, str]:
        buf = io.BytesIO()
        try:
            fastavro.schemaless_writer(buf, record_schemas()[0 if "bornTimestamp" in self.record else 1], self.record)
        except Exception:  # noqa: BLE001 - no record (a damaged container), or one our schema cannot hold
            return "", "base64"

        return base64.b64encode(buf.getvalue()).decode(), "base64"


def decode_dts_avro(message: bytes | ContainerRecord, options: Mapping[str, str]) -> list[RawEvent]:
    """The raw event of one Record: a container's record as read, or a JSON line's `value_b64`."""
    try:
        record = message.record if type(message) is ContainerRecord else read_record(J.value_b64(message))
        event = record_to_fields(record)
    except Reject:
        raise
    except Exception as exc:  # noqa: BLE001 - hostile bytes must become a reject, never crash the run
        raise Reject(str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}") from None
    event["event_time"], event["event_time_unit"] = C.time_of(event["event_time"])
    if event["sync_time"] is not None:
        event["sync_time"] = C.time_of(event["sync_time"])[0]
        if event["sync_time"] is None:
            raise Reject(BAD_SYNC_TIME)
    return [event]


def recognise_dts_avro(message: dict) -> bool:
    """A JSON line wrapping one Avro record's bytes (a container file is told by its magic bytes)."""
    return "value_b64" in message


DTS_AVRO = Codec(
    "dts-avro",
    decode_dts_avro,
    encode_record,
    messages="avro",
    binary_messages=True,
    containers=True,
    event_time_unit="s",
    description="DTS Avro Record (schemaless messages in value_b64 JSON lines, or .avro container files)",
    recognise=recognise_dts_avro,
)
