#!/usr/bin/env bash
# GUI test: the window survives a hurried user and never loses more than a minute of a run
# (issue 46, finding 10). The real window under Xvfb, training live, driven with real mouse
# events (xdotool).
# usage: gui_survives.sh <path-to-attnlab>
# Checks:
#  1. Latest after scrubbing: five times, a click on the timeline's slider (scrub back) then one on
#     Latest, while the window trains and records views. The window stays alive (the Latest
#     button popped a style colour it had not pushed: ImGui's assertion aborted it, 5 of 5), and
#     closes with exit 0, its run whole (checkpoint, summary "window closed").
#  2. Periodic checkpoint: with --checkpoint-seconds 2, kill -9 the window after more than 2 s of
#     training: its run holds a checkpoint written within the last 2 s (+ slack) before the kill,
#     no summary, its metrics rows, and `attnlab train --resume` continues it to a finished run.
#  3. A fault while drawing (ATTN_TEST_DRAW_FAULT: ImGui's own assertion, an exception, a push
#     without its pop) in a panel and in the frame outside the panels, while training: the window
#     keeps running and says so on stderr, the run is saved (checkpoint/ appears, with the
#     periodic checkpoint off), training goes on (more metrics rows), the window closes with exit
#     0 and its report lists the fault.
set -uo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_survives.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
for tool in Xvfb xdotool python3; do need "$tool" scripts/setup.sh; done
ROOT=$TMP/runs

cat >"$TMP/live.json" <<'JSON'
{"name": "live", "seed": 3, "threads": 1, "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 1},
 "train": {"steps": 100000000, "batch_size": 4, "warmup": 5, "eval_every": 20, "eval_batches": 1,
           "record_every": 25}}
JSON

json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2:]: d=d[k]
print(d)' "$@" 2>/dev/null; }
rows() { [[ -f $1/metrics.csv ]] && echo $(($(wc -l <"$1/metrics.csv") - 1)) || echo 0; }
# the_run: the one run directory the window made under $ROOT.
the_run() { compgen -G "$ROOT/live-*" | head -n1; }
report_has() {
  python3 - "$1" "$2" <<'PY' 2>/dev/null
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
start_xvfb
# launch NAME ARGS...: the window in the background, training (report $TMP/NAME.json, stdout and
# stderr $TMP/NAME.log, runs under a fresh $ROOT); waits for its window and focuses it.
launch() {
  local name=$1
  shift
  rm -rf "$ROOT"
  ATTN_GUI_REPORT=$TMP/$name.json "$ATTNLAB" gui --config "$TMP/live.json" --size 1280x720 \
    --layout "$TMP/layout.ini" --runs-dir "$ROOT" --panel loss "$@" >"$TMP/$name.log" 2>&1 &
  APP_PID=$!
  wait_window
}
# click X Y: a real left click at window pixel (X, Y), press and release a few frames apart.
click() {
  xdo mousemove --window "$WIN" "$1" "$2"
  sleep 0.2 && xdo mousedown 1 && sleep 0.15 && xdo mouseup 1 && sleep 0.3
}

# --- 1. Latest after scrubbing ---------------------------------------------------------------
# Where the timeline draws Latest and its slider at 1280x720 (the same in every frame).
ATTN_GUI_REPORT=$TMP/where.json timeout 120 "$ATTNLAB" gui --config "$TMP/live.json" \
  --size 1280x720 --layout "$TMP/layout.ini" --runs-dir "$TMP/probe-runs" --panel loss \
  --frames 20 >"$TMP/log" 2>&1 || fatal "the window did not run 20 frames: $(tail -3 "$TMP/log")"
read -r lx ly sx sy sw < <(python3 - "$TMP/where.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["timeline"]
l, s = t["latest_rect"], t["slider_rect"]
print(int(l[0] + l[2] / 2), int(l[1] + l[3] / 2), int(s[0]), int(s[1] + s[3] / 2), int(s[2]))
PY
)
check "the report places Latest ($lx,$ly) and the slider (x $sx, width $sw)" \
  test "${lx:-0}" -gt 0 -a "${sw:-0}" -gt 100
launch latest --autostart
wait_until 300 0.1 eval '[[ -n $(the_run) ]] && (($(rows "$(the_run)") >= 5))' ||
  fatal "the window recorded no rows: $(tail -3 "$TMP/latest.log")"
RUN=$(the_run)
for i in 1 2 3 4 5; do
  click $((sx + sw * i / 8)) "$sy"  # scrub back to a recorded step
  click "$lx" "$ly"                 # and Latest again
  if ! alive; then break; fi
done
check "after 5 x (scrub, Latest) the window is still alive" alive
click $((sx + sw / 4)) "$sy"  # a last scrub, which the report shows
close_app
check "it closes with exit 0 (got $rc)" test "$rc" = 0
check "with no drawing fault caught on the way" \
  report_has "$TMP/latest.json" 'r["draw_faults"] == []'
check "the report shows the last scrub (not Latest, at a recorded step)" \
  report_has "$TMP/latest.json" 'not r["timeline"]["latest"] and r["timeline"]["step"] in r["timeline"]["steps"]'
check "the run is whole: checkpoint, summary 'window closed'" \
  test -f "$RUN/checkpoint/state.json" -a "$(json_get "$RUN/summary.json" interrupted_by)" = "window closed"

# --- 2. kill -9 after more than the checkpoint interval ---------------------------------------
launch killed --autostart --checkpoint-seconds 2
wait_until 300 0.1 eval '[[ -n $(the_run) ]]' || fatal "the window made no run"
RUN=$(the_run)
wait_until 300 0.1 test -f "$RUN/checkpoint/state.json" ||
  bad "no checkpoint within 30 s of training with --checkpoint-seconds 2"
sleep 3.5
check "the window trains on (alive, no summary: never paused)" test ! -e "$RUN/summary.json"
kill -KILL "$APP_PID"
killed_at=$(date +%s.%N)
wait "$APP_PID" 2>/dev/null
APP_PID=""
age=$(python3 -c 'import os,sys; print(float(sys.argv[1]) - os.stat(sys.argv[2]).st_mtime)' \
  "$killed_at" "$RUN/checkpoint/state.json" 2>/dev/null || echo 999)
check "kill -9 left a checkpoint written ${age}s before the kill (interval 2 s, slack 1.5 s)" \
  python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 3.5 else 1)' "$age"
