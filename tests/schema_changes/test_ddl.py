"""DDL text read into schema changes: the seeds' DDL examples and peers' real canal DDL messages decoded by our
codecs, then each dialect's statement kinds, one compact line per change (`str` of the record).

`tests/resources/schema_changes/peer-canal-ddl.jsonl` holds the lines with `"isDdl": true` of the canal files
under `../shared/reference/peer-corpora/` (Flink's `canal-data*.txt`, Paimon's `kafka/canal/**/canal-data-*.txt`,
SeaTunnel's `canal_data.txt` and `canal-data-filter-table.txt`), each line once, in path order.
"""

from __future__ import annotations

import json

import pytest

from cdc_pipelines.schema_changes.changes import NotSchemaChange, Parsed, UnreadDdl
from cdc_pipelines.schema_changes.ddl import parse_ddl, read_event
from tests.conftest import resource
from tests.decode.oracles import decode_paths

C90 = "ADD COLUMN connector_test.all_mysql_type_test.c90 varchar(30) (STRING, string)"
# format, sample file, the changes of its DDL event(s)
SEEDS = [
    ("oms-default", "seed.jsonl", [C90]),
    ("oms-default-extend", "seed.jsonl", [C90]),
    ("oms-canal", "seed.jsonl", [C90]),
    ("oms-dataworks", "seed.jsonl", [C90]),
    ("oms-shareplex", "seed.jsonl", [C90]),
    ("dataworks-json", "seed-004.jsonl", ["ADD COLUMN example_table_nopk.holo text (STRING, string)"]),
    ("dts-avro", "seed.jsonl", ["ADD COLUMN orders.x INT (INT, bigint)"]),
    ("maxwell-json", "seed.jsonl", ["ADD COLUMN orders.note varchar(64) (STRING, string)"]),
    ("dts-canal", "seed.jsonl", ["UNREAD: not an SQL statement"]),  # the seed's placeholder `eg:createxxx`
]


def _changes(format_id: str, path, catalog_dialect: str | None = None) -> list[str]:
    events = decode_paths(format_id, [path], topic="t", dt="2024-01-01", options={}, envelope=None).events
    ddl_events = [read_event(event, catalog_dialect) for event in events if event["op"] == "DDL"]
    return [str(change) for event in ddl_events for change in event.changes]


@pytest.mark.parametrize(("format_id", "sample", "expected"), SEEDS, ids=[s[0] for s in SEEDS])
def test_seed_ddl(format_id, sample, expected):
    assert _changes(format_id, resource(format_id, sample)) == expected


