"""A delivery's identity hashed where the event is built, in plain Python (see `decode.redeliveries`).

The codec knows every field of the event it just built, so the hash costs one serialisation of fields
already in hand, where hashing on Spark meant a second scan of the images. The hash is coarser than the
exact identity (map entries are compared in sorted order, and the day is not in it): two deliveries that
are the same change always hash alike, and rows whose hashes repeat are compared exactly afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from hashlib import blake2b

import orjson

from cdc_pipelines.decode.messages import EVENT_FIELDS
from cdc_pipelines.model.meta_keys import DUPLICATE_OF, KAFKA_KEY, PREFIX, row_index


class DeliveryIdentity:
    """What of an event identifies its delivery for one format: every event field but the lineage, the
    `delivery_fields` a replay sets anew, and the `cdc.*` meta the run adds (the Kafka key stays)."""

    __slots__ = ("fields", "skipped_meta")

    def __init__(self, delivery_fields: Sequence[str] = ()):
        self.fields = tuple(f for f in EVENT_FIELDS if f != "meta" and f not in delivery_fields)
        self.skipped_meta = frozenset(f.removeprefix("meta.") for f in delivery_fields if f.startswith("meta."))

    def _meta(self, meta: dict | None) -> dict | None:
        if not meta:
            return meta
        skipped = self.skipped_meta
        return {k: v for k, v in meta.items() if k == KAFKA_KEY or not (k.startswith(PREFIX) or k in skipped)}

    def exact(self, event: dict) -> tuple:
        """The delivery identity itself, what `mark_redeliveries` compares: maps by their keys and values in the
        order they hold them, meta's kept entries sorted."""
        values = [tuple(v) if isinstance(v, list) else (tuple(v), tuple(v.values())) if isinstance(v, dict) else v
                  for v in (event[f] for f in self.fields)]  # fmt: skip
        meta = self._meta(event["meta"])
        return (*values, tuple(sorted(meta.items())) if meta is not None else None, event["row_index"])

    def hash(self, event: dict) -> int:
        """An unsigned 64-bit hash of the event's delivery identity (the same on every worker and run)."""
        meta = self._meta(event["meta"])
        values = [event[f] for f in self.fields]
        values.append(meta)
        values.append(event["row_index"])
        text = orjson.dumps(values, option=orjson.OPT_SORT_KEYS, default=str)
        return int.from_bytes(blake2b(text, digest_size=8).digest(), "little")


def mark_redeliveries(events: list[dict], delivery_fields: Sequence[str]) -> int:
    """Mark each event repeating an earlier one (by file, line, row) with `cdc.duplicate_of`: the one exact
    comparison of both engines (the local decode's over the events whose hashes repeat, Spark's in the tasks
    those events are grouped into by their hash). The number marked."""
    identity = DeliveryIdentity(delivery_fields)
    first: dict[tuple, str] = {}
    marked = 0
    for event in sorted(events, key=lambda e: (e["source_file"], e["source_line"], row_index(e))):
        key = identity.exact(event | {"row_index": row_index(event)})
        original = first.setdefault(key, event["event_id"])
        if original != event["event_id"]:
            event["meta"] = {**(event["meta"] or {}), DUPLICATE_OF: original}
            marked += 1
    return marked
