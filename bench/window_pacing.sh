#!/usr/bin/env bash
# Training in the window against headless (issue 50, item 4): steps/s of the same config trained
# by `attnlab train` (A) and by the interactive window (B: paced as a user gets it, no --frames),
# in alternating rounds A B A B ..., best of each side; idle, then with one core kept busy by a
# spinning process (each side compared under the same load). Not a test: it asserts nothing and
# prints the ratios. Steps/s is summary.json's steps_per_second (steps / training seconds, the
# evaluations and recording included) on both sides. The window runs under one Xvfb server
# (software GL where the machine has no GPU driver), from a fresh layout (the config's default
# tiles), and is closed with SIGTERM (the normal close) once its run's summary.json is written.
# usage: bench/window_pacing.sh [--size WxH] [--rounds N] [--steps N] [--loads "0 1"]
#                               [attnlab=build/app/attnlab] [config=assets/configs/copy.json]
#   --loads  the loads to measure: spinning processes kept busy beside both sides (default "0 1")
# e.g. bench/window_pacing.sh --rounds 3 build/app/attnlab assets/configs/copy.json
set -euo pipefail

SIZE=1920x1080 ROUNDS=3 STEPS="" LOADS="0 1"
while [[ ${1:-} == --* ]]; do
  case $1 in
    --size) SIZE=${2:?--size needs WxH}; shift 2 ;;
    --rounds) ROUNDS=${2:?--rounds needs a count}; shift 2 ;;
    --steps) STEPS=${2:?--steps needs a count}; shift 2 ;;
    --loads) LOADS=${2:?--loads needs a list}; shift 2 ;;
    *) echo "window_pacing.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $SIZE =~ ^[0-9]+x[0-9]+$ ]] || { echo "window_pacing.sh: --size must look like 1920x1080" >&2; exit 2; }
ATTNLAB=$(realpath "${1:-build/app/attnlab}")
CONFIG=$(realpath "${2:-assets/configs/copy.json}")
for tool in Xvfb python3; do
  command -v $tool >/dev/null || { echo "window_pacing.sh: needs $tool" >&2; exit 2; }
done
set_args=()
[[ -n $STEPS ]] && set_args=(--set "train.steps=$STEPS")

TMP=$(mktemp -d)
XVFB_PID="" SPIN_PIDS=()
cleanup() {
  for p in "${SPIN_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -n $XVFB_PID ]] && kill "$XVFB_PID" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

# One X server for every window round (a display number no other server holds).
for n in $(seq 90 130); do [[ -e /tmp/.X$n-lock ]] || { DISP=:$n; break; }; done
Xvfb "$DISP" -screen 0 "$((${SIZE%x*} + 80))x$((${SIZE#*x} + 120))x24" -nolisten tcp \
  >"$TMP/xvfb.log" 2>&1 &
XVFB_PID=$!
sleep 1

steps_per_s() {  # summary.json -> steps_per_second
  python3 -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["steps_per_second"])' "$1"
}

headless() {  # prints steps/s
  rm -rf "$TMP/h"
  "$ATTNLAB" train --config "$CONFIG" "${set_args[@]}" --out "$TMP/h" >"$TMP/h.log" 2>&1 ||
    { cat "$TMP/h.log" >&2; exit 1; }
  steps_per_s "$TMP/h/summary.json"
}

window() {  # prints steps/s, and the frames the window drew (from --frame-stats)
  rm -rf "$TMP/w" && mkdir -p "$TMP/w/home"
  HOME=$TMP/w/home XDG_CONFIG_HOME=$TMP/w/home/xdg DISPLAY=$DISP "$ATTNLAB" gui \
    --config "$CONFIG" "${set_args[@]}" --autostart --size "$SIZE" --layout "$TMP/w/layout.ini" \
    --runs-dir "$TMP/w/runs" --frame-stats "$TMP/w/stats.json" >"$TMP/w.log" 2>&1 &
  local pid=$! summary=""
  for _ in $(seq 1 1200); do  # at most 120 s
    summary=$(find "$TMP/w/runs" -name summary.json 2>/dev/null | head -1)
    [[ -n $summary ]] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  kill -TERM $pid 2>/dev/null || true
  wait $pid || true
  [[ -n $summary ]] || { cat "$TMP/w.log" >&2; echo "window_pacing.sh: the window's run did not finish" >&2; exit 1; }
  echo "$(steps_per_s "$summary") $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["frames"])' "$TMP/w/stats.json")"
}

echo "attnlab window pacing benchmark: $(nproc) cores, $(basename "$CONFIG")${STEPS:+ (train.steps=$STEPS)}," \
  "window ${SIZE} on Xvfb (Mesa's software GL), $ROUNDS rounds A B A B, best of each, $(date -u +%F)"
echo "A = attnlab train (headless), B = attnlab gui --autostart (the paced window, closed when the run finishes)"
for load in $LOADS; do
  for _ in $(seq 1 "$load"); do sh -c 'while :; do :; done' & SPIN_PIDS+=($!); done
  sleep 1
  best_a=0 best_b=0 line=""
  for r in $(seq 1 "$ROUNDS"); do
    a=$(headless)
    read -r b frames <<<"$(window)"
    line+=" $a/$b"
    best_a=$(python3 -c "print(max($best_a, $a))")
    best_b=$(python3 -c "print(max($best_b, $b))")
    echo "  busy $load, round $r: headless $a steps/s, window $b steps/s ($frames frames drawn)," \
      "loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
  done
  for p in "${SPIN_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${SPIN_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  SPIN_PIDS=()
  python3 -c "print('busy cores %s: best headless %.1f, best window %.1f steps/s: window/headless %.2fx' % ('$load', $best_a, $best_b, $best_b / $best_a))"
done
