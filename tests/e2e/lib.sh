# Shared plumbing of the end-to-end scripts in this folder; source it, never run it:
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# It sets no shell options (the CLI scripts run under `set -u`, the GUI ones under
# `set -euo pipefail`) and defines nothing but the helpers below and the variables they share:
# E2E_DIR, E2E_NAME, E2E_TMP, passes, fails, XVFB_RUN, and APP_PID, XVFB_PID, WIN, rc.

# E2E_DIR: this folder, absolute (png_stats.py lives here); E2E_NAME: the running script, no .sh.
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_NAME=$(basename "$0" .sh)
E2E_TMP="" APP_PID="" XVFB_PID=""
passes=0 fails=0

# --- temporary directory and cleanup --------------------------------------------------------

# new_tmpdir: sets $E2E_TMP to a fresh temporary directory, removed at exit (e2e_cleanup).
new_tmpdir() {
  E2E_TMP=$(mktemp -d)
  trap e2e_cleanup EXIT
}
# e2e_cleanup: the EXIT trap: kills $APP_PID and $XVFB_PID if still running, removes $E2E_TMP.
# shellcheck disable=SC2317  # called by the trap
e2e_cleanup() {
  if [[ -n $APP_PID ]] && kill -0 "$APP_PID" 2>/dev/null; then kill -KILL "$APP_PID"; fi
  if [[ -n $XVFB_PID ]] && kill -0 "$XVFB_PID" 2>/dev/null; then kill "$XVFB_PID"; fi
  if [[ -n $E2E_TMP ]]; then rm -rf "$E2E_TMP"; fi
}
# tiny_config FILE [STEPS [EVAL_EVERY [WARMUP]]]: the CLI scripts' copy model (d_model 16, one
# layer, one thread), 400 steps with an evaluation every 50 unless given.
tiny_config() {
  cat >"$1" <<J
{"name": "tiny", "seed": 1, "threads": 1, "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 1},
 "train": {"steps": ${2:-400}, "batch_size": 4, "warmup": ${4:-20}, "eval_every": ${3:-50}, "eval_batches": 1}}
J
}
# cli_tmpdir: new_tmpdir, cd into it as $work, and require python3 (the JSON checks).
cli_tmpdir() {
  new_tmpdir
  work=$E2E_TMP
  cd "$work" || exit 1
  need python3 "scripts/setup.sh installs it"
}
# gui_tmpdir: new_tmpdir, then cd into it and point XDG_CONFIG_HOME and XDG_DATA_HOME inside it,
# so what the app writes (runs/, checkpoints, its default layout, the runs the window records
# under $XDG_DATA_HOME/attnlab/runs) never leaves the directory.
gui_tmpdir() {
  new_tmpdir
  cd "$E2E_TMP" || exit 1
  export XDG_CONFIG_HOME=$E2E_TMP/xdg XDG_DATA_HOME=$E2E_TMP/xdg-data
}

# --- counting checks ------------------------------------------------------------------------

# ok WHAT / bad WHAT: count a passed / failed check and print "ok   WHAT" / "FAIL WHAT".
ok()  { passes=$((passes + 1)); echo "ok   $*"; }
bad() { fails=$((fails + 1)); echo "FAIL $*"; }
# check WHAT CMD...: runs CMD; ok WHAT if it succeeds, bad WHAT if not.
check() {
  if "${@:2}"; then ok "$1"; else bad "$1"; fi
}
# shellcheck disable=SC2120  # LABEL is optional
# summary [LABEL]: prints "[LABEL: ]P passed, F failed"; returns 0 only when nothing failed.
summary() {
  echo "${1:+$1: }$passes passed, $fails failed"
  [ "$fails" = 0 ]
}
# finish: ends a script that counts checks: shows $E2E_TMP/log after any FAIL, then
# "E2E_NAME: P passed, F failed", and exits 1 if anything failed, else 0.
finish() {
  if ((fails > 0)) && [[ -f $E2E_TMP/log ]]; then sed 's/^/  | /' "$E2E_TMP/log"; fi
  echo "$E2E_NAME: $passes passed, $fails failed"
  exit $((fails > 0))
}
# in_background NAME CMD...: runs CMD... (checks that print ok/FAIL lines) in a background
# subshell, its output to $E2E_TMP/bg.NAME, so that two one-core pieces of a script use both cores
# of a small CI machine. The subshell's counts are lost: collect NAME counts its lines instead.
in_background() {
  local name=$1
  shift
  ("$@"; : >"$E2E_TMP/bg.$name.done") >"$E2E_TMP/bg.$name" 2>&1 &
}
# collect NAME...: waits for every background job, then prints each NAME's lines and adds its
# ok and FAIL lines to passes and fails; a NAME that did not finish (fatal, a kill) is a FAIL.
collect() {
  local name line
  wait
  for name in "$@"; do
    while IFS= read -r line; do
      echo "$line"
      case $line in
        "ok   "*) passes=$((passes + 1)) ;;
        "FAIL "*) fails=$((fails + 1)) ;;
      esac
    done <"$E2E_TMP/bg.$name"
    [[ -f $E2E_TMP/bg.$name.done ]] || bad "$name: the background checks did not finish"
  done
}
# fatal WHAT: a failed check after which nothing can go on: bad WHAT, then finish.
fatal() { bad "$*"; finish; }
# fail WHAT: ends a stop-at-first-failure script: "E2E_NAME: FAIL: WHAT" and $E2E_TMP/log on
# stderr, exit 1.
fail() {
  echo "$E2E_NAME: FAIL: $*" >&2
  if [[ -f $E2E_TMP/log ]]; then sed 's/^/  | /' "$E2E_TMP/log" >&2; fi
  exit 1
}
# need TOOL [HINT]: fail "TOOL not found (HINT)" unless TOOL is on PATH.
need() {
  command -v "$1" >/dev/null || fail "$1 not found${2:+ ($2)}"
}
# wait_until TRIES SECONDS CMD...: runs CMD up to TRIES times, SECONDS apart, then once more;
# returns 0 as soon as it succeeds, else the last run's status.
wait_until() {
  local tries=$1 delay=$2 i
  shift 2
  for ((i = 0; i < tries; i++)); do
    "$@" && return 0
    sleep "$delay"
  done
  "$@"
}

