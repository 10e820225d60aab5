#!/usr/bin/env bash
# Issue 46, finding 9: memory is estimated before allocating. `eval --context 1000000` on a
# learned-position run and on a RoPE run is refused at once (exit 2, the estimate or the table's
# length, no LibTorch frames, a small peak RSS); ATTNLAB_MEMORY_LIMIT=1G refuses a context-1024
# config and bounds the peak of one that fits; a context-4096 config is refused without leaving a
# run directory; and the estimate printed covers the peak RSS measured for several configs.
# Each check failed before the fix (the refused commands ran under `ulimit -v` so that they
# failed instead of filling the machine).
# usage: memory_estimate.sh <attnlab>
set -u
bin=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir
export ATTNLAB_PROGRESS=lines

# rss FILE CMD...: runs CMD and writes its peak resident set size in KiB (getrusage's
# ru_maxrss of the child) to FILE; returns CMD's exit status.
rss() {
  python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[2:]).returncode
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(r if r >= 0 else 128 - r)' "$@"
}
# to_bytes "1.5 GB" / "300 MB": the most bytes the rounded figure can stand for (format_bytes
# writes whole MiB, or GiB to one decimal).
to_bytes() {
  python3 -c 'import sys; v, u = sys.argv[1].split(); print(int((float(v) + {"MB": 1, "GB": 0.05}[u]) * {"MB": 2**20, "GB": 2**30}[u]))' "$1"
}

tiny_config learned.json 20 10 5
sed 's/"layers": 1}/"layers": 1, "position": "rope"}/' learned.json >rope.json
for run in learned rope; do
  "$bin" train --config $run.json --out $run -q >log 2>&1 || fatal "train $run: $(tail -3 log)"
done
# What loading a run and evaluating it at its own length takes: the base the refusals compare to.
rss base.kib "$bin" eval --run learned --context 4 >out 2>err || fatal "eval at 4: $(cat err)"
base=$(cat base.kib)

# --- eval --context 1000000: refused before allocating ------------------------------------------
# Before: learned positions allocated the eval set, then refused with LibTorch's frames; RoPE
# grew until the kernel killed it (here: until the address-space limit stopped it, exit 1).
for run in learned rope; do
  start=$(date +%s)
  rc=0
  (ulimit -v 6000000; rss $run.kib timeout 120 "$bin" eval --run $run --context 1000000) >out 2>err ||
    rc=$?
  took=$(($(date +%s) - start)) kib=$(cat $run.kib 2>/dev/null || echo 0)
  if [ $run = learned ]; then
    want="task.length 1000000 (2000000 tokens; trained at 4): model.position is \"learned\""
  else
    want="eval at task.length 1000000 (2000000 tokens; trained at 4) (train.batch_size 4 x task.length 1000000 (2000000 tokens)"
  fi
  if [ $rc = 2 ] && grep -qF "$want" err && ! grep -q "frame #" err && [ "$kib" -le $((base + 51200)) ] &&
    [ $took -le 30 ]; then
    ok "eval --context 1000000 ($run): exit 2 in ${took} s, peak ${kib} KiB (base ${base}): $(head -c 160 err)"
  else
    bad "eval --context 1000000 ($run): exit $rc in ${took} s, peak ${kib} KiB (base ${base}): $(head -c 600 err)"
  fi
done
grep -q "needs about" err && grep -q "lower train.batch_size, task.length, model.heads, model.layers or model.d_model" err &&
  ok "the RoPE refusal gives the estimate and what to lower" || bad "RoPE refusal: $(cat err)"

# --- ATTNLAB_MEMORY_LIMIT=1G: a context-1024 config is refused, one that fits stays under it ------
ctx_config() {  # FILE BATCH CONTEXT [MODEL EXTRAS]
  cat >"$1" <<J
{"name": "ctx", "seed": 1, "threads": 1, "task": {"name": "selective_copy", "context": $3},
 "model": {"d_model": 64, "heads": 4, "layers": 2${4:-}},
 "train": {"steps": 2, "batch_size": $2, "warmup": 0, "eval_every": 2, "eval_batches": 1}}
J
}
ctx_config ctx1024.json 32 1024
expect_fail -c 2 -a ctx1024 "available (ATTNLAB_MEMORY_LIMIT)" env ATTNLAB_MEMORY_LIMIT=1G \
  "$bin" train --config ctx1024.json --out ctx1024 -q
