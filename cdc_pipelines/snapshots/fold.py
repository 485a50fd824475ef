"""One day folded into what the snapshot tables need: each key's net effect, the versions it opened and
closed, the anomalies and each table's figures, in one walk over the effect stream sorted by table, key and
place (`effects`), whichever engine sorted it (Spark in `mapInArrow`, the local engine in process: `apply`).

A key's state at the end of the day is its last effect after its table's last TRUNCATE, or, untouched, its
previous row. Whether it existed before an effect (for the anomalies) is read from its previous effect unless
a TRUNCATE came between, and otherwise from the keys live at the start of the day (the stream's `live` rows,
first in their key's group). Every `set` opens a version that the key's next effect or the table's next
TRUNCATE closes. The TRUNCATEs (a day's few) are all a key needs from outside its group. A group may span
batches: the walk carries the last one into the next. Each walk ends with one `tally` row, its
`TableFigures`, which the caller merges.
"""

from __future__ import annotations

import heapq
import pickle
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from cdc_pipelines.schema_changes.routes import SOURCE_TABLE_COLUMN
from cdc_pipelines.snapshots.effects import (
    ABSENT,
    EFFECT_SCHEMA,
    EVENT_TIME,
    LIVE,
    NO_PK,
    PRESENT,
    SET,
    TABLE,
)

# the most keys of a day the writes name as literals: a plan with 1,000 short strings is still small; a
# bigger day reads most files anyway
KEY_LITERALS = 1000
NET, OPEN, CLOSE, ANOMALY, TALLY = "net", "open", "close", "anomaly", "tally"
# an anomaly row of the fold (`_out` ANOMALY): its columns as the anomalies dataset names them
ANOMALY_NAMES = {"_cdc_event_id": "event_id", "_cdc_op": "op"}
_TEXT_MAP = pa.map_(pa.string(), pa.string())
FOLD_SCHEMA = pa.schema(
    [
        pa.field("_out", pa.string()),  # what the row is: `NET`, `OPEN`, `CLOSE`, `ANOMALY` or `TALLY`
        *(pa.field(c, pa.string()) for c in TABLE),
        pa.field("_t", pa.string()),
        pa.field("_k", pa.string()),
        pa.field("pk_columns", pa.list_(pa.string())),
        pa.field("kind", pa.string()),  # a net effect's `set` / `del`; an anomaly's kind
        pa.field("row", _TEXT_MAP),
        pa.field("column_types", _TEXT_MAP),
        pa.field("_cdc_op", pa.string()),
        pa.field("_cdc_event_time", EVENT_TIME),
        pa.field("_cdc_event_id", pa.string()),
        pa.field("_cdc_start_at", EVENT_TIME),
        pa.field("_cdc_end_at", EVENT_TIME),
        pa.field("detail", pa.string()),
        pa.field("_tally", pa.binary()),  # the walk's `TableFigures` by table, pickled
    ]
)
# the stream's columns the walk reads row by row; the images are taken by index, never made Python
_WALKED = (*TABLE, "_k", "_pos", "sub", "kind", "expect", "op")

Truncates = Mapping[tuple, list[tuple[bytes, int | None]]]


@dataclass
class TableFigures:
    """What the writes need of one table's day; the figures of two walks merge (`merge`)."""

    table: tuple
    pk_columns: list[str] | None = None
    sets: int = 0  # keys the day leaves set
    truncated: bool = False
    live: int = 0  # its keys live before the day that the day touched, or all of them when truncated
    opened: int = 0  # versions the day opens
    keys: int = 0  # keys the day names (net effects)
    key_list: list[str] = field(default_factory=list)  # the least `KEY_LITERALS` + 1 of them
    earliest_end: int | None = None  # epoch microseconds: the least end of a version it opens or closes

    def merge(self, other: TableFigures) -> TableFigures:
        self.pk_columns = self.pk_columns or other.pk_columns
        self.sets, self.live, self.opened = self.sets + other.sets, self.live + other.live, self.opened + other.opened
        self.truncated, self.keys = self.truncated or other.truncated, self.keys + other.keys
        self.key_list = self.key_list + other.key_list
        self.trim()
        self.ended(other.earliest_end)
        return self

    def trim(self) -> TableFigures:
        if len(self.key_list) > KEY_LITERALS + 1:
            self.key_list = heapq.nsmallest(KEY_LITERALS + 1, self.key_list)
        return self

    def ended(self, micros: int | None) -> None:
        if micros is not None:
            self.earliest_end = micros if self.earliest_end is None else min(self.earliest_end, micros)

    def as_dict(self) -> dict:
        figures = {k: v for k, v in asdict(self.trim()).items() if k != "table"}
        return dict(zip(TABLE, self.table, strict=True)) | figures | {"key_list": sorted(self.key_list) or None}


