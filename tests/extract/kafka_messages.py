"""The test topics' messages: canal, Debezium (keys, deletes and their tombstones) and DTS Avro (binary),
each a Kafka record with a chosen partition, timestamp and headers."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import fastavro

from cdc_pipelines.formats.dts_avro_records import record_schemas

DAY_MS = 86_400_000
N = "com.alibaba.dts.formats.avro."


@dataclass(frozen=True)
class Record:
    partition: int
    ts: int
    value: bytes | None
    key: bytes | None = None
    headers: tuple[tuple[str, bytes | None], ...] = ()


def canal(n: int, ts: int) -> bytes:
    """A canal INSERT (or UPDATE every third) of row `n` of shop.orders."""
    kind = "UPDATE" if n % 3 == 0 else "INSERT"
    old = [{"name": f"old-{n}"}] if kind == "UPDATE" else None
    return json.dumps({
        "id": n, "database": "shop", "table": "orders", "pkNames": ["id"], "isDdl": False, "type": kind,
        "es": ts - 5, "ts": ts, "sql": "", "sqlType": {"id": 4, "name": 12},
        "mysqlType": {"id": "int", "name": "varchar(20)"},
        "data": [{"id": str(n), "name": f"name-{n}"}], "old": old,
    }).encode()  # fmt: skip


def debezium(n: int, ts: int, op: str) -> tuple[bytes, bytes]:
    """(key, value) of a Debezium change of row `n` of shop.customers (payload only, no schema)."""
    row = {"id": n, "email": f"c{n}@example.com"}
    before = None if op == "c" else row
    after = None if op == "d" else {**row, "email": f"new{n}@example.com"} if op == "u" else row
    source = {"connector": "mysql", "name": "dbz", "ts_ms": ts - 10, "db": "shop", "table": "customers",
              "file": "mysql-bin.000001", "pos": 1000 + n}  # fmt: skip
    value = {"payload": {"op": op, "source": source, "before": before, "after": after, "ts_ms": ts}}
    return json.dumps({"id": n}).encode(), json.dumps(value).encode()


def dts_avro(n: int, ts: int) -> bytes:
    """A schemaless DTS Avro INSERT record of row `n` of shop.items."""
    record = {
        "version": 1, "id": n, "sourceTimestamp": ts // 1000, "sourcePosition": f"{n}@mysql-bin.000003",
        "safeSourcePosition": f"{n}@mysql-bin.000003", "sourceTxid": f"tx-{n}",
        "source": {"sourceType": "MySQL", "version": "8.0.32"}, "operation": "INSERT", "objectName": "shop.items",
        "processTimestamps": [ts], "tags": {"pk_uk_info": '{"PRIMARY":["id"]}'},
        "fields": [{"name": "id", "dataTypeNumber": 8}, {"name": "name", "dataTypeNumber": 253}],
        "beforeImages": None,
        "afterImages": [(N + "Integer", {"precision": 20, "value": str(n)}),
                        (N + "Character", {"charset": "utf8mb4", "value": f"item-{n}-\u00e9".encode()})],
        "bornTimestamp": ts,
    }  # fmt: skip
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, record_schemas()[0], record)
    return buf.getvalue()


def day_ms(day0_ms: int, day: int, hour: float) -> int:
    return day0_ms + day * DAY_MS + int(hour * 3_600_000)


def topic_records(format_id: str, day0_ms: int, days: int = 3, partitions: int = 3, first: int = 0) -> list[Record]:
    """Messages spread over `days` days from `day0_ms` (UTC midnight) and `partitions` partitions, each
    partition's last one past the last day (so every day is complete); `first` numbers them on."""
    out = []
    hours = [0.0, 1.5, 6.25, 12.0, 18.5, 23.99]
    n = first
    for day in range(days):
        for i, hour in enumerate(hours):
            partition = (n + i) % partitions
            ts = day_ms(day0_ms, day, hour)
            headers = (("trace", f"t-{n}".encode()), ("empty", b"")) if n % 4 == 0 else ()
            if format_id == "oms-canal":
                out.append(Record(partition, ts, canal(n, ts), None if n % 5 else f"k{n}".encode(), headers))
            elif format_id == "dts-avro":
                out.append(Record(partition, ts, dts_avro(n, ts), f"{n}".encode(), headers))
            else:
                op = "cud"[n % 3]
                key, value = debezium(n, ts, op)
                out.append(Record(partition, ts, value, key, headers))
                if op == "d":
                    out.append(Record(partition, ts + 1, None, key))  # the tombstone after the delete
            n += 1
    for partition in range(partitions):  # past the last day: every day before it is complete
        ts = day_ms(day0_ms, days, 0.5)
        if format_id == "oms-canal":
            value = canal(10_000 + partition, ts)
        elif format_id == "dts-avro":
            value = dts_avro(10_000 + partition, ts)
        else:
            value = debezium(10_000 + partition, ts, "c")[1]
        out.append(Record(partition, ts, value))
    return out
