"""PK consistency: the key of every row event is known, present in its images, stable across an
update unless the key itself changed, agrees with OMS's own PK metadata, and events are not repeated.

Every merge into a target table keys on these values: a missing or null PK silently merges rows,
and a duplicate event applies a change twice.
"""

from __future__ import annotations

import json

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines.model import meta_keys
from cdc_pipelines.model.canonical import ROW_OPS
from cdc_pipelines.quality.rejects import RejectSummary, summarize_rejects
from cdc_pipelines.quality.result import EventJudge, EventRule, NeedsSpark, RuleResult, SubCheck, Verdict, evaluate
from cdc_pipelines.quality.split_updates import CHECK as SPLIT_CHECK
from cdc_pipelines.quality.split_updates import add_orphan_rejects, split_update_subcheck, split_update_verdict

RULE = "pk_consistency_check"
# formats whose messages do not name the primary key: their events are reported apart, not failed
FORMATS_WITHOUT_PK_NAMES = (
    "oms-shareplex",
    "dts-shareplex",
    "oms-debezium",
    "oms-debezium-flatten",
    "oms-debezium-smt",
    "datahub-tuple",
    "aws-dms-json",
)
# formats that also carry the PK values joined by \u0001 in meta['record_primary_value']
RECORD_PRIMARY_VALUE_FORMATS = ("oms-default", "oms-default-extend")
PK_SEPARATOR = "\u0001"
TABLE = ("source_topic", "db", "db_schema", "table_name")
TABLE_HAS_PK = "_pk_table_has_pk"
EVENT_ID_EVENTS = "_pk_event_id_events"
BAD_BEFORE, BAD_AFTER = "_pk_bad_before", "_pk_bad_after"


def _row_has_pk() -> Column:
    return F.col("op").isin(*ROW_OPS) & F.coalesce(F.size("pk_columns") > 0, F.lit(False))


def shared_columns(events: DataFrame) -> DataFrame:
    """`events` with whether any row event of its table has PK columns, the events sharing its id, and
    each image's missing/null PK values (read by three sub-checks, computed once: they run lambdas,
    which Spark evaluates without generated code).

    The first two are aggregates of a few columns joined back, the tables by broadcast (a day has few),
    the repeated ids only (a day normally has none): a window over the table or the id would instead
    shuffle and sort every event whole, one task per table.
    """
    table = [F.col(c).alias(f"_pk_{c}") for c in TABLE]
    tables = events.groupBy(*table).agg(F.max(_row_has_pk()).alias(TABLE_HAS_PK))
    repeated = (
        events.groupBy("event_id").agg(F.count(F.lit(1)).alias(EVENT_ID_EVENTS)).where(F.col(EVENT_ID_EVENTS) > 1)
    )
    same_table = [F.col(c).eqNullSafe(F.col(f"_pk_{c}")) for c in TABLE]
    with_tables = events.join(F.broadcast(tables), same_table, "left").drop(*[f"_pk_{c}" for c in TABLE])
    return with_tables.join(repeated, "event_id", "left").withColumns(
        {BAD_BEFORE: _bad_pk("before"), BAD_AFTER: _bad_pk("after")}
    )


def _bad_pk(image: str) -> Column:
    """PK columns missing or null in `image`, as `col missing` / `col null` texts (empty if none)."""
    img = F.col(image)
    bad = F.filter(F.col("pk_columns"), lambda c: F.element_at(img, c).isNull())
    return F.transform(
        bad, lambda c: F.concat(c, F.when(F.map_contains_key(img, c), F.lit(" null")).otherwise(F.lit(" missing")))
    )


def _joined_pk(image: str) -> Column:
    return F.array_join(F.transform(F.col("pk_columns"), lambda c: F.element_at(F.col(image), c)), PK_SEPARATOR)


