"""Peer-style expectations from canonical events: Flink's changelog strings and Paimon's table rows.

Flink's SerDe tests print each row change as `+I(101,scooter,...)`, an update as `-U(before)` then
`+U(after)`, a delete as `-D(before)`. Paimon's sync-table tests apply the changes to a keyed table
and compare its rows, `+I[101, scooter, ..., NULL]`, every column read as a string. Values here are
our canonical text, so an expected string that matches proves the exact digits came through.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tests.conftest import resource

PEER = resource("peer")
FLINK_COLUMNS = ("id", "name", "description", "weight")
# Paimon's test files: 17 comment lines of license and a blank line before the messages
HEADER_LINES = 18
# Flink's products story (the 1.11 canal, Maxwell and OGG SerDe tests assert it; OGG's file stops after the
# delete of 111, its first 20 changes)
FLINK_PRODUCTS = [
    "+I(101,scooter,Small 2-wheel scooter,3.14)",
    "+I(102,car battery,12V car battery,8.1)",
    "+I(103,12-pack drill bits,12-pack of drill bits with sizes ranging from #40 to #3,0.8)",
    "+I(104,hammer,12oz carpenter's hammer,0.75)",
    "+I(105,hammer,14oz carpenter's hammer,0.875)",
    "+I(106,hammer,16oz carpenter's hammer,1.0)",
    "+I(107,rocks,box of assorted rocks,5.3)",
    "+I(108,jacket,water resistent black wind breaker,0.1)",
    "+I(109,spare tire,24 inch spare tire,22.2)",
    "-U(106,hammer,16oz carpenter's hammer,1.0)",
    "+U(106,hammer,18oz carpenter hammer,1.0)",
    "-U(107,rocks,box of assorted rocks,5.3)",
    "+U(107,rocks,box of assorted rocks,5.1)",
    "+I(110,jacket,water resistent white wind breaker,0.2)",
    "+I(111,scooter,Big 2-wheel scooter ,5.18)",
    "-U(110,jacket,water resistent white wind breaker,0.2)",
    "+U(110,jacket,new water resistent white wind breaker,0.5)",
    "-U(111,scooter,Big 2-wheel scooter ,5.18)",
    "+U(111,scooter,Big 2-wheel scooter ,5.17)",
    "-D(111,scooter,Big 2-wheel scooter ,5.17)",
    "-U(101,scooter,Small 2-wheel scooter,3.14)",
    "+U(101,scooter,Small 2-wheel scooter,5.17)",
    "-U(102,car battery,12V car battery,8.1)",
    "+U(102,car battery,12V car battery,5.17)",
    "-D(102,car battery,12V car battery,5.17)",
    "-D(103,12-pack drill bits,12-pack of drill bits with sizes ranging from #40 to #3,0.8)",
]


def decoded_files(decode, format_id: str, *paths, **options) -> list[dict]:
    """The events of the files, file after file, as one topic's extract read in order; the only
    rejects allowed are Paimon's license header and blank lines."""
    events = []
    for path in paths:
        got, rejects, _ = decode(format_id, path, **options)
        assert all(r["source_line"] <= HEADER_LINES or r["reason"] == "empty line" for r in rejects), rejects
        events += got
    return events


def as_written(column: str, value: str) -> str:
    return value


def flink_row(kind: str, image: dict, columns=FLINK_COLUMNS, show: Callable = as_written) -> str:
    assert set(image) == set(columns), f"image columns {sorted(image)} != {sorted(columns)}"
    return f"{kind}({','.join('null' if image[c] is None else show(c, image[c]) for c in columns)})"


def changelog(events: Iterable[dict], columns=FLINK_COLUMNS, show: Callable = as_written) -> list[str]:
    """Flink's changelog: INSERT -> +I(after); UPDATE -> -U(before), +U(after); DELETE -> -D(before)."""
    out = []
    for e in events:
        if e["op"] == "INSERT":
            out.append(flink_row("+I", e["after"], columns, show))
        elif e["op"] == "UPDATE":
            out += [flink_row("-U", e["before"], columns, show), flink_row("+U", e["after"], columns, show)]
        elif e["op"] == "DELETE":
            out.append(flink_row("-D", e["before"], columns, show))
    return out


def table_rows(events: Iterable[dict], key: str, null: str = "NULL") -> list[str]:
    """Paimon's view: the changes applied to a table keyed by `key` (schema evolution adds the new
    columns, NULL where a row has none), its rows as `+I[v1, v2, ...]`, sorted."""
    columns: list[str] = []
    rows: dict[str, dict] = {}
    for e in events:
        for image in (e["before"], e["after"]):
            columns += [c for c in image or () if c not in columns]
        if e["op"] in ("INSERT", "UPDATE", "UPSERT"):
            if e["before"] is not None and e["before"][key] != e["after"][key]:
                rows.pop(e["before"][key], None)
            rows[e["after"][key]] = e["after"]
        elif e["op"] == "DELETE":
            rows.pop(e["before"][key], None)
    shown = (", ".join(null if row.get(c) is None else row[c] for c in columns) for row in rows.values())
    return sorted(f"+I[{text}]" for text in shown)
