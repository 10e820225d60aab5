#!/usr/bin/env bash
# Run directories that never lose or mix data, and no crash where an error is due (issue 20):
# the reliability attack's findings, each reproduced with real processes, real files, real
# signals. Device nodes are made with mknod in the scratch directory (never in /dev); a tmpfs is
# mounted for the full disk when the machine allows it (else the unit test's RLIMIT_FSIZE case,
# tests/core/test_run_safety.cpp, covers it).
# usage: run_safety.sh <attnlab>
set -u
bin=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir
export ATTNLAB_PROGRESS=lines

tiny_config tiny.json
# long.json: runs for minutes unless stopped (the processes below are signalled or killed).
sed 's/"steps": 400/"steps": 400000/' tiny.json >long.json

# json_get FILE KEY: prints summary-style top-level KEY of a JSON file ("" when absent).
json_get() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], ""))' "$1" "$2" 2>/dev/null; }
# metrics_whole FILE: every row has six fields, steps strictly increase, the file ends in \n.
metrics_whole() {
  python3 - "$1" <<'P'
import sys
t = open(sys.argv[1]).read()
assert t.endswith("\n"), "no final newline"
rows = t.splitlines()[1:]
steps = [int(r.split(",")[0]) for r in rows]
assert all(r.count(",") == 5 for r in rows), "a row without six fields"
assert all(a < b for a, b in zip(steps, steps[1:])), "steps not strictly increasing"
P
}
# has_rows DIR: DIR/metrics.csv has a data row; wait_for_metrics DIR: until it has (30 s).
has_rows() { [ "$({ wc -l <"$1/metrics.csv"; } 2>/dev/null || echo 0)" -ge 2 ]; }
wait_for_metrics() { wait_until 300 0.1 has_rows "$1"; }
# started PID: the process is still alive.
alive() { kill -0 "$1" 2>/dev/null; }

# --- one writer per run directory -----------------------------------------------------------
"$bin" train --config long.json --out shared -q >/dev/null 2>a.err &
a=$!
wait_for_metrics shared || bad "the first train never started: $(cat a.err)"
rc=0; "$bin" train --config tiny.json --seed 2 --out shared >b.out 2>b.err || rc=$?
if [ $rc = 2 ] && grep -q "being written by pid $a" b.err; then ok "a second train on the same --out is refused naming pid $a"
else bad "second train: exit $rc: $(cat b.err)"; fi
# --wait --force: waits for the first, then replaces its run whole (one run's files only).
"$bin" train --config tiny.json --seed 2 --out shared --wait --force -q >c.out 2>c.err &
c=$!
sleep 1
alive $c && ok "--wait waits while the directory is held" || bad "--wait did not wait: $(cat c.err)"
kill -INT $a; wait $a; rc_a=$?
wait $c; rc_c=$?
[ $rc_a = 130 ] && ok "SIGINT: train exits 130" || bad "SIGINT: exit $rc_a: $(tail -3 a.err)"
[ $rc_c = 0 ] && ok "the waiting train ran once the first stopped" || bad "waiting train: exit $rc_c: $(cat c.err)"
seeds="$(json_get shared/config.json seed) $(json_get shared/summary.json seed)"
[ "$seeds" = "2 2" ] && ok "config.json and summary.json are from the same run" || bad "mixed run: seeds $seeds"
python3 -c 'import json,sys; s=json.load(open("shared/checkpoint/state.json")); sys.exit(s["config"]["seed"] != 2)' \
  && ok "the checkpoint is from that run too" || bad "checkpoint from another run"
metrics_whole shared/metrics.csv && ok "its metrics.csv is whole" || bad "metrics.csv of the replaced run"

# Without --out, the same command twice makes two runs (runs/tiny, then runs/tiny-2).
"$bin" train --config tiny.json -q >/dev/null 2>&1 && "$bin" train --config tiny.json -q >second.out 2>&1
[ -f runs/tiny/summary.json ] && [ -f runs/tiny-2/summary.json ] && grep -q "runs/tiny-2" second.out \
  && ok "the default --out never reuses a run: runs/tiny, then runs/tiny-2" || bad "default --out: $(ls runs) $(cat second.out)"

