"""Schema changes and routes: what a topic's DDL text says happened to its tables, and what a day of such
changes does to a table's columns under a policy (Flink CDC's `lenient`, `evolve`, `ignore`, `exception`);
which sink table a sharded source table's rows go to (`routes`).

Pure rules, no Spark and no Arrow, so both engines run them once: `ddl` reads DDL with sqlglot into the
records of `changes`, `declared_types` gives a declared SQL type its logical and Spark type, `policy` plans
a day, `routes` names the sink of a `db.table`. Only `ddl` imports sqlglot, so the catalog checks its keys
(`dialects`, `policy`, `routes`) without loading the parser.
"""
