"""Real CDC messages other projects test with (Flink, Paimon, SeaTunnel, RisingWave), decoded by our codecs.

The files under `tests/resources/peer/<project>/` are byte-for-byte copies of the peer test resources
listed in `../shared/reference/peer-corpora/SOURCES.txt`. Canal files decode with `oms-canal`, Debezium
files with `oms-debezium` and `binary=base64` (standard Debezium writes bytes as base64, OMS as base16).
Open-source canal writes binary values as ISO-8859-1 text, so the canal files whose `mysqlType` has a
binary, blob, bit or spatial column (Paimon's all-types table and event-row) decode with `binary=latin1`;
the others keep the default. Canal TIMESTAMP text has no zone and is read in the default `timezone=UTC`.

Expectations come from the peers' own tests where they exist (Flink's `CanalJsonSerDeSchemaTest`,
`CanalJsonDeserializationSchemaTest` (1.11) and `DebeziumJsonSerDeSchemaTest` expected changelogs and
metadata; Paimon's `testAllTypes` and schema-evolution expected rows) and otherwise from reading the JSON
by hand. Values are compared as exact text: where Flink prints a FLOAT (`3.14`) and Debezium wrote the
double `3.140000104904175`, our canonical value is the text Debezium wrote; a separate test checks that
the float32 view of our text is exactly Flink's expected list.

"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import json
import re
import struct
from dataclasses import dataclass, field

import pytest

from tests.conftest import resource
from tests.decode.oracles import decode_paths
from tests.formats.changelog import FLINK_PRODUCTS

PEER = resource("peer")
CANAL, DEBEZIUM = "oms-canal", "oms-debezium"
BASE64, LATIN1 = {"binary": "base64"}, {"binary": "latin1"}

# Paimon test files start with a 17-line Apache license comment and a blank line.
LICENSE_REJECTS = {**dict.fromkeys(range(1, 18), "not a valid JSON object"), 18: "empty line"}
# line 16 of the canal filter-table file inserts into `project`, whose mysqlType says id int(11), 'A101'..
FILTER_TABLE_REJECTS = {16: "value does not fit its type in column(s) id:INT"}


@dataclass(frozen=True)
class Spec:
    """One peer file: how to decode it and the right numbers of lines, events and rejects."""

    format_id: str
    lines: int
    events: int
    rejects: dict[int, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)


FILES: dict[str, Spec] = {
    # Flink (flink-json test resources)
    "flink-1.11.2/canal-data.txt": Spec(CANAL, lines=10, events=20),
    "flink/canal-data.txt": Spec(CANAL, lines=11, events=21),
    "flink/canal-data-filter-table.txt": Spec(CANAL, lines=16, events=28, rejects=FILTER_TABLE_REJECTS),
    "flink/debezium-data-schema-include.txt": Spec(DEBEZIUM, lines=16, events=16, options=BASE64),
    "flink/debezium-data-schema-exclude.txt": Spec(DEBEZIUM, lines=16, events=16, options=BASE64),
    "flink/debezium-postgres-data-schema-include.txt": Spec(DEBEZIUM, lines=16, events=16, options=BASE64),
    "flink/debezium-postgres-data-schema-exclude.txt": Spec(DEBEZIUM, lines=16, events=16, options=BASE64),
    # lines 10, 11, 14, 15: updates with before=null (kept); line 16: a delete with neither image
    "flink/debezium-postgres-data-replica-identity.txt": Spec(
        DEBEZIUM, lines=16, events=15, rejects={16: "DELETE without a before image"}, options=BASE64
    ),
    # RisingWave: line 1 holds {"v1": "a"} in an int column (the whole 3-row message is rejected)
    "risingwave/canal_json_double_field.1": Spec(
        CANAL, lines=3, events=4, rejects={1: "value does not fit its type in column(s) v1:INT"}
    ),
    # SeaTunnel (canal-data-filter-table.txt is the same file as Flink's)
    "seatunnel/canal-data-filter-table.txt": Spec(CANAL, lines=16, events=28, rejects=FILTER_TABLE_REJECTS),
    "seatunnel/canal_data.txt": Spec(CANAL, lines=7, events=15),
    "seatunnel/debezium-data.txt": Spec(DEBEZIUM, lines=16, events=16, options=BASE64),
    "seatunnel/debezium_data.txt": Spec(DEBEZIUM, lines=3, events=3, options=BASE64),
    # Paimon (kafka/canal/table/alltype, kafka/canal/table/event, kafka/debezium/table/schema/schemaevolution);
    # canal-data.txt has BINARY/VARBINARY/BLOB and spatial columns, event-row.txt a VARBINARY(10)
    "paimon/canal-data.txt": Spec(CANAL, lines=19, events=2, rejects=LICENSE_REJECTS, options=LATIN1),
    "paimon/event-delete.txt": Spec(CANAL, lines=19, events=1, rejects=LICENSE_REJECTS),
    "paimon/event-insert.txt": Spec(CANAL, lines=20, events=3, rejects=LICENSE_REJECTS),
    "paimon/event-row.txt": Spec(CANAL, lines=19, events=1, rejects=LICENSE_REJECTS, options=LATIN1),
    "paimon/event-update.txt": Spec(CANAL, lines=19, events=1, rejects=LICENSE_REJECTS),
    **{
        f"paimon/debezium-data-{n}.txt": Spec(DEBEZIUM, lines=19, events=1, rejects=LICENSE_REJECTS, options=BASE64)
        for n in (1, 2, 3, 4, 5, "with-delete")
    },
}


@dataclass
class Decoded:
    events: list[dict]
    rejects: list[dict]


def _batch_key(spec: Spec) -> tuple:
    return (spec.format_id, tuple(sorted(spec.options.items())))


BATCHES = sorted({_batch_key(s) for s in FILES.values()})


@pytest.fixture(scope="module")
def batches():
    """Every file decoded exactly once, in process: one decode per (format, options), as a real
    extract of many files would be.

    Returns {batch key: LocalDecode} and {name: Decoded}.
    """
    extracts = {}
    for key in BATCHES:
        names = [n for n, s in FILES.items() if _batch_key(s) == key]
        extracts[key] = decode_paths(
            key[0], [PEER / n for n in names], topic="t", dt="2024-01-01", options=dict(key[1])
        )
    events = sorted(
        (e for x in extracts.values() for e in x.events),
        key=lambda r: (r["source_file"], r["source_line"], r["event_id"]),
    )
    rejects = sorted(
        (r for x in extracts.values() for r in x.rejects), key=lambda r: (r["source_file"], r["source_line"])
    )
    per_file = {
        name: Decoded(
            [e for e in events if e["source_file"].endswith("/peer/" + name)],
            [r for r in rejects if r["source_file"].endswith("/peer/" + name)],
        )
        for name in FILES
    }
    assert sum(len(d.events) for d in per_file.values()) == len(events), "an event of no input file"
    assert sum(len(d.rejects) for d in per_file.values()) == len(rejects), "a reject of no input file"
    return extracts, per_file


@pytest.fixture(scope="module")
def peer(batches):
    """peer(name) -> Decoded (events and rejects of that file)."""
    return batches[1].__getitem__


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------
FLINK_COLUMNS = ("id", "name", "description", "weight")
FLINK_TYPES = {"id": "INT", "name": "STRING", "description": "STRING", "weight": "DOUBLE"}


def epoch_ms(value: dt.datetime) -> int:
    """Epoch millis of a collected Spark timestamp (naive, in the Python process's local zone)."""
    return round(value.timestamp() * 1000)


@functools.cache
def raw_messages(name: str) -> dict[int, dict]:
    """Line number -> the message parsed by hand (numbers kept as text), for JSON lines only."""
    out = {}
    for number, line in enumerate((PEER / name).read_bytes().splitlines(), 1):
        try:
            out[number] = json.loads(line, parse_float=str, parse_int=str)
        except ValueError:
            pass
    return out


def in_message_order(name: str, events: list[dict]) -> list[dict]:
    """Events ordered as the message wrote them: by line, then by position in the canal `data` array.

    The canonical table has no column for a row's index in its message, so it is found by matching the
    row image (after for INSERT/UPDATE, before for DELETE) against the raw `data` rows, on the
    message's `pkNames` columns (on every column where the message names no key).
    """
    messages = raw_messages(name)
    used: set[tuple[int, int]] = set()

    def key(event):
        line = event["source_line"]
        if event["op"] not in ("INSERT", "UPDATE", "DELETE") or "data" not in messages[line]:
            return (line, 0)
        image = event["before"] if event["op"] == "DELETE" else event["after"]
        for index, row in enumerate(messages[line]["data"]):
            columns = messages[line].get("pkNames") or list(row)
            if (line, index) not in used and all(row[c] == image.get(c) for c in columns) and set(row) == set(image):
                used.add((line, index))
                return (line, index)
        raise AssertionError(f"line {line}: image {image} is none of the rows the message wrote")

    return [e for _, e in sorted(((key(e), e) for e in events), key=lambda pair: pair[0])]


def flink_row(kind: str, image: dict, show=lambda column, value: value) -> str:
    assert set(image) == set(FLINK_COLUMNS), f"image columns {sorted(image)} != {sorted(FLINK_COLUMNS)}"
    return f"{kind}({','.join('null' if image[c] is None else show(c, image[c]) for c in FLINK_COLUMNS)})"


def changelog(events: list[dict], **kwargs) -> list[str]:
    """Flink's changelog style: INSERT -> +I(after); UPDATE -> -U(before), +U(after); DELETE -> -D(before)."""
    out = []
    for e in events:
        if e["op"] == "INSERT":
            out.append(flink_row("+I", e["after"], **kwargs))
        elif e["op"] == "UPDATE":
            out += [flink_row("-U", e["before"], **kwargs), flink_row("+U", e["after"], **kwargs)]
        elif e["op"] == "DELETE":
            out.append(flink_row("-D", e["before"], **kwargs))
    return out


def java_float_text(text: str) -> str:
    """What Flink prints for a FLOAT column holding `text`: Java's Float.toString of the float32 value."""

    def f32(x: float) -> float:
        return struct.unpack("<f", struct.pack("<f", x))[0]

    value = f32(float(text))
    shortest = next(s for s in (f"{value:.{d}g}" for d in range(1, 10)) if f32(float(s)) == value)
    return shortest if ("." in shortest or "e" in shortest) else shortest + ".0"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def by_type(**columns: str) -> dict[str, str]:
    """{column: logical type} from {logical type: "column column ..."}."""
    return {c: logical for logical, names in columns.items() for c in names.split()}


# ---------------------------------------------------------------------------------------------
# Every file: counts, rejects and conservation, times, values in canonical form
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(FILES))
def test_counts_rejects_and_conservation(peer, name):
    """The right events and rejects; lines == distinct decoded messages + rejected messages, none twice."""
    spec, got = FILES[name], peer(name)
    assert {r["source_line"]: r["reason"] for r in got.rejects} == spec.rejects
    assert len(got.events) == spec.events
    lines = len((PEER / name).read_bytes().splitlines())
    decoded_lines = {e["source_line"] for e in got.events}
    rejected_lines = [r["source_line"] for r in got.rejects]
    assert lines == spec.lines
    assert len(rejected_lines) == len(set(rejected_lines)) and not decoded_lines & set(rejected_lines)
    assert decoded_lines | set(rejected_lines) == set(range(1, lines + 1))