# --- signals: checkpoint, an interrupted summary, exit 128 + signal, resume ------------------
for sig in INT TERM HUP; do
  want=$((128 + $(kill -l $sig)))
  "$bin" train --config long.json --out sig-$sig -q >/dev/null 2>sig.err &
  p=$!
  wait_for_metrics sig-$sig
  kill -$sig $p; wait $p; rc=$?
  [ $rc = $want ] && ok "SIG$sig: exit $want" || bad "SIG$sig: exit $rc (want $want): $(tail -2 sig.err)"
  [ "$(json_get sig-$sig/summary.json interrupted)" = True ] && ok "SIG$sig: summary.json says interrupted" \
    || bad "SIG$sig: summary $(cat sig-$sig/summary.json 2>&1 | head -c 200)"
  grep -q "continue with: attnlab train --resume" sig.err && ok "SIG$sig: says how to continue" || bad "SIG$sig: $(cat sig.err)"
done
steps=$(json_get sig-INT/summary.json steps)
"$bin" train --resume sig-INT --steps $((steps + 100)) -q >/dev/null 2>r.err \
  && [ "$(json_get sig-INT/summary.json steps)" = $((steps + 100)) ] \
  && [ -z "$(json_get sig-INT/summary.json interrupted)" ] \
  && ok "the interrupted run resumes from its checkpoint (step $steps)" || bad "resume after SIGINT: $(cat r.err)"
metrics_whole sig-INT/metrics.csv && ok "and its metrics.csv stays whole" || bad "metrics after resume"

# --- kill -9 at random moments: never a summary beside a newer checkpoint ---------------------
mixed=0
for i in 1 2 3 4 5 6; do
  if [ -f k9/checkpoint/state.json ] && [ ! -f k9/summary.json ]; then args=(--resume k9)
  else args=(--config tiny.json --out k9 --force); fi
  "$bin" train "${args[@]}" --checkpoint-every 20 -q >/dev/null 2>&1 &
  p=$!
  sleep "0.$((RANDOM % 6 + 1))"
  kill -KILL $p 2>/dev/null; wait $p 2>/dev/null
  if [ -f k9/summary.json ]; then
    s=$(json_get k9/summary.json steps)
    c=$(python3 -c 'import json; print(json.load(open("k9/checkpoint/state.json"))["step"])')
    [ "$s" = "$c" ] || mixed=$((mixed + 1))
  fi
done
[ $mixed = 0 ] && ok "kill -9 x6: a summary always matches its checkpoint" || bad "kill -9: $mixed summaries beside another checkpoint"
# Completing it: --resume from its checkpoint, or (killed while --force emptied the directory,
# which removes the checkpoint's state.json first) --force again.
rc=0
if [ -f k9/checkpoint/state.json ] && [ ! -f k9/summary.json ]; then
  "$bin" train --resume k9 -q >/dev/null 2>k9.err || rc=$?
elif [ ! -f k9/summary.json ]; then
  "$bin" train --config tiny.json --out k9 --force -q >/dev/null 2>k9.err || rc=$?
fi
[ $rc = 0 ] && [ "$(json_get k9/summary.json steps)" = 400 ] && ok "the killed run completes with --resume" \
  || bad "completing k9: exit $rc: $(cat k9.err 2>/dev/null)"
