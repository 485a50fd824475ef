"""What a target format carries of a canonical event: the expectation for decode(encode_T(x)).

Written from the format specifications, independently of the codecs: which envelope fields a
target has, which ops it cannot express (those events are skipped with a reason), how its update
images are shaped, and in which representation its values come back. Value comparison is exact up
to representation: the same instant, day, time, number or bytes with the same significant digits.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from decimal import Decimal, InvalidOperation

FORMAT_IDS = (
    "oms-default", "oms-default-extend", "oms-canal", "oms-dataworks", "oms-shareplex", "oms-debezium",
    "oms-debezium-flatten", "oms-debezium-smt", "dts-avro", "dts-shareplex", "dts-canal", "dataworks-json",
    "datahub-tuple", "maxwell-json", "ogg-json", "aws-dms-json", "debezium-avro-confluent",
)  # fmt: skip
DEBEZIUM = ("oms-debezium", "oms-debezium-flatten", "oms-debezium-smt")
CANAL = ("oms-canal", "dts-canal")
# sources whose events a Debezium JSON target writes back with their Connect schema when they had one
WITH_CONNECT_SCHEMA = ("oms-debezium", "oms-debezium-flatten", "debezium-avro-confluent")
SHAREPLEX = ("oms-shareplex", "dts-shareplex")

# ops a target has no message for (the event is skipped by that target, with the reason)
TX = {"TX_BEGIN", "TX_END"}
UNCARRIED_OPS = {
    "oms-default": {"UPSERT", "TRUNCATE", *TX},
    "oms-default-extend": {"UPSERT", "TRUNCATE", *TX},
    "oms-canal": {"UPSERT", "HEARTBEAT", *TX},
    "dts-canal": {"UPSERT", "HEARTBEAT", *TX},
    "oms-dataworks": {"UPSERT"},
    "oms-shareplex": {"UPSERT", "HEARTBEAT", "TRUNCATE", *TX},
    "dts-shareplex": {"UPSERT", "HEARTBEAT", *TX},
    "oms-debezium": {"UPSERT", "DDL", *TX},
    "oms-debezium-flatten": {"UPSERT", "DDL", *TX},
    "oms-debezium-smt": {"DDL", "HEARTBEAT", "TRUNCATE", *TX},
    "debezium-avro-confluent": {"UPSERT", "DDL", *TX},
    "dts-avro": {"UPSERT", "TRUNCATE"},
    "dataworks-json": {"UPSERT"},
    "datahub-tuple": {"DDL", "HEARTBEAT", "TRUNCATE", "UPSERT", *TX},
    "maxwell-json": {"UPSERT", "HEARTBEAT", "TRUNCATE", *TX},
    "ogg-json": {"UPSERT", "DDL", "HEARTBEAT", *TX},
    "aws-dms-json": {"UPSERT", "DDL", "HEARTBEAT", "TRUNCATE", *TX},
}
# AWS DMS writes an update's before image as `BI_` columns beside the after image's
DMS_BEFORE_PREFIX = "BI_"
# targets whose update message needs the before image
UPDATE_NEEDS_BEFORE = (
    *CANAL, *SHAREPLEX, "oms-dataworks", "oms-default", "oms-default-extend", "dts-avro", "maxwell-json",
)  # fmt: skip
# targets whose update carries the changed columns' old values over the after image (canal/Maxwell `old`,
# DMS `BI_` columns): the before image comes back as the after image overlaid with the before image
BEFORE_OVER_AFTER = (*CANAL, "maxwell-json", "aws-dms-json")
# envelope fields a target does not carry (they come back NULL)
UNCARRIED_FIELDS = {"oms-debezium-smt": {"db", "table_name"}, "datahub-tuple": {"db"}}
ROW_OPS = ("INSERT", "UPDATE", "DELETE", "UPSERT")
TABLE_OPTIONAL = ("oms-debezium-smt", "datahub-tuple", *SHAREPLEX)  # a row change without a table name is fine


# fraction digits a target's temporal values hold: a value with more (non-zero) digits is not carried
FRACTION_DIGITS = {
    **{t: {"TIME": 6, "DATETIME": 3} for t in DEBEZIUM},
    "dts-avro": {"TIME": 6, "DATETIME": 6, "TIMESTAMP": 6},
}


def _too_fine(target: str, event: dict) -> bool:
    """A value the target cannot hold digit for digit: a fraction finer than its unit, or (DTS Avro's
    binary Float) a FLOAT/DOUBLE text that is no double's exact or shortest form."""
    digits = FRACTION_DIGITS.get(target, {})
    if target == "oms-debezium" and event["source_format"] in WITH_CONNECT_SCHEMA:
        if (event["meta"] or {}).get("cdc.schema") == "true":
            digits = {}  # written back with its schema (schema=auto): each column's logical name keeps its unit
    types = event["column_types"] or {}
    images = (event["before"], event["after"])
    if target == "oms-debezium-smt":
        images = (event["before"] if event["op"] == "DELETE" else event["after"],)
    for image in images:
        for column, value in (image or {}).items():
            fraction = re.search(r"[0-9]{2}:[0-9]{2}:[0-9]{2}\.([0-9]+)Z?$", value or "")
            if fraction and types.get(column) in digits and fraction[1][digits[types[column]] :].strip("0"):
                return True
            if target == "dts-avro" and types.get(column) in ("FLOAT", "DOUBLE") and value is not None:
                if Decimal(value) not in (Decimal(repr(float(value))), Decimal(float(value))):
                    return True
    return False


