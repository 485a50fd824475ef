"""The schema changes a DDL statement makes, as typed records: what `ddl.parse_ddl` gives and `policy` applies.

Each record prints as one compact line (`RENAME COLUMN shop.orders.amt -> amount`), the form tests and
reports state them in. A statement that changes no table's columns (CREATE INDEX, GRANT, COMMENT) is
`NotSchemaChange`, distinct from `UnreadDdl`, a statement that may change a table but could not be read:
the first has no effect, the second is kept with its reason and reported.
"""

from __future__ import annotations

from dataclasses import dataclass


class _Printed:
    """A record printed by its class's `_FORM`, filled with its fields."""

    _FORM = ""

    def __str__(self) -> str:
        return self._FORM.format(**vars(self))


@dataclass(frozen=True)
class TableName:
    """A table as the DDL names it: `db` is its schema or database part where the DDL gives one."""

    name: str
    db: str | None = None

    def __str__(self) -> str:
        return f"{self.db}.{self.name}" if self.db else self.name


@dataclass(frozen=True)
class DeclaredColumn(_Printed):
    """A column as DDL declares it: the type as written, its logical type and the Spark type the
    snapshot gives it (`declared_types.declared_type`)."""

    _FORM = "{name} {declared_type} ({logical_type}, {spark_type})"
    name: str
    declared_type: str
    logical_type: str
    spark_type: str


@dataclass(frozen=True)
class CreateTable:
    table: TableName
    columns: tuple[DeclaredColumn, ...]
    primary_key: tuple[str, ...] = ()

    @property
    def column_types(self) -> dict[str, str]:
        """The declared columns' logical types, as an event's `column_types`: for rows whose format names none."""
        return {c.name: c.logical_type for c in self.columns}

    @property
    def source_types(self) -> dict[str, str]:
        """The declared columns' types as written, as an event's `source_types`."""
        return {c.name: c.declared_type for c in self.columns}

    def __str__(self) -> str:
        key = f" KEY ({', '.join(self.primary_key)})" if self.primary_key else ""
        return f"CREATE TABLE {self.table} ({', '.join(map(str, self.columns))}){key}"


@dataclass(frozen=True)
class AddColumn(_Printed):
    _FORM = "ADD COLUMN {table}.{column}"
    table: TableName
    column: DeclaredColumn


@dataclass(frozen=True)
class DropColumn(_Printed):
    _FORM = "DROP COLUMN {table}.{name}"
    table: TableName
    name: str


@dataclass(frozen=True)
class RenameColumn(_Printed):
    _FORM = "RENAME COLUMN {table}.{old} -> {new}"
    table: TableName
    old: str
    new: str


@dataclass(frozen=True)
class ChangeColumn(_Printed):
    """MySQL's `CHANGE old new type`: a rename and a type in one clause (`new` may equal `old`)."""

    _FORM = "CHANGE COLUMN {table}.{old} -> {column}"
    table: TableName
    old: str
    column: DeclaredColumn


@dataclass(frozen=True)
class ModifyColumn(_Printed):
    """A column's new type: MySQL's and Oracle's MODIFY, PostgreSQL's `ALTER COLUMN ... TYPE`."""

    _FORM = "MODIFY COLUMN {table}.{column}"
    table: TableName
    column: DeclaredColumn


@dataclass(frozen=True)
class RenameTable(_Printed):
    _FORM = "RENAME TABLE {table} -> {new_table}"
    table: TableName
    new_table: TableName


@dataclass(frozen=True)
class DropTable(_Printed):
    _FORM = "DROP TABLE {table}"
    table: TableName


@dataclass(frozen=True)
class TruncateTable(_Printed):
    _FORM = "TRUNCATE TABLE {table}"
    table: TableName


@dataclass(frozen=True)
class NotSchemaChange(_Printed):
    """A statement that changes no table's columns (CREATE INDEX, GRANT, COMMENT, SET): no effect."""

    _FORM = "NOT A SCHEMA CHANGE: {statement}"
    statement: str  # its leading words, as `CREATE INDEX`


@dataclass(frozen=True)
class UnreadDdl(_Printed):
    """A statement that may change a table but could not be read: kept in `_ddl` with the reason."""

    _FORM = "UNREAD: {reason}"
    reason: str
    text: str


SchemaChange = (
    CreateTable | AddColumn | DropColumn | RenameColumn | ChangeColumn | ModifyColumn | RenameTable | DropTable
    | TruncateTable
)  # fmt: skip
# what `parse_ddl` gives for each statement (or ALTER clause) of a DDL text, in order
Parsed = SchemaChange | NotSchemaChange | UnreadDdl


@dataclass(frozen=True)
class DdlEvent:
    """One DDL event of the day: its id, text, the event's `db` (for tables the DDL does not qualify) and
    what `ddl.parse_ddl` read in it (`ddl.read_event` builds one from a canonical event)."""

    event_id: str
    ddl: str
    changes: tuple[Parsed, ...]
    db: str | None = None
    table: str | None = None

    @property
    def table_label(self) -> str:
        """The event's own db.table, where it names one: what an unread DDL is reported on."""
        return ".".join(p for p in (self.db, self.table) if p) or "?"
