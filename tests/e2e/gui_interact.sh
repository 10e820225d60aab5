#!/usr/bin/env bash
# GUI interaction test: the real window under its own Xvfb, driven with xdotool (XTEST input).
# usage: gui_interact.sh <path-to-attnlab> <config.json>
# Checks: Space pauses (Ctrl+S saves 1.5 s apart hold one step), S steps exactly once, Space
# resumes; paused and minimised, the app is alive, idle and stops drawing, and answers Ctrl+S once
# restored; a dragged Loss panel is saved on a graceful close and restored, not reset, on the next
# launch; a 1x1 window (X11 has no 0x0) is survived.
# Bare Xvfb has no window manager, so `wm` (lib.sh, libX11 via ctypes) plays its part: it sends
# WM_DELETE_WINDOW (`xdotool windowclose` destroys the window under the client instead), and
# iconifies/restores as a WM does, unmap + WM_STATE, which GLFW reads for GLFW_ICONIFIED
# (`xdotool windowminimize` only asks a WM to). The app runs without --frames: --frames is the
# benchmark mode (unpaced, no vsync), not the pacing a user gets.
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_interact.sh <attnlab> <config.json>}")
CONFIG=$(realpath "${2:?usage: gui_interact.sh <attnlab> <config.json>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP  # cd there: checkpoints (runs/gui-<name>/checkpoint) land in here
for tool in Xvfb xdotool python3; do need "$tool" scripts/setup.sh; done

# shellcheck disable=SC2317  # called through check
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# The given config with room for a million steps: the run must not finish during the test.
NAME=$(python3 - "$CONFIG" "$TMP/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c.setdefault("train", {})["steps"] = 1000000
json.dump(c, open(sys.argv[2], "w"))
print(c.get("name", "experiment"))
PY
)
CKPT=$TMP/runs/gui-$NAME/checkpoint

# One Xvfb for the whole test (-displayfd picks a free display).
start_xvfb

# Every xdotool call (xdo) is bounded and never ends the script: a failure shows in the checks.
key() { xdo key --window "$WIN" "$@"; }
launch() {  # launch ARGS...: attnlab gui in the background; wait for its window, focus it
  if [[ -n $APP_PID ]] && alive; then kill -KILL "$APP_PID"; fi  # left over from a failure
  "$ATTNLAB" gui --config "$TMP/config.json" "$@" >"$TMP/log" 2>&1 &
  APP_PID=$!
  wait_window
}
# Ctrl+S, then the step in the fresh checkpoint (-1: none within 15 s). A save swaps the finished
# directory into place, so a state.json there is complete.
save_step() {
  rm -rf "$CKPT"
  key ctrl+s
  for _ in $(seq 150); do
    alive || break
    if [[ -f $CKPT/state.json ]] && python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["step"])' "$CKPT/state.json" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo -1
}
cpu_pct() {  # % of one core used over the next 3 s: utime + stime, fields 14-15 of /proc/PID/stat
  local t0 t1 w0 w1
  ticks() { sed 's/.*) //' "/proc/$APP_PID/stat" | awk '{ print $12 + $13 }'; }
  t0=$(ticks) w0=$(date +%s.%N)
  sleep 3
  t1=$(ticks) w1=$(date +%s.%N)
  awk -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v w0="$w0" -v w1="$w1" \
    'BEGIN { printf "%.1f", 100 * t / hz / (w1 - w0) }'
}
loss_pos() {  # "x,y" of [Window][Loss] in a layout file
  awk '/^\[/ { in_loss = ($0 == "[Window][Loss]") } in_loss && /^Pos=/ { sub("Pos=", ""); print }' "$1"
}

# 1. A short first launch shows where the Loss panel starts (ImGui writes the layout at exit, or
#    5 s after a change, and the first placement is none).
rc=0
timeout 60 "$ATTNLAB" gui --config "$TMP/config.json" --frames 5 --layout "$TMP/default.ini" \
  >"$TMP/log" 2>&1 || rc=$?
pos0=$(loss_pos "$TMP/default.ini" 2>/dev/null) || true
check "first launch places the Loss panel at ${pos0:-?} (exit $rc)" test "$rc" = 0 -a -n "$pos0"