@pytest.mark.parametrize("key", BATCHES, ids=lambda k: k[0] + "".join(f"-{o}={v}" for o, v in k[1]))
def test_counts(batches, peer, key):
    """The decode's counts (conservation: read = decoded + rejected) agree with the files."""
    names = [n for n, s in FILES.items() if _batch_key(s) == key]
    assert batches[0][key].counts == {
        "read": sum(FILES[n].lines for n in names),
        "decoded": sum(len({e["source_line"] for e in peer(n).events}) for n in names),
        "rejected": sum(len(peer(n).rejects) for n in names),
        "filtered": 0,
        "events": sum(len(peer(n).events) for n in names),
    }


@pytest.mark.parametrize("name", list(FILES))
def test_event_and_sync_times_are_the_message_millis(peer, name):
    """Canal `es`/`ts` and Debezium `source.ts_ms`/`ts_ms` are epoch milliseconds, also when 0 (MySQL
    snapshot rows of Debezium): event_time, sync_time and event_time_unit "ms" of every event."""
    got = []
    for e in peer(name).events:
        m = raw_messages(name)[e["source_line"]]
        if FILES[name].format_id == CANAL:
            want = (int(m["es"]), int(m["ts"]))
        else:
            payload = m.get("payload", m)
            want = (int(payload["source"]["ts_ms"]), int(payload["ts_ms"]))
        got.append(((epoch_ms(e["event_time"]), epoch_ms(e["sync_time"]), e["event_time_unit"]), (*want, "ms")))
    assert [g for g, _ in got] == [w for _, w in got]


