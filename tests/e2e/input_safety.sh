#!/usr/bin/env bash
# Issue 30's input findings against the real binary: start-up under `ulimit -v`, out of memory
# while training, ATTNLAB_MEMORY_LIMIT's units, strict JSON for every JSON input, metrics.csv
# step order, non-numeric summary values in compare, decimal-only spectral numbers, and
# `attnlab reproduce` stopped by a signal. Each check failed before its fix.
# usage: input_safety.sh <attnlab>
set -u
bin=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir
export ATTNLAB_PROGRESS=lines

tiny_config tiny.json 8 2 2

# --- 10: start-up under an address-space limit --------------------------------------------------
# Before: OpenBLAS's constructor retried its 128 MiB buffer forever (99% CPU for 10+ minutes).
start=$(date +%s)
rc=0; (ulimit -v 600000; timeout 60 "$bin" --version) >out 2>err || rc=$?
took=$(($(date +%s) - start))
if [ $rc = 2 ] && grep -q "ulimit -v 600000" err && grep -q "ulimit -v unlimited" err; then
  ok "ulimit -v 600000: refused in ${took} s naming the limit and what to do"
else
  bad "ulimit -v 600000: exit $rc after ${took} s (124: it spun): $(head -c 400 err)"
fi
# A limit with room still starts.
rc=0; (ulimit -v 4000000; timeout 60 "$bin" --version) >out 2>err || rc=$?
[ $rc = 0 ] && grep -q "^attnlab " out && ok "ulimit -v 4000000: starts" ||
  bad "ulimit -v 4000000: exit $rc $(head -c 300 err)"

# --- 11: out of memory while training ----------------------------------------------------------
# A batch of 65536 x 16 tokens x d_model 1024 is ~4 GiB per activation. Before: LibTorch's raw
# message and 28 stack frames. Since issue 46 the memory estimate refuses it before allocating
# (exit 2); the message of an allocation failing anyway is checked in test_input_parsing.cpp.
cat >oom.json <<'J'
{"name": "oom", "threads": 1, "task": {"name": "copy", "length": 8},
 "model": {"d_model": 1024, "heads": 4, "layers": 2},
 "train": {"steps": 2, "batch_size": 65536, "warmup": 0, "eval_every": 2, "eval_batches": 1}}
J
rc=0; (ulimit -v 4000000; timeout 120 "$bin" train --config oom.json --out oom -q) >out 2>err || rc=$?
if [ $rc = 2 ] && grep -q "needs about" err && grep -q "train.batch_size 65536" err &&
  grep -q "model.d_model 1024" err && grep -q "model.layers 2" err &&
  ! grep -q "frame #" err && [ "$(wc -l <err)" -le 3 ] && [ ! -e oom ]; then
  ok "out of memory: refused with the estimate and the keys in $(wc -l <err) lines, no frames"
else
  bad "out of memory: exit $rc, $(wc -l <err) lines: $(head -c 600 err)"
fi

# --- 12: ATTNLAB_MEMORY_LIMIT --------------------------------------------------------------------
expect_fail -c 2 'ATTNLAB_MEMORY_LIMIT="abc"' env ATTNLAB_MEMORY_LIMIT=abc "$bin" train --config tiny.json --out m1 -q
grep -q "2G, 512M" err && ok "ATTNLAB_MEMORY_LIMIT=abc: the accepted forms are listed" || bad "forms: $(cat err)"
# "2 G" is 2 GiB, not 2 bytes: geometry's grid needs more, and the message says 2.0 GB available.
expect_fail -c 2 "has 2.0 GB available" env ATTNLAB_MEMORY_LIMIT="2 G" "$bin" geometry --grid 4096 --samples 4096 --json

