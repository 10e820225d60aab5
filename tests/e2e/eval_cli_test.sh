#!/usr/bin/env bash
# End-to-end checks of `attnlab eval --context` (issue 35, train short and test long) on real
# runs: at the training length it prints the run's own eval (summary.json); rope and alibi runs
# evaluate at 2x and 4x their length with finite figures; a learned position table is refused
# beyond its length with the reason; --figure writes metric-against-length; bad lengths and a
# task without a length exit 2 naming the culprit.
# usage: eval_cli_test.sh <attnlab>
set -u
bin=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir

for pos in learned rope alibi; do
  cat >"$pos.json" <<J
{"name": "$pos", "seed": 1, "threads": 1, "task": {"name": "copy", "length": 6, "vocab": 8},
 "model": {"d_model": 32, "heads": 2, "layers": 2, "position": "$pos"},
 "train": {"steps": 200, "batch_size": 16, "lr": 3e-3, "warmup": 20, "eval_every": 100,
           "eval_batches": 2}}
J
  "$bin" train --config "$pos.json" --out "$pos" --quiet >"$pos.log" 2>&1 || bad "training $pos: $(tail -2 "$pos.log")"
done

if "$bin" eval --run rope --context 6 --json >own.json 2>err; then ok "eval --context 6"; else bad "eval: $(cat err)"; fi
python3 - own.json rope/summary.json <<'P' && ok "at the training length: the run's own eval" || bad "training length: $(cat own.json)"
import json, sys
j, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert set(j) >= {"context", "eval_loss", "eval_accuracy", "batches"}, j
assert j["context"] == 6 and j["key"] == "task.length" and j["batches"] == 2, j
assert abs(j["eval_loss"] - s["eval_loss"]) <= 1e-6 * abs(s["eval_loss"]), (j["eval_loss"], s["eval_loss"])
assert j["eval_accuracy"] == s["eval_accuracy"], (j["eval_accuracy"], s["eval_accuracy"])
P
if "$bin" eval --run rope --run alibi --context 6,12,24 --json --figure len.png >sweep.json 2>err; then ok "eval over lengths, two runs"; else bad "eval sweep: $(cat err)"; fi
python3 - sweep.json <<'P' && ok "rope and alibi run at 2x and 4x: finite, one row per run and length" || bad "sweep: $(head -c 500 sweep.json)"
import json, math, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 6, len(rows)
assert [r["context"] for r in rows] == [6, 12, 24] * 2
assert [r["tokens"] for r in rows[:3]] == [12, 24, 48]
assert all(math.isfinite(r["eval_loss"]) and 0 <= r["eval_accuracy"] <= 1 for r in rows)
P
[ -s len.png ] && [ -s len.csv ] && [ -s len.json ] && ok "--figure writes the length figure with its sidecars" || bad "no len.png: $(cat err)"

refuses() {  # refuses WHAT PATTERN ARGS...: exit 2, PATTERN on stderr, nothing on stdout
  shift
  local pattern=$1
  shift
  expect_fail -c 2 -q -- "$pattern" "$bin" eval "$@"
}
refuses "a learned table beyond its length" "rope, alibi and none extrapolate" --run learned --context 24
refuses "a length that is not a number" "is not a length" --run rope --context 6,x
refuses "length 0" "lengths start at 1" --run rope --context 0
cat >modadd.json <<'J'
{"name": "modadd", "seed": 1, "threads": 1, "task": {"name": "modadd", "modulus": 7},
 "model": {"d_model": 16, "heads": 2, "layers": 1},
 "train": {"steps": 4, "batch_size": 8, "warmup": 1, "eval_every": 2, "eval_batches": 1}}
J
"$bin" train --config modadd.json --out modadd --quiet >/dev/null 2>&1 || bad "training modadd"
refuses "a task without a length" "task \"modadd\"" --run modadd --context 4
finish