def expected_skip(target: str, event: dict) -> bool:
    """Whether `target` cannot carry `event` at all."""
    if event["op"] in UNCARRIED_OPS[target] or _too_fine(target, event):
        return True
    if target == "debezium-avro-confluent" and event["op"] in ROW_OPS:
        # a column is an Avro record's field, whose name is [A-Za-z_][A-Za-z0-9_]* (the Avro specification)
        columns = {*(event["before"] or ()), *(event["after"] or ())}
        if any(not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c) for c in columns):
            return True
    if event["op"] == "UPDATE" and event["before"] is None and target in UPDATE_NEEDS_BEFORE:
        return True
    if target == "aws-dms-json" and event["op"] == "UPDATE":
        columns = (*(event["before"] or ()), *(event["after"] or ()))
        if any(c.startswith(DMS_BEFORE_PREFIX) for c in columns) or event["before"] == {}:
            return True  # a column named like a before-image column cannot be told apart from one
    if target == "ogg-json" and event["op"] == "TRUNCATE":
        return event["table_name"] is None
    if event["op"] in ROW_OPS and target not in TABLE_OPTIONAL:
        return event["table_name"] is None
    if target == "oms-debezium-smt":
        return not (event["after"] or event["before"])
    return False


def carried(target: str, event: dict) -> dict:
    """The canonical fields decode(encode_target(event)) must give back."""
    op, before, after = event["op"], event["before"], event["after"]
    if op == "UPDATE" and target in SHAREPLEX and before is not None:
        after = {**before, **(after or {})}  # an update carries the changed columns over the before image
    if op == "UPDATE" and target in BEFORE_OVER_AFTER and before is not None:
        before = {**(after or {}), **before}  # `old` holds the changed columns; the rest is `data`
    if target == "oms-debezium-smt":
        op, before = ("UPSERT", None) if op in ("INSERT", "UPDATE", "UPSERT") else (op, before)
    out = {"op": op, "db": event["db"], "table_name": event["table_name"], "before": before, "after": after}
    out["ddl"] = event["ddl"]
    for name in UNCARRIED_FIELDS.get(target, ()):
        out[name] = None
    if target == event["source_format"] == "datahub-tuple" and "_source_table_" not in (event["meta"] or {}):
        out["table_name"] = None  # the table came from the topic's options, as it will again
    return out


def differences(target: str, event: dict, got: dict) -> list[str]:
    """Where `got` (re-decoded from `target`) differs from what `target` carries of `event`."""
    want = carried(target, event)
    problems = [f"{f}: {want[f]!r} != {got[f]!r}" for f in ("op", "db", "table_name", "ddl") if want[f] != got[f]]
    types = event["column_types"] or {}
    for image in ("before", "after"):
        a, b = want[image], got[image]
        if (a is None) != (b is None):
            problems.append(f"{image}: {a!r} != {b!r}")
            continue
        for column in sorted(set(a or {}) | set(b or {})):
            if column not in (a or {}) or column not in (b or {}):
                problems.append(f"{image}.{column}: present in only one image")
            elif not same_value(a[column], b[column], types.get(column, "UNKNOWN"), target):
                problems.append(f"{image}.{column} ({types.get(column)}): {a[column]!r} != {b[column]!r}")
    return problems


def same_value(want: str | None, got: str | None, logical: str, target: str) -> bool:
    """`got` is `want` in the representation `target` gives a value of type `logical`."""
    if want == got:
        return True
    if want is None or got is None:
        return False
    if logical == "TIMESTAMP":
        return _instant(want) == _instant(got)
    if logical == "BOOLEAN" and target == "dts-avro":  # MySQL's BOOLEAN is TINYINT(1): an Integer member
        return {"true": "1", "false": "0"}.get(want) == got
    if logical in ("FLOAT", "DOUBLE"):
        return _same_number(want, got, binary=target == "dts-avro")
    if target in DEBEZIUM and logical == "BYTES":
        return base64.b64encode(bytes.fromhex(got)).decode() == want
    if target in DEBEZIUM and re.fullmatch(r"-?[0-9]+", got):
        got = _from_debezium_integer(got, logical) or got
    if logical in ("TIME", "DATETIME"):
        return _trimmed(want) == _trimmed(got)
    return want == got


def _trimmed(clock: str) -> str:
    """Time text without trailing zeros in its fraction: `12:00:01.500` and `12:00:01.5` are one time."""
    return re.sub(r"\.?0*$", "", clock) if re.search(r"[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+$", clock) else clock


def _instant(text: str) -> tuple | None:
    """(seconds since epoch, significant fraction digits) of an ISO instant or epoch-seconds text."""
    epoch = re.fullmatch(r"(-?[0-9]+)(?:\.([0-9]{1,9}))?", text)
    if epoch:
        return int(epoch[1]), (epoch[2] or "").rstrip("0")
    iso = re.fullmatch(r"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]{1,9}))?Z", text)
    if not iso:
        return None
    seconds = int(dt.datetime.fromisoformat(iso[1] + "+00:00").timestamp())
    return seconds, (iso[2] or "").rstrip("0")


def _same_number(want: str, got: str, binary: bool) -> bool:
    try:
        if Decimal(want) == Decimal(got):
            return True
        # a binary double stands for exactly one decimal value: the shortest text names the same one
        return binary and float(want) == float(got) and Decimal(float(want)) == Decimal(want)
    except (InvalidOperation, ValueError):
        return False


def _from_debezium_integer(value: str, logical: str) -> str | None:
    """OMS Debezium's schema-less integers: DATE days, TIME micros, DATETIME millis."""
    n = int(value)
    if logical == "DATE":
        return (dt.date(1970, 1, 1) + dt.timedelta(days=n)).isoformat()
    if logical == "TIME":
        seconds, micros = divmod(n, 1_000_000)
        return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{micros:06d}"
    if logical == "DATETIME":
        at = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=n)
        return at.strftime("%Y-%m-%d %H:%M:%S.") + f"{at.microsecond // 1000:03d}"
    return None
