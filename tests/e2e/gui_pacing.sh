#!/usr/bin/env bash
# GUI test: the interactive window paces itself (issue 50, item 4; gui/window/frame_pacer.h). The
# real window under Xvfb (no vsync there: only the pacer's cap and its no-redraw rule hold it
# back), without --frames, closed as a window manager closes it; frames counted by --frame-stats
# (presents) and the exit report's "pacing". No timing of speed is asserted: only how many frames
# were drawn for what happened, against the process's own lifetime.
# usage: gui_pacing.sh <path-to-attnlab>
# Checks:
#  1. Paused, no input, ~8 s: the first frames and one safety redraw a second, so frames <=
#     lifetime + 12 (the loop before pacing drew 4 a second when idle and 60 when active).
#  2. Training, no input, ~6 s: each new snapshot (published at most every 100 ms) drawn once:
#     frames <= snapshots drawn + 12 and <= 15 a second of lifetime + 12 (an unpaced or
#     display-rate loop draws 60 a second: Xvfb has no vsync); snapshots drawn >= 10.
#  3. Input wakes it: while paused, Space (a key press, then its frames) starts training: the
#     report counts input frames, and the run trained (its summary has steps > 0).
#  4. --frames N keeps its meaning: N frames drawn, unpaced (tests and frame benchmarks).
set -uo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_pacing.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
for tool in Xvfb xdotool python3; do need "$tool" scripts/setup.sh; done

cat >"$TMP/live.json" <<'JSON'
{"name": "live", "seed": 3, "threads": 1, "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 1},
 "train": {"steps": 100000000, "batch_size": 4, "warmup": 5, "eval_every": 50, "eval_batches": 1}}
JSON

start_xvfb
# run_for NAME SECONDS ARGS...: the window for SECONDS after it appears, then closed; sets
# $LIFETIME (seconds from launch to exit) and rc.
run_for() {
  local name=$1 seconds=$2 t0
  shift 2
  t0=$(date +%s.%N)
  ATTN_GUI_REPORT=$TMP/$name.json "$ATTNLAB" gui --config "$TMP/live.json" --size 640x480 \
    --layout "$TMP/$name.ini" --runs-dir "$TMP/$name-runs" --frame-stats "$TMP/$name-stats.json" \
    "$@" >"$TMP/$name.log" 2>&1 &
  APP_PID=$!
  wait_window
  [[ -n ${ON_WINDOW:-} ]] && $ON_WINDOW
  sleep "$seconds"
  close_app
  LIFETIME=$(python3 -c "import time; print(time.time() - $t0)")
  cp "$TMP/$name.log" "$TMP/log"
  [[ $rc == 0 ]] || fail "$name: the window did not close with exit 0 (rc $rc)"
}
# pacing NAME EXPR WHAT: EXPR over f (frames presented), p (the report's pacing), L (lifetime).
pacing() {
  python3 - "$TMP/$1-stats.json" "$TMP/$1.json" "$LIFETIME" "$2" <<'PY' &&
import json, sys
f = json.load(open(sys.argv[1]))["frames"]
p = json.load(open(sys.argv[2]))["pacing"]
L = float(sys.argv[3])
print("  frames %d in %.1f s; pacing %s" % (f, L, json.dumps(p)))
sys.exit(0 if eval(sys.argv[4]) else 1)
PY
    ok "$3" || bad "$3"
}

run_for paused 8
pacing paused 'p["paced"] and f <= L + 12 and p["by_reason"]["snapshot"] <= 2' \
  "paused, no input: $(python3 -c "import json; print(json.load(open('$TMP/paused-stats.json'))['frames'])") frames in ${LIFETIME%.*} s (at most one a second after the first)"

run_for training 6 --autostart
pacing training 'p["snapshots_drawn"] >= 10 and f <= p["snapshots_drawn"] + 12 and f <= 15 * L + 12' \
  "training, no input: one frame per new snapshot, far below the display's rate"

press_space() { sleep 2; xdo key --window "$WIN" space; }
ON_WINDOW=press_space run_for input 3
pacing input 'p["by_reason"]["input"] >= 1' "a key press wakes the paused window"
check "the key press was handled (Space started training)" python3 -c "
import json, glob, sys
s = glob.glob('$TMP/input-runs/*/summary.json')
sys.exit(0 if s and json.load(open(s[0]))['steps'] > 0 else 1)"

ATTN_GUI_REPORT=$TMP/frames.json run_xvfb --config "$TMP/live.json" --size 640x480 \
  --layout "$TMP/frames.ini" --runs-dir "$TMP/frames-runs" --frames 40 \
  --frame-stats "$TMP/frames-stats.json" || fail "--frames 40 failed"
LIFETIME=1
pacing frames 'f == 40 and not p["paced"] and p["frames_begun"] == 40' \
  "--frames 40: 40 frames drawn, unpaced"
finish