PEER_CANAL = [
    "CREATE TABLE orders (order_number INTEGER (INT, bigint), order_date DATE (DATE, date), purchaser INTEGER "
    "(INT, bigint), quantity INTEGER (INT, bigint), product_id INTEGER (INT, bigint)) KEY (order_number)",
    "CREATE TABLE project (id VARCHAR(255) (STRING, string), name VARCHAR(255) (STRING, string), description "
    "VARCHAR(255) (STRING, string), weight FLOAT (FLOAT, string))",
    "CREATE TABLE xj_.user02 (uid int(0) (INT, bigint), uname varchar(255) (STRING, string)) KEY (uid)",
    "ADD COLUMN t1.v1 INT (INT, bigint)",
    "MODIFY COLUMN t1.v1 BIGINT (INT, bigint)",
    "ADD COLUMN t2.v1 VARCHAR(10) (STRING, string)",
    "MODIFY COLUMN t2.v1 VARCHAR(20) (STRING, string)",
    "ADD COLUMN t1.v2 INT (INT, bigint)",
    "MODIFY COLUMN t1.v2 BIGINT (INT, bigint)",
    "ADD COLUMN t2.v3 VARCHAR(10) (STRING, string)",
    "MODIFY COLUMN t2.v3 VARCHAR(20) (STRING, string)",
    "ADD COLUMN schema_evolution_2.v2 INT (INT, bigint)",
    "ADD COLUMN schema_evolution_2.v3 INT (INT, bigint)",
    "ADD COLUMN schema_evolution_1.v2 INT (INT, bigint)",
    "MODIFY COLUMN schema_evolution_1.v2 BIGINT (INT, bigint)",
    "MODIFY COLUMN schema_evolution_2.v2 BIGINT (INT, bigint)",
    "ADD COLUMN schema_evolution_1.v3 NUMERIC(8, 3) (DECIMAL, decimal(8,3))",
    "ADD COLUMN schema_evolution_1.v4 VARBINARY(10) (BYTES, binary)",
    "ADD COLUMN schema_evolution_1.v5 FLOAT (FLOAT, string)",
    "MODIFY COLUMN schema_evolution_1.v1 VARCHAR(20) (STRING, string)",
    "ADD COLUMN schema_evolution_2.v3 NUMERIC(8, 3) (DECIMAL, decimal(8,3))",
    "ADD COLUMN schema_evolution_2.v4 VARBINARY(10) (BYTES, binary)",
    "ADD COLUMN schema_evolution_2.v5 FLOAT (FLOAT, string)",
    "MODIFY COLUMN schema_evolution_2.v1 VARCHAR(20) (STRING, string)",
    "MODIFY COLUMN schema_evolution_1.v4 VARBINARY(20) (BYTES, binary)",
    "MODIFY COLUMN schema_evolution_1.v5 DOUBLE (DOUBLE, string)",
    "MODIFY COLUMN schema_evolution_2.v4 VARBINARY(20) (BYTES, binary)",
    "MODIFY COLUMN schema_evolution_2.v5 DOUBLE (DOUBLE, string)",
    # Paimon's schemaevolutionmultiple: one ALTER of four clauses, one of them a parenthesised ADD COLUMN list
    "ADD COLUMN schema_evolution_multiple.v4 INT (INT, bigint)",
    "MODIFY COLUMN schema_evolution_multiple.v1 VARCHAR(20) (STRING, string)",
    "ADD COLUMN schema_evolution_multiple.v5 DOUBLE (DOUBLE, string)",
    "ADD COLUMN schema_evolution_multiple.v6 DECIMAL(5, 3) (DECIMAL, decimal(5,3))",
    "ADD COLUMN schema_evolution_multiple.$% ^,& *( VARCHAR(10) (STRING, string)",
    "MODIFY COLUMN schema_evolution_multiple.v2 BIGINT (INT, bigint)",
    "NOT A SCHEMA CHANGE: CREATE DATABASE",
    "CREATE TABLE products (id INTEGER (INT, bigint), name VARCHAR(255) (STRING, string), description "
    "VARCHAR(512) (STRING, string), weight VARCHAR(512) (STRING, string)) KEY (id)",
    "NOT A SCHEMA CHANGE: ALTER TABLE",  # AUTO_INCREMENT = 1101
]


def test_peer_canal_ddl():
    assert _changes("oms-canal", resource("schema_changes", "peer-canal-ddl.jsonl")) == PEER_CANAL