def pk_checks() -> tuple[dict[str, SubCheck], dict[str, Column]]:
    """Sub-checks: pk_known (a row event lacks PK columns while others of its table have them),
    pk_values (missing/null PK values in the images the op carries), pk_unchanged (an UPDATE's PK
    differs although `cdc.changed_columns` does not list it), record_primary_value (OMS metadata vs
    the image), split_update_paired (a split update's half alone in the events), unique_event_id.
    Info flags, not failures: key changes, events of tables without a PK, events of formats that do
    not name the PK."""
    op = F.col("op")
    row = op.isin(*ROW_OPS)
    has_pk = F.coalesce(F.size("pk_columns") > 0, F.lit(False))
    names_pk = ~F.col("source_format").isin(*FORMATS_WITHOUT_PK_NAMES)
    table_has_pk = F.coalesce(F.col(TABLE_HAS_PK), F.lit(False))
    duplicates = F.coalesce(F.col(EVENT_ID_EVENTS), F.lit(1))

    before, after = F.col("before").isNotNull(), F.col("after").isNotNull()
    bad_before, bad_after = F.col(BAD_BEFORE), F.col(BAD_AFTER)
    uses_after = op.isin("INSERT", "UPSERT", "UPDATE") & after
    uses_before = ((op == "DELETE") | (op == "UPDATE")) & before
    empty = F.array().cast(T.ArrayType(T.StringType()))
    missing = F.concat(
        F.when(uses_before, F.transform(bad_before, lambda t: F.concat(F.lit("before "), t))).otherwise(empty),
        F.when(uses_after, F.transform(bad_after, lambda t: F.concat(F.lit("after "), t))).otherwise(empty),
    )
    complete_before = before & (F.size(bad_before) == 0)
    complete_after = after & (F.size(bad_after) == 0)

    changed_pk = F.filter(
        F.col("pk_columns"), lambda c: ~F.element_at("before", c).eqNullSafe(F.element_at("after", c))
    )
    listed = F.from_json(F.element_at("meta", F.lit(meta_keys.CHANGED_COLUMNS)), T.ArrayType(T.StringType()))
    unlisted = F.when(listed.isNull(), empty).otherwise(F.filter(changed_pk, lambda c: ~F.array_contains(listed, c)))
    comparable = (op == "UPDATE") & has_pk & complete_before & complete_after

    rpv = F.element_at("meta", F.lit("record_primary_value"))
    primary_complete = F.when(op == "DELETE", complete_before).otherwise(complete_after)
    rpv_matches = (rpv == F.when(op == "DELETE", _joined_pk("before")).otherwise(_joined_pk("after"))) | (
        (op == "UPDATE") & (rpv == _joined_pk("before"))
    )

    checks = {
        "pk_known": SubCheck(
            row & names_pk, ~has_pk & table_has_pk, F.lit("no PK columns although other events of its table have them")
        ),
        "pk_values": SubCheck(
            row & has_pk & (uses_before | uses_after),
            F.size(missing) > 0,
            F.concat(F.lit("PK value "), F.concat_ws(", ", missing)),
        ),
        "pk_unchanged": SubCheck(
            comparable,
            F.size(unlisted) > 0,
            F.concat(F.lit("PK changed but cdc.changed_columns omits it: "), F.concat_ws(",", unlisted)),
        ),
        "record_primary_value": SubCheck(
            F.col("source_format").isin(*RECORD_PRIMARY_VALUE_FORMATS)
            & row
            & has_pk
            & rpv.isNotNull()
            & primary_complete,
            ~F.coalesce(rpv_matches, F.lit(False)),
            F.lit("meta record_primary_value does not match the image's PK values"),
        ),
        SPLIT_CHECK: split_update_subcheck(),
        "unique_event_id": SubCheck(
            F.lit(True), duplicates > 1, F.format_string("duplicate event_id (%d events)", duplicates)
        ),
    }
    info = {
        "key_changes": comparable & (F.size(changed_pk) > 0) & (F.size(unlisted) == 0),
        "no_pk_table_events": row & names_pk & ~table_has_pk,
        "pk_not_named_events": row & ~names_pk & ~has_pk,
    }
    return checks, info


def pk_rule(*, max_failure_ratio: float = 0.0) -> EventRule:
    """The rule as the day's scan takes it (see `scan`); `finish` adds what the rejects say."""
    checks, info = pk_checks()
    return EventRule(RULE, checks, info, threshold=max_failure_ratio, added_columns=shared_columns)


CHECKS = ("pk_known", "pk_values", "pk_unchanged", "record_primary_value", SPLIT_CHECK, "unique_event_id")
INFO = ("key_changes", "no_pk_table_events", "pk_not_named_events")


def _shared_py(events: list[dict]) -> None:
    """`shared_columns` on events as dicts: whether the event's table has PK columns, the events of its id."""
    tables: dict[tuple, bool] = {}
    ids: dict[str, int] = {}
    for e in events:
        table = tuple(e[c] for c in TABLE)
        tables[table] = tables.get(table, False) or (e["op"] in ROW_OPS and bool(e["pk_columns"]))
        ids[e["event_id"]] = ids.get(e["event_id"], 0) + 1
    for e in events:
        e[TABLE_HAS_PK] = tables[tuple(e[c] for c in TABLE)]
        e[EVENT_ID_EVENTS] = ids[e["event_id"]]


def _bad_py_pk(pk: list, image: dict | None) -> list[str]:
    if image is None:
        return [f"{c} missing" for c in pk]
    return [f"{c} {'null' if c in image else 'missing'}" for c in pk if image.get(c) is None]


