#!/usr/bin/env bash
# Frame-time benchmark (not a test: it asserts no timings): the window under Xvfb with training
# running, vsync off. Frame time = wall time between successive buffer-swap returns; the first 30
# frames are dropped. Also reports launch-to-first-frame (process start to the first presented
# frame). Every run starts from a fresh layout (the experiment's default tiles) plus the panels
# asked for, and prints which panels were drawn (from the exit report) beside p50/p99.
# usage: bench_frames.sh [--size WxH] [--panel NAME]... [--follow-rows N] [--follow-runs N]
#                        <path-to-attnlab> <config.json> [runs=3] [frames=600]
#   --size WxH   window and Xvfb screen size (default 1280x800)
#   --panel NAME open NAME as well (repeatable); the run stops, before timing anything, unless
#                every named panel was drawn in the last frame
#   --follow-rows N  the Runs panel follows (and overlays) one finished run of N metrics rows,
#                every column filled (tests/e2e/make_runs.py; 300,000 rows are about 12 MB)
#   --follow-runs N  the Runs panel follows N small runs (5 rows each), all ticked
# e.g. the Runs panel following a 100k-row run, then 2,000 runs:
#   bench_frames.sh --follow-rows 100000 build/app/attnlab assets/configs/copy_gap_ky.json
#   bench_frames.sh --follow-runs 2000 build/app/attnlab assets/configs/copy_gap_ky.json
# e.g. four tiles at 1920x1080 while a ky model trains:
#   bench_frames.sh --size 1920x1080 --panel run --panel loss --panel attention \
#     --panel connections build/app/attnlab assets/configs/copy_gap_ky.json
set -euo pipefail

SIZE=1280x800
PANELS=()
FOLLOW_ROWS="" FOLLOW_RUNS=""
while [[ ${1:-} == --* ]]; do
  case $1 in
    --size) SIZE=${2:?--size needs WxH}; shift 2 ;;
    --panel) PANELS+=("${2:?--panel needs a name}"); shift 2 ;;
    --follow-rows) FOLLOW_ROWS=${2:?--follow-rows needs a count}; shift 2 ;;
    --follow-runs) FOLLOW_RUNS=${2:?--follow-runs needs a count}; shift 2 ;;
    *) echo "bench_frames.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $SIZE =~ ^[0-9]+x[0-9]+$ ]] || { echo "bench_frames.sh: --size must look like 1920x1080" >&2; exit 2; }
usage="usage: bench_frames.sh [--size WxH] [--panel NAME]... <attnlab> <config.json> [runs] [frames]"
ATTNLAB=$(realpath "${1:?$usage}")
CONFIG=$(realpath "${2:?$usage}")
RUNS=${3:-3}
FRAMES=${4:-600}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP

follow_args=() follow_note=""
if [[ -n $FOLLOW_ROWS || -n $FOLLOW_RUNS ]]; then
  PANELS+=(runs)
  if [[ -n $FOLLOW_ROWS ]]; then
    python3 "$E2E_DIR/make_runs.py" "$CONFIG" "$TMP/follow-rows" "$FOLLOW_ROWS"
    follow_args+=(--run "$TMP/follow-rows")
    follow_note+=", following a run of $FOLLOW_ROWS rows ($(du -h "$TMP/follow-rows/metrics.csv" | cut -f1))"
  fi
  if [[ -n $FOLLOW_RUNS ]]; then
    python3 "$E2E_DIR/make_runs.py" "$CONFIG" "$TMP/follow-runs" 5 "$FOLLOW_RUNS"
    follow_args+=(--run "$TMP/follow-runs")
    follow_note+=", following $FOLLOW_RUNS runs (all ticked)"
  fi
fi
panel_args=()
for p in "${PANELS[@]}"; do panel_args+=(--panel "$p"); done
echo "attnlab frame benchmark: $(nproc) cores, ${SIZE} Xvfb, $FRAMES frames after 30 warm-up," \
  "$(basename "$CONFIG")${PANELS[*]:+, panels: ${PANELS[*]}}$follow_note, load $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq 1 "$RUNS"); do
  rm -rf "$TMP/run" && mkdir "$TMP/run"  # same first-launch layout every run
  ATTN_GUI_REPORT=$TMP/run/report.json xvfb-run -a -s "-screen 0 ${SIZE}x24" "$ATTNLAB" gui \
    --config "$CONFIG" --autostart --size "$SIZE" "${panel_args[@]}" "${follow_args[@]}" \
    --frames $((FRAMES + 31)) --frame-stats "$TMP/run/stats.json" --layout "$TMP/run/layout.ini" \
    >"$TMP/log" 2>&1 || { cat "$TMP/log" >&2; exit 1; }
  python3 - "$TMP/run/stats.json" "$TMP/run/report.json" "$run" "${PANELS[@]}" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
want = sys.argv[4:]
drawn = sorted(n for n, p in r["panels"].items() if p.get("drawn"))
missing = [p for p in want if p not in drawn]
if missing:
    sys.exit("run %s: %s not drawn (drawn: %s); not a benchmark of what was asked" % (
        sys.argv[3], ", ".join(missing), ", ".join(drawn)))
print("run %s: frame ms p50 %.2f  p99 %.2f  max %.2f  (mean %.2f, %d frames)   "
      "launch-to-first-frame %.0f ms   window %sx%s, %d tiles drawn: %s" % (
      sys.argv[3], s["frame_ms_p50"], s["frame_ms_p99"], s["frame_ms_max"], s["frame_ms_mean"],
      s["frames_measured"], s["launch_to_first_frame_ms"], r["window"][0], r["window"][1],
      len(drawn), ", ".join(drawn)))
PY
done