ls k9/checkpoint.tmp-* k9/*.tmp.* >/dev/null 2>&1 && bad "temporaries left: $(ls k9)" || ok "no temporaries left behind"

# --- a full disk (a 2 MiB tmpfs, filled for two seconds) ------------------------------------
mkdir -p disk
if mount -t tmpfs -o size=2m tmpfs disk 2>/dev/null; then
  "$bin" train --config long.json --out disk/run -q >/dev/null 2>disk.err &
  p=$!
  wait_for_metrics disk/run
  dd if=/dev/zero of=disk/fill bs=64k 2>/dev/null
  # Full until the run notices (tmpfs pages are 4 KiB: appends into metrics.csv's last page
  # still fit for a while), at most 20 s; then room again, as after a transient full disk.
  wait_until 200 0.1 eval '! alive $p'
  rm -f disk/fill
  if alive $p; then kill -INT $p; fi
  wait $p; rc=$?
  [ $rc = 1 ] && grep -q "cannot" disk.err && ok "a full disk fails the run (exit 1): $(head -c 160 disk.err)" \
    || bad "full disk: exit $rc: $(cat disk.err)"
  metrics_whole disk/run/metrics.csv && ok "no mangled row after the full disk" || bad "metrics after a full disk"
  [ -f disk/run/summary.json ] && bad "a summary after a failed write" || ok "no summary claims the run is done"
  ls -d disk/run/*.tmp* >/dev/null 2>&1 && bad "temporaries left on the full disk: $(ls -a disk/run)" || ok "no temporaries left on the full disk"
  umount disk
else
  echo "skip: cannot mount a tmpfs here (the RLIMIT_FSIZE unit test covers the failed write)"
fi

# --- outputs: never a device node, never a run's own files through a side file ---------------
"$bin" train --config tiny.json --out run -q >/dev/null 2>&1 || fatal "tiny run failed"
sum=$(md5sum run/metrics.csv run/summary.json run/config.json)
expect_fail -c 2 "would replace that run's own metrics.csv" "$bin" export --run run --figure loss --out run/metrics.pdf
expect_fail "would replace that run's own summary.json" "$bin" export --run run --figure loss --out run/summary.pdf
[ "$(md5sum run/metrics.csv run/summary.json run/config.json)" = "$sum" ] && ok "the run's files are untouched" || bad "run files changed"
echo '{"mine": 1}' >x.json
expect_fail "would overwrite it" "$bin" export --run run --figure loss --format pdf --out x.json
[ "$(cat x.json)" = '{"mine": 1}' ] && ok "x.json is untouched" || bad "x.json overwritten: $(head -c 100 x.json)"
# A side file (FIG.csv, FIG.json beside --out FIG.pdf) that attnlab did not write is refused;
# an earlier export's side files are replaced by the next export to the same name.
echo '{"mine": 1}' >y.json
expect_fail -c 2 -a y.pdf "y.json exists and attnlab did not write it" "$bin" export --run run --figure loss --out y.pdf
[ "$(cat y.json)" = '{"mine": 1}' ] && [ ! -e y.csv ] && ok "y.json is untouched, nothing written" || bad "y.json or y.csv changed"
printf 'a,b\n1,2\n' >w.csv
expect_fail -c 2 -a w.pdf "w.csv exists and attnlab did not write it" "$bin" export --run run --figure loss --out w.pdf
[ "$(cat w.csv)" = "$(printf 'a,b\n1,2')" ] && ok "w.csv is untouched" || bad "w.csv overwritten"
if "$bin" export --run run --figure loss --out v.pdf >/dev/null 2>&1 &&
  "$bin" export --run run --figure loss --out v.pdf >/dev/null 2>"$E2E_TMP/err"; then
  ok "a second export to the same name replaces its own side files"
else
  bad "re-export to v.pdf refused: $(cat "$E2E_TMP/err")"
fi
mkdir -p nodes
if mknod nodes/null c 1 3 2>/dev/null && mknod nodes/zero c 1 5 2>/dev/null; then
  printf '0,1\n1,0\n' >m.csv
  expect_fail "it is a device" "$bin" spectral --matrix m.csv --control none --out nodes/null
  expect_fail "it is a device" "$bin" export --run run --figure loss --format pdf --out nodes/null
  [ -c nodes/null ] && ok "the device node is still a device" || bad "nodes/null replaced"
  expect_fail "is a device" timeout 20 "$bin" spectral --matrix nodes/zero
else
  echo "skip: mknod not permitted (the unit test covers the FIFO and the symlink cases)"
fi

# --- inputs: a FIFO in a run directory, a directory, a wrong type, deep configs --------------
cp -r run fifo-run && rm fifo-run/summary.json && mkfifo fifo-run/summary.json
expect_fail "FIFO" timeout 20 "$bin" compare fifo-run
expect_fail "FIFO" timeout 20 "$bin" export --run fifo-run --list
rm fifo-run/summary.json && rm -rf fifo-run/checkpoint/model.safetensors && mkfifo fifo-run/checkpoint/model.safetensors
expect_fail "model.safetensors" timeout 20 "$bin" train --resume fifo-run --steps 500
cp -r run dir-run && rm dir-run/summary.json && mkdir dir-run/summary.json
expect_fail "is a directory" "$bin" export --run dir-run --figure loss --out d.pdf
cp -r run typed-run && python3 -c 'import json; s=json.load(open("typed-run/summary.json")); s["eval_loss"]="abc"; s["steps"]="x"; json.dump(s, open("typed-run/summary.json","w"))'
rc=0; "$bin" export --run typed-run --figure loss --out t.pdf >/dev/null 2>t.err || rc=$?
[ $rc -lt 128 ] && ok "a wrongly typed summary: no abort (exit $rc)" || bad "wrongly typed summary: exit $rc: $(cat t.err)"
python3 -c 'print("{\"model\": " + "[" * 100000 + "]" * 100000 + "}")' >deep.json
expect_fail -c 2 "nested more than" "$bin" train --config deep.json --out deep
expect_fail -c 2 "nested more than" "$bin" sweep --config deep.json --vary seed=1,2 --out deep-sweep
mkdir -p repro/condor && cp "$E2E_DIR/../../assets/configs/repro/condor/"*.json repro/condor/
cp deep.json repro/condor/ky.json
expect_fail -c 2 "nested more than" "$bin" reproduce --paper condor --quick --configs repro --out deep-repro
long=$(printf 'x%.0s' $(seq 300))/$(printf 'y%.0s' $(seq 300))
rc=0; "$bin" export --run run --figure loss --out "$long/$long/f.pdf" >/dev/null 2>l.err || rc=$?
[ $rc != 0 ] && [ $rc -lt 128 ] && ok "an over-long --out: a message, exit $rc" || bad "long --out: exit $rc: $(cat l.err)"
ln -s loop loop
rc=0; "$bin" export --run run --figure loss --out loop/f.pdf >/dev/null 2>l.err || rc=$?
[ $rc != 0 ] && [ $rc -lt 128 ] && ok "a looping --out: a message, exit $rc" || bad "looping --out: exit $rc: $(cat l.err)"

# --- sizes beyond the machine: refused with the estimate, at once ----------------------------
python3 - <<'P'
import json
c = json.load(open("tiny.json")); c["model"].update(d_model=8192, layers=64, heads=8)
json.dump(c, open("huge.json", "w"))
P
expect_fail -c 2 "needs about" timeout 60 "$bin" train --config huge.json --out huge
expect_fail "past attnlab's limit" "$bin" export --run run --figure loss --format png --width-in 13.6 --dpi 2400 --out big.png
# Within the limits, but more than this (capped) machine has: the estimate, before allocating.
expect_fail -c 2 "needs about" env ATTNLAB_MEMORY_LIMIT=1G "$bin" geometry --grid 4096 --samples 4096 --json
expect_fail "needs about" env ATTNLAB_MEMORY_LIMIT=256M "$bin" export --run run --figure loss --format png --width-in 10 --dpi 1200 --out mid.png

# --- two sweeps on one directory: each cell trained once, in order -------------------------
"$bin" sweep --config tiny.json --vary model.attention=dot,ky --seeds 2 --out sw -q >/dev/null 2>sw1.err &
s1=$!
"$bin" sweep --config tiny.json --vary model.attention=dot,ky --seeds 2 --out sw -q >/dev/null 2>sw2.err &
s2=$!
wait $s1; r1=$?; wait $s2; r2=$?
[ $r1 = 0 ] && [ $r2 = 0 ] && ok "two sweeps on one directory both finish" || bad "sweeps: exit $r1 / $r2: $(tail -n 2 sw1.err sw2.err)"
broken=0
for m in sw/*/seed-*/metrics.csv; do metrics_whole "$m" || broken=$((broken + 1)); done
[ $broken = 0 ] && ok "every cell's metrics.csv is whole and in order" || bad "$broken cells with mixed metrics"
rc=0; "$bin" sweep --config tiny.json --vary model.attention=dot,ky --seeds 2 --out sw --json >sw.json 2>/dev/null || rc=$?
[ "$(json_get sw.json skipped)" = 4 ] && ok "afterwards all four cells are done" || bad "cells not done: $(cat sw.json)"
finish
