"""A table's current and history writes side by side (`spark_tables.side_by_side`): both have ended before
either's error is raised, so a failed day leaves no write running."""

import time

import pytest

from cdc_pipelines.snapshots.spark_tables import side_by_side


def _slow(ended: list, error: Exception | None = None):
    def write():
        time.sleep(0.1)  # a write still running when the other ends
        ended.append("history")
        if error is not None:
            raise error

    return write


def test_the_first_writes_result_once_both_ended():
    ended = []
    assert side_by_side(lambda: "current", _slow(ended)) == "current"
    assert ended == ["history"]


def test_a_failed_first_write_is_raised_once_the_second_ended_with_its_error_named():
    ended = []

    def current():
        raise RuntimeError("current failed")

    with pytest.raises(RuntimeError, match="current failed") as caught:
        side_by_side(current, _slow(ended, ValueError("history failed")))
    assert ended == ["history"] and "history failed" in " ".join(caught.value.__notes__)


def test_a_failed_second_write_is_raised_after_the_first():
    ended = []
    with pytest.raises(ValueError, match="history failed"):
        side_by_side(lambda: ended.append("current"), _slow(ended, ValueError("history failed")))
    assert ended == ["current", "history"]