_NUMBER = r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
CANONICAL_FORM = {
    "INT": r"-?[0-9]+",
    "DECIMAL": _NUMBER,
    "FLOAT": _NUMBER + "|NaN|-?Infinity",
    "DOUBLE": _NUMBER + "|NaN|-?Infinity",
    "BOOLEAN": "true|false",
    "DATE": r"[0-9]{4}-[0-9]{2}-[0-9]{2}",
    "TIME": r"[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?",
    "DATETIME": r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?",
    "TIMESTAMP": r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?Z",
    "BYTES": r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?",
}


@pytest.mark.parametrize("name", list(FILES))
def test_values_fit_their_types(peer, name):
    """Every image value is in the canonical text form of its logical type (docs/concepts.md, the canonical
    change table)."""
    misfits = []
    for e in peer(name).events:
        for image in (e["before"], e["after"]):
            for column, value in (image or {}).items():
                logical = e["column_types"][column]
                if value is None:
                    continue
                if logical == "JSON":
                    try:
                        json.loads(value)
                    except ValueError:
                        misfits.append((e["source_line"], column, logical, value))
                elif logical in CANONICAL_FORM and not re.fullmatch(CANONICAL_FORM[logical], value):
                    misfits.append((e["source_line"], column, logical, value[:40]))
    assert misfits == []


# ---------------------------------------------------------------------------------------------
# Flink canal: the expected changelog of Flink's own tests
# ---------------------------------------------------------------------------------------------
# flink-formats/flink-json .../canal/CanalJsonDeserializationSchemaTest.java (Flink 1.11), for the
# flink-1.11.2 canal-data.txt.
FLINK_1_11_CANAL_EXPECTED = FLINK_PRODUCTS
# .../canal/CanalJsonSerDeSchemaTest.java (runTest, used by testSerializationDeserialization on
# canal-data.txt and by testFilteringTables on canal-data-filter-table.txt with database "^my.*" and
# table "^prod.*"): 106 is inserted with a null description and `old` records the null.
FLINK_CANAL_EXPECTED = [
    row.replace("106,hammer,16oz carpenter's hammer,1.0", "106,hammer,null,1.0") for row in FLINK_1_11_CANAL_EXPECTED
]
FLINK_TABLE_FILTER = (r"^my.*", r"^prod.*")  # Flink matches the whole name (Pattern.matcher().matches())


@pytest.mark.parametrize(
    "name, expected, table_filter",
    [
        ("flink-1.11.2/canal-data.txt", FLINK_1_11_CANAL_EXPECTED, None),
        ("flink/canal-data.txt", FLINK_CANAL_EXPECTED, None),
        ("flink/canal-data-filter-table.txt", FLINK_CANAL_EXPECTED, FLINK_TABLE_FILTER),
        ("seatunnel/canal-data-filter-table.txt", FLINK_CANAL_EXPECTED, FLINK_TABLE_FILTER),
    ],
)
def test_flink_canal_changelog(peer, name, expected, table_filter):
    events = peer(name).events
    if table_filter:
        db_re, table_re = table_filter
        events = [e for e in events if re.fullmatch(db_re, e["db"]) and re.fullmatch(table_re, e["table_name"])]
    assert changelog(in_message_order(name, events)) == expected
    rows = [e for e in events if e["op"] != "DDL"]
    assert {(e["db"], e["table_name"]) for e in rows} == (
        {("inventory", "products2")} if not table_filter else {("mydb", "product")}
    )
    for e in rows:
        assert e["pk_columns"] == ["id"]
        assert e["column_types"] == FLINK_TYPES | {"weight": "FLOAT"}
    # the update of 106 in the newer files: `old` says description was null, and null is kept
    if expected is FLINK_CANAL_EXPECTED:
        (update_106,) = [e for e in rows if e["op"] == "UPDATE" and e["after"]["id"] == "106"]
        assert json.loads(update_106["meta"]["cdc.changed_columns"]) == ["description"]


