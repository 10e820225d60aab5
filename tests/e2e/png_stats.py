#!/usr/bin/env python3
"""Statistics of an 8-bit RGB/RGBA PNG using only the standard library (zlib), so the GUI smoke
test can tell a real screenshot from a blank one without Pillow.

usage: png_stats.py FILE [--min-colors N] [--min-foreground F] [--size WxH]
Prints JSON {width, height, distinct_colors, background, foreground_fraction}; exits 1 when a
threshold is not met (and says which), 2 when the file is not a PNG this script can read.
"""
import argparse
import collections
import json
import struct
import sys
import zlib


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("no IHDR chunk")
    width, height, depth, ctype, _, _, interlace = header
    if depth != 8 or ctype not in (2, 6) or interlace != 0:
        raise ValueError(f"unsupported PNG (bit depth {depth}, colour type {ctype}, "
                         f"interlace {interlace})")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        ftype, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif ftype == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        elif ftype != 0:
            raise ValueError(f"bad filter type {ftype} in row {y}")
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("png")
    ap.add_argument("--min-colors", type=int, default=0)
    ap.add_argument("--min-foreground", type=float, default=0.0)
    ap.add_argument("--size", default="")
    args = ap.parse_args()
    try:
        width, height, bpp, rows = read_png(args.png)
    except (OSError, ValueError, zlib.error) as e:
        print(f"png_stats: {args.png}: {e}", file=sys.stderr)
        return 2
    counts = collections.Counter()
    for row in rows:
        counts.update(row[i:i + 3] for i in range(0, len(row), bpp))
    background, bg_count = counts.most_common(1)[0]
    stats = {
        "width": width,
        "height": height,
        "distinct_colors": len(counts),
        "background": "#" + background.hex(),
        "foreground_fraction": round(1.0 - bg_count / (width * height), 4),
    }
    print(json.dumps(stats))
    problems = []
    if args.size and args.size != f"{width}x{height}":
        problems.append(f"size {width}x{height}, expected {args.size}")
    if stats["distinct_colors"] < args.min_colors:
        problems.append(f"{stats['distinct_colors']} distinct colours < {args.min_colors}")
    if stats["foreground_fraction"] < args.min_foreground:
        problems.append(f"foreground {stats['foreground_fraction']} < {args.min_foreground}")
    for p in problems:
        print(f"png_stats: {args.png}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
