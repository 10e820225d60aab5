#!/usr/bin/env bash
# End-to-end checks of packs (`attnlab sweep --pack N`, issue 50): a pack's runs train together
# in one process, on threads with one torch thread each, and each packed run's metrics.csv equals
# its solo run's byte for byte (steps_per_s aside: a wall-clock rate); a run that fails or
# diverges in a pack leaves the others complete, every exit code recorded in pack.json, and the
# sweep's exit code as without packs; --pack refusals exit 2 and write nothing.
# usage: pack_test.sh <attnlab>
set -u
bin=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir
rejects() { expect_fail -c 2 -k -- "$@"; }

# The CLI scripts' copy model: one torch thread, 60 steps, an evaluation every 20.
cat >tiny.json <<'JSON'
{"name": "tiny", "seed": 5, "threads": 1,
 "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 1},
 "train": {"steps": 60, "batch_size": 8, "warmup": 5, "eval_every": 20, "eval_batches": 2}}
JSON

# --- bit identity: 4 cells (two mechanisms x dropout 0 and 0.1), solo and in packs of 3 -------
grid=(sweep --config tiny.json --vary model.attention=dot,ky --vary model.dropout=0,0.1 -q)
"$bin" "${grid[@]}" --out solo >solo.out 2>>"$E2E_TMP/log" || bad "the solo sweep failed"
"$bin" "${grid[@]}" --out packed --pack 3 >packed.out 2>packed.err || bad "the packed sweep failed: $(tail -5 packed.err)"
cat packed.err >>"$E2E_TMP/log"
check "the packed sweep says each pack's runs and their steps/s together" \
  grep -q "pack of 3 runs in one process: .* steps/s together over .* s (pack.json)" packed.err
# steps_per_s (column 6) is a wall-clock rate; every other column must be equal byte for byte.
same=0 cells=0
for d in solo/*/seed-5; do
  c=${d#solo/}
  cells=$((cells + 1))
  if cmp -s <(cut -d, -f1-5 "solo/$c/metrics.csv") <(cut -d, -f1-5 "packed/$c/metrics.csv") &&
    [ "$(head -n 1 "packed/$c/metrics.csv")" = "step,train_loss,eval_loss,eval_accuracy,lr,steps_per_s" ] &&
    [ "$(wc -l <"packed/$c/metrics.csv")" = 4 ]; then
    same=$((same + 1))
  else
    bad "packed $c differs from solo: $(diff <(cut -d, -f1-5 "solo/$c/metrics.csv") <(cut -d, -f1-5 "packed/$c/metrics.csv") | head -5)"
  fi
done
check "all 4 packed runs' metrics.csv equal their solo runs' (steps_per_s aside)" [ $same = 4 -a $cells = 4 ]
check "packed and solo summaries agree (losses, accuracy, steps)" python3 - <<'PY'
import json, pathlib
for s in pathlib.Path("solo").glob("*/seed-5/summary.json"):
    p = pathlib.Path("packed") / s.relative_to("solo")
    a, b = json.load(open(s)), json.load(open(p))
    for k in ("steps", "eval_loss", "eval_accuracy", "final_train_loss", "diverged"):
        assert a.get(k) == b.get(k), (str(s), k, a.get(k), b.get(k))
    assert b["steps_per_second"] > 0
PY
check "the dropout cells' metrics differ from the no-dropout ones (the stream is exercised)" \
  bash -c '! cmp -s <(cut -d, -f2 "packed/model.attention=dot,model.dropout=0/seed-5/metrics.csv") <(cut -d, -f2 "packed/model.attention=dot,model.dropout=0.1/seed-5/metrics.csv")'
check "pack.json: two packs (3 cells, then 1), exit codes 0, steps/s summed, wall time" python3 - <<'PY'
import json
j = json.load(open("packed/pack.json"))
assert j["pack"] == 3, j
p = j["packs"]
assert [len(x["cells"]) for x in p] == [3, 1], p
for x in p:
    assert x["exit_codes"] == [0] * len(x["cells"]), x
    assert x["wall_seconds"] > 0 and abs(sum(x["steps_per_second"]) - x["steps_per_second_sum"]) < 1e-6
    for c, sps in zip(x["cells"], x["steps_per_second"]):
        assert abs(json.load(open("packed/" + c + "/summary.json"))["steps_per_second"] - sps) < 1e-9 * sps
PY
check "the pack's files (specs, results, cell configs) are gone" \
  bash -c '[ -z "$(find packed -name "*.pack.json" -o -name "*.pack-result.json" -o -name "*.cell.json")" ]'
# Run again: every cell done, nothing trains, no pack starts.
"$bin" "${grid[@]}" --out packed --pack 3 >again.out 2>again.err
check "a packed sweep run again skips its 4 finished cells" grep -q "^sweep: 0 run, 0 resumed, 4 already done" again.out