# 2. Space pauses, S steps once, Space resumes. First wait until training has really begun.
launch --autostart --layout "$TMP/layout.ini"
s0=-1 deadline=$((SECONDS + 60))
while ((s0 < 1 && SECONDS < deadline)) && alive; do
  s0=$(save_step)
  sleep 0.5
done
check "training runs after --autostart (step $s0 at the first save)" test "$s0" -ge 1
((s0 >= 1)) || finish  # everything below needs working saves
key space
sleep 1
a=$(save_step)
sleep 1.5
b=$(save_step)
check "Ctrl+S saves a checkpoint (step $a)" test "$a" -ge 1
check "Space pauses: step holds at $a 1.5 s later (got $b)" test "$a" -eq "$b"
key s
c=$(save_step)
check "S steps exactly once ($b -> $c)" test "$c" -eq $((b + 1))
key space
sleep 2
d=$(save_step)
for _ in $(seq 10); do  # a loaded machine may be slower: 10 s more at most
  if ((d > c)) || ! alive; then break; fi
  sleep 1 && d=$(save_step)
done
check "Space resumes: step $c -> $d" test "$d" -gt "$c"

# 3. Paused, then minimised: alive, idle, not drawing; restored: Ctrl+S answers, same step.
key space
sleep 1
p=$(save_step)
visible=$(cpu_pct)
wm iconify "$WIN"
sleep 0.5
minimised=$(cpu_pct)
check "minimised and paused: ${minimised}% of a core (< 10%)" below "$minimised" 10
check "minimised, it stops drawing: ${minimised}% vs ${visible}% paused on screen" \
  below "$(awk -v m="$minimised" 'BEGIN { print 2 * m }')" "$visible"
check "alive while minimised" alive
wm restore "$WIN"
timeout 10 xdotool search --sync --onlyvisible --name '^attnlab$' >/dev/null || true
xdo windowfocus --sync "$WIN"
q=$(save_step)
check "restored: Ctrl+S answers, still paused (step $p -> $q)" test "$p" -ge 1 -a "$q" -eq "$p"

# 4. Drag the Loss panel by its title bar, close gracefully: the layout file keeps the move, and
#    a relaunch restores it rather than placing the panels afresh.
IFS=, read -r x0 y0 <<<"${pos0:-0,0}"
DX=120 DY=80
xdo mousemove --window "$WIN" $((x0 + 150)) $((y0 + 8))
sleep 0.3 && xdo mousedown 1 && sleep 0.3
for i in 1 2 3 4; do  # in steps, a few frames apart
  xdo mousemove --window "$WIN" $((x0 + 150 + DX * i / 4)) $((y0 + 8 + DY * i / 4)) && sleep 0.15
done
sleep 0.3 && xdo mouseup 1 && sleep 0.5
close_app
check "closing the window (WM_DELETE_WINDOW) quits with exit 0 (got $rc)" test "$rc" = 0
pos1=$(loss_pos "$TMP/layout.ini" 2>/dev/null) || true
check "layout saved the dragged Loss panel: ${pos0:-?} -> ${pos1:-?} (want $((x0 + DX)),$((y0 + DY)))" \
  test "$pos1" = "$((x0 + DX)),$((y0 + DY))"
rc=0
timeout 60 "$ATTNLAB" gui --config "$TMP/config.json" --frames 30 --layout "$TMP/layout.ini" \
  >"$TMP/log" 2>&1 || rc=$?
check "relaunch with the saved layout exits 0 (got $rc)" test "$rc" = 0
pos2=$(loss_pos "$TMP/layout.ini" 2>/dev/null) || true
check "relaunch restored the layout: Loss stays at ${pos1:-?} (got ${pos2:-?})" \
  test -n "$pos1" -a "$pos2" = "$pos1"

# 5. A 1x1 window, in a launch of its own: ImGui pulls every panel into so small a display
#    (to -18,-18) and keeps them there, which would spoil the layout checks above.
launch --layout "$TMP/resize.ini"
xdo windowsize --sync "$WIN" 1 1
sleep 1
check "survives a 1x1 resize" alive
xdo windowsize --sync "$WIN" 1280 800
sleep 0.5
r=$(save_step)
check "back at 1280x800: Ctrl+S answers (step $r, never started)" test "$r" -eq 0
close_app
check "then closes with exit 0 (got $rc)" test "$rc" = 0
finish
