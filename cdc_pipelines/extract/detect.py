"""Format detection: which format id the first messages of an input match.

Reads only a sample of the first lines (in the driver, a few KB), parses each with the standard
`json` module and asks each codec's `recognise` in `formats.DETECTION_ORDER` (most specific first).
Undecided or conflicting samples give None: a wrong guess would decode everything wrongly, so the user
is asked.
"""

from __future__ import annotations

import gzip
import io
import json
from collections import Counter
from collections.abc import Callable
from functools import cache

from cdc_pipelines.extract.files import list_input_files
from cdc_pipelines.formats import DETECTION_ORDER, get_codec
from cdc_pipelines.runtime.inputs import open_input

SAMPLE_LINES = 50
AVRO_MAGIC = b"Obj\x01"


@cache
def _recognisers() -> tuple[tuple[str, Callable[[dict], bool]], ...]:
    """(format id, predicate) in `DETECTION_ORDER`; built when first detecting, since it imports every codec."""
    codecs = (get_codec(format_id) for format_id in DETECTION_ORDER)
    return tuple((codec.format_id, codec.recognise) for codec in codecs if codec.recognise is not None)


def message_format(message: object) -> str | None:
    """The format id one parsed message looks like, or None."""
    if not isinstance(message, dict):
        return None
    for format_id, recognise in _recognisers():
        if recognise(message):
            return format_id
    return None


def _open(path: str):
    raw = open_input(path)
    return io.TextIOWrapper(gzip.open(raw) if path.endswith(".gz") else raw, encoding="utf-8", errors="replace")


def detect_format(inputs) -> str | None:
    """The one format id the first messages of `inputs` agree on, or None."""
    votes: Counter[str] = Counter()
    seen = 0
    for path in list_input_files(inputs):
        with open_input(path) as fh:
            if fh.read(4) == AVRO_MAGIC:
                votes["dts-avro"] += 1
                continue
        if path.lower().endswith(".csv"):
            with _open(path) as fh:
                header = fh.readline()
            if "_operation_type_" in header or "_sequence_id_" in header:
                votes["datahub-tuple"] += 1
            continue
        with _open(path) as fh:
            for line in fh:
                if seen >= SAMPLE_LINES:
                    break
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                seen += 1
                found = message_format(message)
                if found:
                    votes[found] += 1
        if seen >= SAMPLE_LINES:
            break
    if not votes:
        return None
    (best, count), *rest = votes.most_common()
    return best if not rest or count > 2 * rest[0][1] else None