@pytest.mark.parametrize(
    "name, db, table, sync_ms, event_ms, mysql_types",
    [
        # CanalJsonSerDeSchemaTest.testDeserializationWithMetadata (first line of each file)
        (
            "flink/canal-data.txt",
            "inventory",
            "products2",
            1589373515477,
            1589373515000,
            {"id": "INTEGER", "name": "VARCHAR(255)", "description": "VARCHAR(512)", "weight": "FLOAT"},
        ),
        (
            "flink/canal-data-filter-table.txt",
            "mydb",
            "product",
            1598944146308,
            1598944132000,
            {"id": "int(11)", "name": "varchar(255)", "description": "varchar(512)", "weight": "float"},
        ),
    ],
)
def test_flink_canal_metadata(peer, name, db, table, sync_ms, event_ms, mysql_types):
    first = [e for e in peer(name).events if e["source_line"] == 1]
    assert len(first) == 9
    for e in first:
        assert (e["db"], e["table_name"], e["pk_columns"]) == (db, table, ["id"])
        assert (epoch_ms(e["sync_time"]), epoch_ms(e["event_time"]), e["event_time_unit"]) == (sync_ms, event_ms, "ms")
        assert len(json.loads(e["meta"]["sqlType"])) == 4  # Flink: sql-type map of size 4
        assert e["source_types"] == mysql_types


@pytest.mark.parametrize(
    "name, line, raw_op, table, ddl",
    [
        (
            "flink/canal-data.txt",
            10,
            "CREATE",
            "user02",
            "CREATE TABLE `xj_`.`user02` (`uid` int(0) NOT NULL,`uname` varchar(255) NULL, PRIMARY KEY (`uid`))",
        ),
        (
            "flink/canal-data-filter-table.txt",
            3,
            "CREATE",
            "orders",
            "CREATE TABLE orders (\n  order_number INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY,\n"
            "  order_date DATE NOT NULL,\n  purchaser INTEGER NOT NULL,\n  quantity INTEGER NOT NULL,\n"
            "  product_id INTEGER NOT NULL\n) AUTO_INCREMENT = 10001",
        ),
        # "table": "" on a database-level statement: no table
        ("seatunnel/canal_data.txt", 1, "QUERY", None, "CREATE DATABASE IF NOT EXISTS canal_hvygfc"),
        (
            "seatunnel/canal_data.txt",
            2,
            "CREATE",
            "products",
            "CREATE TABLE products (\nid INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY,\n"
            "name VARCHAR(255) NOT NULL DEFAULT 'SeaTunnel',\ndescription VARCHAR(512),\nweight VARCHAR(512)\n)",
        ),
        ("seatunnel/canal_data.txt", 3, "ALTER", "products", "ALTER TABLE products AUTO_INCREMENT = 1101"),
    ],
)
def test_canal_ddl(peer, name, line, raw_op, table, ddl):
    (event,) = [e for e in peer(name).events if e["source_line"] == line]
    assert (event["op"], event["raw_op"], event["ddl"], event["table_name"]) == ("DDL", raw_op, ddl, table)
    assert (event["before"], event["after"]) == (None, None)


def test_seatunnel_canal_changelog(peer):
    """SeaTunnel's canal e2e data, expectations read from the JSON by hand (weight is VARCHAR there)."""
    name = "seatunnel/canal_data.txt"
    rows = [e for e in peer(name).events if e["op"] != "DDL"]
    inserts = [
        "+I(1101,scooter,Small 2-wheel scooter,3.14)",
        "+I(1102,car battery,12V car battery,8.1)",
        "+I(1103,12-pack drill bits,12-pack of drill bits with sizes ranging from #40 to #3,0.8)",
        "+I(1104,hammer,12oz carpenter's hammer,0.75)",
        "+I(1105,hammer,14oz carpenter's hammer,0.875)",
        "+I(1106,hammer,16oz carpenter's hammer,1.0)",
        "+I(1107,rocks,box of assorted rocks,5.3)",
        "+I(1108,jacket,water resistent black wind breaker,0.1)",
        "+I(1109,spare tire,24 inch spare tire,22.2)",
    ]
    assert changelog(in_message_order(name, rows)) == inserts + [
        "-U(1101,scooter,Small 2-wheel scooter,3.14)",
        "+U(1101,scooter,Small 2-wheel scooter,4.56)",
        "-U(1107,rocks,box of assorted rocks,5.3)",
        "+U(1107,rocks,box of assorted rocks,7.88)",
        "-D(1109,spare tire,24 inch spare tire,22.2)",
    ]
    for e in rows:
        assert (e["db"], e["table_name"], e["pk_columns"]) == ("canal_hvygfc", "products", ["id"])
        assert e["column_types"] == FLINK_TYPES | {"weight": "STRING"}


def test_risingwave_multi_row_update_pairs_old_by_index(peer):
    """canal_json_double_field.1: `old[i]` belongs to `data[i]`; the delete carries two rows."""
    name = "risingwave/canal_json_double_field.1"
    later = in_message_order(name, peer(name).events)
    assert [(e["source_line"], e["op"], e["before"], e["after"]) for e in later] == [
        (2, "UPDATE", {"v1": "1", "v2": "2"}, {"v1": "5", "v2": "6"}),
        (2, "UPDATE", {"v1": "3", "v2": "4"}, {"v1": "7", "v2": "8"}),
        (3, "DELETE", {"v1": "5", "v2": "6"}, None),
        (3, "DELETE", {"v1": "7", "v2": "8"}, None),
    ]
    for e in later:
        assert (e["db"], e["table_name"]) == ("demo", "demo")
        assert e["column_types"] == {"v1": "INT", "v2": "INT"}
        assert e["source_types"] == {"v1": "int", "v2": "int"}
    assert [json.loads(e["meta"]["cdc.changed_columns"]) for e in later[:2]] == [["v1", "v2"], ["v1", "v2"]]


# ---------------------------------------------------------------------------------------------
# Flink Debezium: DebeziumJsonSerDeSchemaTest's expected changelog, with Debezium's exact text
# ---------------------------------------------------------------------------------------------
# flink-formats/flink-json .../debezium/DebeziumJsonSerDeSchemaTest.java, testSerializationDeserialization
# (used for debezium-data-schema-include/exclude and debezium-postgres-data-schema-include/exclude).
FLINK_DEBEZIUM_EXPECTED = FLINK_1_11_CANAL_EXPECTED[:20]

