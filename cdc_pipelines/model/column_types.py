"""How a column's type widens from one day to the next: the one rule the snapshot's typing (`snapshots.values`)
and the DDL's schema changes (`schema_changes.policy`) both follow, kept below both."""

from __future__ import annotations

import re


def _decimal_digits(type_name: str) -> tuple[int, int] | None:
    """(integer digits, scale) of a type a decimal can hold without loss; None for other types."""
    if type_name == "bigint":
        return 20, 0  # a long's values need 20 integer digits (as Delta's type widening counts it too)
    match = re.fullmatch(r"decimal\((\d+),(\d+)\)", type_name)
    return (int(match[1]) - int(match[2]), int(match[2])) if match else None


def widen(old: str | None, new: str) -> str:
    """The type a column holding values of `old` and of `new` takes: the same type; for numbers, the
    narrowest decimal holding both (bigint and decimal(p,s)); text (`string`) otherwise. Each step is a
    cast that loses no value (`tables.prepare` rewrites the table with it)."""
    if old is None or old == new:
        return new
    a, b = _decimal_digits(old), _decimal_digits(new)
    if a is None or b is None:
        return "string"
    scale = max(a[1], b[1])
    precision = max(a[0], b[0]) + scale
    return f"decimal({precision},{scale})" if precision <= 38 else "string"
