"""What a day's rows do to a table's current and history tables, as data: the two MERGEs' conditions and
clauses, which each writer renders in its own API (`tables` with Spark's Delta, `small_tables` with delta-rs).

The source rows carry `KIND`: for the current table `set` (the key's row after the day) or `del` (the key
gone); for the history `open` (a version the day opened) or `close` (the end of a key's open version). The
conditions are Delta SQL, which both APIs take as text; the source is `s`, the table `t`.
"""

from __future__ import annotations

from dataclasses import dataclass

KIND = "_cdc_kind"  # the merge source's own column: what the row does (never written)

# a clause's action: `update` / `insert` take the source row's columns (all of them but KIND) unless
# `assign` names what to set; `delete` removes the target row
MATCHED_DELETE, MATCHED_UPDATE, NOT_MATCHED_INSERT = "matched delete", "matched update", "not matched insert"
NOT_MATCHED_BY_SOURCE_DELETE = "not matched by source delete"


@dataclass(frozen=True)
class Clause:
    action: str
    condition: str | None = None
    assign: tuple[tuple[str, str], ...] | None = None  # (column, expression); None: every source column


@dataclass(frozen=True)
class Merge:
    on: str
    clauses: tuple[Clause, ...]


def current_merge(truncated: bool) -> Merge:
    """The current table's MERGE: each key's row replaced by the day's, removed where the day deleted it;
    a truncated table also loses every key the day left out."""
    clauses = (
        Clause(MATCHED_DELETE, f"s.{KIND} = 'del'"),
        Clause(MATCHED_UPDATE, f"s.{KIND} = 'set'"),
        Clause(NOT_MATCHED_INSERT, f"s.{KIND} = 'set'"),
    )
    return Merge("t._cdc_key = s._cdc_key", clauses + ((Clause(NOT_MATCHED_BY_SOURCE_DELETE),) if truncated else ()))


def history_merge() -> Merge:
    """The history's MERGE: the versions the day opened inserted, the open versions it ended given their end."""
    return Merge(
        f"t._cdc_key = s._cdc_key AND t._cdc_end_at IS NULL AND s.{KIND} = 'close'",
        (
            Clause(MATCHED_UPDATE, assign=(("_cdc_end_at", "s._cdc_end_at"),)),
            Clause(NOT_MATCHED_INSERT, f"s.{KIND} = 'open'"),
        ),
    )
