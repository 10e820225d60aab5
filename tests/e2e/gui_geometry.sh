#!/usr/bin/env bash
# GUI test of the Geometry panel (docs/design/MECHANISMS.md section 5): the real window under its own Xvfb,
# driven with real mouse events (xdotool, XTEST).
# usage: gui_geometry.sh <path-to-attnlab>
# Checks:
#  1. --panel geometry for 30 frames: exit 0; the exit report (ATTN_GUI_REPORT) says the panel
#     was open and drawn, the warped grid went through the GPU shader, z equals the softmax
#     formula (computed here in Python) for the reported tokens, query and matrices, and lies in
#     the hull; the screenshot is not blank and the canvas shows the three tokens' colours.
#  2. A bare `attnlab gui` (no config, no panel) opens Geometry; with --config it stays hidden.
#  3. Interactive, no --frames: drag token t1 (mousedown, moves, mouseup), click empty canvas,
#     right-click token t2; close the window (WM_DELETE_WINDOW). The report must show t1 moved
#     by exactly the mouse's travel over the canvas scale, a new token at the clicked point, t2
#     gone, t3 untouched, and z (changed) equal to the formula for the new tokens.
#  4. Each view draws without error (ATTN_GEOMETRY_VIEWS): circle images, ellipses, the GPU
#     point cloud, Gaussian tokens with their tilted means, the CPU density image, the residual
#     and linear maps, the CPU grid path.
# ATTN_GEOMETRY_SCREENSHOT=FILE keeps step 1's screenshot.
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_geometry.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
for tool in Xvfb xdotool python3; do need "$tool" scripts/setup.sh; done