grep -qF "train.batch_size 32 x task.context 1024 (1024 tokens)" err &&
  ok "the 1G refusal names the keys: $(head -c 200 err)" || bad "1G refusal: $(cat err)"
ctx_config ctx1024_small.json 2 1024
rc=0
ATTNLAB_MEMORY_LIMIT=1G rss small.kib "$bin" train --config ctx1024_small.json --out small -q >out 2>err || rc=$?
kib=$(cat small.kib)
[ $rc = 0 ] && [ "$kib" -le 1048576 ] && ok "a context-1024 run that fits 1G peaked at ${kib} KiB" ||
  bad "context-1024 under 1G: exit $rc, peak ${kib} KiB: $(head -c 300 err)"

# --- a context-4096 config: refused, no run directory -------------------------------------------
avail=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
ctx_config ctx4096.json 64 4096
if [ "${avail:-0}" -gt 100000000 ]; then
  ok "context 4096: skipped, this machine has over 100 GB available"
else
  rc=0
  (ulimit -v 8000000; timeout 120 "$bin" train --config ctx4096.json --out big -q) >out 2>err || rc=$?
  if [ $rc = 2 ] && grep -q "needs about" err && [ ! -e big ] &&
    grep -qF "train.batch_size 64 x task.context 4096 (4096 tokens)" err; then
    ok "context 4096: refused with the estimate, no run directory: $(head -c 200 err)"
  else
    bad "context 4096: exit $rc, big exists: $([ -e big ] && echo yes || echo no): $(head -c 400 err)"
  fi
fi

# --- the estimate covers the measured peak ------------------------------------------------------
# A limit of 1 MB refuses every config and prints its estimate and what the process held; the
# same command without it runs, and its peak RSS must stay within the two.
# peak_check SPEC NAME: that check for SPEC ("mechanism batch tokens"), its files named NAME.*.
peak_check() {
  local spec=$1 p=$2 mech batch length extra need held peak bound
  read -r mech batch length <<<"$spec"
  case $mech in
    rope) extra=', "position": "rope"' ;;
    dot) extra='' ;;
    *) extra=", \"attention\": \"$mech\"" ;;
  esac
  ctx_config $p.json "$batch" "$length" "$extra"
  ATTNLAB_MEMORY_LIMIT=1M "$bin" train --config $p.json --out $p -q >$p.out 2>$p.err
  need=$(sed -n 's/.* needs about \([0-9.]* [MG]B\) on top of the \([0-9.]* [MG]B\) attnlab holds.*/\1/p' $p.err)
  held=$(sed -n 's/.* needs about \([0-9.]* [MG]B\) on top of the \([0-9.]* [MG]B\) attnlab holds.*/\2/p' $p.err)
  if [ -z "$need" ] || [ -z "$held" ]; then
    bad "$spec: no estimate in the refusal: $(head -c 300 $p.err)"
    return
  fi
  rss $p.kib "$bin" train --config $p.json --out $p -q --force >$p.out 2>$p.err || { bad "$spec: $(tail -2 $p.err)"; return; }
  peak=$(($(cat $p.kib) * 1024)) bound=$(($(to_bytes "$need") + $(to_bytes "$held")))
  if [ $peak -le $bound ]; then
    ok "$spec (mechanism, batch, tokens): peak $((peak >> 20)) MiB <= estimate $need + held $held"
  else
    bad "$spec: peak $((peak >> 20)) MiB > estimate $need + held $held"
  fi
}
# Each process's own peak is measured (getrusage of its own child), so two configs run side by
# side, one per core (each trains on one thread), each lane about half the checks' time.
peak_lane() {  # peak_lane NAME SPEC...
  local name=$1 i=0
  shift
  for spec in "$@"; do
    i=$((i + 1))
    peak_check "$spec" "m$name$i"
  done
}
in_background peaks_a peak_lane a "dot 16 1024" "ky 16 1024" "neural 4 512"
in_background peaks_b peak_lane b "rope 8 1024" "dot 8 512" "pseudo 8 512"
collect peaks_a peaks_b

finish
