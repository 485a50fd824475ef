"""Realistic sample extracts for every format: the demo's and the benchmark's data.

Canonical events are generated first (several tables, a composite key, every op, updates and
deletes of rows inserted earlier, DDL, heartbeats, awkward values: huge integers, long decimals,
unicode, NULLs), then re-encoded with each format's own encoder, so every extract is what that
format's writer would have produced. A few malformed lines are mixed in, as real dumps have.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import random
from collections.abc import Iterator
from pathlib import Path

from cdc_pipelines.formats import SELF_CONTAINED, get_codec
from cdc_pipelines.formats.encoding import Unsupported
from cdc_pipelines.model import meta_keys

TABLES = {
    ("shop", "orders"): (["order_id"], {"order_id": "INT", "customer": "STRING", "amount": "DECIMAL",
                                        "placed_at": "DATETIME", "note": "STRING"}),
    ("shop", "order_items"): (["order_id", "line_no"], {"order_id": "INT", "line_no": "INT", "sku": "STRING",
                                                        "qty": "INT", "price": "DECIMAL"}),
    ("crm", "customers"): (["customer_id"], {"customer_id": "INT", "name": "STRING", "vip": "BOOLEAN",
                                             "photo": "BYTES", "born": "DATE"}),
}  # fmt: skip
MALFORMED = ['{"truncated": ', "not json at all", ""]
NUMERIC = {"INT", "DECIMAL", "FLOAT", "DOUBLE"}


def _value(rng: random.Random, logical: str, key: int) -> str | None:
    if logical == "INT":
        return str(key) if rng.random() < 0.9 else "10223372036854775806"
    if logical == "DECIMAL":
        return rng.choice(
            [f"{rng.randint(0, 99999)}.{rng.randint(0, 99):02d}", "0.10", "12345678901234567890.123456789"]
        )
    if logical == "STRING":
        return rng.choice(["plain", 'quote " and \\ backslash', "unicode 中文 ✓ 😀", "tab\tand\u0001", None])
    if logical == "BOOLEAN":
        return rng.choice(["true", "false"])
    if logical == "BYTES":
        return base64.b64encode(rng.randbytes(rng.randint(0, 12))).decode()
    if logical == "DATE":
        return (dt.date(1990, 1, 1) + dt.timedelta(days=rng.randint(0, 12000))).isoformat()
    if logical == "DATETIME":
        at = dt.datetime(2024, 1, 1) + dt.timedelta(seconds=rng.randint(0, 300 * 86400))
        return at.strftime("%Y-%m-%d %H:%M:%S")
    return None


def _event(kind: str, day: dt.date, n: int, db: str, table: str, before, after, ddl=None, step: int = 7) -> dict:
    pk, types = TABLES.get((db, table), ([], {}))
    at = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC) + dt.timedelta(seconds=n * step)
    lag = dt.timedelta(milliseconds=100 + (n * 37) % 900)  # sync lags the source by 0.1-1 s
    image = after or before or {}
    return {
        "event_id": f"demo-{day}-{n}", "source_format": "demo", "source_topic": "demo", "source_file": "demo",
        "source_line": n, "op": kind, "raw_op": kind, "db": db, "db_schema": None, "table_name": table,
        "event_time": at, "event_time_unit": "s", "sync_time": at + lag,
        "tx_id": f"tx-{n // 3}", "seq": str(n), "position": f"mysql-bin.000001:{1000 + n}",
        "pk_columns": pk if kind not in ("DDL", "HEARTBEAT") else None,
        "before": before, "after": after,
        "column_types": {c: types[c] for c in image} if image else None, "source_types": None, "ddl": ddl,
        "meta": {meta_keys.JSON_NUMBERS: json.dumps(sorted(c for c in image if types.get(c) in NUMERIC and image[c]))}
        if image else None,
        "dt": day.isoformat(),
    }  # fmt: skip


def day_keys(day: dt.date) -> int:
    """The first key a day's inserts take: each day's keys are new (a million a day, in INT range), so
    days applied in order tell one story, no day inserting a key an earlier one left."""
    return day.toordinal() % 2000 * 1_000_000


def canonical_events(day: dt.date, count: int, seed: int = 7, keys_from: int | None = None) -> Iterator[dict]:
    """`count` row events for `day` plus a DDL and a heartbeat, deterministic for (day, seed), spread
    evenly over the day (so the report's hourly chart has a shape). Inserts take keys from `keys_from`
    on (default `day_keys(day)`); updates and deletes touch the day's own inserts."""
    rng = random.Random(f"{seed}-{day}")
    first_key = day_keys(day) if keys_from is None else keys_from
    step = 86400 // (count + 2)
    live: dict[tuple, dict] = {}
    for n in range(count):
        db, table = rng.choice(list(TABLES))
        pk, types = TABLES[(db, table)]
        existing = [k for k in live if k[:2] == (db, table)]
        choice = rng.random()
        if existing and choice < 0.25:
            key = rng.choice(existing)
            before = live[key]
            changed = rng.choice([c for c in types if c not in pk])
            after = before | {changed: _value(rng, types[changed], n)}
            live[key] = after
            yield _event("UPDATE", day, n, db, table, before, after, step=step)
        elif existing and choice < 0.35:
            key = rng.choice(existing)
            yield _event("DELETE", day, n, db, table, live.pop(key), None, step=step)
        else:
            row = {c: _value(rng, t, n) for c, t in types.items()}
            row |= {c: str(first_key + n + i) for i, c in enumerate(pk)}
            live[(db, table, *(row[c] for c in pk))] = row
            yield _event("INSERT", day, n, db, table, None, row, step=step)
    ddl = "ALTER TABLE orders ADD COLUMN channel varchar(16)"
    yield _event("DDL", day, count, "shop", "orders", None, None, ddl=ddl, step=step)
    yield _event("HEARTBEAT", day, count + 1, None, None, None, None, step=step)


def write_extract(format_id: str, events: list[dict], path: Path, malformed: bool = True) -> dict[str, int]:
    """Encode events with `format_id`'s encoder into one extract file; return what was written."""
    codec = get_codec(format_id)
    options = codec.resolve_options({})
    path.parent.mkdir(parents=True, exist_ok=True)
    written = skipped = 0
    with open(path, "w", encoding="utf-8") as out:
        for i, event in enumerate(events):
            try:
                messages = codec.encode_event(event, options)
            except Unsupported:
                skipped += 1
                continue
            for message in messages:
                binary = isinstance(message, bytes)  # a binary format's message, as a `value_b64` line
                out.write((json.dumps({"value_b64": base64.b64encode(message).decode()}) if binary else message) + "\n")
                written += 1
            if malformed and i % 50 == 17:
                out.write(MALFORMED[(i // 50) % len(MALFORMED)] + "\n")
                written += 1
    return {"lines": written, "skipped": skipped}


def generate(root: str | Path, days: list[dt.date], per_day: int = 60, formats=SELF_CONTAINED) -> dict[str, dict]:
    """`root/<format>/dt=<day>/part-0.jsonl` for every format and day (the topic is named after the format)."""
    summary = {}
    for day in days:
        events = list(canonical_events(day, per_day))
        for format_id in formats:
            if get_codec(format_id).encode is None:
                continue
            path = Path(root) / format_id / f"dt={day.isoformat()}" / "part-0.jsonl"
            summary[f"{format_id}/{day}"] = write_extract(format_id, events, path)
    return summary


def wrap_kcat(source: Path, dest: Path, topic: str, partition: int = 0) -> int:
    """Write `source`'s lines as `kcat -C -J` envelopes (offsets from 0) into `dest`; return the line count."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    lines = source.read_text(encoding="utf-8").splitlines()
    stamp = 1704067200000
    with open(dest, "w", encoding="utf-8") as out:
        for offset, line in enumerate(lines):
            envelope = {"topic": topic, "partition": partition, "offset": offset, "tstype": "create",
                        "ts": stamp + offset, "key": None, "payload": line}  # fmt: skip
            out.write(json.dumps(envelope, ensure_ascii=False) + "\n")
    return len(lines)