# dialect, DDL text, its changes: each statement kind in each dialect
STATEMENTS = [
    ("mysql", "CREATE TABLE IF NOT EXISTS `shop`.`orders` (`id` bigint(20) unsigned NOT NULL AUTO_INCREMENT, "
              "`amt` decimal(10,2) DEFAULT NULL COMMENT 'x', `ts` datetime(6), PRIMARY KEY (`id`), KEY `k` (`amt`)) "
              "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
     ["CREATE TABLE shop.orders (id bigint(20) unsigned (INT, decimal(20,0)), amt decimal(10,2) (DECIMAL, "
      "decimal(10,2)), ts datetime(6) (DATETIME, timestamp_ntz)) KEY (id)"]),
    ("mysql", "ALTER TABLE shop.orders ADD COLUMN note VARCHAR(20) AFTER amt, ALGORITHM=INPLACE",
     ["ADD COLUMN shop.orders.note VARCHAR(20) (STRING, string)"]),
    ("mysql", "ALTER TABLE shop.orders ADD COLUMN (a INT, b TIMESTAMP(3))",
     ["ADD COLUMN shop.orders.a INT (INT, bigint)", "ADD COLUMN shop.orders.b TIMESTAMP(3) (TIMESTAMP, timestamp)"]),
    ("mysql", "ALTER TABLE shop.orders DROP COLUMN amt, DROP b",
     ["DROP COLUMN shop.orders.amt", "DROP COLUMN shop.orders.b"]),
    ("mysql", "ALTER TABLE shop.orders RENAME COLUMN amt TO amount", ["RENAME COLUMN shop.orders.amt -> amount"]),
    ("mysql", "ALTER TABLE shop.orders CHANGE amt amount DECIMAL(12,2) NOT NULL",
     ["CHANGE COLUMN shop.orders.amt -> amount DECIMAL(12,2) (DECIMAL, decimal(12,2))"]),
    ("mysql", "ALTER TABLE shop.orders CHANGE COLUMN amt amt BIGINT UNSIGNED",
     ["CHANGE COLUMN shop.orders.amt -> amt BIGINT UNSIGNED (INT, decimal(20,0))"]),
    ("mysql", "ALTER TABLE shop.orders MODIFY COLUMN amt DECIMAL(14,4) FIRST",
     ["MODIFY COLUMN shop.orders.amt DECIMAL(14,4) (DECIMAL, decimal(14,4))"]),
    ("mysql", "RENAME TABLE shop.orders TO shop.orders_old, shop.orders_new TO shop.orders",
     ["RENAME TABLE shop.orders -> shop.orders_old", "RENAME TABLE shop.orders_new -> shop.orders"]),
    ("mysql", "ALTER TABLE orders RENAME TO orders_2024", ["RENAME TABLE orders -> orders_2024"]),
    ("mysql", "DROP TABLE IF EXISTS shop.a, b", ["DROP TABLE shop.a", "DROP TABLE b"]),
    ("mysql", "TRUNCATE TABLE shop.orders", ["TRUNCATE TABLE shop.orders"]),
    ("mysql", "CREATE TABLE a (x INT); ALTER TABLE a ADD COLUMN (y INT, z INT); DROP TABLE a",
     ["CREATE TABLE a (x INT (INT, bigint))", "ADD COLUMN a.y INT (INT, bigint)", "ADD COLUMN a.z INT (INT, bigint)",
      "DROP TABLE a"]),
    ("mysql", "ALTER TABLE shop.orders ADD INDEX i (amt), DROP PRIMARY KEY, ENGINE=InnoDB",
     ["NOT A SCHEMA CHANGE: ALTER TABLE"]),
    ("mysql", "CREATE INDEX i ON shop.orders (amt)", ["NOT A SCHEMA CHANGE: CREATE INDEX"]),
    ("mysql", "CREATE TEMPORARY TABLE tmp (a INT)", ["NOT A SCHEMA CHANGE: CREATE TEMPORARY TABLE"]),
    ("mysql", "GRANT SELECT ON shop.* TO 'bob'", ["NOT A SCHEMA CHANGE: GRANT SELECT"]),
    # Oracle (and OceanBase's Oracle mode): unquoted names are upper case, as its catalog stores them
    ("oracle", "CREATE TABLE hr.emp (id NUMBER(10), n NUMBER, ts TIMESTAMP(6) WITH TIME ZONE, tl TIMESTAMP WITH "
               "LOCAL TIME ZONE, d DATE, r RAW(16), c CLOB, f BINARY_DOUBLE, l LONG, \"Mixed\" VARCHAR2(20 CHAR), "
               "CONSTRAINT pk_emp PRIMARY KEY (id))",
     ["CREATE TABLE HR.EMP (ID NUMBER(10) (DECIMAL, decimal(10,0)), N NUMBER (DECIMAL, string), TS TIMESTAMP(6) WITH "
      "TIME ZONE (ZONED_DATETIME, string), TL TIMESTAMP WITH LOCAL TIME ZONE (TIMESTAMP, timestamp), D DATE "
      "(DATETIME, timestamp_ntz), R RAW(16) (BYTES, binary), C CLOB (STRING, string), F BINARY_DOUBLE (DOUBLE, "
      "string), L LONG (STRING, string), Mixed VARCHAR2(20 CHAR) (STRING, string)) KEY (ID)"]),
    ("oracle", "ALTER TABLE hr.emp ADD (c1 NUMBER(10,2), c2 VARCHAR2(20))",
     ["ADD COLUMN HR.EMP.C1 NUMBER(10,2) (DECIMAL, decimal(10,2))",
      "ADD COLUMN HR.EMP.C2 VARCHAR2(20) (STRING, string)"]),
    ("oracle", "ALTER TABLE hr.emp MODIFY (c1 NUMBER(12,2))",
     ["MODIFY COLUMN HR.EMP.C1 NUMBER(12,2) (DECIMAL, decimal(12,2))"]),
    ("oracle", "ALTER TABLE hr.emp MODIFY c1 NUMBER(14,2) NOT NULL",
     ["MODIFY COLUMN HR.EMP.C1 NUMBER(14,2) (DECIMAL, decimal(14,2))"]),
    ("oracle", "ALTER TABLE hr.emp DROP COLUMN c1", ["DROP COLUMN HR.EMP.C1"]),
    ("oracle", 'ALTER TABLE hr.emp DROP (c1, "c2")', ["DROP COLUMN HR.EMP.C1", "DROP COLUMN HR.EMP.c2"]),
    ("oracle", "ALTER TABLE hr.emp RENAME COLUMN c1 TO c3", ["RENAME COLUMN HR.EMP.C1 -> C3"]),
    ("oracle", "ALTER TABLE hr.emp RENAME TO emp2", ["RENAME TABLE HR.EMP -> HR.EMP2"]),
    ("oracle", "RENAME emp TO emp2", ["RENAME TABLE EMP -> EMP2"]),
    ("oracle", "DROP TABLE hr.emp PURGE", ["DROP TABLE HR.EMP"]),
    ("oracle", "TRUNCATE TABLE hr.emp", ["TRUNCATE TABLE HR.EMP"]),
    ("oracle", "COMMENT ON TABLE hr.emp IS 'staff'", ["NOT A SCHEMA CHANGE: COMMENT ON"]),
    # PostgreSQL: unquoted names are lower case
    ("postgres", "CREATE TABLE public.T (id bigserial primary key, b bytea, j jsonb, ts timestamptz, lt timestamp(3), "
                 "x text, u uuid, a int[], n numeric)",
     ["CREATE TABLE public.t (id bigserial (INT, bigint), b bytea (BYTES, binary), j jsonb (JSON, string), ts "
      "timestamptz (TIMESTAMP, timestamp), lt timestamp(3) (DATETIME, timestamp_ntz), x text (STRING, string), u uuid "
      "(STRING, string), a int[] (UNKNOWN, string), n numeric (DECIMAL, string)) KEY (id)"]),
    ("postgres", "CREATE TABLE s.t (a int, b text, PRIMARY KEY (a, b))",
     ["CREATE TABLE s.t (a int (INT, bigint), b text (STRING, string)) KEY (a, b)"]),
    ("postgres", "ALTER TABLE public.t ALTER COLUMN a TYPE bigint", ["MODIFY COLUMN public.t.a bigint (INT, bigint)"]),
    ("postgres", "ALTER TABLE public.t ALTER COLUMN a SET DATA TYPE numeric(20,2) USING a::numeric",
     ["MODIFY COLUMN public.t.a numeric(20,2) (DECIMAL, decimal(20,2))"]),
    ("postgres", "ALTER TABLE public.t ADD COLUMN c timestamp with time zone, DROP COLUMN d, "
                 "ALTER COLUMN e SET NOT NULL",
     ["ADD COLUMN public.t.c timestamp with time zone (TIMESTAMP, timestamp)", "DROP COLUMN public.t.d"]),
    ("postgres", "ALTER TABLE public.t RENAME COLUMN a TO b", ["RENAME COLUMN public.t.a -> b"]),
    ("postgres", "ALTER TABLE public.t RENAME TO u", ["RENAME TABLE public.t -> public.u"]),
    ("postgres", "DROP TABLE public.t CASCADE", ["DROP TABLE public.t"]),
    ("postgres", "TRUNCATE public.t, public.u", ["TRUNCATE TABLE public.t", "TRUNCATE TABLE public.u"]),
]  # fmt: skip


