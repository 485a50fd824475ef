"""A snapshot table's text values as typed columns, over Arrow and without Spark: one rule that the local
engine runs in process and Spark in `mapInArrow`.

A column's type is decided each day from figures over the values that day writes (`figure_rows`, per table
and column, merged across batches): its logical types, whether every value is valid for them, and whether
INT / DECIMAL / temporal values fit a long, a decimal(38) or microseconds; a column whose values do not
all fit is text. A value not valid for its logical type at all (an INT `abc`) is a `cast_failed` anomaly
(`invalid_cells`) and its column text, so the value is kept. The table's column takes the wider of its type
so far and the day's (`widen`). `typed_array` converts text to the type, `as_text` prints a typed column
back as Spark's `cast(... as string)` does. Dates are computed from their digits, not through `datetime`:
Spark's proleptic Gregorian calendar reaches year 0, Python's dates stop at year 1.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal

import pyarrow as pa
import pyarrow.compute as pc

from cdc_pipelines.snapshots.effects import TABLE

# an anomaly's columns, here for both engines (snapshots/schema.py's Spark schema is built from them)
ANOMALY_COLUMNS = (*TABLE, "kind", "event_id", "op", "detail")

_DAY = "[0-9]{4}-[0-9]{2}-[0-9]{2}"
_CLOCK = "[0-9]{2}:[0-9]{2}:[0-9]{2}"
_FRACTION = r"(\.[0-9]{1,9})?"
_INT = "^[+-]?[0-9]+$"
_DECIMAL = r"^[+-]?[0-9]+(\.[0-9]+)?$"
# the text of each logical type the figures check (DESIGN's value forms); other logical types are valid as any text
_PATTERNS = {
    "INT": _INT,
    "DECIMAL": _DECIMAL,
    "DATE": f"^{_DAY}$",
    "TIMESTAMP": f"^{_DAY}T{_CLOCK}{_FRACTION}Z$",
    "DATETIME": f"^{_DAY} {_CLOCK}{_FRACTION}$",
    "BYTES": "^[A-Za-z0-9+/]*={0,2}$",
}
# what `typed_array` converts for a temporal type: either separator, the zone `Z` or none (the session is UTC)
_INSTANT = f"^{_DAY}[T ]{_CLOCK}{_FRACTION}Z?$"
_LONG_MAX = 2**63 - 1
_DAY_MICROS = 86_400_000_000
_MONTH_DAYS = pa.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], pa.int64())
_ERA_DAYS = 146_097  # days of 400 Gregorian years


@dataclass(frozen=True)
class ColumnPlan:
    """A snapshot column: its name and its type (a Spark SQL type name; "string" keeps the text)."""

    name: str
    spark_type: str


@dataclass(frozen=True)
class ColumnFigures:
    """The figures of one column's values in one table, over any part of a day (`merge` adds another part).
    `fits_long`, `fits_decimal38` (INT values) and `micros` (TIMESTAMP / DATETIME values) are None where
    no value of those types was seen, as an aggregate over no rows is; `int_digits` (INT / DECIMAL: digits
    before the point without leading zeros) and `scale` (DECIMAL: digits after it) are maxima, 0 for none."""

    logicals: frozenset[str]
    valid: bool = True
    fits_long: bool | None = None
    fits_decimal38: bool | None = None
    int_digits: int = 0
    scale: int = 0
    micros: bool | None = None

    def merge(self, other: ColumnFigures) -> ColumnFigures:
        return ColumnFigures(
            self.logicals | other.logicals,
            self.valid and other.valid,
            _all(self.fits_long, other.fits_long),
            _all(self.fits_decimal38, other.fits_decimal38),
            max(self.int_digits, other.int_digits),
            max(self.scale, other.scale),
            _all(self.micros, other.micros),
        )


def _all(a: bool | None, b: bool | None) -> bool | None:
    return b if a is None else a if b is None else a and b


@dataclass(frozen=True)
class _Cells:
    """One entry per (row, column) of a batch, in the batch's order: the row it is in, the column, its value
    and its logical type (UNKNOWN where `column_types` does not name it)."""

    rows: pa.Table
    parent: pa.Array
    column: pa.Array
    value: pa.Array
    logical: pa.Array

    def take(self, keep: pa.Array) -> _Cells:
        return _Cells(self.rows, *(a.filter(keep) for a in (self.parent, self.column, self.value, self.logical)))

    def by_logical(self) -> list[tuple[str, pa.Array, _Cells]]:
        """The cells of each logical type (with their positions here): one sort by type and a slice each,
        not a filter of every cell per type."""
        codes = pc.dictionary_encode(self.logical)
        order = pc.sort_indices(codes.indices)
        counts = pc.value_counts(codes.indices).to_pylist()
        arrays = [a.take(order) for a in (self.parent, self.column, self.value)]
        out, start = [], 0
        for entry in sorted(counts, key=lambda e: e["values"]):
            logical, n = codes.dictionary[entry["values"]].as_py(), entry["counts"]
            part = _Cells(
                self.rows, *(a.slice(start, n) for a in arrays), pa.repeat(pa.scalar(logical, pa.string()), n)
            )
            out.append((logical, order.slice(start, n), part))
            start += n
        return out

    def of_rows(self, name: str) -> pa.Array:
        return self.rows.column(name).chunk(0).take(self.parent) if len(self.parent) else pa.array([], pa.string())


def _entries(maps: pa.ChunkedArray) -> tuple[pa.Array, pa.Array, pa.Array]:
    """(row index, key, value) of each entry of a map column."""
    lists = maps.chunk(0).cast(pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())])))
    entries = pc.list_flatten(lists)
    return pc.list_parent_indices(lists), entries.field("key"), entries.field("value")


def _cells(rows: pa.Table | pa.RecordBatch) -> _Cells:
    """The cells of a batch, each with its logical type looked up in its row's `column_types`."""
    table = pa.Table.from_batches([rows]) if isinstance(rows, pa.RecordBatch) else rows
    table = table.select([*TABLE, "row", "column_types", "_cdc_event_id"]).combine_chunks()
    if table.num_rows == 0:  # a table of no rows combines into no chunks
        table = pa.Table.from_batches([pa.record_batch([pa.array([], f.type) for f in table.schema], table.schema)])
    parent, column, value = _entries(table.column("row"))
    types_parent, types_column, types_logical = _entries(table.column("column_types"))
    same = len(parent) == len(types_parent) and (
        len(parent) == 0
        or (pc.all(pc.equal(parent, types_parent)).as_py() and pc.all(pc.equal(column, types_column)).as_py())
    )
    if same:  # the usual batch: each row's types name its columns in the same order
        logical = types_logical
    else:
        cells = pa.table({"_i": pa.array(range(len(parent)), pa.int64()), "_p": parent, "_c": column})
        types = pa.table({"_p": types_parent, "_c": types_column, "_l": types_logical})
        logical = cells.join(types, ["_p", "_c"], join_type="left outer").sort_by("_i").column("_l").combine_chunks()
    logical = pc.fill_null(logical, "UNKNOWN") if len(logical) else pa.array([], pa.string())
    return _Cells(table, parent, column, value, logical)


