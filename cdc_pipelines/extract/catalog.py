"""The topic catalog: which topics exist, their format, options and target formats."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from cdc_pipelines.extract.kafka_source import KafkaSource, KafkaSourceError, kafka_source
from cdc_pipelines.extract.messages import check_envelope
from cdc_pipelines.formats import get_codec
from cdc_pipelines.model.table_filter import TableFilter
from cdc_pipelines.schema_changes.dialects import dialect_of
from cdc_pipelines.schema_changes.policy import DEFAULT_POLICY, check_policy
from cdc_pipelines.schema_changes.routes import Route, routes_of


@dataclass(frozen=True)
class Topic:
    name: str
    format: str
    options: dict[str, str] = field(default_factory=dict)
    targets: tuple[str, ...] = ()
    envelope: str | None = None
    snapshot: bool = False  # its tables feed `table_snapshots`: opt-in, as one table must come from one topic
    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)  # {"db.table": key columns} where none are named
    keys_from: str | None = None  # "kafka": key columns still unnamed come from the Kafka message key (kcat envelope)
    tables: TableFilter | None = None  # which of the topic's tables to keep (None: all)
    kafka: KafkaSource | None = None  # read from this Kafka topic, not from extract folders (kcat envelopes)
    schema_changes: str = DEFAULT_POLICY  # what its DDL does to its snapshots: lenient, evolve, ignore, exception
    ddl_dialect: str | None = None  # the sqlglot dialect of its DDL where the messages name none
    routes: tuple[Route, ...] = ()  # sharded tables into one sink table each (schema_changes.routes)


KEYS_FROM_KAFKA = "kafka"


class CatalogError(ValueError):
    """A catalog entry that names an unknown format or option, or lacks a field."""


def load_catalog(path: str | Path) -> list[Topic]:
    """Read and validate a catalog YAML (`topics: [{name, format, options, targets, envelope, snapshot, keys,
    keys_from, tables: {include, exclude}, kafka: {bootstrap_servers, topic, options}, schema_changes,
    ddl_dialect, routes: [{source_table, sink_table, key}]}]`)."""
    data = yaml.safe_load(Path(path).read_text()) or {}
    topics = []
    for i, entry in enumerate(data.get("topics") or []):
        if not isinstance(entry, dict) or "name" not in entry or "format" not in entry:
            raise CatalogError(f"topic #{i + 1} in {path} needs a name and a format")
        options = {str(k): str(v) for k, v in (entry.get("options") or {}).items()}
        try:  # every field read here, a bad one said as `topic NAME in PATH: why`
            get_codec(entry["format"]).resolve_options(options)
            for target in entry.get("targets") or []:
                if get_codec(target).encode is None:
                    raise ValueError(f"target {target} has no encoder")
            check_envelope(entry.get("envelope"))
            if entry.get("envelope") and get_codec(entry["format"]).messages == "avro" and not entry.get("kafka"):
                raise ValueError(f"format {entry['format']} reads its own files and takes no envelope")
            if not isinstance(entry.get("snapshot", False), bool):
                raise ValueError("snapshot must be true or false")
            keys, kafka = _keys(entry), _kafka(entry)
            fields = (_keys_from(entry), _tables(entry), kafka, *_schema_changes(entry))
        except (KeyError, ValueError, KafkaSourceError) as exc:
            raise CatalogError(f"topic {entry['name']!r} in {path}: {exc}") from None
        envelope = "kcat" if kafka is not None else entry.get("envelope")  # a Kafka record is read as kcat shows it
        topics.append(Topic(str(entry["name"]), entry["format"], options, tuple(entry.get("targets") or ()),
                            envelope, entry.get("snapshot", False), keys, *fields))  # fmt: skip
    return topics


def _tables(entry: dict) -> TableFilter | None:
    """`tables: {include: [glob, ...], exclude: [glob, ...]}`: the topic's tables to keep (see `table_filter`)."""
    tables = entry.get("tables") or {}
    if not isinstance(tables, dict) or set(tables) - {"include", "exclude"}:
        raise ValueError("tables takes include and exclude, lists of globs on db.table")
    return TableFilter.of(tables.get("include"), tables.get("exclude"))


