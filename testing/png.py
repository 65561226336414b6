"""Read the pixels of a PNG (8-bit RGB or RGBA, not interlaced: what Chromium writes), with
the standard library only, so tests can tell a drawn page from a blank one."""

from __future__ import annotations

import struct
import zlib
from collections import Counter
from pathlib import Path

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of raw pixel bytes)."""
    data = path.read_bytes()
    assert data.startswith(SIGNATURE), f"{path}: not a PNG"
    pos, idat = 8, b""
    width = height = depth = colour = interlace = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            add = (0, a, b, (a + b) // 2, _paeth(a, b, c))[kind]
            line[i] = (line[i] + add) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def colour_counts(path: Path, step: int = 4) -> Counter[bytes]:
    """How often each colour occurs, sampling every `step`-th pixel of every `step`-th row."""
    width, _, rows = pixels(path)
    bpp = len(rows[0]) // width
    found: Counter[bytes] = Counter()
    for row in rows[::step]:
        for x in range(0, width, step):
            found[row[x * bpp:x * bpp + 3]] += 1
    return found