@pytest.mark.parametrize(("dialect", "sql", "expected"), STATEMENTS, ids=[f"{s[0]}-{s[1][:40]}" for s in STATEMENTS])
def test_statement(dialect, sql, expected):
    assert [str(c) for c in parse_ddl(sql, dialect)] == expected


@pytest.mark.parametrize(
    ("name", "sql", "expected"),
    [
        ("OB_MYSQL", "ALTER TABLE t ADD c INT", "ADD COLUMN t.c INT (INT, bigint)"),
        ("OB_ORACLE", "ALTER TABLE t ADD c NUMBER(5)", "ADD COLUMN T.C NUMBER(5) (DECIMAL, decimal(5,0))"),
        ("postgresql", "ALTER TABLE T ADD c timestamp", "ADD COLUMN t.c timestamp (DATETIME, timestamp_ntz)"),
        ("MySQL", "ALTER TABLE t ADD c timestamp", "ADD COLUMN t.c timestamp (TIMESTAMP, timestamp)"),
    ],
)
def test_source_names_choose_the_dialect(name, sql, expected):
    assert [str(c) for c in parse_ddl(sql, name)] == [expected]


# DDL no parser reads: each is kept with its reason, the statements around it still read
UNREAD = [
    ("oracle", "CREATE TABLE t (iv INTERVAL DAY(2) TO SECOND(6))", "Expecting )"),
    ("mysql", "CREATE TABLE t LIKE u", "its columns are another table's"),
    ("mysql", "CREATE TABLE t AS SELECT * FROM u", "its columns are another table's"),
    (
        "mysql",
        "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4",
        "clause 'CONVERT TO CHARACTER SET utf8mb4' is not read",
    ),
    ("mysql", "ALTER TABLE t ADD PARTITION (PARTITION p1 VALUES LESS THAN (10))", "ALTER TABLE clause"),
    ("mysql", "RENAME TABLE a b", "RENAME without one `old TO new`"),
    ("mysql", "select 'unterminated", "not SQL text"),
    ("mysql", "eg:createxxx", "not an SQL statement"),
    ("mysql", " /* nothing */ ", "no DDL text"),
]


