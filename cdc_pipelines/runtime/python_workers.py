"""What every `mapInArrow` function of this project does around its per-row Python work."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Decoding and encoding make many small dicts and no reference cycles: the cycle collector, which
    runs every few hundred allocations, would only walk them (a batch's rows are all alive until its
    Arrow columns are built, so each pass walks more). It is off while a batch is turned into rows
    and back into Arrow columns."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
