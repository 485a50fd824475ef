"""Dagster's instances in these tests leave no trace for the next test."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_current_instance_storage():
    """A Dagster 1.13 instance makes its storage the current defs-state storage when entered and does not
    unset it when it exits: a later test that builds a repository would read the deleted test instance's
    SQLite file ("unable to open database file"). The context variable is private: it is the only handle."""
    yield
    from dagster._core.storage.defs_state.base import _current_storage

    _current_storage.set(None)
