"""Image presence per op: each op carries exactly the row images (or DDL text) it implies.

A wrong image is the first sign of a decoder mapping the wrong field, and encoders cannot emit a
DELETE without its before image, so this is checked per event rather than assumed.
"""

from __future__ import annotations

from cdc_pipelines.formats import codec_of
from cdc_pipelines.quality.result import EventRule, Verdict

RULE = "image_presence_check"
CONTROL_OPS = ("HEARTBEAT", "TX_BEGIN", "TX_END")


def _image_verdicts(event) -> tuple[list[Verdict], tuple]:
    """INSERT/UPSERT after only, DELETE before only, UPDATE after (+ before where the format has it), DDL
    text without images, HEARTBEAT/TX_BEGIN/TX_END no images. TRUNCATE/OTHER are not checked."""
    op, before, after = event["op"], event["before"] is not None, event["after"] is not None
    ddl = event["ddl"]
    has_ddl = ddl is not None and ddl.strip(" ") != ""  # a tab or a newline is text (SQL's TRIM takes spaces)
    codec = codec_of(event["source_format"])
    needs_before = codec is None or codec.update_has_before  # flattened or after-only payloads lack it

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


def image_rule(*, max_failure_ratio: float = 0.0) -> EventRule:
    checks = ("insert_upsert", "delete", "update", "ddl", "control")
    return EventRule(RULE, checks, (), _image_verdicts, threshold=max_failure_ratio)