@pytest.mark.parametrize(("dialect", "sql", "reason"), UNREAD, ids=[u[1][:40] for u in UNREAD])
def test_unread_ddl_gives_a_reason(dialect, sql, reason):
    (unread,) = parse_ddl(sql, dialect)
    assert isinstance(unread, UnreadDdl) and reason in unread.reason, unread


def test_one_unread_statement_leaves_the_others_read():
    changes = parse_ddl("ALTER TABLE t ADD a INT; CREATE TABLE u LIKE t; ALTER TABLE t DROP a", "mysql")
    assert [type(c).__name__ for c in changes] == ["AddColumn", "UnreadDdl", "DropColumn"]
    mixed = parse_ddl("ALTER TABLE t ADD a INT, CONVERT TO CHARACTER SET utf8mb4, DROP b", "mysql")
    assert [str(c) for c in mixed if not isinstance(c, UnreadDdl)] == [
        "ADD COLUMN t.a INT (INT, bigint)",
        "DROP COLUMN t.b",
    ]
    assert sum(isinstance(c, UnreadDdl) for c in mixed) == 1


def test_not_a_schema_change_is_not_unread():
    for sql in (
        "CREATE DATABASE d",
        "SET FOREIGN_KEY_CHECKS=0",
        "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1",
    ):
        assert all(isinstance(c, NotSchemaChange) for c in parse_ddl(sql, "mysql")), sql


