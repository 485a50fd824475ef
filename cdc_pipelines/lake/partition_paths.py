"""Partition folder names as Spark writes them (`source_topic=a%2Fb`), so no value is ever a path.

A topic named `../../etc` or `a/b=c` must stay one folder under its table: Spark escapes `/`, `=`,
`%`, `:` and control characters in partition values, and every folder this project names itself
(run counts, commits) uses the same escaping, so the two agree and nothing escapes its root.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
# the characters Spark escapes in partition folder names (ExternalCatalogUtils.escapePathName)
_ESCAPED = {chr(c) for c in range(0x01, 0x20)} | set("\"#%'*/:=?\\\x7f{[]^")
_ESCAPE = re.compile("%([0-9A-Fa-f]{2})")
# a file's day: the `YYYY-MM-DD` of the innermost `dt=` folder of its path (a Java regex too: Spark's regexp_extract)
DT_FOLDER = r".*/dt=([0-9]{4}-[0-9]{2}-[0-9]{2})/"


def escape_value(value: str | None) -> str:
    """A partition value as a folder name part (`a/b` -> `a%2Fb`; null or empty -> Hive's default)."""
    if value is None or value == "":
        return DEFAULT_PARTITION
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def unescape_value(text: str) -> str:
    """The partition value a folder name part stands for."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def partition_dir(values: Mapping[str, str | None], partition_by: Sequence[str]) -> str:
    """`dt=2024-01-01/source_topic=t`: the relative folder of one partition."""
    return "/".join(f"{col}={escape_value(values[col])}" for col in partition_by)


def dt_of_path(path: str) -> str:
    """The day of the file at `path` (`DT_FOLDER`); "" where no folder names one."""
    match = re.match(DT_FOLDER, path)
    return match.group(1) if match else ""