# The weight each MySQL message wrote (a FLOAT column sent as a JSON double), read from the files;
# the Flink test reads them into FLOAT and prints the float32 value.
MYSQL_WEIGHT_TEXT = {
    "3.14": "3.140000104904175",
    "8.1": "8.100000381469727",
    "0.8": "0.800000011920929",
    "0.75": "0.75",
    "0.875": "0.875",
    "5.3": "5.300000190734863",
    "0.1": "0.10000000149011612",
    "22.2": "22.200000762939453",
    "5.1": "5.099999904632568",
    "0.2": "0.20000000298023224",
    "5.18": "5.179999828338623",
    "0.5": "0.5",
    "5.17": "5.170000076293945",
}
DEBEZIUM_FLINK_FILES = {
    # name: the exact weight texts of that file (the schema-exclude variant writes 106's weight as 1)
    "flink/debezium-data-schema-include.txt": MYSQL_WEIGHT_TEXT | {"1.0": "1.0"},
    "flink/debezium-data-schema-exclude.txt": MYSQL_WEIGHT_TEXT | {"1.0": "1"},
    "seatunnel/debezium-data.txt": MYSQL_WEIGHT_TEXT | {"1.0": "1"},
    # Postgres sends the weights exactly as Flink prints them
    "flink/debezium-postgres-data-schema-include.txt": {w: w for w in MYSQL_WEIGHT_TEXT} | {"1.0": "1.0"},
    "flink/debezium-postgres-data-schema-exclude.txt": {w: w for w in MYSQL_WEIGHT_TEXT} | {"1.0": "1.0"},
}


@pytest.mark.parametrize("name", list(DEBEZIUM_FLINK_FILES))
def test_flink_debezium_changelog(peer, name):
    """Our exact text is Flink's expected list with each weight as the message wrote it; read as FLOAT
    (Flink's test schema) it prints exactly Flink's expected list."""
    events, weights = peer(name).events, DEBEZIUM_FLINK_FILES[name]
    assert [e["source_line"] for e in events] == list(range(1, 17))
    exact = [f"{head},{weights[w]})" for head, _, w in (row[:-1].rpartition(",") for row in FLINK_DEBEZIUM_EXPECTED)]
    assert changelog(events) == exact
    show = lambda column, value: java_float_text(value) if column == "weight" else value  # noqa: E731
    assert changelog(events, show=show) == FLINK_DEBEZIUM_EXPECTED


MYSQL_POS, PG_MS, PG_LSN = "mysql-bin.000003:154", 1596001099434, "34078720"


@pytest.mark.parametrize(
    "name, sync_ms, event_ms, db, db_schema, position, source_fields, schema",
    [
        # DebeziumJsonSerDeSchemaTest.testDeserializationWithMetadata (first line of each file); the
        # position is the message's source file:pos (MySQL) or lsn (Postgres)
        ("flink/debezium-data-schema-include.txt", 1589355606100, 0, "inventory", None, MYSQL_POS, 14, 1),
        ("flink/debezium-data-schema-exclude.txt", 1589355606100, 0, "inventory", None, MYSQL_POS, 14, 0),
        ("flink/debezium-postgres-data-schema-exclude.txt", PG_MS, PG_MS, "postgres", "inventory", PG_LSN, 11, 0),
        ("flink/debezium-postgres-data-schema-include.txt", PG_MS, PG_MS, "postgres", "inventory", PG_LSN, 11, 1),
    ],
)
def test_flink_debezium_metadata(peer, name, sync_ms, event_ms, db, db_schema, position, source_fields, schema):
    first = peer(name).events[0]
    assert (first["op"], first["after"]["id"], first["after"]["name"]) == ("INSERT", "101", "scooter")
    assert (epoch_ms(first["sync_time"]), epoch_ms(first["event_time"]), first["event_time_unit"]) == (
        sync_ms,
        event_ms,
        "ms",
    )
    assert (first["db"], first["db_schema"], first["table_name"], first["position"]) == (
        db,
        db_schema,
        "products",
        position,
    )
    assert len([k for k in first["meta"] if k.startswith("source.")]) == source_fields  # Flink: source map size
    assert ("cdc.schema" in first["meta"]) == bool(schema)
    for e in peer(name).events:
        assert e["column_types"] == (FLINK_TYPES if schema else dict.fromkeys(FLINK_COLUMNS, "UNKNOWN"))
        assert json.loads(e["meta"]["cdc.json_numbers"]) == ["id", "weight"]


def test_postgres_debezium_position_and_tx(peer):
    events = peer("flink/debezium-postgres-data-schema-include.txt").events
    # txId and lsn of lines 1, 10 and 16, read from the messages
    assert [(e["raw_op"], e["tx_id"], e["position"]) for e in (events[0], events[9], events[15])] == [
        ("r", "601", "34078720"),
        ("u", "602", "34131104"),
        ("d", "608", "34133800"),
    ]