# --- bad input ------------------------------------------------------------------------------

# expect_fail [-c CODE] [-k] [-n] [-q] [-a FILE] WANT CMD...: CMD (stdout to $E2E_TMP/out,
# stderr to $E2E_TMP/err) must exit non-zero with WANT in its stderr: one ok, or one FAIL for
# the first check missed. -c: the exit code must be CODE (-k: a wrong code is a FAIL, and the
# message is still checked); -n: no NaN/Inf on stdout; -q: nothing on stdout; -a: FILE must not
# exist afterwards; -- ends the options.
expect_fail() {
  local code="" keep=0 nan=0 quiet=0 absent="" want rc=0 out=$E2E_TMP/out err=$E2E_TMP/err
  while [[ $1 == -? ]]; do
    case $1 in
      -c) code=$2; shift 2 ;;
      -k) keep=1; shift ;;
      -n) nan=1; shift ;;
      -q) quiet=1; shift ;;
      -a) absent=$2; shift 2 ;;
      --) shift; break ;;
      *) echo "expect_fail: unknown option $1" >&2; exit 2 ;;
    esac
  done
  want=$1; shift
  "$@" >"$out" 2>"$err" || rc=$?
  if [ $rc = 0 ]; then bad "accepted: $*"; return; fi
  if [ -n "$code" ] && [ $rc != "$code" ]; then
    bad "exit $rc (want $code): $* : $(cat "$err")"
    [ $keep = 1 ] || return
  fi
  if [ $nan = 1 ] && grep -q -i -e nan -e '\binf\b' "$out"; then
    bad "printed NaN/Inf: $*"; return
  fi
  if [ $quiet = 1 ] && [ -s "$out" ]; then
    bad "printed to stdout on error: $*: $(head -c 200 "$out")"; return
  fi
  if [ -n "$absent" ] && [ -e "$absent" ]; then bad "left $absent behind: $*"; return; fi
  if grep -qF -- "$want" "$err"; then ok "rejected ($want): $*"
  else bad "message for '$*' lacks '$want': $(cat "$err")"; fi
}

# --- the GUI under Xvfb ---------------------------------------------------------------------

