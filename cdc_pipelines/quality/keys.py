"""PK consistency: the key of every row event is known, present in its images, stable across an
update unless the key itself changed, agrees with OMS's own PK metadata, and events are not repeated.

Every merge into a target table keys on these values: a missing or null PK silently merges rows,
and a duplicate event applies a change twice.
"""

from __future__ import annotations

import json

from cdc_pipelines.formats import codec_of
from cdc_pipelines.model import meta_keys
from cdc_pipelines.model.canonical import ROW_OPS
from cdc_pipelines.quality.rejects import RejectSummary
from cdc_pipelines.quality.result import EventRule, RuleResult, Verdict
from cdc_pipelines.quality.split_updates import CHECK as SPLIT_CHECK
from cdc_pipelines.quality.split_updates import add_orphan_rejects, split_update_verdict

RULE = "pk_consistency_check"
PK_SEPARATOR = "\u0001"
TABLE = ("source_topic", "db", "db_schema", "table_name")
TABLE_HAS_PK = "_pk_table_has_pk"
EVENT_ID_EVENTS = "_pk_event_id_events"


CHECKS = ("pk_known", "pk_values", "pk_unchanged", "record_primary_value", SPLIT_CHECK, "unique_event_id")
INFO = ("key_changes", "no_pk_table_events", "pk_not_named_events")


def table_has_pk(event) -> bool:
    """Whether the event names its table's PK: a row event with PK columns (`DayContext` asks it of every
    event, so that `pk_known` knows which tables have a PK on the day)."""
    return event["op"] in ROW_OPS and bool(event["pk_columns"])


def _bad_py_pk(pk: list, image: dict | None) -> list[str]:
    if image is None:
        return [f"{c} missing" for c in pk]
    return [f"{c} {'null' if c in image else 'missing'}" for c in pk if image.get(c) is None]


def _listed(meta: dict) -> list | None:
    """The columns `cdc.changed_columns` lists (a JSON array the codecs write); None where it is absent or
    is not an array, so that the PK's change is then not judged against it."""
    try:
        listed = json.loads(meta.get(meta_keys.CHANGED_COLUMNS) or "null")
    except ValueError:
        return None
    return listed if isinstance(listed, list) else None


def _joined(pk: list, image: dict | None) -> str:
    """`array_join` of the image's PK values: nulls left out."""
    image = image or {}
    return PK_SEPARATOR.join(v for v in (image.get(c) for c in pk) if v is not None)


def _pk_verdicts(e) -> tuple[list[Verdict], list[bool]]:
    """Sub-checks: pk_known (a row event lacks PK columns while others of its table have them), pk_values
    (missing/null PK values in the images the op carries), pk_unchanged (an UPDATE's PK differs although
    `cdc.changed_columns` does not list it), record_primary_value (OMS metadata vs the image),
    split_update_paired (a split update's half alone in the events), unique_event_id. Info flags, not
    failures: key changes, events of tables without a PK, events of formats that do not name the PK."""
    op, fmt, pk = e["op"], e["source_format"], e["pk_columns"] or []
    before, after, meta = e["before"], e["after"], e["meta"] or {}
    row, has_pk = op in ROW_OPS, bool(pk)
    codec, table_has_pk = codec_of(fmt), e[TABLE_HAS_PK]
    names_pk = codec is None or codec.names_pk
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
        # a list holding a null does not say which columns changed
        unlisted = [] if listed is None or None in listed else [c for c in changed if c not in listed]
    rpv = meta.get("record_primary_value")
    primary_complete = complete_before if op == "DELETE" else complete_after
    oms_rpv = codec is not None and codec.record_primary_value
    rpv_applies = oms_rpv and row and has_pk and rpv is not None and primary_complete
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


def pk_rule(*, max_failure_ratio: float = 0.0) -> EventRule:
    """The rule; `finish` adds what the rejects say."""
    return EventRule(RULE, CHECKS, INFO, _pk_verdicts, threshold=max_failure_ratio)


def finish(result: RuleResult, rejects: RejectSummary | None) -> RuleResult:
    """Add the decoder's rejected orphan halves (given `rejects`) and the tables without a PK."""
    if rejects is not None:
        result = add_orphan_rejects(result, rejects, list(INFO))
    result.info["tables_without_pk"] = [
        f"{g['source_topic']}/{g['table']}" for g in result.groups if g["no_pk_table_events"]
    ]
    return result