def test_an_unknown_dialect_is_an_error():
    with pytest.raises(ValueError, match="no DDL dialect for 'SQLServer'"):
        parse_ddl("ALTER TABLE t ADD a INT", "SQLServer")


def test_a_cut_statement_reads_without_an_error():
    """A DDL event may carry a cut or garbled text: it gives records (unread ones among them), never an error."""
    for dialect, sql, _ in STATEMENTS:
        for cut in range(1, len(sql), 7):
            for text in (sql[:cut], sql[cut:], f"{sql[:cut]}, {sql[cut:]}"):
                assert all(isinstance(c, Parsed) for c in parse_ddl(text, dialect)), text


def test_read_event_takes_the_messages_dialect_then_the_catalogs():
    event = {"event_id": "x", "ddl": "ALTER TABLE t ADD c DATE", "db": "HR", "table_name": "T", "meta": {}}
    assert [str(c) for c in read_event(event).changes] == ["ADD COLUMN t.c DATE (DATE, date)"]  # MySQL
    oracle = read_event(event, "OB_ORACLE")
    assert [str(c) for c in oracle.changes] == ["ADD COLUMN T.C DATE (DATETIME, timestamp_ntz)"]
    assert (oracle.event_id, oracle.db, oracle.table, oracle.ddl) == ("x", "HR", "T", event["ddl"])
    named = read_event(event | {"meta": {"dbType": "POSTGRESQL"}}, "OB_ORACLE")
    assert [str(c) for c in named.changes] == ["ADD COLUMN t.c DATE (DATE, date)"]


ORACLE_MODE_DDL = [
    (
        'ALTER TABLE "HR"."EMP" ADD ("BONUS" NUMBER(12,2))',
        "ADD COLUMN HR.EMP.BONUS NUMBER(12,2) (DECIMAL, decimal(12,2))",
    ),
    (
        "ALTER TABLE HR.EMP MODIFY (BONUS NUMBER(14,2))",
        "MODIFY COLUMN HR.EMP.BONUS NUMBER(14,2) (DECIMAL, decimal(14,2))",
    ),
    ("ALTER TABLE HR.EMP RENAME COLUMN BONUS TO AWARD", "RENAME COLUMN HR.EMP.BONUS -> AWARD"),
    ("ALTER TABLE HR.EMP DROP (AWARD)", "DROP COLUMN HR.EMP.AWARD"),
    ("RENAME EMP TO STAFF", "RENAME TABLE EMP -> STAFF"),
]


def test_an_oracle_mode_oms_topic(tmp_path):
    """OMS Default DDL records of an OceanBase Oracle-mode tenant (`dbType: OB_ORACLE`), decoded by the codec."""
    path = tmp_path / "oms-default-oracle.jsonl"
    path.write_text("".join(
        json.dumps({"prevStruct": None, "postStruct": {"ddl": ddl}, "recordType": "DDL",
                    "allMetaData": {"checkpoint": "1671177057", "dbType": "OB_ORACLE", "db": "HR",
                                    "timestamp": "1671177057", "ddlType": "ALTER_TABLE", "table_name": "EMP"}}) + "\n"
        for ddl, _ in ORACLE_MODE_DDL
    ))  # fmt: skip
    assert _changes("oms-default", path, catalog_dialect="mysql") == [line for _, line in ORACLE_MODE_DDL]


def test_a_created_tables_types_as_an_events():
    (create,) = parse_ddl("CREATE TABLE t (id BIGINT UNSIGNED, amt DECIMAL(10,2), at DATETIME(3))", "mysql")
    assert create.column_types == {"id": "INT", "amt": "DECIMAL", "at": "DATETIME"}
    assert create.source_types == {"id": "BIGINT UNSIGNED", "amt": "DECIMAL(10,2)", "at": "DATETIME(3)"}
