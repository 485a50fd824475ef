"""PK consistency: the key of every row event is known, present in its images, stable across an
update unless the key itself changed, agrees with OMS's own PK metadata, and events are not repeated.

Every merge into a target table keys on these values: a missing or null PK silently merges rows,
and a duplicate event applies a change twice.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines.model import meta_keys
from cdc_pipelines.model.canonical import ROW_OPS
from cdc_pipelines.quality.rejects import RejectSummary, summarize_rejects
from cdc_pipelines.quality.result import EventRule, RuleResult, SubCheck, evaluate
from cdc_pipelines.quality.split_updates import CHECK as SPLIT_CHECK
from cdc_pipelines.quality.split_updates import add_orphan_rejects, split_update_subcheck

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


def finish(result: RuleResult, rejects: RejectSummary | None) -> RuleResult:
    """Add the decoder's rejected orphan halves (given `rejects`) and the tables without a PK."""
    if rejects is not None:
        result = add_orphan_rejects(result, rejects, list(pk_checks()[1]))
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
