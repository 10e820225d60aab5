#!/usr/bin/env bash
# GUI interaction test: the real window under its own Xvfb, driven with xdotool (XTEST input).
# usage: gui_interact.sh <path-to-attnlab> <config.json>
# Checks: Space pauses (Ctrl+S saves 1.5 s apart hold one step), S steps exactly once, Space
# resumes; paused and minimised, the app is alive, idle and stops drawing, and answers Ctrl+S once
# restored; the splitter under the Loss tile, dragged with real mouse events, resizes the Loss
# panel by the drag (the exit report's rects), the workspace layout (layout.json) keeps it on a
# graceful close and the next launch restores it, not the default; a 1x1 window (X11 has no 0x0)
# is survived.
# Bare Xvfb has no window manager, so `wm` (lib.sh, libX11 via ctypes) plays its part: it sends
# WM_DELETE_WINDOW (`xdotool windowclose` destroys the window under the client instead), and
# iconifies/restores as a WM does, unmap + WM_STATE, which GLFW reads for GLFW_ICONIFIED
# (`xdotool windowminimize` only asks a WM to). The app runs without --frames: --frames is the
# benchmark mode (unpaced, no vsync), not the pacing a user gets.
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_interact.sh <attnlab> <config.json>}")
CONFIG=$(realpath "${2:?usage: gui_interact.sh <attnlab> <config.json>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP  # cd there: what the window writes lands in here
for tool in Xvfb xdotool python3; do need "$tool" scripts/setup.sh; done

# shellcheck disable=SC2317  # called through check
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# The given config with room for a million steps: the run must not finish during the test.
python3 - "$CONFIG" "$TMP/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c.setdefault("train", {})["steps"] = 1000000
json.dump(c, open(sys.argv[2], "w"))
PY
# Ctrl+S saves into the directory typed in the Save field (ATTN_GUI_SAVE_DIR types it): a fresh
# one per launch, since a window never saves over a run another window wrote.
SAVES=0 CKPT=""

# One Xvfb for the whole test (-displayfd picks a free display).
start_xvfb

# Every xdotool call (xdo) is bounded and never ends the script: a failure shows in the checks.
key() { xdo key --window "$WIN" "$@"; }
launch() {  # launch ARGS...: attnlab gui in the background; wait for its window, focus it
  if [[ -n $APP_PID ]] && alive; then kill -KILL "$APP_PID"; fi  # left over from a failure
  SAVES=$((SAVES + 1)) CKPT=$TMP/saves/$SAVES/checkpoint
  ATTN_GUI_SAVE_DIR=$TMP/saves/$SAVES "$ATTNLAB" gui --config "$TMP/config.json" "$@" \
    >"$TMP/log" 2>&1 &
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
# split_ratio LAYOUT_JSON PANEL: the ratio of the rows split whose upper side (a) holds PANEL's
# tile, from a workspace layout file; nothing if there is none.
split_ratio() {
  python3 - "$1" "$2" <<'PY' 2>/dev/null || true
import json, sys
def holds(n, p):
    return p in n.get("tabs", []) if "tile" in n else holds(n["a"], p) or holds(n["b"], p)
def find(n, p):
    if "split" not in n:
        return None
    if n["split"] == "rows" and holds(n["a"], p):
        return n["ratio"]
    return find(n["a"], p) if holds(n["a"], p) else find(n["b"], p)
ratio = find(json.load(open(sys.argv[1]))["root"], sys.argv[2])
if ratio is not None:
    print(ratio)
PY
}

# 1. A short first launch shows where the Loss and Attention panels start (the exit report's
#    rects: window pixels of each panel's content, below its tile's tab bar).
rc=0
ATTN_GUI_REPORT=$TMP/default.json.out timeout 60 "$ATTNLAB" gui --config "$TMP/config.json" \
  --frames 5 --layout "$TMP/default.ini" >"$TMP/log" 2>&1 || rc=$?
loss0=$(report_region "$TMP/default.json.out" loss)
att0=$(report_region "$TMP/default.json.out" attention)
check "first launch draws Loss at ${loss0:-?} above Attention at ${att0:-?} (exit $rc)" \
  test "$rc" = 0 -a -n "$loss0" -a -n "$att0"
ratio0=$(split_ratio "$TMP/default.json" loss)
check "first launch writes default.json with the Loss tile's split (ratio ${ratio0:-?})" \
  test -n "$ratio0"

# 2. Space pauses, S steps once, Space resumes. First wait until training has really begun.
ATTN_GUI_REPORT=$TMP/session.json launch --autostart --layout "$TMP/layout.ini"
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

# 4. Drag the horizontal splitter between the Loss tile (top) and the tile below it 80 px down
#    with real mouse events (XTEST), close gracefully: Loss is 80 px taller in the last frame,
#    the layout file keeps the new split, and a relaunch restores it rather than the default.
#    The splitter is the tiles' 6 px gap just below the Loss tile, whose content (the report's
#    rect) ends at the tile's 4 px padding: rows loss bottom + 4 .. + 10; we grab its middle.
IFS=, read -r lx ly lw lh <<<"${loss0:-0,0,0,0}"
IFS=, read -r ax ay aw ah <<<"${att0:-0,0,0,0}"
DY=80 sx=$((lx + lw / 2)) sy=$((ly + lh + 7))
check "the splitter row $sy lies in the gap between Loss (bottom $((ly + lh))) and Attention (top $ay), x $sx over both" \
  test "$sy" -gt $((ly + lh)) -a "$sy" -lt "$ay" -a "$sx" -gt "$ax" -a "$sx" -lt $((ax + aw))
xdo mousemove --window "$WIN" "$sx" "$sy"
sleep 0.3 && xdo mousedown 1 && sleep 0.3
for i in 1 2 3 4; do  # in steps, a few frames apart
  xdo mousemove --window "$WIN" "$sx" $((sy + DY * i / 4)) && sleep 0.15
done
sleep 0.3 && xdo mouseup 1 && sleep 0.5
close_app
check "closing the window (WM_DELETE_WINDOW) quits with exit 0 (got $rc)" test "$rc" = 0
loss1=$(report_region "$TMP/session.json" loss)
att1=$(report_region "$TMP/session.json" attention)
IFS=, read -r _ ly1 _ lh1 <<<"${loss1:-0,0,0,0}"
IFS=, read -r _ ay1 _ ah1 <<<"${att1:-0,0,0,0}"
check "the drag resized Loss: ${loss0:-?} -> ${loss1:-?} (want the height +$DY +-2, same top)" \
  test -n "$loss1" -a "$ly1" = "$ly" -a $((lh1 - lh - DY)) -ge -2 -a $((lh1 - lh - DY)) -le 2
check "and Attention below it gave up the room: ${att0:-?} -> ${att1:-?}" \
  test -n "$att1" -a $((ay1 - ay - DY)) -ge -2 -a $((ay1 - ay - DY)) -le 2 \
  -a $((ah - ah1 - DY)) -ge -2 -a $((ah - ah1 - DY)) -le 2
ratio1=$(split_ratio "$TMP/layout.json" loss)
check "layout.json kept the dragged split: ratio ${ratio0:-?} -> ${ratio1:-?}" \
  awk -v a="${ratio0:-0}" -v b="${ratio1:-0}" 'BEGIN { exit !(b > a + 0.05) }'
rc=0
ATTN_GUI_REPORT=$TMP/relaunch.json timeout 60 "$ATTNLAB" gui --config "$TMP/config.json" \
  --frames 30 --layout "$TMP/layout.ini" >"$TMP/log" 2>&1 || rc=$?
check "relaunch with the saved layout exits 0 (got $rc)" test "$rc" = 0
loss2=$(report_region "$TMP/relaunch.json" loss)
check "relaunch restored the layout: Loss at ${loss1:-?} (got ${loss2:-?})" \
  test -n "$loss1" -a "$loss2" = "$loss1"
check "the restored Loss is not the first launch's ${loss0:-?}" test "$loss2" != "$loss0"

# 5. A 1x1 window, in a launch of its own (its layout file squeezed to 1x1 must not spoil the
#    checks above).
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
