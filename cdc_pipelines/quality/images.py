"""Image presence per op: each op carries exactly the row images (or DDL text) it implies.

A wrong image is the first sign of a decoder mapping the wrong field, and encoders cannot emit a
DELETE without its before image, so this is checked per event rather than assumed.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdc_pipelines.quality.result import EventRule, RuleResult, SubCheck, evaluate

RULE = "image_presence_check"
# formats whose UPDATE may legitimately lack the before image (flattened or after-only payloads)
NO_BEFORE_ON_UPDATE = (
    "oms-debezium-smt", "dataworks-json", "datahub-tuple", "oms-debezium", "oms-debezium-flatten", "ogg-json",
    "aws-dms-json",
)  # fmt: skip
CONTROL_OPS = ("HEARTBEAT", "TX_BEGIN", "TX_END")


def _reason(*cases: tuple) -> F.Column:
    out = F.when(cases[0][0], F.lit(cases[0][1]))
    for cond, text in cases[1:]:
        out = out.when(cond, F.lit(text))
    return out


def image_checks() -> dict[str, SubCheck]:
    """INSERT/UPSERT after only, DELETE before only, UPDATE after (+ before where the format has it),
    DDL text without images, HEARTBEAT/TX_BEGIN/TX_END no images. TRUNCATE/OTHER are not checked."""
    op, before, after = F.col("op"), F.col("before").isNotNull(), F.col("after").isNotNull()
    op_text = F.col("op")
    has_ddl = F.coalesce(F.trim(F.col("ddl")) != "", F.lit(False))
    update_needs_before = ~F.col("source_format").isin(*NO_BEFORE_ON_UPDATE)
    checks = {
        "insert_upsert": SubCheck(
            op.isin("INSERT", "UPSERT"),
            ~after | before,
            _reason((~after, "without an after image"), (before, "with a before image")),
        ),
        "delete": SubCheck(
            op == "DELETE",
            ~before | after,
            _reason((~before, "without a before image"), (after, "with an after image")),
        ),
        "update": SubCheck(
            op == "UPDATE",
            ~after | (~before & update_needs_before),
            _reason((~after, "without an after image"), (~before, "without a before image")),
        ),
        "ddl": SubCheck(
            op == "DDL",
            ~has_ddl | before | after,
            _reason((~has_ddl, "without DDL text"), (before | after, "with a row image")),
        ),
        "control": SubCheck(op.isin(*CONTROL_OPS), before | after, F.lit("with a row image")),
    }
    return {n: SubCheck(c.applies, c.fails, F.concat_ws(" ", op_text, c.reason)) for n, c in checks.items()}


def image_rule(*, max_failure_ratio: float = 0.0) -> EventRule:
    """The rule as the day's scan takes it (see `scan`)."""
    return EventRule(RULE, image_checks(), threshold=max_failure_ratio)


def image_presence_check(df: DataFrame, *, max_failure_ratio: float = 0.0) -> RuleResult:
    """The image sub-checks counted over `df` by topic and table (a scan of its own)."""
    return evaluate(df, image_rule(max_failure_ratio=max_failure_ratio))
