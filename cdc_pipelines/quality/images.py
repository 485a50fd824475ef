"""Image presence per op: each op carries exactly the row images (or DDL text) it implies.

A wrong image is the first sign of a decoder mapping the wrong field, and encoders cannot emit a
DELETE without its before image, so this is checked per event rather than assumed.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdc_pipelines.quality.result import EventJudge, EventRule, RuleResult, SubCheck, Verdict, evaluate

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


def _image_verdicts(event) -> tuple[list[Verdict], tuple]:
    """`image_checks` of one event, in Python (see `result.EventJudge`)."""
    op, before, after = event["op"], event["before"] is not None, event["after"] is not None
    ddl = event["ddl"]
    has_ddl = ddl is not None and ddl.strip(" ") != ""  # Spark's trim takes spaces only
    needs_before = event["source_format"] not in NO_BEFORE_ON_UPDATE

    def verdict(applies: bool, cases: tuple) -> Verdict:
        reason = next((text for failing, text in cases if failing), None)
        return applies, reason is not None, None if reason is None else f"{op} {reason}"

    return [
        verdict(op in ("INSERT", "UPSERT"), ((not after, "without an after image"), (before, "with a before image"))),
        verdict(op == "DELETE", ((not before, "without a before image"), (after, "with an after image"))),
        verdict(op == "UPDATE", ((not after, "without an after image"),
                                 (not before and needs_before, "without a before image"))),
        verdict(op == "DDL", ((not has_ddl, "without DDL text"), (before or after, "with a row image"))),
        verdict(op in CONTROL_OPS, ((before or after, "with a row image"),)),
    ], ()  # fmt: skip


def image_judge(*, max_failure_ratio: float = 0.0) -> EventJudge:
    """The rule judged in Python, for a day judged without a JVM."""
    checks = ("insert_upsert", "delete", "update", "ddl", "control")
    return EventJudge(RULE, checks, (), _image_verdicts, threshold=max_failure_ratio)


def image_presence_check(df: DataFrame, *, max_failure_ratio: float = 0.0) -> RuleResult:
    """The image sub-checks counted over `df` by topic and table (a scan of its own)."""
    return evaluate(df, image_rule(max_failure_ratio=max_failure_ratio))
