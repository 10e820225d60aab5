#!/usr/bin/env bash
# Frame-time benchmark of the Geometry panel's warped grid (not a test): the window under Xvfb +
# Mesa llvmpipe at 1280x800, vsync off, the Geometry panel alone (the hidden knob
# ATTN_GEOMETRY_BENCH="LINES,TOKENS,gpu|cpu,MOTION" hides the other panels and shows only the
# grid, over [-3, 3]^2 with 257 samples per line and TOKENS seeded random tokens in [-2, 2]^2).
# MOTION: still (nothing changes: the grid is drawn once into the panel's offscreen layer and
# shown as an image), drag (token 1 moves every frame as if dragged; while it moves, lines get
# at most 32768 vertices in all), drag-full (moves every frame, full samples).
# gpu: the vertex shader maps the grid; cpu: geometry::warp_grid maps it (double) and uploads.
# Prints frame-time p50/p99 (ms) per configuration after 30 warm-up frames, the speed-up of the
# shader over the CPU path (cpu p50 / gpu p50), and the CPU path's warp time per frame.
# usage: bench_geometry.sh <path-to-attnlab> [frames=100] [lines="64 128 256"] [tokens="5 16 64"]
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: bench_geometry.sh <attnlab> [frames] [lines] [tokens]}")
FRAMES=${2:-100}
LINES=${3:-64 128 256}
TOKENS=${4:-5 16 64}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
need xvfb-run

# run LINES TOKENS PATH MOTION: prints "p50 p99 cpu_warp_ms"
run() {
  rm -f "$TMP/layout.ini"  # the same first-launch layout every run
  ATTN_GEOMETRY_BENCH="$1,$2,$3,$4" ATTN_GUI_REPORT=$TMP/report.json \
    "${XVFB_RUN[@]}" "$ATTNLAB" gui --frames $((FRAMES + 31)) \
    --frame-stats "$TMP/stats.json" --layout "$TMP/layout.ini" >"$TMP/log" 2>&1 ||
    { cat "$TMP/log" >&2; exit 1; }
  python3 - "$TMP/stats.json" "$TMP/report.json" "$3" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
g = json.load(open(sys.argv[2]))["geometry"]["grid"]
path = g["path"] if g["lines_drawn"] else "none"
assert sys.argv[3] == path or path == "none", (sys.argv[3], path)
print("%.1f %.1f %.1f" % (s["frame_ms_p50"], s["frame_ms_p99"], g["cpu_warp_ms_mean"]))
PY
}

echo "Geometry panel frame times: $(nproc) cores, 1280x800 Xvfb + llvmpipe, $FRAMES frames after"
echo "30 warm-up, 257 samples per line; p50 / p99 ms per frame (60 fps = 16.7 ms)"
read -r p50 p99 _ <<<"$(run 0 16 gpu still)"
echo "baseline, the panel with no grid: $p50 / $p99"
printf "%5s %6s | %13s | %13s %13s %8s | %13s %13s %8s %9s\n" lines tokens "still gpu" \
  "drag gpu" "drag cpu" speed-up "full gpu" "full cpu" speed-up "cpu warp"
for lines in $LINES; do
  for tokens in $TOKENS; do
    read -r s50 s99 _ <<<"$(run "$lines" "$tokens" gpu still)"
    read -r g50 g99 _ <<<"$(run "$lines" "$tokens" gpu drag)"
    read -r c50 c99 _ <<<"$(run "$lines" "$tokens" cpu drag)"
    read -r fg50 fg99 _ <<<"$(run "$lines" "$tokens" gpu drag-full)"
    read -r fc50 fc99 warp <<<"$(run "$lines" "$tokens" cpu drag-full)"
    printf "%5s %6s | %6s/%6s | %6s/%6s %6s/%6s %7.2fx | %6s/%6s %6s/%6s %7.2fx %6s ms\n" \
      "$lines" "$tokens" "$s50" "$s99" "$g50" "$g99" "$c50" "$c99" \
      "$(awk -v a="$c50" -v b="$g50" 'BEGIN { print a / b }')" "$fg50" "$fg99" "$fc50" "$fc99" \
      "$(awk -v a="$fc50" -v b="$fg50" 'BEGIN { print a / b }')" "$warp"
  done
done
