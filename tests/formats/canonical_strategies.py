"""Hypothesis strategies for canonical change events: every row op, DDL and heartbeats, every logical
type with NULLs, composite keys, unicode, huge integers and decimals, 9-digit fractions."""

from __future__ import annotations

import base64
import datetime as dt
import json

from hypothesis import strategies as st

ROW_OPS = ("INSERT", "UPDATE", "DELETE", "UPSERT")
NUMERIC = ("INT", "DECIMAL", "FLOAT", "DOUBLE")
TYPES = ("BOOLEAN", "INT", "DECIMAL", "FLOAT", "DOUBLE", "STRING", "BYTES", "DATE", "TIME", "DATETIME", "TIMESTAMP")
# text that any JSON writer round-trips: no lone surrogates, no U+FDD0 (the parser's reserved marker)
TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\ufdd0"), max_size=12)
# Epoch counts are told apart by their digits (10 s, 13 ms, ...): millis before 1973-03-04 have 11
# digits and read as seconds, and seconds after 2286 as millis (a documented limit), so instants stay
# inside the unambiguous range.
INSTANT_DAYS = st.dates(dt.date(1973, 3, 4), dt.date(2261, 12, 31))
NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,10}", fullmatch=True)


def _fraction(digits: int, n: int) -> str:
    return f".{n:0{digits}d}" if digits else ""


@st.composite
def _fractional(draw) -> str:
    digits = draw(st.integers(0, 9))
    return _fraction(digits, draw(st.integers(0, 10**digits - 1)))


def values(logical: str) -> st.SearchStrategy[str]:
    """Canonical text of one value of `logical` type."""
    day = st.dates(dt.date(1900, 1, 1), dt.date(2199, 12, 31))
    clock = st.times().map(lambda t: t.strftime("%H:%M:%S"))
    return {
        "BOOLEAN": st.sampled_from(["true", "false"]),
        "INT": st.integers(-(10**40), 10**40).map(str),
        "DECIMAL": st.builds(
            lambda sign, whole, frac: f"{sign}{whole}{frac}",
            st.sampled_from(["", "-"]),
            st.integers(0, 10**30),
            _fractional(),
        ),
        "FLOAT": st.floats(allow_nan=False, allow_infinity=False, width=32).map(repr),
        "DOUBLE": st.floats(allow_nan=False, allow_infinity=False).map(repr),
        "STRING": TEXT,
        "BYTES": st.binary(max_size=16).map(lambda b: base64.b64encode(b).decode()),
        "DATE": day.map(dt.date.isoformat),
        "TIME": st.builds(lambda c, f: c + f, clock, _fractional()),
        "DATETIME": st.builds(lambda d, c, f: f"{d} {c}{f}", day, clock, _fractional()),
        "TIMESTAMP": st.builds(lambda d, c, f: f"{d}T{c}{f}Z", INSTANT_DAYS, clock, _fractional()),
    }[logical]


@st.composite
def tables(draw) -> dict:
    """A table: db, name, a one- or two-column primary key (or none) and typed columns."""
    names = draw(st.lists(NAMES, min_size=1, max_size=6, unique_by=str.lower))
    types = {name: draw(st.sampled_from(TYPES)) for name in names}
    keyable = [n for n in names if types[n] in ("INT", "STRING", "DATE")]
    pk = draw(st.sampled_from([[], keyable[:1], keyable[:2]])) if keyable else []
    return {"db": draw(NAMES), "table": draw(NAMES), "pk": pk, "types": types}


@st.composite
def images(draw, table: dict) -> dict:
    row = {c: draw(st.none() | values(t)) for c, t in table["types"].items()}
    for c in table["pk"]:
        row[c] = row[c] if row[c] is not None else draw(values(table["types"][c]))
    return row


@st.composite
def events(draw, table: dict, n: int) -> dict:
    op = draw(st.sampled_from([*ROW_OPS, *ROW_OPS, "DDL", "HEARTBEAT", "TRUNCATE", "TX_BEGIN", "TX_END"]))
    before = draw(images(table)) if op == "DELETE" or (op == "UPDATE" and draw(st.integers(0, 9))) else None
    after = draw(images(table)) if op in ("INSERT", "UPDATE", "UPSERT") else None
    if op == "UPDATE" and before and draw(st.booleans()):
        after = {**after, **{c: before[c] for c in table["pk"]}}  # most updates keep their key
    image = after or before
    at = draw(st.datetimes(dt.datetime(2001, 1, 1), dt.datetime(2030, 1, 1))).replace(microsecond=0, tzinfo=dt.UTC)
    row_event = op in ROW_OPS
    names_table = op in (*ROW_OPS, "DDL", "TRUNCATE")
    numbers = sorted(c for c in image or {} if table["types"][c] in NUMERIC and image[c] is not None)
    return {
        "event_id": f"gen-{n}", "source_format": "generated", "source_topic": "generated",
        "source_file": "generated", "source_line": n, "op": op, "raw_op": None,
        "db": table["db"] if names_table else None,
        "db_schema": None, "table_name": table["table"] if names_table else None,
        "event_time": at, "event_time_unit": "s", "sync_time": at, "tx_id": None, "seq": str(n), "position": None,
        "pk_columns": table["pk"] if row_event else None, "before": before, "after": after,
        "column_types": dict(table["types"]) if row_event else None, "source_types": None,
        "ddl": f"ALTER TABLE {table['table']} ADD COLUMN {draw(NAMES)} varchar(8)" if op == "DDL" else None,
        "meta": {"cdc.json_numbers": json.dumps(numbers)} if row_event else None, "dt": "2024-01-01",
    }  # fmt: skip


@st.composite
def change_streams(draw, min_size: int = 20, max_size: int = 40) -> list[dict]:
    """Events over one to three tables, in order."""
    schemas = draw(st.lists(tables(), min_size=1, max_size=3))
    count = draw(st.integers(min_size, max_size))
    return [draw(events(schemas[draw(st.integers(0, len(schemas) - 1))], n)) for n in range(1, count + 1)]
