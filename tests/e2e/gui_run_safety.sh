#!/usr/bin/env bash
# GUI test of what the window writes and what it loses (issue 30): the real window under Xvfb.
# usage: gui_run_safety.sh <path-to-attnlab>
# Checks:
#  1. Save never writes into another run: with `attnlab train` holding runs/gui-small (the old
#     default Save target), Ctrl+S in a window named "small" saves into the window's own recorded
#     run and leaves runs/gui-small alone; a typed directory that another process writes is
#     refused naming the holder's pid; a finished run the window did not write is refused and
#     left byte for byte; a fresh typed directory gets a whole run. The train then resumes from
#     its own model.
#  2. A full runs root (a 2 MiB tmpfs, filled while training) and a read-only one: the window
#     exits 1 and says on stderr which run and which file were not saved; the metrics rows written
#     before stay whole; the read-only root's "not recorded" is still shown at the end.
#  3. Runs trained in the Compare panel are recorded like the window's own: rows while training,
#     checkpoint and summary ("window closed") when the window closes, listed in the Runs panel.
# The mounts need root; without them part 2 says "skip" (tests/core/test_gui_recording.cpp
# covers the failed save with RLIMIT_FSIZE).
set -uo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_run_safety.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
for tool in Xvfb xdotool python3; do need "$tool" scripts/setup.sh; done
ROOT=$XDG_DATA_HOME/attnlab/runs
MOUNTS=()
# shellcheck disable=SC2317  # the EXIT trap
cleanup() {
  if [[ -n $APP_PID ]] && kill -0 "$APP_PID" 2>/dev/null; then kill -KILL "$APP_PID"; fi
  if [[ -n ${TRAIN_PID:-} ]] && kill -0 "$TRAIN_PID" 2>/dev/null; then kill -KILL "$TRAIN_PID"; fi
  # Only the processes it killed: a bare `wait` would also wait for Xvfb, which e2e_cleanup stops.
  wait ${APP_PID:+"$APP_PID"} ${TRAIN_PID:+"$TRAIN_PID"} 2>/dev/null
  for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
  e2e_cleanup
}
trap cleanup EXIT

cat >"$TMP/small.json" <<'JSON'
{"name": "small", "seed": 5, "threads": 1, "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 1},
 "train": {"steps": 1000000, "batch_size": 4, "warmup": 5, "eval_every": 10, "eval_batches": 1}}
JSON
# "Another config" with the same name: what the old default Save path confused.
sed -e 's/"seed": 5/"seed": 9/' -e 's/"d_model": 16/"d_model": 24/' "$TMP/small.json" >"$TMP/other.json"
sed -e 's/"steps": 1000000/"steps": 60/' "$TMP/other.json" >"$TMP/short.json"

