"""Damaged gzip extracts: the lines before the damage are decoded, the damage becomes one reject.

Hadoop's gzip reader fails the whole Spark job on a truncated or corrupt `.gz` file. So before the
read, each `.gz` input is streamed through zlib once (constant memory, on the driver); a damaged one
is read from a plain copy of its complete lines instead, its lineage still names the original file,
and one reject, on the line after the last complete one, says that the rest could not be read.
The copy is a local temporary file: a local master reads it; on a cluster, executors would need the
driver's disk, so there a damaged `.gz` input fails the read as Hadoop's reader does.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from cdc_pipelines.runtime.inputs import open_input

_CHUNK = 1 << 20


def _scan(path: str, sink=None) -> tuple[int, str | None]:
    """(complete lines, damage or None) of a gzip file; complete lines are copied to `sink` if given."""
    inflater, lines, pending = zlib.decompressobj(wbits=31), 0, b""
    with open_input(path) as fh:
        while chunk := fh.read(_CHUNK):
            data = chunk
            while data:
                try:
                    out = inflater.decompress(data)
                except zlib.error as exc:
                    return lines, f"corrupt gzip data ({exc})"
                lines += out.count(b"\n")
                if sink is not None and out:
                    pending += out
                    cut = pending.rfind(b"\n") + 1
                    sink.write(pending[:cut])
                    pending = pending[cut:]
                data = b""
                if inflater.eof and inflater.unused_data:  # a concatenated gzip member follows
                    data, inflater = inflater.unused_data, zlib.decompressobj(wbits=31)
    return lines, None if inflater.eof else "the gzip file is truncated"


@dataclass
class GzipDamage:
    """The damaged `.gz` inputs of one read, each with a plain copy of its readable lines."""

    copies: dict[str, str] = field(default_factory=dict)
    rejects: list[tuple[str, int, str]] = field(default_factory=list)

    def readable_files(self, files: list[str]) -> list[str]:
        return [self.copies.get(f, f) for f in files]

    def reject_lines(self) -> list[tuple[str, int, str]]:
        """(file, line, reason) of the one reject per damaged file, on the line after the last complete one."""
        return [
            (path, lines + 1, f"damaged gzip file, nothing readable after line {lines}: {why}")
            for path, lines, why in self.rejects
        ]


def check_gzip_inputs(files: list[str]) -> GzipDamage:
    """Scan every `.gz` input; copy the complete lines of each damaged one to a temporary file."""
    damage = GzipDamage()
    for path in files:
        if not path.lower().endswith(".gz"):
            continue
        lines, why = _scan(path)
        if why is None:
            continue
        folder = tempfile.mkdtemp(prefix="cdc-gzip-")
        atexit.register(shutil.rmtree, folder, True)
        copy = str(Path(folder) / path.rsplit("/", 1)[-1].removesuffix(".gz"))
        with open(copy, "wb") as sink:
            _scan(path, sink)
        damage.copies[path] = copy
        damage.rejects.append((path, lines, why))
    return damage
