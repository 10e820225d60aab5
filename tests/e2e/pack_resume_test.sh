#!/usr/bin/env bash
# A pack stopped by a signal (issue 50, packs): SIGTERM to `attnlab sweep --pack 2` reaches the
# pack's process, every run saves its checkpoint and an interrupted summary naming the signal,
# the sweep exits 143; the same command again resumes both runs, and their metrics.csv equal
# the runs trained solo without a stop, byte for byte (steps_per_s aside: a wall-clock rate).
# usage: pack_resume_test.sh <attnlab>
set -u
bin=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir

cat >tiny.json <<'JSON'
{"name": "tiny", "seed": 5, "threads": 1,
 "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 1, "dropout": 0.1},
 "train": {"steps": 1000, "batch_size": 8, "warmup": 5, "eval_every": 50, "eval_batches": 2}}
JSON
sweep=(sweep --config tiny.json --seeds 2 --checkpoint-every 100 -q)
"$bin" "${sweep[@]}" --out S >/dev/null 2>>"$E2E_TMP/log" || bad "the solo sweep failed"

"$bin" "${sweep[@]}" --out P --pack 2 >/dev/null 2>P.err &
pid=$!
# Both runs past their first checkpoint (step 100: the header and 2 rows), then SIGTERM.
past() { [ "$(wc -l <P/base/seed-5/metrics.csv)" -ge 4 ] && [ "$(wc -l <P/base/seed-6/metrics.csv)" -ge 4 ]; } 2>/dev/null
wait_until 300 0.05 past || bad "the packed runs never reached step 100"
kill -TERM $pid
wait $pid
rc=$?
cat P.err >>"$E2E_TMP/log"
check "SIGTERM: the packed sweep exits 143 (got $rc)" [ $rc = 143 ]
check "both packed runs say they were interrupted by SIGTERM" \
  [ "$(grep -c 'seed-[56]: interrupted by SIGTERM at step' P.err)" = 2 ]
check "both runs saved a checkpoint and an interrupted summary" python3 - <<'PY'
import json, os
for s in (5, 6):
    d = f"P/base/seed-{s}"
    j = json.load(open(d + "/summary.json"))
    assert j.get("interrupted") is True and j.get("interrupted_by") == "SIGTERM", j
    assert j["steps"] < 1000 and os.path.exists(d + "/checkpoint/state.json"), j
PY
"$bin" "${sweep[@]}" --out P --pack 2 >again.out 2>>"$E2E_TMP/log"
check "the same command again resumes both runs in a pack and finishes (exit $?)" \
  grep -q "^sweep: 0 run, 2 resumed, 0 already done" again.out
for s in 5 6; do
  check "seed-$s: the stopped and resumed packed run equals the solo run (steps_per_s aside)" \
    cmp -s <(cut -d, -f1-5 "S/base/seed-$s/metrics.csv") <(cut -d, -f1-5 "P/base/seed-$s/metrics.csv")
done
check "the resumed runs finished their 1000 steps" \
  [ "$(tail -n 1 P/base/seed-6/metrics.csv | cut -d, -f1)" = 1000 ]
finish
