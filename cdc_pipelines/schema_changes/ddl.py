"""DDL text -> the schema changes it makes (`changes`), read with sqlglot in the dialects the formats carry:
MySQL (and OceanBase's MySQL mode), Oracle (and OceanBase's Oracle mode), PostgreSQL.

Each statement of a DDL text, and each clause of an ALTER TABLE, is one record, in order. A statement that
changes no table's columns is `NotSchemaChange`; one that may change a table but is not read is `UnreadDdl`
with the reason, so a caller never guesses. Names are kept as the source's catalog reports them: an
unquoted name is upper case in Oracle and lower case in PostgreSQL, as written in MySQL; a table keeps its
schema or database part where the DDL gives one (an unqualified table is the event's `db`). The declared
type of a column is its text as written (`bigint(20) unsigned`), sliced from the statement by the token
positions sqlglot gives, because sqlglot's own rendering renames some (Oracle's LONG becomes INT). A DDL
text never raises: what sqlglot cannot read is `UnreadDdl`.

Home-made, because sqlglot 30 reads these forms only as a generic `Command` or not at all, and kept to
sqlglot's tokens and parsers for every name and type:
- `RENAME TABLE a TO b, c TO d` (MySQL) and `RENAME a TO b` (Oracle): the pairs are split on the tokens.
- An ALTER TABLE sqlglot cannot read whole (a MySQL `ADD COLUMN (a INT, b INT)`, Oracle's `MODIFY (c ...)`
  or `DROP (c1, c2)`, or one clause among readable ones) is split into its clauses at top-level commas and
  each clause is read alone as `ALTER TABLE t <clause>`; a parenthesised ADD or MODIFY list and Oracle's
  `MODIFY c type` are read as the column list of a CREATE TABLE, and `DROP (c1, c2)` as a select list.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError, TokenError
from sqlglot.tokens import Token, TokenType

from cdc_pipelines.schema_changes.changes import (
    AddColumn,
    ChangeColumn,
    CreateTable,
    DdlEvent,
    DeclaredColumn,
    DropColumn,
    DropTable,
    ModifyColumn,
    NotSchemaChange,
    Parsed,
    RenameColumn,
    RenameTable,
    TableName,
    TruncateTable,
    UnreadDdl,
)
from cdc_pipelines.schema_changes.declared_types import declared_type
from cdc_pipelines.schema_changes.dialects import MYSQL, ORACLE, POSTGRES, dialect_of, event_dialect

__all__ = ["dialect_of", "parse_ddl", "read_event"]

# an unquoted identifier as the dialect's catalog stores it
_UNQUOTED_NAME = {ORACLE: str.upper, POSTGRES: str.lower}
# words that continue a declared type after its first word (`DOUBLE PRECISION`, `TIMESTAMP(6) WITH TIME ZONE`,
# `INT UNSIGNED`, `INTERVAL DAY TO SECOND`, `LONG RAW`); the type ends at the first other word
_TYPE_WORDS = frozenset(
    "UNSIGNED SIGNED ZEROFILL PRECISION VARYING WITH WITHOUT LOCAL TIME ZONE TO DAY SECOND YEAR MONTH RAW "
    "VARCHAR CHAR".split()
)
# the words before the type in PostgreSQL's `ALTER COLUMN c [SET DATA] TYPE t`
_BEFORE_TYPE = frozenset({"SET", "DATA", "TYPE"})
# the statements that may change a table's columns: unread, they are `UnreadDdl`. RENAME and TRUNCATE name
# tables only; CREATE, ALTER and DROP do where TABLE is among their first words (CREATE GLOBAL TEMPORARY TABLE)
_TABLE_VERBS, _TABLE_OBJECT_VERBS = frozenset({"RENAME", "TRUNCATE"}), frozenset({"CREATE", "ALTER", "DROP"})
# the first words of the other SQL statements: unread, they change no table (`NotSchemaChange`); a text that
# starts with none of these is no statement at all, and `UnreadDdl`
_OTHER_STATEMENTS = frozenset(
    "CREATE DROP ALTER GRANT REVOKE COMMENT SET USE FLUSH ANALYZE OPTIMIZE REPAIR LOCK UNLOCK CALL INSERT UPDATE "
    "DELETE REPLACE MERGE SELECT BEGIN START COMMIT ROLLBACK SAVEPOINT XA PURGE RESET INSTALL UNINSTALL DO DECLARE "
    "EXPLAIN SHOW KILL AUDIT NOAUDIT REFRESH VACUUM REINDEX CLUSTER SECURITY".split()
)
_COMMAND_FALLBACK = "Falling back to parsing as a 'Command'"


class _HandledFallback(logging.Filter):
    """sqlglot warns on every statement it reads as a `Command`; this module reads those itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        return _COMMAND_FALLBACK not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_HandledFallback())


