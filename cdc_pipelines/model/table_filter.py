"""Which source tables of a topic to keep: glob patterns on `db.table`, as a catalog or the CLI gives them.

A topic that carries a whole database often feeds a lake that wants a few of its tables. The filter is
applied to decoded events, so what it leaves out is counted (`filtered`) instead of disappearing:
read = decoded + rejected + filtered. An event that names no table (a tombstone, a DDL of the whole
database) is always kept. Patterns are shell globs (`*`, `?`, `[abc]`), matched case-sensitively
against `db.table` (`table` alone where the event has no db).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass


class TableFilterError(ValueError):
    """A pattern list that is not a list of non-empty texts."""


_GLOB_TOKEN = re.compile(r"\*|\?|\[!?\]?[^\]]*\]|.", re.DOTALL)


def _regex(patterns: tuple[str, ...]) -> str:
    """One anchored regex, valid in Python and Java alike, matching any of the globs. Its flags are inline, so
    Spark's `rlike` runs it as `keeps` does: `(?s)` lets `*` and `?` match a newline in a name, and `(?!.)`
    ends it at the last character (`$` would also match before a final line terminator, which differ)."""
    parts = []
    for glob in patterns:
        out = []
        for token in _GLOB_TOKEN.findall(glob):
            if token == "*":
                out.append(".*")
            elif token == "?":
                out.append(".")
            elif len(token) > 1:  # a [class], [!negated]
                negated = token.startswith("[!")
                body = "".join("\\" + c if c in "\\[]&^" else c for c in token[2 if negated else 1 : -1])
                out.append("[" + ("^" if negated else "") + body + "]")
            else:
                out.append(re.escape(token))
        parts.append("".join(out))
    return "(?s)^(?:" + "|".join(parts) + ")(?!.)"


@dataclass(frozen=True)
class TableFilter:
    """Keep a table when it matches an `include` pattern (or none are given) and no `exclude` pattern."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def of(cls, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None) -> TableFilter | None:
        """The filter of these pattern lists; None when both are empty (every table kept)."""
        inc, exc = _patterns(include, "include"), _patterns(exclude, "exclude")
        return cls(inc, exc) if inc or exc else None

    @property
    def include_regex(self) -> str | None:
        return _regex(self.include) if self.include else None

    @property
    def exclude_regex(self) -> str | None:
        return _regex(self.exclude) if self.exclude else None

    def keeps(self, db: str | None, table: str | None) -> bool:
        """Whether an event of `db`.`table` is kept, by `include_regex` and `exclude_regex`: the one form of
        the filter, which Spark's `rlike` runs on its engine and Python's `re` here."""
        if table is None:
            return True
        name = table if db is None else f"{db}.{table}"
        include, exclude = _compiled(self.include_regex), _compiled(self.exclude_regex)
        return (include is None or include.match(name) is not None) and (exclude is None or not exclude.match(name))


@functools.lru_cache(maxsize=64)
def _compiled(regex: str | None) -> re.Pattern | None:
    return None if regex is None else re.compile(regex)


def _patterns(patterns: Iterable[str] | None, what: str) -> tuple[str, ...]:
    if patterns is None:
        return ()
    if isinstance(patterns, str) or not all(isinstance(p, str) and p for p in patterns):
        raise TableFilterError(f"table {what} patterns must be a list of non-empty globs on db.table")
    return tuple(patterns)