check "and no summary (an unfinished run)" test ! -e "$RUN/summary.json"
step=$(json_get "$RUN/checkpoint/state.json" step)
check "the checkpoint is past step 0 (step ${step:-none}) with its metrics rows ($(rows "$RUN"))" \
  test "${step:-0}" -gt 0 -a "$(rows "$RUN")" -ge $((${step:-0} / 20))
rc=0
"$ATTNLAB" train --resume "$RUN" --until $((${step:-0} + 40)) -q >"$TMP/resume.log" 2>&1 || rc=$?
check "train --resume continues it (exit $rc): $(tail -2 "$TMP/resume.log" | tr '\n' ' ')" test "$rc" = 0
check "to step $((${step:-0} + 40)), checkpointed with a summary" \
  test "$(json_get "$RUN/checkpoint/state.json" step)" = $((${step:-0} + 40)) -a -f "$RUN/summary.json"

# --- 3. Faults while drawing -------------------------------------------------------------------
for fault in loss:assert loss:throw loss:leak frame:assert frame:leak; do
  ATTN_TEST_DRAW_FAULT=$fault launch "fault-${fault/:/-}" --autostart --checkpoint-seconds 0
  log=$TMP/fault-${fault/:/-}.log
  wait_until 300 0.1 grep -q "a drawing error was caught" "$log" ||
    bad "$fault: no fault caught within 30 s: $(tail -3 "$log")"
  RUN=$(the_run)
  sleep 1
  check "$fault: the window is alive after the fault" alive
  wait_until 100 0.1 test -f "$RUN/checkpoint/state.json" ||
    bad "$fault: the run was not saved after the fault (no checkpoint/ in ${RUN:-no run})"
  r0=$(rows "$RUN")
  wait_until 300 0.1 eval '(($(rows "$RUN") > r0 + 2))' ||
    bad "$fault: training stopped after the fault (rows $r0 -> $(rows "$RUN"))"
  check "$fault: still alive 2 s on" eval 'sleep 1 && alive'
  close_app
  check "$fault: closes with exit 0 (got $rc)" test "$rc" = 0
  check "$fault: its report lists the fault" \
    report_has "$TMP/fault-${fault/:/-}.json" 'len(r["draw_faults"]) == 1 and r["draw_fault_saves"] == 1'
  check "$fault: and the run ends whole (summary 'window closed')" \
    test "$(json_get "$RUN/summary.json" interrupted_by)" = "window closed"
done
finish