def parse_ddl(sql: str, dialect: str) -> list[Parsed]:
    """The changes of a DDL text, one record per statement or ALTER clause, in order (see `changes`).
    `dialect` is a sqlglot dialect or any name `dialect_of` knows (`OB_ORACLE`, `postgresql`)."""
    read = dialect_of(dialect)
    if read is None:
        raise ValueError(f"no DDL dialect for {dialect!r}")
    try:
        # each statement's text (comments around it left out), split at the semicolons between statements
        parts = _split(_tokens(sql, read), lambda t: t.token_type == TokenType.SEMICOLON)
    except TokenError as exc:
        return [UnreadDdl(f"not SQL text: {_first_line(exc)}", sql)]
    statements = [_span(sql, part) for part in parts if part]
    if not statements:
        return [UnreadDdl("no DDL text", sql)]
    out: list[Parsed] = []
    for text in statements:
        try:
            out += _statement(text, read)
        except SqlglotError as exc:  # a part of a home-made form sqlglot cannot read
            out.append(UnreadDdl(_first_line(exc), text))
    return out


def read_event(event: Mapping, catalog_dialect: str | None = None, default_dialect: str = MYSQL) -> DdlEvent:
    """A canonical DDL event (`event_id`, `ddl`, `db`, `table_name`, `meta`) read in its dialect: the one its
    message names, else the catalog's `ddl_dialect:`, else MySQL's (canal, Maxwell and DTS carry a binlog)."""
    dialect = event_dialect(event.get("meta"), catalog_dialect) or default_dialect
    changes = tuple(parse_ddl(event.get("ddl") or "", dialect))
    return DdlEvent(str(event["event_id"]), event.get("ddl") or "", changes, event.get("db"), event.get("table_name"))


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _tokens(text: str, dialect: str) -> list[Token]:
    return sqlglot.Dialect.get_or_raise(dialect).tokenize(text)


def _statement(text: str, dialect: str) -> list[Parsed]:
    tokens = _tokens(text, dialect)
    words = tuple(t.text.upper() for t in tokens[:5])
    try:
        tree, reason = sqlglot.parse_one(text, read=dialect), "sqlglot reads it only as a command"
    except ParseError as exc:
        tree, reason = None, _first_line(exc)
    if isinstance(tree, exp.DDL | exp.Alter | exp.Drop | exp.TruncateTable | exp.Grant | exp.Comment | exp.Set):
        changes = _read(tree, text, tokens, dialect)
        if changes is not None:
            return changes
    if words[:1] == ("RENAME",):
        return _rename_tables(text, tokens, dialect)
    if words[:2] == ("ALTER", "TABLE"):
        return _alter_by_clause(text, tokens, dialect)
    if words and (words[0] in _TABLE_VERBS or words[0] in _TABLE_OBJECT_VERBS and "TABLE" in words):
        return [UnreadDdl(reason, text)]
    if words[:1] and words[0] in _OTHER_STATEMENTS:
        return [NotSchemaChange(" ".join(words[:2]))]
    return [UnreadDdl("not an SQL statement", text)]


def _read(tree: exp.Expression, text: str, tokens: list[Token], dialect: str) -> list[Parsed] | None:
    """The changes of a statement sqlglot read; None for an ALTER TABLE with a clause it read as a command."""
    if isinstance(tree, exp.Create):
        return [_create(tree, text, tokens, dialect)]
    if isinstance(tree, exp.Alter) and tree.args.get("kind") == "TABLE":
        return _alter(tree, text, tokens, dialect)
    if isinstance(tree, exp.Drop) and tree.args.get("kind") == "TABLE" and not tree.args.get("temporary"):
        return [DropTable(_table(t, dialect)) for t in tree.args.get("tables") or []]
    if isinstance(tree, exp.TruncateTable) and not tree.args.get("is_database"):
        return [TruncateTable(_table(t, dialect)) for t in tree.expressions]
    if isinstance(tree, exp.Drop | exp.Alter):
        return [NotSchemaChange(f"{tree.key.upper()} {tree.args.get('kind') or ''}".strip())]
    return [NotSchemaChange(" ".join(t.text.upper() for t in tokens[:2]))]


def _name(identifier: exp.Expression, dialect: str) -> str:
    if isinstance(identifier, exp.Column | exp.Ordered):
        return _name(identifier.this, dialect)
    name = identifier.name
    quoted = isinstance(identifier, exp.Identifier) and identifier.quoted
    return name if quoted else _UNQUOTED_NAME.get(dialect, str)(name)


def _table(table: exp.Table, dialect: str) -> TableName:
    parts = [_name(table.args[part], dialect) for part in ("catalog", "db") if table.args.get(part)]
    return TableName(_name(table.this, dialect), ".".join(parts) or None)