def truncations(rows: pa.Table) -> dict[tuple, list[tuple[bytes, int | None]]]:
    """Each truncated table's TRUNCATEs in order, `(_pos, event_time micros)`, from the stream's
    `truncate` rows: what every key's walk needs of its table."""
    out: dict[tuple, list] = {}
    micros = rows.column("event_time").cast(pa.int64()).to_pylist()
    tables = zip(*(rows.column(c).to_pylist() for c in TABLE), strict=True)
    for table, place, at in zip(tables, rows.column("_pos").to_pylist(), micros, strict=True):
        out.setdefault(table, []).append((place, at))
    return {table: sorted(marks) for table, marks in out.items()}


def skipped_tables(no_key: Mapping[tuple, int]) -> list[dict]:
    """The tables whose row changes name no key columns (`no_key`: such events per table), in table
    order: not applied at all, their rows stay."""
    return [{**dict(zip(TABLE, t, strict=True)), "reason": NO_PK, "events": n}
            for t, n in sorted(no_key.items(), key=lambda item: table_order(item[0])) if n]  # fmt: skip


def table_order(table: tuple) -> tuple:
    """A table's place when tables are listed: by name, a null part first."""
    return tuple(x or "" for x in table)


def _earlier(a: tuple | None, b: tuple | None) -> tuple | None:
    return b if a is None else a if b is None else min(a, b)


class _Walk:
    """The output rows of one chunk of the stream, as indices into it and values found by the walk."""

    def __init__(self, chunk: pa.Table, truncates: Truncates, figures: dict[tuple, TableFigures], routed: bool):
        self.chunk, self.truncates, self.figures = chunk, truncates, figures
        # each set effect's shard where routes merged shards into sinks (`event_rewrite`)
        self.shards = pc.map_lookup(chunk.column("after"), SOURCE_TABLE_COLUMN, "first").to_pylist() if routed else None
        self.micros = chunk.column("event_time").cast(pa.int64()).to_pylist()
        self.pk_columns = chunk.column("pk_columns")  # read at a table's first kept key only: not a list per row
        self.texts = chunk.column("_t").to_pylist()
        self.rows: dict[str, list] = {name: [] for name in ("_out", "at", "_k", "_t", "kind", "end", "detail")}

    def _emit(self, out: str, at: int, key: str, table: str, kind=None, end=None, detail=None) -> None:
        for column, value in zip(self.rows.values(), (out, at, key, table, kind, end, detail), strict=True):
            column.append(value)

    def _figures(self, table: tuple) -> TableFigures:
        return self.figures.setdefault(table, TableFigures(table))

    def group(self, table: tuple, key: str, rows: list[tuple[int, bytes, int, str, str | None, str]]) -> None:
        """One key's rows `(index, _pos, sub, kind, expect, op)` in order, a `live` row first."""
        live = bool(rows) and rows[0][3] == LIVE
        figures = self._figures(table)
        text = self.texts[rows[0][0]]
        figures.live += live
        effects = rows[1:] if live else rows
        trs = self.truncates.get(table, ())
        places = [p for p, _ in trs]
        shard = self.shards[rows[0][0]] if live and self.shards is not None else None  # the live row's
        for i, (at, place, _sub, kind, expect, op) in enumerate(effects):
            if self.shards is not None and kind == SET:
                if shard is not None and self.shards[at] != shard:
                    detail = f"key {key} from {self.shards[at]}, set by {shard} before"
                    self._emit(ANOMALY, at, key, text, "shard_key_collision", detail=detail)
                shard = self.shards[at]
            n = bisect_left(places, place)
            last_tr, next_tr = (places[n - 1] if n else None), (trs[n] if n < len(trs) else None)
            previous = effects[i - 1] if i else None
            following = effects[i + 1] if i + 1 < len(effects) else None
            if previous is not None and (last_tr is None or last_tr < previous[1]):
                existed = previous[3] == SET
            else:
                existed = last_tr is None and live
            if expect == PRESENT and not existed:
                self._emit(ANOMALY, at, key, text, op.lower() + "_of_missing_key", detail="key " + key)
            elif expect == ABSENT and existed:
                self._emit(ANOMALY, at, key, text, "insert_of_existing_key", detail="key " + key)
            if kind == SET:
                end = _earlier(
                    (following[1], following[2], self.micros[following[0]]) if following else None,
                    (next_tr[0], -1, next_tr[1]) if next_tr else None,
                )
                self._emit(OPEN, at, key, text, end=end[2] if end else None)
                figures.opened += 1
                figures.ended(end[2] if end else None)
            if following is None and (not places or place > places[-1]):
                self._emit(NET, at, key, text, kind)
                figures.pk_columns = figures.pk_columns or self.pk_columns[at].as_py()
                figures.sets, figures.keys = figures.sets + (kind == SET), figures.keys + 1
                figures.key_list.append(key)
        if live:
            first = (effects[0][1], effects[0][2], self.micros[effects[0][0]]) if effects else None
            first = _earlier(first, (trs[0][0], -1, trs[0][1]) if trs else None)
            if first is not None:
                self._emit(CLOSE, rows[0][0], key, text, end=first[2])
                figures.ended(first[2])

    def batch(self) -> pa.Table:
        rows, chunk = self.rows, self.chunk
        at = pa.array(rows["at"], pa.int64())
        out = rows["_out"]

        def take(name: str, where: tuple[str, ...]) -> pa.Array:
            picked = pa.array([i if o in where else None for i, o in zip(rows["at"], out, strict=True)], pa.int64())
            return pc.take(chunk.column(name), picked)

        columns = {
            **{c: pa.array(rows[c], pa.string()) for c in ("_out", "_t", "_k", "kind", "detail")},
            **{c: pc.take(chunk.column(c), at) for c in TABLE},
            "pk_columns": take("pk_columns", (NET, OPEN, CLOSE)),
            "row": pc.take(chunk.column("after"), pa.array(
                [i if o == OPEN or (o == NET and k == SET) else None
                 for i, o, k in zip(rows["at"], out, rows["kind"], strict=True)], pa.int64())),
            "column_types": take("column_types", (NET, OPEN)),
            "_cdc_op": take("op", (NET, OPEN, ANOMALY)),
            "_cdc_event_time": take("event_time", (NET,)),
            "_cdc_event_id": take("event_id", (NET, OPEN, ANOMALY)),
            "_cdc_start_at": take("event_time", (OPEN,)),
            "_cdc_end_at": pa.array(rows["end"], pa.int64()),  # epoch microseconds, cast below
            "_tally": pa.nulls(len(out), pa.binary()),
        }  # fmt: skip
        return pa.Table.from_arrays([columns[f.name].cast(f.type) for f in FOLD_SCHEMA], schema=FOLD_SCHEMA)