def _valid(logical: str, value: pa.Array, form: pa.Array | None = None) -> pa.Array:
    """Per value: null, or text of its logical type (a real date and time for the temporal ones). `form`:
    the values' match of the type's pattern, where the caller has it."""
    if logical == "BOOLEAN":
        check = pc.is_in(value, pa.array(["true", "false"]))
    elif logical in _PATTERNS:
        check = pc.match_substring_regex(value, _PATTERNS[logical]) if form is None else form
        if logical in ("DATE", "TIMESTAMP", "DATETIME"):
            check = pc.and_(check, _calendar(value, check, timed=logical != "DATE")[0])
        elif logical == "BYTES":
            check = pc.and_(check, pc.equal(pc.bit_wise_and(pc.utf8_length(value), 3), 0))
    else:
        return pa.repeat(pa.scalar(True), len(value))
    return pc.or_kleene(pc.is_null(value), check)


def _figures(logical: str, value: pa.Array) -> dict[str, pa.Array]:
    """Per value, the figures its logical type decides (the others are left out: text pays for no pattern)."""
    form = pc.match_substring_regex(value, _PATTERNS[logical]) if logical in _PATTERNS else None
    figures = {"valid": _valid(logical, value, form)}
    if logical in ("INT", "DECIMAL"):
        figures["int_digits"], scale = _digits_and_scale(value, form)
    if logical == "INT":
        digits = figures["int_digits"]
        figures["fits_long"] = pc.or_kleene(pc.is_null(value), pc.is_valid(_longs(value, form, digits)))
        figures["fits_decimal38"] = pc.or_kleene(pc.is_null(value), pc.and_(form, pc.less_equal(digits, 38)))
    if logical == "DECIMAL":
        figures["scale"] = scale
    if logical in ("TIMESTAMP", "DATETIME"):
        finer = pc.match_substring_regex(value, r"\.[0-9]{6}[0-9]*[1-9]")
        figures["micros"] = pc.or_kleene(pc.is_null(value), pc.invert(finer))
    return figures


