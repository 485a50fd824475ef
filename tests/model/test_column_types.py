"""A column's type only widens, each step a cast that loses no value."""

from cdc_pipelines.model.column_types import widen


def test_types_only_widen():
    assert [widen(None, "bigint"), widen("bigint", "bigint"), widen("bigint", "decimal(38,0)")] == [
        "bigint", "bigint", "decimal(38,0)",
    ]  # fmt: skip
    assert widen("bigint", "decimal(5,2)") == "decimal(22,2)"  # a long needs 20 integer digits beside the scale
    assert widen("decimal(29,9)", "decimal(3,2)") == "decimal(29,9)"  # never narrows
    assert widen("decimal(38,0)", "decimal(3,2)") == "string"  # 40 digits: no decimal holds both
    assert [widen("bigint", "boolean"), widen("string", "bigint"), widen("date", "timestamp_ntz")] == ["string"] * 3