def _listed(meta: dict) -> list | None:
    """`from_json(meta[cdc.changed_columns], array<string>)` for the JSON arrays of strings the codecs write."""
    text = meta.get(meta_keys.CHANGED_COLUMNS)
    if text is None:
        return None
    try:
        listed = json.loads(text)
    except ValueError:
        raise NeedsSpark(f"cdc.changed_columns is not JSON: {text[:80]!r}") from None
    if not isinstance(listed, list) or not all(c is None or isinstance(c, str) for c in listed):
        raise NeedsSpark(f"cdc.changed_columns is not an array of strings: {text[:80]!r}")
    return listed


def _joined(pk: list, image: dict | None) -> str:
    """`array_join` of the image's PK values: nulls left out."""
    image = image or {}
    return PK_SEPARATOR.join(v for v in (image.get(c) for c in pk) if v is not None)


def _pk_verdicts(e) -> tuple[list[Verdict], list[bool]]:
    """`pk_checks` of one event, in Python (see `result.EventJudge`)."""
    op, fmt, pk = e["op"], e["source_format"], e["pk_columns"] or []
    before, after, meta = e["before"], e["after"], e["meta"] or {}
    row, has_pk = op in ROW_OPS, bool(pk)
    names_pk, table_has_pk = fmt not in FORMATS_WITHOUT_PK_NAMES, e[TABLE_HAS_PK]
    bad_before, bad_after = _bad_py_pk(pk, before), _bad_py_pk(pk, after)
    uses_after = op in ("INSERT", "UPSERT", "UPDATE") and after is not None
    uses_before = op in ("DELETE", "UPDATE") and before is not None
    missing = ([f"before {t}" for t in bad_before] if uses_before else []) + (
        [f"after {t}" for t in bad_after] if uses_after else []
    )
    complete_before = before is not None and not bad_before
    complete_after = after is not None and not bad_after
    comparable = op == "UPDATE" and has_pk and complete_before and complete_after
    changed, unlisted = [], []
    if comparable:
        changed = [c for c in pk if before.get(c) != after.get(c)]
        listed = _listed(meta)
        # array_contains is null (not false) for a column absent from a list holding a null
        unlisted = [] if listed is None else [c for c in changed if c not in listed and None not in listed]
    rpv = meta.get("record_primary_value")
    primary_complete = complete_before if op == "DELETE" else complete_after
    rpv_applies = fmt in RECORD_PRIMARY_VALUE_FORMATS and row and has_pk and rpv is not None and primary_complete
    rpv_matches = rpv_applies and (
        rpv == _joined(pk, before if op == "DELETE" else after) or (op == "UPDATE" and rpv == _joined(pk, before))
    )
    events = e[EVENT_ID_EVENTS]
    return [
        (row and names_pk, not has_pk and table_has_pk, "no PK columns although other events of its table have them"),
        (row and has_pk and (uses_before or uses_after), bool(missing), "PK value " + ", ".join(missing)),
        (comparable, bool(unlisted), "PK changed but cdc.changed_columns omits it: " + ",".join(unlisted)),
        (rpv_applies, not rpv_matches, "meta record_primary_value does not match the image's PK values"),
        split_update_verdict(e),
        (True, events > 1, f"duplicate event_id ({events} events)"),
    ], [
        comparable and bool(changed) and not unlisted,
        row and names_pk and not table_has_pk,
        row and not names_pk and not has_pk,
    ]


def pk_judge(*, max_failure_ratio: float = 0.0) -> EventJudge:
    """The rule judged in Python, for a day judged without a JVM; `finish` adds what the rejects say."""
    return EventJudge(RULE, CHECKS, INFO, _pk_verdicts, threshold=max_failure_ratio, prepare=_shared_py)


def finish(result: RuleResult, rejects: RejectSummary | None) -> RuleResult:
    """Add the decoder's rejected orphan halves (given `rejects`) and the tables without a PK."""
    if rejects is not None:
        result = add_orphan_rejects(result, rejects, list(INFO))
    result.info["tables_without_pk"] = [
        f"{g['source_topic']}/{g['table']}" for g in result.groups if g["no_pk_table_events"]
    ]
    return result


def pk_consistency_check(
    df: DataFrame, *, rejects: DataFrame | None = None, max_failure_ratio: float = 0.0
) -> RuleResult:
    """The PK sub-checks counted over `df` by topic and table (a scan of its own); given `rejects`, the
    before halves the decoder rejected as orphans count as failures of split_update_paired too."""
    summary = None if rejects is None else summarize_rejects(rejects)
    return finish(evaluate(df, pk_rule(max_failure_ratio=max_failure_ratio)), summary)
