#!/usr/bin/env bash
# GUI test: what a panel shows is what it exports. The real window under Xvfb trains a few
# shipped experiments; with ATTN_GUI_FIGURES_DIR every live figure of the last frame (the plot
# areas the panels draw from the figure model: gui/plot/live_figure.h) is also exported as a PNG of
# the same page and pixel size. For each one, the screenshot cropped to the figure's rectangle
# (from the exit report) and the exported PNG must agree in coarse grey-level blocks, and agree
# far better than with another panel's figure, so the comparison can fail.
# usage: gui_figures.sh <attnlab> <source dir>
set -u
ATTNLAB=$(realpath "${1:?usage: gui_figures.sh <attnlab> <source dir>}")
SRC=$(realpath "${2:?usage: gui_figures.sh <attnlab> <source dir>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
need xvfb-run "apt-get install xvfb xauth"
need python3

run_case() {  # run_case NAME SIZE ARGS...: the window at SIZE with ARGS, figures into $TMP/NAME
  local name=$1 size=$2
  shift 2
  mkdir -p "$TMP/$name"
  ATTN_GUI_FIGURES_DIR=$TMP/$name ATTN_GUI_REPORT=$TMP/$name/report.json timeout 300 \
    xvfb-run -a -s "-screen 0 ${size}x24" "$ATTNLAB" gui --size "$size" --autostart \
    --layout "$TMP/$name/layout.ini" --screenshot "$TMP/$name/shot.png" "$@" \
    >"$TMP/log" 2>&1 || { bad "$name: the window exited with $?"; return; }
  if python3 - "$TMP/$name" "$E2E_DIR" <<'PY'; then ok "$name: every live figure matches its export"; else bad "$name: a live figure differs from its export"; fi
import json, sys
d, here = sys.argv[1], sys.argv[2]
sys.path.insert(0, here)
from png_stats import read_png

def grey(path, x0=0, y0=0, w=None, h=None):
    width, height, bpp, rows = read_png(path)
    w = width if w is None else w
    h = height if h is None else h
    assert x0 + w <= width and y0 + h <= height, (path, x0, y0, w, h, width, height)
    return [[(r[(x0 + i) * bpp] * 299 + r[(x0 + i) * bpp + 1] * 587 + r[(x0 + i) * bpp + 2] * 114)
             // 1000 for i in range(w)] for r in rows[y0:y0 + h]], w, h

def blocks(g, w, h, bx, by):
    out = []
    for j in range(by):
        for i in range(bx):
            xs, xe, ys, ye = i * w // bx, (i + 1) * w // bx, j * h // by, (j + 1) * h // by
            vals = [g[y][x] for y in range(ys, ye) for x in range(xs, xe)]
            out.append(sum(vals) / max(1, len(vals)))
    return out

def corr(a, b):
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) ** 0.5
    vb = sum((y - mb) ** 2 for y in b) ** 0.5
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / max(1e-9, va * vb)

report = json.load(open(d + "/report.json"))
figs = report["live_figures"]
assert len(figs) >= 2, ("want at least two live figures", figs)
exported = []
shot_h = read_png(d + "/shot.png")[1]
for f in figs:
    x, y, w, h = (int(round(v)) for v in f["rect"])
    # A figure taller than its tile (attention maps keep a least size; the tile scrolls) is
    # compared on its visible top, with the export's same rows.
    vis = min(h, shot_h - y)
    assert vis >= 64, ("too little of the figure on screen", f["name"], f["rect"])
    screen, w, hv = grey(d + "/shot.png", x, y, w, vis)
    png, pw, ph = grey(f["file"])
    assert abs(pw - w) <= 2 and abs(ph - h) <= 2, ("export size", f["name"], pw, ph, w, h)
    exported.append((f["name"], (screen, w, hv), (png[:vis], pw, min(ph, vis))))
failed = False
for i, (name, (sg, w, h), (eg, ew, eh)) in enumerate(exported):
    bx, by = 16, max(4, round(16 * h / w))  # coarse: text antialiasing differs between rasterisers
    screen, same = blocks(sg, w, h, bx, by), blocks(eg, ew, eh, bx, by)
    c_same = corr(screen, same)
    # The negative control: every other figure's export on the same block grid.
    others = [corr(screen, blocks(o[2][0], o[2][1], o[2][2], bx, by))
              for j, o in enumerate(exported) if j != i]
    mad = sum(abs(a - b) for a, b in zip(screen, same)) / len(screen)
    print(f"  {name}: correlation with its export {c_same:.3f}, mean block difference {mad:.1f}/255"
          + (f", with other figures' exports at most {max(others):.3f}" if others else ""))
    if c_same < 0.9 or mad > 20 or (others and c_same < max(others) + 0.1):
        failed = True
sys.exit(1 if failed else 0)
PY
}

C=$SRC/assets/configs
run_case ky 1280x720 --config "$C/copy_gap_ky.json" --frames 150
run_case ky_1080 1920x1080 --config "$C/copy_gap_ky.json" --frames 150
run_case compare 1920x1080 --config "$C/copy.json" --compare-vary model.attention=dot,ky \
  --compare-out "$TMP/compare_runs" --frames 300
run_case conn 1920x1080 --config "$C/conn_recall.json" --frames 200
run_case neural 1920x1080 --config "$C/neural_fortunes.json" --panel neural --frames 200
finish
