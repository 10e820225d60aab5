#!/usr/bin/env bash
# Frame-time benchmark (not a test): the window under Xvfb at 1280x800 with training running,
# vsync off. Frame time = wall time between successive buffer-swap returns; the first 30 frames
# are dropped. Also reports launch-to-first-frame (process start to the first presented frame).
# usage: bench_frames.sh <path-to-attnlab> <config.json> [runs=3] [frames=600]
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: bench_frames.sh <attnlab> <config.json> [runs] [frames]}")
CONFIG=$(realpath "${2:?usage: bench_frames.sh <attnlab> <config.json> [runs] [frames]}")
RUNS=${3:-3}
FRAMES=${4:-600}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP

echo "attnlab frame benchmark: $(nproc) cores, 1280x800 Xvfb, $FRAMES frames after 30 warm-up"
for run in $(seq 1 "$RUNS"); do
  rm -f "$TMP/layout.ini"  # same first-launch layout every run
  "${XVFB_RUN[@]}" "$ATTNLAB" gui --config "$CONFIG" --autostart \
    --frames $((FRAMES + 31)) --frame-stats "$TMP/stats.json" --layout "$TMP/layout.ini" \
    >"$TMP/log" 2>&1 || { cat "$TMP/log" >&2; exit 1; }
  python3 - "$TMP/stats.json" "$run" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("run %s: frame ms p50 %.2f  p99 %.2f  max %.2f  (mean %.2f, %d frames)   "
      "launch-to-first-frame %.0f ms" % (sys.argv[2], s["frame_ms_p50"], s["frame_ms_p99"],
      s["frame_ms_max"], s["frame_ms_mean"], s["frames_measured"],
      s["launch_to_first_frame_ms"]))
PY
done
