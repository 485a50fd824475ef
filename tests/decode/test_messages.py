"""A decode's counts declared once (`messages.ROW_COUNTS`): the lake's counts columns, and the sums both
engines take of a decode's rows (the local one here; Spark's `runner._counts` in the Spark suite's decode
tests, which compare its counts with these)."""

from cdc_pipelines.decode.messages import ROW_COUNTS, decoded_counts
from cdc_pipelines.model.canonical import MESSAGE_COUNTS


def _row(reject=None, index=0, messages=1, filtered=False):
    return {"reject_reason": reject, "row_index": index, "messages": messages, "filtered": filtered}


def test_the_counts_are_the_lakes_columns():
    assert ("read", *(c.name for c in ROW_COUNTS)) == MESSAGE_COUNTS


def test_counts_sum_a_decodes_rows():
    rows = [
        _row(),  # a message of one event
        _row(), _row(index=1, messages=None),  # a message of two rows (canal's `data` array)
        _row(messages=2),  # a split update paired: two messages, one event
        _row(reject="not JSON"),  # a message rejected
        _row(filtered=True), _row(index=1, filtered=True, messages=None),  # left out by the table filter
    ]  # fmt: skip
    assert decoded_counts(rows, 6) == {"read": 6, "decoded": 4, "rejected": 1, "filtered": 1, "events": 4}
    assert decoded_counts([], 0) == dict.fromkeys(MESSAGE_COUNTS, 0)