# XVFB_RUN: the command prefix that runs a command on a fresh 1280x800x24 Xvfb (xvfb-run).
XVFB_RUN=(xvfb-run -a -s "-screen 0 1280x800x24")
# run_xvfb ARGS...: `$ATTNLAB gui ARGS` on its own Xvfb, at most 240 s, output to $E2E_TMP/log;
# returns its exit code.
run_xvfb() {
  timeout 240 "${XVFB_RUN[@]}" "$ATTNLAB" gui "$@" >"$E2E_TMP/log" 2>&1
}
# start_xvfb: starts an Xvfb this script keeps (its pid in $XVFB_PID, killed at exit) and exports
# DISPLAY once it accepts clients; fatal if it does not within 10 s.
start_xvfb() {
  Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$E2E_TMP/display" \
    2>"$E2E_TMP/xvfb.log" &
  XVFB_PID=$!
  wait_until 100 0.1 test -s "$E2E_TMP/display" ||
    fatal "Xvfb did not start: $(cat "$E2E_TMP/xvfb.log")"
  DISPLAY=":$(head -n1 "$E2E_TMP/display")"
  export DISPLAY
}
# alive: true while the app started in the background ($APP_PID) runs.
alive() { kill -0 "$APP_PID" 2>/dev/null; }
# xdo ARGS...: xdotool ARGS, at most 10 s; never fails (a failure is noted on stderr).
xdo() { timeout 10 xdotool "$@" || echo "  (xdotool $* failed)" >&2; }
# wait_window: sets $WIN to the visible "attnlab" window (fatal if none within 60 s), focuses it.
wait_window() {
  WIN=$(timeout 60 xdotool search --sync --onlyvisible --name '^attnlab$' | head -n1) || true
  [[ -n $WIN ]] || fatal "no attnlab window within 60 s"
  xdo windowfocus --sync "$WIN"
}
# wm close|iconify|restore WINDOW: what a window manager would do (bare Xvfb has none): close
# sends WM_DELETE_WINDOW; iconify/restore unmap/map the window and set ICCCM WM_STATE, which
# GLFW reads for GLFW_ICONIFIED. libX11 through ctypes.
wm() {
  python3 - "$@" <<'PY'
import ctypes as C, sys
x = C.cdll.LoadLibrary("libX11.so.6")
P, W = C.c_void_p, C.c_ulong
x.XOpenDisplay.restype, x.XOpenDisplay.argtypes = P, [C.c_char_p]
x.XInternAtom.restype, x.XInternAtom.argtypes = W, [P, C.c_char_p, C.c_int]
x.XSendEvent.argtypes = [P, W, C.c_int, C.c_long, P]
x.XChangeProperty.argtypes = [P, W, W, W, C.c_int, C.c_int, P, C.c_int]
x.XMapWindow.argtypes = x.XUnmapWindow.argtypes = [P, W]
x.XSync.argtypes = [P, C.c_int]
class XClientMessageEvent(C.Structure):  # padded to sizeof(XEvent)
    _fields_ = [("type", C.c_int), ("serial", W), ("send_event", C.c_int), ("display", P),
                ("window", W), ("message_type", W), ("format", C.c_int), ("data", C.c_long * 5),
                ("pad", C.c_long * 12)]
d = x.XOpenDisplay(None)
assert d, "cannot open the display"
cmd, w = sys.argv[1], int(sys.argv[2])
atom = lambda name: x.XInternAtom(d, name.encode(), 0)
if cmd == "close":  # what a WM's close button sends
    e = XClientMessageEvent(type=33, window=w, format=32, message_type=atom("WM_PROTOCOLS"))
    e.data[0] = atom("WM_DELETE_WINDOW")  # type 33: ClientMessage
    x.XSendEvent(d, w, 0, 0, C.byref(e))
else:  # ICCCM WM_STATE: 3 = Iconic, 1 = Normal
    state = (C.c_long * 2)(3 if cmd == "iconify" else 1, 0)
    x.XChangeProperty(d, w, atom("WM_STATE"), atom("WM_STATE"), 32, 0, C.byref(state), 2)
    (x.XUnmapWindow if cmd == "iconify" else x.XMapWindow)(d, w)
x.XSync(d, 0)
PY
}
# close_app: closes $WIN (WM_DELETE_WINDOW) and waits up to 30 s for $APP_PID to end; sets rc to
# its exit code, or "none" if it still runs.
close_app() {
  wm close "$WIN"
  wait_until 300 0.1 eval '! alive' || true
  rc=none
  if ! alive; then rc=0; wait "$APP_PID" || rc=$?; fi
}

# --- what the GUI leaves behind ---------------------------------------------------------------

# check_report REPORT 'python expression over r (the exit report; c = its "compare" part)' WHAT:
# fail WHAT (with the report's start) unless the expression holds.
check_report() {
  python3 - "$1" "$2" <<'PY' || fail "$3 (report: $(head -c 3000 "$1" 2>/dev/null || echo none))"
import json, os, sys
r = json.load(open(sys.argv[1]))
c = r.get("compare")
assert eval(sys.argv[2]), sys.argv[2]
PY
}
# report_region REPORT PANEL: prints "x,y,w,h" (integer window pixels) of panel PANEL (its
# --panel name: run, loss, ...) from the exit report's panels[PANEL].rect, the content region
# below the tile's tab bar; prints nothing if the report lacks the file, the panel or its rect
# (a panel that was not drawn has none).
report_region() {
  python3 - "$1" "$2" <<'PY' 2>/dev/null || true
import json, sys
rect = json.load(open(sys.argv[1]))["panels"][sys.argv[2]]["rect"]
assert len(rect) == 4 and rect[2] > 0 and rect[3] > 0, rect
print(",".join(str(int(round(v))) for v in rect))
PY
}
# png_stats ARGS...: png_stats.py ARGS (see there): exit 1 when a threshold is not met.
png_stats() { python3 "$E2E_DIR/png_stats.py" "$@"; }
# screenshot_ok PNG: the PNG is a 1280x800 screenshot with real content (50+ colours, 20%+ of
# the pixels off the background), not a blank window.
screenshot_ok() { png_stats "$1" --size 1280x800 --min-colors 50 --min-foreground 0.2; }