def _type_text(text: str, tokens: list[Token], after: int, skip: frozenset[str] = frozenset()) -> str:
    """The declared type as written: the tokens from the first one past offset `after` (the column's name)
    while they continue a type: its first word, parenthesised arguments, `_TYPE_WORDS`, `[]`."""
    i = next((k for k, t in enumerate(tokens) if t.start > after), len(tokens))
    while i < len(tokens) and tokens[i].text.upper() in skip:
        i += 1
    if i == len(tokens):
        return ""
    end, depth, j = tokens[i].end, 0, i + 1
    while j < len(tokens):
        kind, word = tokens[j].token_type, tokens[j].text.upper()
        if kind in (TokenType.L_PAREN, TokenType.L_BRACKET):
            depth += 1
        elif kind in (TokenType.R_PAREN, TokenType.R_BRACKET):
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and word not in _TYPE_WORDS:
            break
        end, j = tokens[j].end, j + 1
    return text[tokens[i].start : end + 1]


def _column(name: exp.Expression, type_text: str, dialect: str) -> DeclaredColumn:
    typed = declared_type(type_text, dialect)
    return DeclaredColumn(_name(name, dialect), type_text, typed.logical_type, typed.spark_type)


def _column_def(column: exp.ColumnDef, text: str, tokens: list[Token], dialect: str) -> DeclaredColumn:
    end = column.this.meta.get("end")
    kind = column.args.get("kind")
    declared = _type_text(text, tokens, end) if end is not None else kind.sql(dialect) if kind else ""
    return _column(column.this, declared, dialect)


def _create(tree: exp.Create, text: str, tokens: list[Token], dialect: str) -> Parsed:
    kind = tree.args.get("kind") or ""
    properties = [type(p) for p in (tree.args.get("properties") or exp.Properties()).expressions]
    if kind != "TABLE" or exp.TemporaryProperty in properties:
        return NotSchemaChange(f"CREATE {'TEMPORARY ' if kind == 'TABLE' else ''}{kind}".strip())
    if not isinstance(tree.this, exp.Schema) or tree.expression is not None or exp.LikeProperty in properties:
        return UnreadDdl("CREATE TABLE ... LIKE or AS SELECT: its columns are another table's", text)
    schema = tree.this
    defs = [e for e in schema.expressions if isinstance(e, exp.ColumnDef)]
    key = [
        _name(d.this, dialect)
        for d in defs
        if any(isinstance(k.args.get("kind"), exp.PrimaryKeyColumnConstraint) for k in d.args.get("constraints", []))
    ]
    for element in schema.expressions:
        if not isinstance(element, exp.ColumnDef):
            for primary in element.find_all(exp.PrimaryKey):
                key += [_name(c, dialect) for c in primary.expressions]
    columns = tuple(_column_def(d, text, tokens, dialect) for d in defs)
    return CreateTable(_table(schema.this, dialect), columns, tuple(key))


def _alter(tree: exp.Alter, text: str, tokens: list[Token], dialect: str) -> list[Parsed] | None:
    """One record per column or rename clause; clauses that change no column (indexes, constraints, table
    options, defaults) give nothing, and an ALTER of nothing but those is `NotSchemaChange`."""
    table = _table(tree.this, dialect)
    out: list[Parsed] = []
    for action in tree.args.get("actions") or []:
        if isinstance(action, exp.Command):
            return None
        if isinstance(action, exp.ColumnDef):
            out.append(AddColumn(table, _column_def(action, text, tokens, dialect)))
        elif isinstance(action, exp.Schema):  # Oracle's ADD (c1 ..., c2 ...)
            defs = [d for d in action.expressions if isinstance(d, exp.ColumnDef)]
            out += [AddColumn(table, _column_def(d, text, tokens, dialect)) for d in defs]
        elif isinstance(action, exp.Drop) and action.args.get("kind") == "COLUMN":
            out += [DropColumn(table, _name(c, dialect)) for c in action.args.get("tables") or []]
        elif isinstance(action, exp.RenameColumn):
            out.append(RenameColumn(table, _name(action.this, dialect), _name(action.args["to"], dialect)))
        elif isinstance(action, exp.ModifyColumn):
            column = _column_def(action.this, text, tokens, dialect)
            old = action.args.get("rename_from")
            out.append(ChangeColumn(table, _name(old, dialect), column) if old else ModifyColumn(table, column))
        elif isinstance(action, exp.AlterColumn) and action.args.get("dtype"):
            type_text = _type_text(text, tokens, action.this.meta["end"], _BEFORE_TYPE)
            out.append(ModifyColumn(table, _column(action.this, type_text, dialect)))
        elif isinstance(action, exp.AlterRename):
            new = _table(action.this, dialect)
            if new.db is None and table.db and dialect != MYSQL:  # Oracle and PostgreSQL keep the schema
                new = TableName(new.name, table.db)
            out.append(RenameTable(table, new))
    return out or [NotSchemaChange("ALTER TABLE")]