# --- 17: strict JSON -----------------------------------------------------------------------------
printf '%s' '{"name": "d", "train": {"steps": 10, "steps": 20}}' >dup.json
expect_fail -c 2 "dup.json: duplicate key 'train.steps'" "$bin" train --config dup.json --out j1 -q
printf '%s' '{"name": "c", // a note
"train": {"steps": 10}}' >comment.json
expect_fail -c 2 "comment.json: a comment at offset 14 (line 1, column 15)" "$bin" train --config comment.json --out j2 -q
printf '{"name": "n"}\0' >nul.json
expect_fail -c 2 "nul.json: a NUL byte at offset 13" "$bin" train --config nul.json --out j3 -q
printf '{"name": "t"} {}' >after.json
expect_fail -c 2 "after.json: bytes after the JSON document at offset 14" "$bin" sweep --config after.json --out j4 --list
python3 -c 'open("utf16.json", "wb").write("{\"name\": \"u\"}".encode("utf-16"))'
expect_fail -c 2 "utf16.json: the file is UTF-16 (little-endian); attnlab reads UTF-8 JSON: save it as UTF-8" "$bin" train --config utf16.json --out j5 -q
printf '\xef\xbb\xbf{"name": "bom"}' >bom.json
"$bin" sweep --config bom.json --out j6 --list >out 2>err && ok "a UTF-8 byte-order mark is accepted" ||
  bad "UTF-8 BOM refused: $(cat err)"

# A run to read back (compare, export, resume).
"$bin" train --config tiny.json --out run -q >/dev/null 2>err || fatal "tiny run: $(cat err)"
cp -r run run_dup
python3 - <<'P'
t = open("run_dup/summary.json").read()
open("run_dup/summary.json", "w").write(t.replace('{', '{"steps": 1, ', 1))
P
expect_fail -c 2 "run_dup/summary.json: duplicate key 'steps'" "$bin" compare run_dup

# --- 18b: a string where summary.json has a number ----------------------------------------------
cp -r run run_str
python3 - <<'P'
import json
j = json.load(open("run_str/summary.json")); j["eval_loss"] = "low"
json.dump(j, open("run_str/summary.json", "w"))
P
rc=0; "$bin" compare run_str >out 2>err || rc=$?
[ $rc = 0 ] && grep -q 'run_str/summary.json: eval_loss is "low", not a number' err &&
  ok "compare warns naming summary.json and eval_loss" || bad "compare string value: exit $rc $(cat err)"

# --- 18a: metrics.csv steps must increase --------------------------------------------------------
cp -r run run_zig
python3 - <<'P'
lines = open("run_zig/metrics.csv").read().splitlines(True)
open("run_zig/metrics.csv", "w").write("".join(lines[:3] + [lines[1]] + lines[3:]))
P
expect_fail -c 2 "run_zig/metrics.csv line 4: step 2 goes back from step 4 of line 3" "$bin" compare run_zig
expect_fail "metrics.csv line 4: step 2 goes back" "$bin" export --run run_zig --figure loss --format csv --out zig.csv
expect_fail -c 2 "metrics.csv line 4: step 2 goes back" "$bin" train --resume run_zig --steps 12 -q

# --- 18c: spectral numbers are decimal ---------------------------------------------------------
printf '1,0x10\n0,1\n' >hex.csv
expect_fail -c 2 "row 1, column 2 (line 1): '0x10' is hexadecimal" "$bin" spectral --matrix hex.csv
printf '1,0\n1e-400,1\n' >tiny.csv
expect_fail -c 2 "'1e-400' is out of range (underflows to 0" "$bin" spectral --matrix tiny.csv
printf '0.5,0\n0,0.5\n' >ok.csv
expect_fail -c 2 "'0x10' is hexadecimal" "$bin" spectral --matrix ok.csv --control spec --limit 0x10

# --- 16: reproduce stopped by a signal --------------------------------------------------------
# Before: no handler, so the process died silently (its runs SIGKILLed with it).
"$bin" reproduce --paper conn --quick --seeds 1 --out "$work/rep" >rep.out 2>rep.err &
pid=$!
wait_until 300 0.1 grep -q ": training" rep.err || true
sleep 1
kill -TERM $pid
rc=0; wait $pid || rc=$?
if [ $rc = 143 ] && grep -qF "continue with" <(tr 'A-Z' 'a-z' <rep.err) &&
  grep -qF "attnlab reproduce --paper conn --quick --seeds 1 --out $work/rep" rep.err &&
  grep -q "interrupted by SIGTERM" rep.err; then
  ok "reproduce: SIGTERM -> exit 143, what is kept and the command to continue"
else
  bad "reproduce SIGTERM: exit $rc: $(tail -5 rep.err)"
fi
finish