def _tally(figures: Mapping[tuple, TableFigures]) -> pa.RecordBatch:
    columns = {f.name: pa.nulls(1, f.type) for f in FOLD_SCHEMA}
    tally = {table: part.trim() for table, part in figures.items()}
    columns["_out"], columns["_tally"] = pa.array([TALLY]), pa.array([pickle.dumps(tally)], pa.binary())
    return pa.RecordBatch.from_arrays([columns[f.name] for f in FOLD_SCHEMA], schema=FOLD_SCHEMA)


def fold_stream(
    batches: Iterable[pa.RecordBatch], truncates: Truncates, routed: bool = False
) -> Iterator[pa.RecordBatch]:
    """The fold of an effect stream sorted by table, `_k`, `_pos` and `sub` (`EFFECT_SCHEMA`, its `live`
    rows included, its `truncate` rows given as `truncates` and left out): `FOLD_SCHEMA` rows, then one
    `tally` row. `routed`: the day has routed shards, whose key set by two shards is a `shard_key_collision`."""
    figures: dict[tuple, TableFigures] = {}
    carry: pa.Table | None = None
    for batch in batches:
        chunk = pa.Table.from_batches([batch]).select(EFFECT_SCHEMA.names).cast(EFFECT_SCHEMA)
        chunk = pa.concat_tables([carry, chunk]) if carry is not None else chunk
        walked, carry = _walk(chunk, truncates, figures, routed, last=False)
        yield from walked
    if carry is not None:
        yield from _walk(carry, truncates, figures, routed, last=True)[0]
    yield _tally(figures)


def _walk(
    chunk: pa.Table, truncates: Truncates, figures: dict[tuple, TableFigures], routed: bool, last: bool
) -> tuple[list[pa.RecordBatch], pa.Table | None]:
    """The output of `chunk`'s whole key groups, and the rows of its last group when more may follow."""
    values = zip(*(chunk.column(c).to_pylist() for c in _WALKED), strict=True)
    walk, group, rows = _Walk(chunk, truncates, figures, routed), None, []
    start = 0
    for i, (db, schema, name, key, place, sub, kind, expect, op) in enumerate(values):
        if kind not in (SET, "del", LIVE):
            continue
        if (db, schema, name, key) != group:
            if group is not None:
                walk.group(group[:3], group[3], rows)
            group, rows, start = (db, schema, name, key), [], i
        rows.append((i, place, sub, kind, expect, op))
    carry = chunk.slice(start) if group is not None and not last else None  # the last group may go on
    if group is not None and carry is None:
        walk.group(group[:3], group[3], rows)
    return (walk.batch().to_batches() if walk.rows["_out"] else []), carry


def merged_figures(tallies: Iterable[bytes], truncates: Truncates) -> dict[tuple, TableFigures]:
    """The day's figures by table from the walks' `tally` rows; a truncated table is in them even where
    the day names none of its keys and it had none live."""
    figures: dict[tuple, TableFigures] = {t: TableFigures(t, truncated=True) for t in truncates}
    for tally in tallies:
        for table, part in pickle.loads(tally).items():
            figures[table] = figures[table].merge(part) if table in figures else part
    for table in truncates:
        figures[table].truncated = True
    return figures
