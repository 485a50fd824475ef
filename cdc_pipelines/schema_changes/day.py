"""What the snapshot does with a day's DDL before it writes anything, by each topic's policy.

`exception` is decided here: a day with a schema change, or a DDL the parser cannot read, fails before
anything of it is written. `lenient` (the columns follow the row images) needs nothing of the DDL but `_ddl`;
`evolve` and `ignore` are carried out by the snapshot (`snapshots.schema_day`). A policy of no known name
stops the run before any day is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cdc_pipelines.schema_changes.policy import EXCEPTION, LENIENT, UnknownPolicy, check_policy, plan_day

__all__ = ["UnknownPolicy", "check_policies", "policy_of", "refuse_schema_changes", "refuses"]


def policy_of(policies: str | Mapping[str, str], topic: str | None) -> str:
    """A topic's policy: `policies` itself when one policy names every topic, else its entry (`lenient`)."""
    return policies if isinstance(policies, str) else policies.get(topic or "", LENIENT)


def refuses(policies: str | Mapping[str, str]) -> bool:
    """Whether some topic's policy is `exception`: only then is a day's DDL read before it is applied."""
    return EXCEPTION in ([policies] if isinstance(policies, str) else policies.values())


def check_policies(policies: str | Mapping[str, str]) -> None:
    """Raise `UnknownPolicy` for a policy of no known name, before any day is read."""
    for policy in [policies] if isinstance(policies, str) else policies.values():
        check_policy(policy)


def refuse_schema_changes(
    ddl_events: Iterable[Mapping], policies: str | Mapping[str, str], dialects: Mapping[str, str | None] | None = None
) -> None:
    """Raise `policy.SchemaChangeRefused` for the first schema change (or unread DDL) of a day, in its order,
    among the DDL events (`event_id`, `ddl`, `db`, `table_name`, `meta`, `source_topic`) of the topics whose
    policy is `exception`; `dialects`: each topic's `ddl_dialect:`."""
    from cdc_pipelines.schema_changes.ddl import read_event  # sqlglot: only for a day that has such DDL

    for event in ddl_events:
        topic = event.get("source_topic")
        if policy_of(policies, topic) == EXCEPTION:
            plan_day({}, [read_event(event, (dialects or {}).get(topic or ""))], EXCEPTION)