def test_replica_identity_default(peer):
    """Postgres REPLICA IDENTITY DEFAULT: reads and inserts decode, updates (before=null) keep their full
    after image with no before image, and the delete (neither image) is rejected."""
    got = peer("flink/debezium-postgres-data-replica-identity.txt")
    inserts = [e for e in got.events if e["source_line"] in (*range(1, 10), 12, 13)]
    assert changelog(inserts) == [r for r in FLINK_DEBEZIUM_EXPECTED if r.startswith("+I")]
    updates = [(e["source_line"], e["op"], e["before"], e["after"]) for e in got.events if e["raw_op"] == "u"]
    assert updates == [
        (line, "UPDATE", None, dict(zip(FLINK_COLUMNS, values, strict=True)))
        for line, values in [
            (10, ("106", "hammer", "18oz carpenter hammer", "1.0")),
            (11, ("107", "rocks", "box of assorted rocks", "5.1")),
            (14, ("110", "jacket", "new water resistent white wind breaker", "0.5")),
            (15, ("111", "scooter", "Big 2-wheel scooter ", "5.17")),
        ]
    ]
    assert [(e["source_line"], e["tx_id"], e["position"]) for e in got.events if e["raw_op"] == "u"] == [
        (10, "602", "34131104"),
        (11, "603", "34132200"),
        (14, "606", "34133344"),
        (15, "607", "34133584"),
    ]
    assert {r["source_line"]: r["reason"] for r in got.rejects} == {16: "DELETE without a before image"}


# ---------------------------------------------------------------------------------------------
# Debezium with a schema: logical types and converted values (SeaTunnel's MySQL all-types rows)
# ---------------------------------------------------------------------------------------------
def test_debezium_schema_types_and_conversions(peer):
    events = peer("seatunnel/debezium_data.txt").events
    assert [(e["op"], e["raw_op"], e["after"]["id"]) for e in events] == [
        ("INSERT", "r", "1"),
        ("INSERT", "r", "2"),
        ("INSERT", "r", "3"),
    ]
    first = events[0]
    # source.file is "" and source.pos 0 (a snapshot): the position is the pos alone
    assert (first["db"], first["table_name"], epoch_ms(first["sync_time"]), first["position"]) == (
        "mysql_cdc",
        "mysql_cdc_e2e_source_table",
        1700215102194,
        "0",
    )
    expected_types = by_type(
        DATE="f_date",
        DATETIME="f_datetime",
        TIME="f_time",
        TIMESTAMP="f_timestamp",
        INT="f_year f_smallint f_int_unsigned f_tinyint",
        JSON="f_json",
        BYTES="f_bit64 f_binary f_blob",
        BOOLEAN="f_bit1",
        STRING="f_enum f_varchar",
        DECIMAL="f_bigint_unsigned f_numeric f_decimal",
        DOUBLE="f_float f_double",
    )
    assert {c: first["column_types"][c] for c in expected_types} == expected_types
    assert first["source_types"]["f_date"] == "int32 io.debezium.time.Date"
    assert first["source_types"]["f_bigint_unsigned"] == "bytes org.apache.kafka.connect.data.Decimal"
    # by hand: io.debezium.time.Date 19109 days after 1970-01-01; Timestamp 1651069800000 ms since the
    # epoch = 19109 days + 52200 s; MicroTime 52200000000 us = 52200 s after midnight = 14:30:00
    assert dt.date(1970, 1, 1) + dt.timedelta(days=19109) == dt.date(2022, 4, 27)
    assert (
        1651069800000 == (19109 * 86400 + 14 * 3600 + 30 * 60) * 1000 and 52200000000 == (14 * 3600 + 30 * 60) * 10**6
    )
    expected_values = {
        "f_date": "2022-04-27",
        "f_datetime": "2022-04-27 14:30:00.000",
        "f_time": "14:30:00.000000",
        "f_timestamp": "2023-04-27T03:08:40Z",
        "f_year": "2022",
        "f_bit1": "true",
        "f_bit64": "VVVVVVVVVVU=",
        "f_blob": b64(b"hello"),
        "f_tinyblob": b64(b"tinyblob"),
        "f_varbinary": b64(b"Hello world"),
        "f_longblob": None,
        "f_json": '{"key": "value"}',
        "f_enum": "enum2",
        "f_bigint_unsigned": "987654321",
        "f_numeric": "123",
        "f_float": "12.34000015258789",
        "f_double": "56.78",
        "f_real": "12.345",
        "f_tinyint": "-128",
        "f_tinyint_unsigned": "255",
        "f_int_unsigned": "7654321",
    }
    assert {c: first["after"][c] for c in expected_values} == expected_values
    assert [(e["after"]["f_year"], e["after"]["f_real"], e["after"]["f_tinyint_unsigned"]) for e in events] == [
        ("2022", "12.345", "255"),
        ("2013", "112.345", "22"),
        ("2021", "112.345", "22"),
    ]


PRODUCT_101 = {"id": "101", "name": "scooter", "description": "Small 2-wheel scooter", "weight": "3.14"}


def _product(id_, description, weight, age):
    return {"id": id_, "name": "hammer", "description": description, "weight": weight, "age": age}


@pytest.mark.parametrize(
    "n, after, age_type, age_is_number",
    [
        (1, PRODUCT_101, None, None),
        (
            2,
            {
                "id": "103",
                "name": "12-pack drill bits",
                "description": "12-pack of drill bits with sizes ranging from #40 to #3",
                "weight": "0.8",
                "age": "18",
            },
            ("int32", "INT"),
            True,
        ),
        (3, _product("104", "12oz carpenter's hammer", "0.75", "24"), ("int64", "INT"), True),
        (4, _product("105", "14oz carpenter's hammer", "0.875", "24"), ("int32", "INT"), True),
        (5, _product("105", "12oz carpenter's hammer", "0.75", "24"), ("string", "STRING"), False),
    ],
)
def test_paimon_debezium_schema_evolution(peer, n, after, age_type, age_is_number):
    (e,) = peer(f"paimon/debezium-data-{n}.txt").events
    assert (e["source_line"], e["op"], e["raw_op"], e["before"], e["after"]) == (19, "INSERT", "c", None, after)
    # source.file "" and pos 0: the position is "0"
    assert (e["db"], e["table_name"], e["position"]) == ("test", "product", "0")
    types = dict(FLINK_TYPES)
    source = {"id": "int32", "name": "string", "description": "string", "weight": "double"}
    if age_type:
        source["age"], types["age"] = age_type
    assert (e["column_types"], e["source_types"]) == (types, source)
    # "age": 24 and "age": "24" decode to the same text; the JSON number-vs-string fact is kept
    assert ("age" in json.loads(e["meta"]["cdc.json_numbers"])) == bool(age_is_number)


