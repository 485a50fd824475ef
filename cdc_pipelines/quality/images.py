"""Image presence per op: each op carries exactly the row images (or DDL text) it implies.

A wrong image is the first sign of a decoder mapping the wrong field, and encoders cannot emit a
DELETE without its before image, so this is checked per event rather than assumed.
"""

from __future__ import annotations

from cdc_pipelines.formats import codec_of
from cdc_pipelines.quality.result import EventRule, Verdict

RULE = "image_presence_check"
CONTROL_OPS = ("HEARTBEAT", "TX_BEGIN", "TX_END")


CHECKS = ("insert_upsert", "delete", "update", "ddl", "control")
_CHECK_OF_OP = {"INSERT": 0, "UPSERT": 0, "DELETE": 1, "UPDATE": 2, "DDL": 3, **dict.fromkeys(CONTROL_OPS, 4)}
_NOT_APPLIED: Verdict = (False, False, None)


def _image_verdicts(event) -> tuple[list[Verdict], tuple]:
    """INSERT/UPSERT after only, DELETE before only, UPDATE after (+ before where the format has it), DDL
    text without images, HEARTBEAT/TX_BEGIN/TX_END no images. TRUNCATE/OTHER are not checked. An op is one
    sub-check's: the others do not apply."""
    op = event["op"]
    verdicts, check = [_NOT_APPLIED] * len(CHECKS), _CHECK_OF_OP.get(op)
    if check is None:
        return verdicts, ()
    before, after = event["before"] is not None, event["after"] is not None
    if check == 0:
        cases = ((not after, "without an after image"), (before, "with a before image"))
    elif check == 1:
        cases = ((not before, "without a before image"), (after, "with an after image"))
    elif check == 2:
        codec = codec_of(event["source_format"])
        needs_before = codec is None or codec.update_has_before  # flattened or after-only payloads lack it
        cases = ((not after, "without an after image"), (not before and needs_before, "without a before image"))
    elif check == 3:
        ddl = event["ddl"]
        has_ddl = ddl is not None and ddl.strip(" ") != ""  # a tab or a newline is text (SQL's TRIM takes spaces)
        cases = ((not has_ddl, "without DDL text"), (before or after, "with a row image"))
    else:
        cases = ((before or after, "with a row image"),)
    reason = next((text for failing, text in cases if failing), None)
    verdicts[check] = (True, reason is not None, None if reason is None else f"{op} {reason}")
    return verdicts, ()


def image_rule(*, max_failure_ratio: float = 0.0) -> EventRule:
    return EventRule(RULE, CHECKS, (), _image_verdicts, threshold=max_failure_ratio)
