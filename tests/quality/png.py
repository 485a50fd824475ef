"""A minimal PNG reader for tests (8-bit RGB/RGBA, non-interlaced, as Chromium writes them): no PIL needed."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {2: 3, 6: 4}  # colour type -> bytes per pixel at 8 bits


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def _unfilter(kind: int, line: bytearray, prior: bytearray, bpp: int) -> bytearray:
    if kind == 0:
        return line
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        up = prior[i]
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        else:
            line[i] = (line[i] + _paeth(left, up, prior[i - bpp] if i >= bpp else 0)) & 0xFF
    return line


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of raw pixel bytes)."""
    data = path.read_bytes()
    assert data[:8] == SIGNATURE, "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos : pos + 4]), data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in CHANNELS and interlace == 0, header
    bpp = CHANNELS[colour]
    raw = zlib.decompress(idat)
    stride = width * bpp + 1
    rows, prior = [], bytearray(width * bpp)
    for y in range(height):
        line = bytearray(raw[y * stride + 1 : (y + 1) * stride])
        prior = _unfilter(raw[y * stride], line, prior, bpp)
        rows.append(bytes(prior))
    return width, height, rows


def colours(path: Path, step: int = 4) -> dict[tuple[int, ...], int]:
    """Pixel counts by colour (RGB), sampling every `step`-th pixel of every `step`-th row."""
    width, _, rows = read_png(path)
    bpp = len(rows[0]) // width
    counts: dict[tuple[int, ...], int] = {}
    for row in rows[::step]:
        for x in range(0, width, step):
            pixel = tuple(row[x * bpp : x * bpp + 3])
            counts[pixel] = counts.get(pixel, 0) + 1
    return counts