def test_paimon_debezium_delete_without_schema(peer):
    (e,) = peer("paimon/debezium-data-with-delete.txt").events
    assert (e["op"], e["raw_op"], e["before"], e["after"], e["position"]) == ("DELETE", "d", PRODUCT_101, None, "0")
    assert e["column_types"] == dict.fromkeys(FLINK_COLUMNS, "UNKNOWN") and e["source_types"] is None
    assert "cdc.schema" not in e["meta"]


# ---------------------------------------------------------------------------------------------
# Paimon canal: event files and the all-types table
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "paimon/event-insert.txt",
            [
                (19, "INSERT", "event", None, {"pt": "1", "_id": "1", "v1": "one"}),
                (20, "INSERT", "event", None, {"pt": "1", "_id": "2", "v1": "two"}),
                (20, "INSERT", "event", None, {"pt": "2", "_id": "4", "v1": "four"}),
            ],
        ),
        ("paimon/event-delete.txt", [(19, "DELETE", "schema_evolution_1", {"pt": "1", "_id": "1", "v1": "one"}, None)]),
        (
            "paimon/event-update.txt",
            [
                (
                    19,
                    "UPDATE",
                    "schema_evolution_2",
                    {"pt": "1", "_id": "2", "v1": "two", "v2": None},
                    {"pt": "1", "_id": "2", "v1": "second", "v2": None},
                ),
            ],
        ),
    ],
)
def test_paimon_canal_events(peer, name, expected):
    events = in_message_order(name, peer(name).events)
    assert [(e["source_line"], e["op"], e["table_name"], e["before"], e["after"]) for e in events] == expected
    for e in events:
        assert (e["db"], e["pk_columns"]) == ("paimon_sync_table", ["_id"])
        assert {c: e["column_types"][c] for c in ("pt", "_id", "v1")} == {"pt": "INT", "_id": "INT", "v1": "STRING"}
    if name.endswith("update.txt"):
        assert json.loads(events[0]["meta"]["cdc.changed_columns"]) == ["v1"]
        assert events[0]["source_types"] == {"pt": "int", "_id": "int", "v1": "varchar(10)", "v2": "INT"}
    if name.endswith("delete.txt"):  # mysqlType names v2 though the row does not carry it
        assert events[0]["column_types"]["v2"] == "INT"


def test_paimon_canal_event_row_values(peer):
    """Paimon's schema-evolution expected row: +I[1, 9, nine, 90000000000, 99999.999,
    [110, 105, 110, 101, 46, 98, 105, 110], 9.9]; canal wrote the VARBINARY bytes as the text "nine.bin"."""
    (e,) = peer("paimon/event-row.txt").events
    assert (e["op"], e["table_name"], e["before"]) == ("INSERT", "schema_evolution_1", None)
    assert e["after"] == {
        "pt": "1",
        "_id": "9",
        "v1": "nine",
        "v2": "90000000000",
        "v3": "99999.999",
        "v4": b64(bytes([110, 105, 110, 101, 46, 98, 105, 110])),
        "v5": "9.9",
    }
    assert e["after"]["v4"] == "bmluZS5iaW4="
    assert e["column_types"] == by_type(INT="pt _id v2", STRING="v1", DECIMAL="v3", BYTES="v4", FLOAT="v5")


def test_latin1_bytes_that_are_not_latin1_reject_the_message(tmp_path):
    """Paimon's event-row message with a `€` (U+20AC, no ISO-8859-1 byte) in its VARBINARY value."""
    line = (PEER / "paimon/event-row.txt").read_text("utf-8").splitlines()[18].replace('"nine.bin"', '"nine\u20acbin"')
    (tmp_path / "row.txt").write_text(line + "\n", "utf-8")
    extract = decode_paths(CANAL, [tmp_path / "row.txt"], topic="t", dt="2024-01-01", options=LATIN1)
    assert [(r["source_line"], r["reason"]) for r in extract.rejects] == [
        (1, "value does not fit its type in column(s) v4:BYTES")
    ]
    assert extract.events == []


ALLTYPE = "paimon/canal-data.txt"


@pytest.fixture(scope="module")
def alltype(peer):
    rows = in_message_order(ALLTYPE, peer(ALLTYPE).events)
    assert [(e["source_line"], e["op"], e["after"]["_id"]) for e in rows] == [(19, "INSERT", "1"), (19, "INSERT", "2")]
    return rows