def _split(tokens: list[Token], separator) -> list[list[Token]]:
    """The tokens split where `separator(token)` holds outside parentheses."""
    parts: list[list[Token]] = [[]]
    depth = 0
    for token in tokens:
        depth += token.token_type == TokenType.L_PAREN
        depth -= token.token_type == TokenType.R_PAREN
        if depth == 0 and separator(token):
            parts.append([])
        else:
            parts[-1].append(token)
    return parts


def _span(text: str, tokens: list[Token]) -> str:
    return text[tokens[0].start : tokens[-1].end + 1] if tokens else ""


def _parsed_table(name: str, dialect: str) -> TableName:
    return _table(sqlglot.parse_one(name, read=dialect, into=exp.Table), dialect)


def _rename_tables(text: str, tokens: list[Token], dialect: str) -> list[Parsed]:
    """MySQL's `RENAME TABLE a TO b, c TO d` and Oracle's `RENAME a TO b`, split on their tokens (sqlglot's
    tokenizer keeps all after RENAME as one text: it is tokenized again)."""
    pairs = text[tokens[0].end + 1 :]
    rest = _tokens(pairs, dialect)
    rest = rest[1:] if rest and rest[0].text.upper() == "TABLE" else rest
    out: list[Parsed] = []
    for pair in _split(rest, lambda t: t.token_type == TokenType.COMMA):
        names = _split(pair, lambda t: t.text.upper() == "TO")
        if len(names) != 2 or not all(names):
            return [UnreadDdl("RENAME without one `old TO new` in each pair", text)]
        try:
            old, new = (_parsed_table(_span(pairs, n), dialect) for n in names)
        except ParseError as exc:
            return [UnreadDdl(_first_line(exc), text)]
        out.append(RenameTable(old, new))
    return out


def _alter_by_clause(text: str, tokens: list[Token], dialect: str) -> list[Parsed]:
    """An ALTER TABLE sqlglot cannot read whole, read clause by clause; a clause still unread is `UnreadDdl`."""
    name_end = 3  # ALTER TABLE name[.name...]
    while name_end + 1 < len(tokens) and tokens[name_end].token_type == TokenType.DOT:
        name_end += 2
    if len(tokens) <= name_end:
        return [UnreadDdl("ALTER TABLE without a table and a clause", text)]
    head = f"ALTER TABLE {_span(text, tokens[2:name_end])} "
    out: list[Parsed] = []
    for clause in _split(tokens[name_end:], lambda t: t.token_type == TokenType.COMMA):
        alone = head + _span(text, clause)
        try:
            tree = sqlglot.parse_one(alone, read=dialect)
        except ParseError:
            tree = None
        read = _alter(tree, alone, _tokens(alone, dialect), dialect) if isinstance(tree, exp.Alter) else None
        if read is None:
            read = _clause(head, clause, text, dialect)
        out += [c for c in read if not isinstance(c, NotSchemaChange)]
    return out or [NotSchemaChange("ALTER TABLE")]


def _clause(head: str, clause: list[Token], text: str, dialect: str) -> list[Parsed]:
    """The clauses sqlglot reads only as commands: `ADD [COLUMN] (defs)`, `MODIFY [COLUMN] (defs)`,
    `MODIFY [COLUMN] def` (Oracle), `DROP (names)` (Oracle)."""
    table = _parsed_table(head.removeprefix("ALTER TABLE "), dialect)
    clause_text = _span(text, clause)
    verb = clause[0].text.upper() if clause else ""
    body = clause[2:] if len(clause) > 1 and clause[1].text.upper() == "COLUMN" else clause[1:]
    listed = len(body) > 1 and body[0].token_type == TokenType.L_PAREN and body[-1].token_type == TokenType.R_PAREN
    inner = _span(text, body[1:-1] if listed else body)
    try:
        if verb in ("ADD", "MODIFY") and (listed or verb == "MODIFY"):
            create = f"CREATE TABLE t ({inner})"
            tree = sqlglot.parse_one(create, read=dialect)
            defs = [d for d in tree.this.expressions if isinstance(d, exp.ColumnDef)]
            columns = [_column_def(d, create, _tokens(create, dialect), dialect) for d in defs]
            return [AddColumn(table, c) if verb == "ADD" else ModifyColumn(table, c) for c in columns]
        if verb == "DROP" and listed:
            names = sqlglot.parse_one(f"SELECT {inner}", read=dialect).expressions
            return [DropColumn(table, _name(n, dialect)) for n in names]
    except (ParseError, AttributeError) as exc:
        return [UnreadDdl(f"ALTER TABLE clause {clause_text!r}: {_first_line(exc)}", head + clause_text)]
    return [UnreadDdl(f"ALTER TABLE clause {clause_text!r} is not read", head + clause_text)]