# --pack 1 given: packs of one run (the same process layout as larger packs, for pack scaling).
"$bin" sweep --config tiny.json --out P1 --pack 1 -q >/dev/null 2>>"$E2E_TMP/log"
check "--pack 1: a pack of one run, recorded in pack.json" python3 -c '
import json
p = json.load(open("P1/pack.json"))
assert p["pack"] == 1 and [x["cells"] for x in p["packs"]] == [["base/seed-5"]], p'

# --- failure isolation: a refused run and two diverging ones in a pack of 4 ------------------
fail=(sweep --config tiny.json --vary train.lr=0.003,1e9 --seeds 2 -q --out F --pack 4)
# lr=0.003/seed-6 cannot start: its checkpoint/ holds a file attnlab did not write.
mkdir -p "F/train.lr=0.003/seed-6/checkpoint" && echo mine >"F/train.lr=0.003/seed-6/checkpoint/notes.txt"
"$bin" "${fail[@]}" >fail.out 2>fail.err
rc=$?
cat fail.err >>"$E2E_TMP/log"
check "a failed cell in a pack: the sweep exits 1, as without packs (got $rc)" [ $rc = 1 ]
check "the sweep names the failed cell" grep -q "train.lr=0.003/seed-6) failed (exit 2)" fail.err
check "the failed run says why" grep -q "seed-6: failed: .*holds checkpoint/ that attnlab did not write" fail.err
check "the others ran to their end: one finished, two diverged (summaries say so)" python3 - <<'PY'
import json
ok = json.load(open("F/train.lr=0.003/seed-5/summary.json"))
assert ok["steps"] == 60 and not ok.get("diverged"), ok
for s in (5, 6):
    d = json.load(open(f"F/train.lr=1e+09/seed-{s}/summary.json"))
    assert d.get("diverged") is True, d
PY
check "pack.json records each run's exit code: 0, 2 (refused), 3, 3 (diverged)" python3 - <<'PY'
import json
p = json.load(open("F/pack.json"))["packs"]
assert len(p) == 1 and p[0]["cells"] == ["train.lr=0.003/seed-5", "train.lr=0.003/seed-6",
                                         "train.lr=1e+09/seed-5", "train.lr=1e+09/seed-6"], p
assert p[0]["exit_codes"] == [0, 2, 3, 3], p
PY
check "the file attnlab did not write is untouched" [ "$(cat "F/train.lr=0.003/seed-6/checkpoint/notes.txt")" = mine ]
check "no summary for the refused run" [ ! -e "F/train.lr=0.003/seed-6/summary.json" ]

# --- refusals: exit 2, a message naming the option and its range, nothing written ----------
rejects "--pack: Value -1 not in range 0 to 4096" "$bin" sweep --config tiny.json --out R1 --pack -1
check "the refused --pack -1 created nothing" [ ! -e R1 ]
rejects "--threads 2 with --pack 2: a packed run trains on one torch thread" \
  "$bin" sweep --config tiny.json --seeds 2 --out R2 --pack 2 --threads 2
check "the refused --threads with --pack created nothing" [ ! -e R2 ]
rejects "--threads 2 with --pack 2" "$bin" reproduce --paper conn --quick --out R6 --pack 2 --threads 2
check "the refused reproduce --pack 2 --threads 2 created nothing" [ ! -e R6 ]
# A pack's runs share one process: its memory is the sum of theirs. 64 tiny runs (about 50 MiB
# each) do not fit 1.5 GiB together, one does.
ATTNLAB_MEMORY_LIMIT=1536M rejects "--pack 64: its 64 runs train in one process, together" \
  "$bin" sweep --config tiny.json --seeds 64 --out R4 --pack 64
check "the refused pack created nothing" [ ! -e R4 ]
ATTNLAB_MEMORY_LIMIT=1536M "$bin" sweep --config tiny.json --seeds 2 --out R5 --pack 2 -q \
  >/dev/null 2>>"$E2E_TMP/log"
check "a pack of 2 fits the same limit" grep -q '"exit_codes": \[' R5/pack.json

# --- suite --pack: the same leaderboard cells as one process per run --------------------------
suite=(suite --quick --tasks parity --mechanisms dot --seeds 1 --threads 1)
"$bin" "${suite[@]}" --out QS >/dev/null 2>>"$E2E_TMP/log" || bad "the solo suite failed"
"$bin" "${suite[@]}" --out QP --pack 4 >/dev/null 2>>"$E2E_TMP/log" || bad "the packed suite failed"
check "suite --pack 4: its runs went in packs (QP/runs/pack.json), same leaderboard cells" python3 - <<'PY'
import json
p = json.load(open("QP/pack.json"))
assert p["pack"] == 4 and p["packs"] and max(len(x["cells"]) for x in p["packs"]) > 1, p
s, q = (json.load(open(d + "/leaderboard.json")) for d in ("QS", "QP"))
assert q["cells"] == s["cells"] and all(c["status"] == "done" for c in q["cells"]), q["cells"]
PY
finish