# The logical type of every one of the 75 columns, from its mysqlType. Paimon's testAllTypes reads
# TINYINT(1) as BOOLEAN (its tinyint1-not-bool off); MySQL's TINYINT(1) holds -128..127, so we keep INT.
# REAL is MySQL's DOUBLE; the spatial types are WKB bytes (Paimon renders them as GeoJSON strings).
ALLTYPE_TYPE_OF = by_type(
    INT="_id _tinyint1 _tinyint _tinyint_unsigned _tinyint_unsigned_zerofill _smallint _smallint_unsigned "
    "_smallint_unsigned_zerofill _mediumint _mediumint_unsigned _mediumint_unsigned_zerofill _int _int_unsigned "
    "_int_unsigned_zerofill _bigint _bigint_unsigned _bigint_unsigned_zerofill _serial _year",
    BOOLEAN="_boolean _bool",
    FLOAT="_float _float_unsigned _float_unsigned_zerofill",
    DOUBLE="_real _real_unsigned _real_unsigned_zerofill _double _double_unsigned _double_unsigned_zerofill "
    "_double_precision _double_precision_unsigned _double_precision_unsigned_zerofill",
    DECIMAL="pt _numeric _numeric_unsigned _numeric_unsigned_zerofill _fixed _fixed_unsigned "
    "_fixed_unsigned_zerofill _decimal _decimal_unsigned _decimal_unsigned_zerofill",
    DATE="_date",
    DATETIME="_datetime _datetime3 _datetime6 _datetime_p _datetime_p2",
    TIMESTAMP="_timestamp _timestamp0",
    TIME="_time",
    STRING="_char _varchar _tinytext _text _mediumtext _longtext _enum _set",
    JSON="_json",
    BYTES="_bin _varbin _tinyblob _blob _mediumblob _longblob "
    "_point _geometry _linestring _polygon _multipoint _multiline _multipolygon _geometrycollection",
)
# Paimon's expected bytes (_bin [98, 121, 116, 101, 115] = b"bytes", ...): canal wrote each byte as one
# ISO-8859-1 character; canonical BYTES are standard base64.
ALLTYPE_BINARY = {
    "_bin": b"bytes",
    "_varbin": b"more bytes",
    "_tinyblob": b"TINYBLOB type test data",
    "_blob": b"BLOB type test data",
    "_mediumblob": b"MEDIUMBLOB type test data",
    "_longblob": b"LONGBLOB  bytes test data",
}
# MySQL's internal geometry: 4-byte SRID (0) then WKB: byte order 1 (little endian), uint32 type code.
ALLTYPE_WKB_TYPE = {
    "_point": 1,
    "_linestring": 2,
    "_polygon": 3,
    "_geometry": 3,  # the GEOMETRY column holds a polygon
    "_multipoint": 4,
    "_multiline": 5,
    "_multipolygon": 6,
    "_geometrycollection": 7,
}
# The values that are not kept as written (everything else in row 1 is the message's text, digit for digit,
# as Paimon's expected row has it, e.g. 12345.110, 123456789876543212345678987654321.110, 2023-03-23).
ALLTYPE_ROW1_CONVERTED = {
    "_boolean": "true",
    "_bool": "false",
    # no zone in canal: read as UTC (Paimon: 2023-03-23T15:00:10.123456 and 2023-03-23T00:10)
    "_timestamp": "2023-03-23T15:00:10.123456Z",
    "_timestamp0": "2023-03-23T00:10:00Z",
    **{c: b64(data) for c, data in ALLTYPE_BINARY.items()},
}


# mysqlType "REAL unsigned" and "REAL(10,7) unsigned zerofill": MySQL's REAL is a DOUBLE whatever its attributes
REAL_WITH_ATTRIBUTES = ("_real_unsigned", "_real_unsigned_zerofill")


def test_paimon_alltype_mysql_real_with_attributes_is_double(alltype):
    """Paimon's testAllTypes: _real, _real_unsigned and _real_unsigned_zerofill are all DOUBLE."""
    for e in alltype:
        assert {c: e["column_types"][c] for c in REAL_WITH_ATTRIBUTES} == dict.fromkeys(REAL_WITH_ATTRIBUTES, "DOUBLE")


def test_paimon_alltype_types_and_values(alltype):
    row1, row2 = alltype
    types = {c: t for c, t in ALLTYPE_TYPE_OF.items() if c not in REAL_WITH_ATTRIBUTES}
    assert len(ALLTYPE_TYPE_OF) == 75 and set(row1["column_types"]) == set(ALLTYPE_TYPE_OF)
    for e in alltype:
        assert {c: t for c, t in e["column_types"].items() if c not in REAL_WITH_ATTRIBUTES} == types
    raw = raw_messages(ALLTYPE)[19]["data"][0]
    assert {c: raw[c].encode("latin-1") for c in ALLTYPE_BINARY} == ALLTYPE_BINARY
    spatial = {c: base64.b64decode(row1["after"][c], validate=True) for c in ALLTYPE_WKB_TYPE}
    assert spatial == {c: raw[c].encode("latin-1") for c in ALLTYPE_WKB_TYPE}
    assert {c: struct.unpack("<IBI", wkb[:9]) for c, wkb in spatial.items()} == {
        c: (0, 1, code) for c, code in ALLTYPE_WKB_TYPE.items()
    }
    assert struct.unpack("<2d", spatial["_point"][9:]) == (1.0, 1.0)  # Paimon: "coordinates":[1,1]
    expected = raw | ALLTYPE_ROW1_CONVERTED | {c: b64(wkb) for c, wkb in spatial.items()}
    assert row1["after"] == expected
    assert {c: row1["after"][c] for c in ("_real", "_time", "_year", "_enum", "_set", "_json")} == {
        "_real": "1.000001",
        "_time": "10:13:23",  # Paimon: 36803000 ms
        "_year": "2023",
        "_enum": "1",  # canal wrote the ENUM index and the SET bit mask (Paimon: value1, [a, b])
        "_set": "3",
        "_json": '{"a": "b"}',
    }
    assert row1["source_types"]["_bigint_unsigned_zerofill"] == "BIGINT(16) unsigned zerofill"
    assert row1["source_types"]["_enum"] == "ENUM('value1','value2','value3')"
    assert row1["source_types"]["_fixed"] == "FIXED(40,3)"
    # row 2: only the key, the partition and the SERIAL column are set (Paimon: 2, 2.2, ..., 50000000000, ...)
    assert set(row2["after"]) == set(row1["after"])
    assert {c: v for c, v in row2["after"].items() if v is not None} == {
        "_id": "2",
        "pt": "2.2",
        "_serial": "50000000000",
    }
    for e in alltype:
        assert (e["db"], e["table_name"], e["pk_columns"]) == ("paimon_sync_table", "all_types_table", ["_id"])
        assert "2150" in (e["seq"], e["position"], e["meta"].get("id"))  # canal `id`