json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2:]: d=d[k]
print(d)' "$@" 2>/dev/null; }
rows() { [[ -f $1/metrics.csv ]] && echo $(($(wc -l <"$1/metrics.csv") - 1)) || echo 0; }
has_rows() { (($(rows "$1") >= $2)); }
# report_has REPORT EXPR: the python expression over r (the exit report) holds.
report_has() {
  python3 - "$1" "$2" <<'PY' 2>/dev/null
import json, os, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
metrics_whole() {
  python3 - "$1" <<'P' 2>/dev/null
import sys
t = open(sys.argv[1]).read()
assert t.endswith("\n")
rows = t.splitlines()[1:]
steps = [int(r.split(",")[0]) for r in rows]
assert rows and all(r.count(",") == 5 for r in rows)
assert all(a < b for a, b in zip(steps, steps[1:]))
P
}
start_xvfb
key() { xdo key --window "$WIN" "$@"; }
# launch NAME ARGS...: attnlab gui in the background (report $TMP/NAME.json, output $TMP/NAME.log);
# waits for its window and focuses it.
launch() {
  local name=$1
  shift
  ATTN_GUI_REPORT=$TMP/$name.json "$ATTNLAB" gui --size 1280x720 "$@" >"$TMP/$name.log" 2>&1 &
  APP_PID=$!
  wait_window
}
# own_run GLOB: the one directory under the runs root matching GLOB.
own_run() { compgen -G "$ROOT/$1" | head -n1; }

# --- 1. Save ----------------------------------------------------------------------------------
"$ATTNLAB" train --config "$TMP/small.json" --out runs/gui-small -q >"$TMP/train.log" 2>&1 &
TRAIN_PID=$!
wait_until 300 0.1 has_rows runs/gui-small 1 || fatal "attnlab train wrote no rows: $(cat "$TMP/train.log")"

launch save1 --config "$TMP/other.json" --autostart
wait_until 300 0.1 eval '[[ -n $(own_run "small-*") ]] && has_rows "$(own_run "small-*")" 1' || true
OWN=$(own_run "small-*")
key ctrl+s
sleep 1
close_app
check "1: the window exits 0 after Ctrl+S (got $rc)" test "$rc" = 0
check "1: Ctrl+S left runs/gui-small (another process's run) without a checkpoint" \
  test ! -e runs/gui-small/checkpoint
check "1: Ctrl+S saved into the window's own run ${OWN:-?}" \
  report_has "$TMP/save1.json" 'r["run"]["message"] == "saved checkpoint to " + "'"$OWN"'"'
check "1: whose checkpoint is the window's model (d_model 24)" \
  test "$(json_get "$OWN/checkpoint/state.json" config model d_model)" = 24

ATTN_GUI_SAVE_DIR=$TMP/runs/gui-small/checkpoint launch save2 --config "$TMP/other.json" --autostart
sleep 1
key ctrl+s
sleep 1
close_app
check "1: a typed directory that attnlab train writes is refused naming pid $TRAIN_PID" \
  report_has "$TMP/save2.json" '"save failed" in r["run"]["message"] and "being written by pid '"$TRAIN_PID"'" in r["run"]["message"]'
check "1: and runs/gui-small still has no checkpoint" test ! -e runs/gui-small/checkpoint

"$ATTNLAB" train --config "$TMP/short.json" --out theirs -q >/dev/null 2>&1 || fatal "a short train failed"
before=$(cd theirs && find . -type f ! -name .attnlab.lock -exec md5sum {} + | sort)
ATTN_GUI_SAVE_DIR=$TMP/theirs launch save3 --config "$TMP/other.json" --autostart
sleep 1
key ctrl+s
sleep 1
close_app
check "1: a finished run the window did not write is refused, named" \
  report_has "$TMP/save3.json" '"save failed" in r["run"]["message"] and "theirs" in r["run"]["message"] and "did not write" in r["run"]["message"]'
check "1: and left byte for byte" test "$(cd theirs && find . -type f ! -name .attnlab.lock -exec md5sum {} + | sort)" = "$before"

ATTN_GUI_SAVE_DIR=$TMP/fresh launch save4 --config "$TMP/other.json" --autostart
sleep 1
key ctrl+s
wait_until 100 0.1 test -f fresh/checkpoint/state.json || true
close_app
check "1: a fresh typed directory gets a whole run (config, metrics, checkpoint, summary)" \
  test -f fresh/config.json -a -f fresh/metrics.csv -a -f fresh/checkpoint/state.json -a -f fresh/summary.json

kill -INT "$TRAIN_PID"; wait "$TRAIN_PID" 2>/dev/null; TRAIN_PID=""
step=$(json_get runs/gui-small/checkpoint/state.json step)
rc=0
"$ATTNLAB" train --resume runs/gui-small --steps $((${step:-0} + 10)) -q >/dev/null 2>"$TMP/resume.err" || rc=$?
check "1: train --resume runs/gui-small continues its own model (d_model 16, exit $rc)" \
  test "$rc" = 0 -a "$(json_get runs/gui-small/checkpoint/state.json config model d_model)" = 16

# --- 2. A full and a read-only runs root ------------------------------------------------------
mkdir -p disk ro
if mount -t tmpfs -o size=2m tmpfs disk 2>/dev/null; then
  MOUNTS+=("$TMP/disk")
  launch full --config "$TMP/small.json" --autostart --runs-dir "$TMP/disk"
  wait_until 300 0.1 eval '[[ -n $(compgen -G "disk/small-*") ]] && has_rows "$(compgen -G "disk/small-*")" 2' || true
  FULL=$(compgen -G "disk/small-*" | head -n1)
  kept=$(rows "$FULL")
  dd if=/dev/zero of=disk/fill bs=64k 2>/dev/null
  sleep 1
  close_app
  check "2: closing on a full disk exits 1 (got $rc)" test "$rc" = 1
  check "2: stderr names the run and the checkpoint that was not saved" \
    grep -q "$(basename "${FULL:-none}").*checkpoint: " "$TMP/full.log"
  check "2: and the summary.json that was not saved" grep -q "summary.json: " "$TMP/full.log"
  check "2: the $kept metrics rows written before stay whole" \
    eval 'metrics_whole "$FULL/metrics.csv" && (($(rows "$FULL") >= kept))'
  rm -f disk/fill
  umount disk && MOUNTS=()
else
  echo "skip: cannot mount a tmpfs here (tests/core/test_gui_recording.cpp covers the failed save)"
fi
if mount -t tmpfs -o size=1m tmpfs ro 2>/dev/null && mount -o remount,ro ro 2>/dev/null; then
  MOUNTS+=("$TMP/ro")
  rc=0
  ATTN_GUI_REPORT=$TMP/ro.json timeout 240 "${XVFB_RUN[@]}" "$ATTNLAB" gui --config "$TMP/short.json" \
    --autostart --frames 400 --runs-dir "$TMP/ro" >"$TMP/ro.log" 2>&1 || rc=$?
  check "2: a read-only runs root: exit 1 (got $rc)" test "$rc" = 1
  check "2: stderr says the run was not recorded, and why" \
    grep -q "not recorded: .*Read-only file system" "$TMP/ro.log"
  check "2: the Run panel still says so when the run has finished" \
    report_has "$TMP/ro.json" 'r["run"]["state"] == "Finished" and "not recorded" in r["run"]["record_error"]'
  umount ro && MOUNTS=()
else
  echo "skip: cannot mount a read-only tmpfs here"
fi

# --- 3. Compare's runs are recorded -----------------------------------------------------------
launch cmp --config "$TMP/small.json" --compare-vary model.attention=dot,ky --panel runs
both() {
  local n=0 d
  for d in "$ROOT"/compare/run-*/model.attention=*; do has_rows "$d" 2 && n=$((n + 1)); done
  ((n == 2))
}
wait_until 300 0.1 both || true
sleep 2.5  # the Runs panel rescans every 2 s
close_app
check "3: the window with two Compare runs exits 0 (got $rc)" test "$rc" = 0
for d in "$ROOT"/compare/run-*/model.attention=*; do
  v=${d##*=}
  check "3: Compare's $v run has whole metrics rows" metrics_whole "$d/metrics.csv"
  check "3: and a checkpoint with a summary that says \"window closed\" at its step" \
    test "$(json_get "$d/summary.json" interrupted_by)" = "window closed" -a \
    "$(json_get "$d/summary.json" steps)" = "$(json_get "$d/checkpoint/state.json" step)"
  check "3: the Runs panel lists it" \
    report_has "$TMP/cmp.json" 'any(os.path.realpath(x["path"]) == os.path.realpath("'"$d"'") for x in r["runs"])'
done
n=$(compgen -G "$ROOT/compare/run-*/model.attention=*" | wc -l)
check "3: both runs were recorded (found $n)" test "$n" = 2
d=$(compgen -G "$ROOT/compare/run-*/model.attention=dot" | head -n1)
step=$(json_get "$d/checkpoint/state.json" step)
rc=0
"$ATTNLAB" train --resume "$d" --steps $((${step:-0} + 10)) -q >/dev/null 2>&1 || rc=$?
check "3: train --resume continues Compare's run (exit $rc)" test "$rc" = 0
finish