def _digits_and_scale(value: pa.Array, form: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Per value: the digits of its leading run after the sign and leading zeros (`-007.5`: 1), and the digits
    of the first run after a point (`-007.5`: 1; 0 where there is none). Read off the text where it is a
    number (`form`); the patterns themselves only for the values that are not."""
    unsigned = pc.utf8_ltrim(pc.utf8_ltrim(value, "+-"), "0")
    point, length = pc.find_substring(unsigned, "."), pc.utf8_length(unsigned)
    has_point = pc.greater_equal(point, 0)
    digits = pc.if_else(has_point, point, length)
    scale = pc.if_else(has_point, pc.subtract(pc.subtract(length, point), 1), 0)
    if pc.all(pc.fill_null(form, True)).as_py():
        return digits, scale
    other = pc.invert(pc.fill_null(form, True))
    digits = pc.if_else(other, pc.utf8_length(pc.extract_regex(value, "^[+-]?0*(?P<d>[0-9]*)").field("d")), digits)
    fraction = pc.fill_null(pc.utf8_length(pc.extract_regex(value, r"\.(?P<f>[0-9]+)").field("f")), 0)
    return digits, pc.if_else(other, fraction, scale)


_AGGREGATES = {"valid": "all", "fits_long": "all", "fits_decimal38": "all", "int_digits": "max", "scale": "max",
               "micros": "all"}  # fmt: skip


def figure_rows(rows: pa.Table | pa.RecordBatch) -> dict[tuple[tuple, str], ColumnFigures]:
    """The figures of each (table, column) of `rows` (the TABLE columns, `row`, `column_types`,
    `_cdc_event_id`): per logical type, the values' figures computed at once and grouped by Arrow."""
    cells = _cells(rows)
    out: dict[tuple[tuple, str], ColumnFigures] = {}
    for logical, _, part in cells.by_logical():
        figures = _figures(logical, part.value)
        grouped = pa.table({**{c: part.of_rows(c) for c in TABLE}, "column": part.column, **figures}).group_by(
            [*TABLE, "column"], use_threads=False
        )
        rows_out = grouped.aggregate([(name, _AGGREGATES[name]) for name in figures]).to_pylist()
        for group in rows_out:
            key = (tuple(group[c] for c in TABLE), group["column"])
            found = {name: group[f"{name}_{_AGGREGATES[name]}"] for name in figures}
            found |= {name: found.get(name) or 0 for name in ("int_digits", "scale")}
            merged(out, {key: ColumnFigures(frozenset([logical]), **found)})
    return out


def merged(figures: dict, part: Mapping[tuple[tuple, str], ColumnFigures]) -> dict:
    """`figures` (per table and column) with `part`'s merged in."""
    for key, one in part.items():
        figures[key] = figures[key].merge(one) if key in figures else one
    return figures


def invalid_cells(rows: pa.Table | pa.RecordBatch) -> pa.Table:
    """The values of `rows` that are not valid for their logical type: the `cast_failed` anomalies
    (ANOMALY_COLUMNS), in the order of the rows. Only a batch with a figure not `valid` has any."""
    cells = _cells(rows)
    bad = [pa.array([], pa.uint64())]
    for logical, where, part in cells.by_logical():
        if logical in _PATTERNS or logical == "BOOLEAN":
            bad.append(where.filter(pc.invert(_valid(logical, part.value))))
    part = cells.take(pc.is_in(pa.array(range(len(cells.value)), pa.uint64()), pa.concat_arrays(bad)))
    n = len(part.value)
    detail = pc.binary_join_element_wise(part.column, " is not ", part.logical, ": ", part.value, "")
    return pa.table(
        {
            **{c: part.of_rows(c) for c in TABLE},
            "kind": pa.array(["cast_failed"] * n, pa.string()),
            "event_id": part.of_rows("_cdc_event_id"),
            "op": pa.nulls(n, pa.string()),
            "detail": detail,
        }
    )


def spark_type(figures) -> str:
    """The Spark type of one column from its figures (`ColumnFigures`)."""
    logicals = set(figures.logicals)
    if len(logicals) != 1 or not figures.valid:
        return "string"
    logical = logicals.pop()
    if logical == "INT":
        return "bigint" if figures.fits_long else "decimal(38,0)" if figures.fits_decimal38 else "string"
    if logical == "DECIMAL":
        scale = figures.scale
        precision = max(figures.int_digits + scale, 1)
        return f"decimal({precision},{scale})" if precision <= 38 else "string"
    if logical in ("TIMESTAMP", "DATETIME"):
        return ("timestamp" if logical == "TIMESTAMP" else "timestamp_ntz") if figures.micros else "string"
    return {"BOOLEAN": "boolean", "DATE": "date", "BYTES": "binary"}.get(logical, "string")


_LOGICAL_OF = {"bigint": "INT", "boolean": "BOOLEAN", "date": "DATE", "binary": "BYTES", "timestamp": "TIMESTAMP",
               "timestamp_ntz": "DATETIME"}  # fmt: skip


def logical_type(spark_type_name: str | None) -> str | None:
    """The logical type of the values a column of `spark_type_name` holds (`spark_type` the other way), for
    rows whose format names none; None for text, which every value is."""
    if spark_type_name and spark_type_name.startswith("decimal("):
        return "DECIMAL"
    return _LOGICAL_OF.get(spark_type_name or "")


def arrow_type(spark_type_name: str) -> pa.DataType:
    """The Arrow type of a column of `spark_type_name` (the type Spark's `toArrow` gives it; UTC session)."""
    simple = {"boolean": pa.bool_(), "bigint": pa.int64(), "date": pa.date32(), "binary": pa.binary(),
              "timestamp": pa.timestamp("us", "UTC"), "timestamp_ntz": pa.timestamp("us"),
              "string": pa.string()}  # fmt: skip
    if spark_type_name in simple:
        return simple[spark_type_name]
    precision, scale = _precision_scale(spark_type_name)
    return pa.decimal128(precision, scale)


def widened(column: pa.Array | pa.ChunkedArray, old: str, new: str) -> pa.Array | pa.ChunkedArray:
    """A column of type `old` in its wider type `new` (`model.column_types.widen`): text as the images write
    it (`as_text`), a number as a wider decimal (an exact cast, or an error)."""
    return as_text(column, old) if new == "string" else column.cast(arrow_type(new))


def _precision_scale(type_name: str) -> tuple[int, int]:
    match = re.fullmatch(r"decimal\((\d+),(\d+)\)", type_name)
    if match is None:
        raise ValueError(f"no snapshot column is of type {type_name}")
    return int(match[1]), int(match[2])


def typed_array(values: pa.Array | pa.ChunkedArray, spark_type_name: str) -> pa.Array:
    """Text values as a column of `spark_type_name`: `true` is true and any other text false; numbers, dates,
    times (UTC instants or local) and base64 bytes converted, a value that does not convert null (as Spark's
    `try_cast`); a decimal rounded half up to the scale. Text in the forms `figure_rows` checks converts
    exactly as Spark's casts do (tests/snapshots/test_values.py holds them equal). Spark's casts also read
    other texts (` 5`, `1e3`, `2024-1-1`), null here: no column of them is typed, they are not valid."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    values = values.cast(pa.string())
    if spark_type_name == "string":
        return values
    if spark_type_name == "boolean":
        return pc.equal(values, "true")
    if spark_type_name == "bigint":
        form = pc.match_substring_regex(values, _INT)
        return _longs(values, form, _digits_and_scale(values, form)[0])
    if spark_type_name == "date":
        ok = pc.match_substring_regex(values, f"^{_DAY}$")
        real, days, _ = _calendar(values, ok, timed=False)
        return pc.if_else(pc.and_(ok, real), days, None).cast(pa.int32()).cast(pa.date32())
    if spark_type_name in ("timestamp", "timestamp_ntz"):
        ok = pc.match_substring_regex(values, _INSTANT)
        real, days, micro_of_day = _calendar(values, ok, timed=True)
        micros = pc.add(pc.multiply(days, _DAY_MICROS), micro_of_day)
        return pc.if_else(pc.and_(ok, real), micros, None).cast(arrow_type(spark_type_name))
    if spark_type_name == "binary":
        return pa.array([_unbase64(v) for v in values.to_pylist()], pa.binary())
    return _decimals(values, *_precision_scale(spark_type_name))


def _longs(values: pa.Array, is_int: pa.Array, digits: pa.Array) -> pa.Array:
    """The values that are integers within a long's range as longs; null for the rest."""
    short = pc.and_(is_int, pc.less_equal(digits, 18))
    longs = pc.cast(pc.utf8_ltrim(pc.if_else(short, values, "0"), "+"), pa.int64())
    longs = pc.if_else(short, longs, None)
    edge = pc.and_(is_int, pc.equal(digits, 19)).to_pylist()
    if not any(edge):  # 19 significant digits may or may not fit: each is looked at (rare)
        return longs
    text = values.to_pylist()
    fits = [int(t) if e and -_LONG_MAX - 1 <= int(t) <= _LONG_MAX else None for t, e in zip(text, edge, strict=True)]
    return pc.if_else(pa.array(edge), pa.array(fits, pa.int64()), longs)


def _decimals(values: pa.Array, precision: int, scale: int) -> pa.Array:
    """Decimal text as decimal(precision, scale): exact where the value has no more digits than the type
    (Arrow's cast), else rounded half up and null where it overflows (as Spark's `changePrecision`)."""
    is_decimal = pc.match_substring_regex(values, _DECIMAL)
    digits, fraction = _digits_and_scale(values, is_decimal)
    fits = pc.and_(pc.less_equal(digits, precision - scale), pc.less_equal(fraction, scale))
    exact = pc.and_(is_decimal, fits)
    out = pc.if_else(exact, pc.cast(pc.if_else(exact, values, "0"), pa.decimal128(precision, scale)), None)
    rounded = pc.and_(is_decimal, pc.invert(fits)).to_pylist()
    if not any(rounded):
        return out
    quantum, limit = Decimal(1).scaleb(-scale), Decimal(10) ** (precision - scale)
    others = []
    for text, rounds in zip(values.to_pylist(), rounded, strict=True):
        # a context as wide as the text: the default one (28 digits) refuses wider values
        wide = Context(prec=len(text) + scale + 1) if rounds else None
        value = Decimal(text).quantize(quantum, ROUND_HALF_UP, wide) if rounds else None
        others.append(value if value is not None and abs(value) < limit else None)
    return pc.if_else(pa.array(rounded), pa.array(others, pa.decimal128(precision, scale)), out)


def _unbase64(text: str | None) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (TypeError, ValueError):  # no value, or not base64
        return None


def _number(raw: pa.Array, start: int, stop: int) -> pa.Array:
    return pc.cast(pc.binary_slice(raw, start, stop).cast(pa.string()), pa.int64())


def _mod(a: pa.Array, b: int) -> pa.Array:
    return pc.subtract(a, pc.multiply(pc.divide(a, b), b))


def _calendar(values: pa.Array, matched: pa.Array, timed: bool) -> tuple[pa.Array, pa.Array, pa.Array | None]:
    """For values whose text matched a date (or with `timed` a date-time) form (`matched`): whether the date
    and time exist (month 1-12, the month's days, hour < 24, minute and second < 60), the day from
    1970-01-01 and the microsecond of the day (fraction digits past the sixth are dropped). Other values
    read as 2000-01-01. The digits are sliced as bytes (the forms are ASCII): a third of slicing text."""
    text = pc.if_else(pc.fill_null(matched, False), values, "2000-01-01 00:00:00" if timed else "2000-01-01")
    raw = text.cast(pa.binary())
    year, month, day = _number(raw, 0, 4), _number(raw, 5, 7), _number(raw, 8, 10)
    leap = pc.or_(pc.and_(pc.equal(_mod(year, 4), 0), pc.not_equal(_mod(year, 100), 0)), pc.equal(_mod(year, 400), 0))
    month_ok = pc.and_(pc.greater_equal(month, 1), pc.less_equal(month, 12))
    month_days = pc.take(_MONTH_DAYS, pc.subtract(pc.if_else(month_ok, month, 1), 1))
    month_days = pc.add(month_days, pc.cast(pc.and_(leap, pc.equal(month, 2)), pa.int64()))
    real = pc.and_(month_ok, pc.and_(pc.greater_equal(day, 1), pc.less_equal(day, month_days)))
    days = _days_from_civil(year, month, day)
    if not timed:
        return real, days, None
    hour, minute, second = _number(raw, 11, 13), _number(raw, 14, 16), _number(raw, 17, 19)
    fraction = pc.utf8_rtrim(pc.binary_slice(raw, 20, 29).cast(pa.string()), "Z")
    fraction = pc.cast(pc.utf8_slice_codeunits(pc.utf8_rpad(fraction, 6, "0"), 0, 6), pa.int64())
    real = pc.and_(real, pc.and_(pc.less(hour, 24), pc.and_(pc.less(minute, 60), pc.less(second, 60))))
    seconds = pc.add(pc.multiply(pc.add(pc.multiply(hour, 60), minute), 60), second)
    return real, days, pc.add(pc.multiply(seconds, 1_000_000), fraction)


def _days_from_civil(year: pa.Array, month: pa.Array, day: pa.Array) -> pa.Array:
    """Days from 1970-01-01 of a proleptic Gregorian date, year >= 0 (H. Hinnant's `days_from_civil`, the
    years shifted by one era so that every division is of a number >= 0: Arrow's, which truncates, floors)."""
    march_year = pc.add(pc.subtract(year, pc.cast(pc.less_equal(month, 2), pa.int64())), 400)
    era = pc.divide(march_year, 400)
    year_of_era = pc.subtract(march_year, pc.multiply(era, 400))
    march_month = _mod(pc.add(month, 9), 12)
    day_of_year = pc.add(pc.divide(pc.add(pc.multiply(march_month, 153), 2), 5), pc.subtract(day, 1))
    day_of_era = pc.add(
        pc.add(pc.multiply(year_of_era, 365), pc.divide(year_of_era, 4)),
        pc.subtract(day_of_year, pc.divide(year_of_era, 100)),
    )
    return pc.subtract(pc.add(pc.multiply(era, _ERA_DAYS), day_of_era), 719_468 + _ERA_DAYS)


def as_text(column: pa.Array | pa.ChunkedArray, type_name: str) -> pa.Array:
    """A typed column's values as Spark's `cast(... as string)` prints them (bytes as base64, as in the
    images): `true`/`false`, digits, decimals in plain notation with their scale (Arrow's own cast writes
    `9E-10`), dates and times from the stored days and microseconds (a `timestamp` in UTC, the session's
    time zone), the fraction without its trailing zeros."""
    if isinstance(column, pa.Array):
        column = pa.chunked_array([column])
    if type_name == "string":
        return column.combine_chunks()
    if type_name in ("boolean", "bigint"):
        return pc.cast(column, pa.string()).combine_chunks()
    if type_name == "binary":
        return pa.array([None if v is None else base64.b64encode(v).decode() for v in column.to_pylist()], pa.string())
    if type_name == "date":
        days = column.cast(pa.int32()).to_pylist()
        return pa.array([None if d is None else _date_text(d) for d in days], pa.string())
    if type_name in ("timestamp", "timestamp_ntz"):
        micros = column.cast(pa.int64()).to_pylist()
        return pa.array([None if m is None else _time_text(m) for m in micros], pa.string())
    _precision_scale(type_name)  # a decimal, or no snapshot column's type
    return pa.array([None if v is None else format(v, "f") for v in column.to_pylist()], pa.string())


def _date_text(days: int) -> str:
    """`yyyy-MM-dd` of a day counted from 1970-01-01, in the proleptic Gregorian calendar Spark uses
    (H. Hinnant's `civil_from_days`)."""
    era, day_of_era = divmod(days + 719_468, _ERA_DAYS)
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + 3 if shifted_month < 10 else shifted_month - 9
    year = year_of_era + era * 400 + (month <= 2)
    sign = "-" if year < 0 else "+" if year > 9999 else ""  # as Java's `uuuu` prints a year past 4 digits
    return f"{sign}{abs(year):04d}-{month:02d}-{day:02d}"


def _time_text(micros: int) -> str:
    """`yyyy-MM-dd HH:mm:ss[.f]` of microseconds from 1970-01-01 00:00: the fraction without its trailing zeros."""
    days, micro_of_day = divmod(micros, _DAY_MICROS)
    seconds, fraction = divmod(micro_of_day, 1_000_000)
    text = f"{_date_text(days)} {seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return text + f".{fraction:06d}".rstrip("0") if fraction else text