# report_ok REPORT 'python expression over r (the report) and g (its geometry part)'
report_ok() {
  python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
g = r["geometry"]
ok = eval(sys.argv[2])
if not ok:
    print("  report: " + json.dumps({k: g[k] for k in ("tokens", "query", "output", "edits", "grid")}), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

# The softmax formula, from the definition, for the reported scene (used by several checks).
cat >"$TMP/formula.py" <<'PY'
import math
def mat(m, v):  # row-major [a, b, c, d]
    return (m[0] * v[0] + m[1] * v[1], m[2] * v[0] + m[3] * v[1])
def attend(g):
    q = mat(g["wq"], g["query"])
    logits = []
    for t in g["tokens"]:
        k = mat(g["wk"], t)
        logits.append((q[0] * k[0] + q[1] * k[1]) / g["temperature"])
    m = max(logits)
    e = [math.exp(l - m) for l in logits]
    s = sum(e)
    p = [x / s for x in e]
    values = [mat(g["wv"], t) for t in g["tokens"]]
    z = (sum(pj * u[0] for pj, u in zip(p, values)), sum(pj * u[1] for pj, u in zip(p, values)))
    return z, p
def z_matches(g, tol=1e-9):
    z, p = attend(g)
    return (abs(z[0] - g["output"][0]) <= tol and abs(z[1] - g["output"][1]) <= tol and
            len(p) == len(g["weights"]) and all(abs(a - b) <= tol for a, b in zip(p, g["weights"])))
def to_data(g, sx, sy):  # screen pixel -> data, the canvas transform in the report
    c = g["canvas"]
    cx = 0.5 * (c["min"][0] + c["max"][0]); cy = 0.5 * (c["min"][1] + c["max"][1])
    ppu = c["pixels_per_unit"]
    return (c["center"][0] + (sx - cx) / ppu, c["center"][1] - (sy - cy) / ppu)
PY
export PYTHONPATH=$TMP

start_xvfb

# 1. Thirty frames with the panel.
rc=0
ATTN_GUI_REPORT=$TMP/r1.json timeout 120 "$ATTNLAB" gui --panel geometry --frames 30 \
  --screenshot "$TMP/shot1.png" --layout "$TMP/layout.ini" >"$TMP/log" 2>&1 || rc=$?
check "--panel geometry, 30 frames: exit 0 (got $rc)" test "$rc" = 0
[[ -s $TMP/r1.json ]] || fatal "no exit report"
check "the Geometry panel was open and drawn" report_ok "$TMP/r1.json" \
  'r["panels"]["geometry"]["open"] and r["panels"]["geometry"]["drawn"] and g["drawn"] and g["frames_drawn"] >= 25'
check "the default scene: 3 tokens, no error" report_ok "$TMP/r1.json" 'len(g["tokens"]) == 3 and g["error"] == ""'
check "the warped grid went through the GPU shader ($(python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["geometry"]["grid"]; print(g["lines"], "lines,", g["path"])' "$TMP/r1.json"))" \
  report_ok "$TMP/r1.json" 'g["gpu"]["available"] and g["grid"]["path"] == "gpu" and g["grid"]["lines_drawn"] == 2 * g["grid"]["lines"]'
check "z equals softmax(v T) T^T computed in Python" report_ok "$TMP/r1.json" \
  '__import__("formula").z_matches(g)'
check "z lies in the convex hull" report_ok "$TMP/r1.json" 'g["inside_hull"]'
check "the screenshot is not blank" screenshot_ok "$TMP/shot1.png"
region=$(python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["geometry"]["canvas"]
print("%d,%d,%d,%d" % (c["min"][0], c["min"][1], c["max"][0] - c["min"][0], c["max"][1] - c["min"][1]))' "$TMP/r1.json")
# The tokens are filled discs in Okabe-Ito sky blue, orange and bluish green.
check "the canvas ($region) shows the tokens' colours" png_stats \
  "$TMP/shot1.png" --region "$region" --min-pixels 56b4e9:20 --min-pixels e69f00:20 \
  --min-pixels 009e73:20

# 2. Who opens it by default.
rc=0
ATTN_GUI_REPORT=$TMP/r2.json timeout 120 "$ATTNLAB" gui --frames 5 --layout "$TMP/bare.ini" \
  >"$TMP/log" 2>&1 || rc=$?
check "a bare 'attnlab gui' shows Geometry (exit $rc)" report_ok "$TMP/r2.json" \
  'r["panels"]["geometry"]["open"] and r["panels"]["geometry"]["drawn"]'
rc=0
ATTN_GUI_REPORT=$TMP/r3.json timeout 120 "$ATTNLAB" gui --config "$E2E_DIR/../../assets/configs/copy.json" \
  --frames 5 --layout "$TMP/config.ini" >"$TMP/log" 2>&1 || rc=$?
check "with --config it stays hidden (exit $rc)" report_ok "$TMP/r3.json" \
  'not r["panels"]["geometry"]["open"] and r["panels"]["run"]["open"]'

# 3. Real mouse events. Same layout file as step 1, so the canvas and tokens are where the
#    first report says.
read -r T1X T1Y T2X T2Y <<<"$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["geometry"]["tokens_screen"]
print(round(s[0][0]), round(s[0][1]), round(s[1][0]), round(s[1][1]))' "$TMP/r1.json")"
DX=70 DY=-50
# An empty spot for the click: the canvas point farthest from the tokens (old and moved), the
# query and z, at least 60 px inside the canvas edges.
read -r CX CY <<<"$(python3 - "$TMP/r1.json" "$DX" "$DY" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["geometry"]
dx, dy = int(sys.argv[2]), int(sys.argv[3])
c = g["canvas"]
busy = [tuple(p) for p in g["tokens_screen"]] + [tuple(g["query_screen"]), tuple(g["output_screen"])]
busy.append((g["tokens_screen"][0][0] + dx, g["tokens_screen"][0][1] + dy))
best = max(((x, y) for x in range(int(c["min"][0]) + 60, int(c["max"][0]) - 60, 10)
            for y in range(int(c["min"][1]) + 60, int(c["max"][1]) - 60, 10)),
           key=lambda p: min((p[0] - b[0]) ** 2 + (p[1] - b[1]) ** 2 for b in busy))
print(*best)
PY
)"
ATTN_GUI_REPORT=$TMP/r4.json "$ATTNLAB" gui --panel geometry --layout "$TMP/layout.ini" \
  --screenshot "$TMP/shot4.png" >"$TMP/log" 2>&1 &
APP_PID=$!
wait_window
sleep 1
# Drag t1: press on it, move in steps a few frames apart, release.
xdo mousemove --window "$WIN" "$T1X" "$T1Y" && sleep 0.3
xdo mousedown 1 && sleep 0.3
for i in 1 2 3 4 5; do
  xdo mousemove --window "$WIN" $((T1X + DX * i / 5)) $((T1Y + DY * i / 5)) && sleep 0.15
done
sleep 0.3 && xdo mouseup 1 && sleep 0.5
# Click empty space: a new token there.
xdo mousemove --window "$WIN" "$CX" "$CY" && sleep 0.3
xdo click 1 && sleep 0.5
# Right-click t2: deleted.
xdo mousemove --window "$WIN" "$T2X" "$T2Y" && sleep 0.3
xdo click 3 && sleep 0.5
check "alive after the mouse work" alive
close_app  # WM_DELETE_WINDOW, as a window manager's close button; sets rc
check "closing the window quits with exit 0 (got $rc)" test "$rc" = 0
[[ -s $TMP/r4.json ]] || fatal "no exit report after the interactive run"
check "one token drag, one token added, one deleted" report_ok "$TMP/r4.json" \
  'g["edits"]["token_drags"] == 1 and g["edits"]["tokens_added"] == 1 and g["edits"]["tokens_deleted"] == 1 and len(g["tokens"]) == 3'
python3 - "$TMP/r1.json" "$TMP/r4.json" "$DX" "$DY" "$CX" "$CY" >"$TMP/expect.txt" <<'PY'
import json, sys
from formula import to_data
g1 = json.load(open(sys.argv[1]))["geometry"]
g4 = json.load(open(sys.argv[2]))["geometry"]
dx, dy, cx, cy = (int(v) for v in sys.argv[3:7])
ppu = g1["canvas"]["pixels_per_unit"]
t1 = g1["tokens"][0]
moved = (t1[0] + dx / ppu, t1[1] - dy / ppu)  # screen y points down
added = to_data(g1, cx, cy)
close = lambda a, b: abs(a[0] - b[0]) <= 1e-6 and abs(a[1] - b[1]) <= 1e-6
print("moved", int(close(g4["tokens"][0], moved)), "t1 %s -> %s, want %s" % (t1, g4["tokens"][0], moved))
print("kept", int(g4["tokens"][1] == g1["tokens"][2]), "t3 %s -> %s" % (g1["tokens"][2], g4["tokens"][1]))
print("added", int(close(g4["tokens"][2], added)), "new token %s, clicked at %s" % (g4["tokens"][2], added))
print("changed", int(g4["output"] != g1["output"]), "z %s -> %s" % (g1["output"], g4["output"]))
PY
while read -r what ok detail; do
  check "$what: $detail" test "$ok" = 1
done <"$TMP/expect.txt"
check "z after the edits equals the formula for the new tokens" report_ok "$TMP/r4.json" \
  '__import__("formula").z_matches(g) and g["inside_hull"]'
check "the last frame (screenshot on close) is not blank" screenshot_ok "$TMP/shot4.png"

# 4. Every view draws (ATTN_GEOMETRY_VIEWS picks them at start): no error, the curves and paths
#    the report lists.
views() {  # views SPEC 'python check' 'what'
  rc=0
  ATTN_GEOMETRY_VIEWS=$1 ATTN_GUI_REPORT=$TMP/r5.json timeout 120 "$ATTNLAB" gui --panel geometry \
    --frames 10 --layout "$TMP/layout.ini" >"$TMP/log" 2>&1 || rc=$?
  check "$3 (exit $rc)" report_ok "$TMP/r5.json" "g['error'] == '' and $2"
}
views output,hull,circles,linear,grid,density,preset=five \
  'g["curves"]["softmax_images"] == 3 and g["curves"]["linear_images"] == 3 and g["curves"]["ellipses"] == 3 and g["density"]["path"] == "gpu-points" and g["grid"]["path"] == "gpu" and len(g["tokens"]) == 5' \
  "five tokens: softmax and linear circle images, ellipses, GPU point cloud and grid"
views circles,gaussian,grid,residual,density-image \
  'g["gaussian"] and g["token_count"] == 400 and g["curves"]["tilted_means"] == 3 and 0 < g["gaussian_gap"] < 0.5 and g["density"]["path"] == "cpu-image" and g["grid"]["map"] == "residual" and g["grid"]["path"] == "gpu"' \
  "Gaussian tokens: tilted means within 0.5 of the sampled images, CPU density image, residual grid"
views grid,cpu,linear-map \
  'g["grid"]["path"] == "cpu" and g["grid"]["map"] == "linear" and g["grid"]["cpu_updates"] >= 1' \
  "the CPU grid path (warp_grid) and the linear map"
if [[ -n ${ATTN_GEOMETRY_SCREENSHOT:-} ]]; then cp "$TMP/shot1.png" "$ATTN_GEOMETRY_SCREENSHOT"; fi
finish