def _keys(entry: dict) -> dict[str, tuple[str, ...]]:
    """`keys: {db.table: [col, ...]}`: the key columns snapshots use for tables whose format names none."""
    keys = entry.get("keys") or {}
    valid = isinstance(keys, dict) and all(
        isinstance(cols, list) and cols and all(isinstance(c, str) and c for c in cols) for cols in keys.values()
    )
    if not valid:
        raise ValueError("keys must map db.table to a list of column names")
    return {str(table): tuple(cols) for table, cols in keys.items()}


def _schema_changes(entry: dict) -> tuple[str, str | None, tuple[Route, ...]]:
    """`schema_changes: POLICY`, `ddl_dialect: NAME` (a dialect or a source name as `OB_ORACLE`) and
    `routes: [{source_table: REGEX, sink_table: db.table, key: [col, ...]}]` (see `schema_changes`); an unknown
    policy (`UnknownPolicy`), dialect or route (`RouteError`) is a ValueError."""
    policy = check_policy(entry.get("schema_changes", DEFAULT_POLICY))
    named = entry.get("ddl_dialect")
    dialect = dialect_of(named) if isinstance(named, str) else None
    if named is not None and dialect is None:
        raise ValueError(f"ddl_dialect {named!r} is not MySQL, Oracle or PostgreSQL (or OceanBase's modes)")
    return policy, dialect, routes_of(entry.get("routes"))


def _keys_from(entry: dict) -> str | None:
    """`keys_from: kafka`: only a kcat envelope keeps the Kafka message key (`meta['cdc.kafka.key']`)."""
    keys_from = entry.get("keys_from")
    if keys_from is None:
        return None
    if keys_from != KEYS_FROM_KAFKA:
        raise ValueError(f"keys_from must be {KEYS_FROM_KAFKA}, not {keys_from!r}")
    if entry.get("envelope") != "kcat" and not entry.get("kafka"):
        raise ValueError("keys_from: kafka needs envelope: kcat (the Kafka key)")
    return keys_from


def _kafka(entry: dict) -> KafkaSource | None:
    """`kafka: {bootstrap_servers, topic, options}`: the topic's days are read from Kafka (see `extract.kafka`).

    `topic` defaults to the catalog name; `options` are Kafka consumer settings (`security.protocol`, ...)
    and the reader's `time_zone`, `late_seconds`, `allow_incomplete`, `timeout_ms`; a value `${NAME}` is
    the environment variable NAME when the day is read, so no secret needs to sit in the catalog."""
    kafka = entry.get("kafka")
    if kafka is None:
        return None
    if not isinstance(kafka, dict) or set(kafka) - {"bootstrap_servers", "topic", "options"}:
        raise ValueError("kafka takes bootstrap_servers, topic and options")
    if entry.get("envelope") not in (None, "kcat"):
        raise ValueError(f"a kafka topic is read as kcat envelopes, not {entry['envelope']!r}")
    options = kafka.get("options") or {}
    if not isinstance(options, dict):
        raise ValueError("kafka options must map settings to values")
    return kafka_source(str(kafka.get("bootstrap_servers") or ""), str(kafka.get("topic") or entry["name"]),
                        {str(k): str(v) for k, v in options.items()})  # fmt: skip


def kafka_key_topics(topics: list[Topic]) -> list[str]:
    """The `snapshot: true` topics whose tables may take their key from the Kafka message key."""
    return [t.name for t in topics if t.snapshot and t.keys_from == KEYS_FROM_KAFKA]


def snapshot_keys(topics: list[Topic]) -> dict[str, list[str]]:
    """The `keys` of the `snapshot: true` topics, merged (one table comes from one topic)."""
    merged: dict[str, list[str]] = {}
    for topic in topics:
        if topic.snapshot:
            for table, cols in topic.keys.items():
                if merged.get(table, list(cols)) != list(cols):
                    raise CatalogError(f"table {table} has different keys in two snapshot topics")
                merged[table] = list(cols)
    return merged
