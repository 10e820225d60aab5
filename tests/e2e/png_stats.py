#!/usr/bin/env python3
"""Statistics of an 8-bit RGB/RGBA PNG using only the standard library (zlib), so the GUI smoke
test can tell a real screenshot from a blank one without Pillow.

usage: png_stats.py FILE [--min-colors N] [--min-foreground F] [--size WxH] [--region X,Y,W,H]
                    [--min-pixels RRGGBB:N ...]
Prints JSON {width, height, distinct_colors, background, foreground_fraction} (of the region when
given, clipped to the image; plus pixels: {RRGGBB: count} for each --min-pixels colour); exits 1
when a threshold is not met (and says which), 2 when the file is not a PNG this script can read.
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
    ap.add_argument("--region", default="", help="X,Y,W,H: only these pixels count")
    ap.add_argument("--min-pixels", action="append", default=[],
                    help="RRGGBB:N: at least N pixels of exactly this colour")
    args = ap.parse_args()
    try:
        width, height, bpp, rows = read_png(args.png)
    except (OSError, ValueError, zlib.error) as e:
        print(f"png_stats: {args.png}: {e}", file=sys.stderr)
        return 2
    x0, y0, x1, y1 = 0, 0, width, height
    if args.region:
        try:
            rx, ry, rw, rh = (int(v) for v in args.region.split(","))
        except ValueError:
            print(f"png_stats: --region must be X,Y,W,H, got {args.region}", file=sys.stderr)
            return 2
        x0, y0 = max(0, rx), max(0, ry)
        x1, y1 = min(width, rx + rw), min(height, ry + rh)
        if x1 <= x0 or y1 <= y0:
            print(f"png_stats: --region {args.region} is outside the image", file=sys.stderr)
            return 2
    counts = collections.Counter()
    for row in rows[y0:y1]:
        counts.update(row[i:i + 3] for i in range(x0 * bpp, x1 * bpp, bpp))
    background, bg_count = counts.most_common(1)[0]
    stats = {
        "width": width,
        "height": height,
        "distinct_colors": len(counts),
        "background": "#" + background.hex(),
        "foreground_fraction": round(1.0 - bg_count / ((x1 - x0) * (y1 - y0)), 4),
    }
    wanted = []
    for spec in args.min_pixels:
        color, _, n = spec.partition(":")
        try:
            wanted.append((color.lower(), bytes.fromhex(color), int(n)))
        except ValueError:
            print(f"png_stats: --min-pixels must be RRGGBB:N, got {spec}", file=sys.stderr)
            return 2
    if wanted:
        stats["pixels"] = {c: counts.get(rgb, 0) for c, rgb, _ in wanted}
    print(json.dumps(stats))
    problems = []
    if args.size and args.size != f"{width}x{height}":
        problems.append(f"size {width}x{height}, expected {args.size}")
    if stats["distinct_colors"] < args.min_colors:
        problems.append(f"{stats['distinct_colors']} distinct colours < {args.min_colors}")
    if stats["foreground_fraction"] < args.min_foreground:
        problems.append(f"foreground {stats['foreground_fraction']} < {args.min_foreground}")
    for color, rgb, n in wanted:
        if counts.get(rgb, 0) < n:
            problems.append(f"{counts.get(rgb, 0)} pixels of #{color} < {n}")
    for p in problems:
        print(f"png_stats: {args.png}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
