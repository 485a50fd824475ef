"""Hostile input through every decoder: each case is rejected with its reason or decoded right.

`resources/hostile/<format-id>.jsonl` holds the cases aimed at one format (one per line, in the order
of the expectations below); `common.txt` holds lines no format can decode (invalid UTF-8 included),
`truncated.jsonl.gz` a gzip file cut in half, `corrupt.avro` a broken Avro container, `datahub-tuple.csv`
CSV rows under a header. Each format is one in-process decode over its file, the common lines and an
oversize line; the formats with files of their own also go through the Spark runner.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from cdc_pipelines.decode.runner import CountedPass, decode_files, write_decoded
from cdc_pipelines.formats import SELF_CONTAINED
from cdc_pipelines.lake.partition_paths import escape_value
from cdc_pipelines.lake.run_counts import read_counts, write_counts
from tests.conftest import RESOURCES
from tests.decode.oracles import decode_paths

HOSTILE = RESOURCES / "hostile"
LIMIT = 20000
OVERSIZE = '{"pad":"' + "x" * 30000 + '"}'
NOT_JSON = "reject: not a valid JSON object"
BAD_TIME = "reject: event time is neither an epoch number nor a date-time"
JAVA_SERIALIZED = "rO0ABXNyACljb20uYWxpYmFiYS5kaS5wbHVnaW4uY2VudGVyLm1ldGEuRERMTWV0YQLb5Cx/YWXtAgACTAAHZGRsVGV4dHQAEkxq"


def common_cases(empty_object: str) -> list[str]:
    """Outcomes of `common.txt`, line by line; `{}` is the one line a format judges itself."""
    return [
        "reject: empty line",
        NOT_JSON,  # a tab is not an empty line
        NOT_JSON,  # not json at all
        NOT_JSON,  # an array
        NOT_JSON,  # a bare string
        NOT_JSON,  # null
        "reject: " + empty_object,  # {}
        NOT_JSON,  # truncated object
        NOT_JSON,  # an object with trailing text
        NOT_JSON,  # nested 3000 deep: over the JSON parser's depth limit
        "reject: message is not valid UTF-8",
    ]


def envelope_cases(op: str, missing: str, other: str, *, ok=("INSERT", "t"), **kw) -> list[str]:
    """Outcomes of a `<format>.jsonl` written by the corpus generator, case by case."""
    kind, table = ok
    tables = kw.get("tables", ("../../etc", "a/b=c/dt=1999-01-01", "42", "t\x00x"))
    cases = [
        f"{kind} {table!r} 'a'",  # valid message
        "reject: " + other,  # a message of another format
        f"reject: unknown {op} '1'",
        f"reject: unknown {op} '{{\"x\":1}}'",
        f"reject: unknown {op} '{kw.get('merge', 'MERGE')}'",
        "reject: missing " + missing,
    ]
    if kw.get("times", True):
        cases += [BAD_TIME] * 3  # a word, an object, a boolean
    if tables:
        cases += [f"{kind} {t!r} 'a'" for t in tables]
    if kw.get("images", True):
        cases += ["reject: " + kw.get("no_image", "INSERT without an after image"), NOT_JSON, NOT_JSON]
    return cases + [
        f"{kind} {table!r} 'a'",  # the whole envelope twice: the last copy wins
        f"{kind} {table!r} 'a'",  # a key twice in the image: the last value wins
        f"{kind} {table!r} 'a\\x00b'",  # U+0000 kept as data
        NOT_JSON,  # an image value nested 3000 deep
    ]


CANAL = {"other": "unknown type 'null'", "no_image": "canal INSERT message without rows"}
SHAREPLEX_TABLES = ("/etc", "a/b=c/dt=1999-01-01", "42", "t\x00x")  # owner.table split on the dots
EXPECTED = {
    "oms-default": envelope_cases("recordType", "recordType", "missing recordType"),
    "oms-default-extend": envelope_cases("recordType", "recordType", "missing recordType"),
    "oms-canal": envelope_cases("type", "type", **CANAL),
    "dts-canal": envelope_cases("type", "type", **CANAL),
    "oms-dataworks": envelope_cases("payload.op", "payload.op", "missing payload.op"),
    "oms-shareplex": envelope_cases("meta.op", "meta.op", "missing meta", tables=SHAREPLEX_TABLES),
    "dts-shareplex": envelope_cases("meta.op", "meta.op", "missing meta", tables=SHAREPLEX_TABLES),
    "oms-debezium": envelope_cases("op", "op", "missing op"),
    "oms-debezium-flatten": envelope_cases("op", "op", "missing op"),
    "oms-debezium-smt": envelope_cases(
        "__deleted/__op value",
        "__deleted",
        "missing __deleted",
        ok=("UPSERT", None),
        merge="merge",
        times=False,
        tables=(),
        images=False,
    ),
    "dataworks-json": [
        *envelope_cases("payload.op", "payload.op", "missing payload.op"),
        "DDL 't' None",  # ddlMeta: a Java-serialized object, kept as text
    ],
    "datahub-tuple": envelope_cases(
        "_operation_type_", "_operation_type_", "missing _operation_type_", ok=("INSERT", "d.t"), images=False
    ),
    "maxwell-json": envelope_cases(
        "type", "type", "missing type", merge="MERGE", no_image="maxwell insert message without `data`"
    ),
    # OGG's `SCHEMA.TABLE` is split on its last dot: `../../etc` is table `/etc` of db `../.`
    "ogg-json": envelope_cases("op_type", "op_type", "missing op_type", tables=SHAREPLEX_TABLES),
    "aws-dms-json": envelope_cases(
        "operation", "operation", "missing metadata", no_image="aws dms insert record without `data`"
    ),
    "dts-avro": [
        "INSERT 'orders' 'héllo'",
        "reject: value_b64 is not base64: Only base64 data is allowed",
        "reject: not a DTS Avro Record (UnicodeDecodeError: 'utf-8' codec can't decode byte 0x9f in position 0: "
        "invalid start byte; UnicodeDecodeError: 'utf-8' codec can't decode byte 0x9f in position 0: invalid "
        "start byte)",
        "reject: not a DTS Avro Record (EOFError: ; EOFError: )",  # truncated record
        "reject: not a DTS Avro Record (3 bytes left over; 9 bytes left over)",
        "reject: not a DTS Avro Record (EOFError: ; EOFError: )",  # a length prefix of 2^62 bytes
        "reject: value_b64 is not base64: Invalid base64-encoded string: number of data characters (5) cannot "
        "be 1 more than a multiple of 4",  # a number
        "reject: no value_b64 field",
        "INSERT '/../etc' 'héllo'",  # objectName ../../etc: db `..`, the rest split on dots
        "INSERT 'a/b=c' 'héllo'",
    ],
}
EMPTY_OBJECT = {
    "oms-canal": "unknown type 'null'",
    "dts-canal": "unknown type 'null'",
    "oms-shareplex": "missing meta",
    "dts-shareplex": "missing meta",
    "dts-avro": "no value_b64 field",
}


def _outcome(row: dict) -> str:
    if row.get("reason") is not None:
        return "reject: " + row["reason"]
    return f"{row['op']} {row['table_name']!r} {(row['after'] or {}).get('name')!r}"


def _by_file(events: list[dict], rejects: list[dict]) -> dict[str, list[str]]:
    """Outcomes by file name, in line order; a line given twice or a line left out fails here."""
    found: dict[str, dict[int, str]] = {}
    for row in events + rejects:
        lines = found.setdefault(row["source_file"].rsplit("/", 1)[-1], {})
        assert row["source_line"] not in lines, f"{row['source_file']}: line {row['source_line']} twice"
        lines[row["source_line"]] = _outcome(row)
    first = {"datahub-tuple.csv": 2}  # line 1 of a CSV file is its header, not a message
    out = {}
    for name, lines in found.items():
        assert sorted(lines) == list(range(first.get(name, 1), max(lines) + 1)), f"{name}: a line lost"
        out[name] = [lines[n] for n in sorted(lines)]
    return out


@pytest.fixture(scope="module")
def oversize(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "oversize.jsonl"
    path.write_text(OVERSIZE + "\n")
    return path


def _inputs(format_id: str, oversize: Path) -> list[Path]:
    extra = {
        "dts-avro": [HOSTILE / "corrupt.avro"],
        "oms-default": [HOSTILE / "truncated.jsonl.gz"],
        "datahub-tuple": [HOSTILE / "datahub-tuple.csv"],
    }
    return [HOSTILE / f"{format_id}.jsonl", HOSTILE / "common.txt", oversize, *extra.get(format_id, [])]


def test_every_format_has_a_corpus():
    assert sorted(EXPECTED) == sorted(SELF_CONTAINED)


def _spark_decoded(spark, format_id: str, inputs: list[Path]) -> tuple[list[dict], list[dict], dict]:
    decoded = decode_files(spark, format_id, inputs, topic="t", dt="2024-01-01")
    decoded.combined.persist()
    try:
        passed = CountedPass(decoded)
        events = [r.asDict(recursive=True) for r in passed.events.collect()]
        rejects = [r.asDict() for r in decoded.rejects.collect()]
        return events, rejects, passed.counts()["2024-01-01"]
    finally:
        decoded.combined.unpersist()


def _local_decoded(format_id: str, inputs: list[Path]) -> tuple[list[dict], list[dict], dict]:
    decoded = decode_paths(format_id, inputs, topic="t", dt="2024-01-01")
    return decoded.events, decoded.rejects, decoded.counts


# the formats whose corpus has files of their own (.gz, .avro, .csv) also run through Spark's reading
SPARK_FORMATS = ("oms-default", "dts-avro", "datahub-tuple", "dataworks-json")


@pytest.mark.parametrize(
    ("format_id", "runner"),
    [(f, "local") for f in SELF_CONTAINED] + [pytest.param(f, "spark", marks=pytest.mark.spark) for f in SPARK_FORMATS],
)
def test_corpus_case_by_case(request, format_id, runner, oversize, monkeypatch):
    monkeypatch.setenv("CDC_MAX_MESSAGE_CHARS", str(LIMIT))
    inputs = _inputs(format_id, oversize)
    if runner == "spark":
        events, rejects, counts = _spark_decoded(request.getfixturevalue("spark"), format_id, inputs)
    else:
        events, rejects, counts = _local_decoded(format_id, inputs)
    found = _by_file(events, rejects)
    assert found.pop(f"{format_id}.jsonl") == EXPECTED[format_id]
    empty_object = EMPTY_OBJECT.get(format_id, EXPECTED[format_id][1].removeprefix("reject: "))
    assert found.pop("common.txt") == common_cases(empty_object)
    too_long = f"reject: message of {len(OVERSIZE)} characters is over the limit of {LIMIT}"
    assert found.pop("oversize.jsonl") == [too_long]
    if format_id == "oms-default":
        gz = found.pop("truncated.jsonl.gz")
        assert gz[:-1] == [f"INSERT 't' '{i * 7919}'" for i in range(len(gz) - 1)] and len(gz) > 100
        damaged = f"reject: damaged gzip file, nothing readable after line {len(gz) - 1}: the gzip file is truncated"
        assert gz[-1] == damaged
    if format_id == "datahub-tuple":
        assert found.pop("datahub-tuple.csv") == [
            "INSERT None 'a'",
            "reject: message is not valid UTF-8",
            "reject: CSV row has 6 fields, its header 7",
        ]
    if format_id == "dts-avro":
        assert found.pop("corrupt.avro") == [
            "reject: corrupt Avro container after 0 records: cannot read header - is it an avro file?"
        ]
    assert found == {}
    assert counts["read"] == counts["decoded"] + counts["rejected"] == len(events) + len(rejects)
    for not_utf8 in (r for r in rejects if r["reason"] == "message is not valid UTF-8"):
        lines = Path(not_utf8["source_file"].removeprefix("file:")).read_bytes().splitlines()
        assert not_utf8["raw_encoding"] == "base64"
        assert base64.b64decode(not_utf8["raw"]) == lines[not_utf8["source_line"] - 1]
    if format_id == "dataworks-json":
        ddl = next(e for e in events if e["op"] == "DDL")
        assert ddl["ddl"] == "alter table t add column c text"
        assert ddl["meta"]["ddlMeta"].startswith(JAVA_SERIALIZED)


def test_hostile_names_stay_inside_the_output_root(spark, tmp_path):
    """Table names are data, never paths; a hostile topic name is one escaped folder."""
    topic = "../../etc/x=y"
    out = tmp_path / "lake" / "out"
    decoded = decode_files(spark, "oms-default", [HOSTILE / "oms-default.jsonl"], topic=topic, dt="2024-01-01")
    counts = write_decoded(decoded, out)
    write_counts(spark, out, "2024-01-01", {topic: counts})
    written = [p.relative_to(tmp_path) for p in tmp_path.rglob("*")]
    assert {p.parts[:2] for p in written} == {("lake",), ("lake", "out")}
    folder = f"source_topic={escape_value(topic)}"
    for table in ("changes", "rejects", "counts"):
        assert [p.name for p in (out / table / "dt=2024-01-01").iterdir()] == [folder]
    assert read_counts(spark, out, "2024-01-01") == {topic: counts}
    assert counts["events"] == sum(not c.startswith("reject") for c in EXPECTED["oms-default"])


def test_a_real_50_mb_line_is_rejected_unparsed(spark, tmp_path, monkeypatch):
    monkeypatch.delenv("CDC_MAX_MESSAGE_CHARS", raising=False)
    line = '{"recordType":"INSERT","postStruct":{"blob":"' + "y" * (50 * 1024 * 1024) + '"}}'
    path = tmp_path / "huge.jsonl"
    path.write_text(line + "\n")
    decoded = decode_files(spark, "oms-default", [path], topic="t", dt="2024-01-01")
    reasons = [tuple(r) for r in decoded.rejects.select("source_line", "reason").collect()]
    assert reasons == [(1, f"message of {len(line)} characters is over the limit of {16 * 1024 * 1024}")]
