#!/usr/bin/env bash
# `attnlab export --figure attention --crop REGION` (issue 48 item 7) on a real MQAR run: the CSV
# holds only the region's rows (queries) and columns (keys), cell for cell the whole map's values;
# "whole" is the whole map; a bad region name exits 2 naming the run's regions and writes nothing;
# --crop with another figure is refused. (The regions themselves are checked against the task's
# generator in tests/core/test_task_regions.cpp.)
# usage: export_crop_test.sh <attnlab> <repo>
set -u
bin=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP

cat >"$work/mqar.json" <<'JSON'
{"name": "mqar", "seed": 1, "task": {"name": "mqar", "vocab": 64, "length": 4, "context": 32},
 "model": {"d_model": 16, "heads": 2, "layers": 1, "attention": "dot"},
 "train": {"steps": 10, "batch_size": 8, "lr": 3e-3, "warmup": 2, "eval_every": 5,
           "eval_batches": 1, "record_every": 0}}
JSON
"$bin" train --config "$work/mqar.json" --out "$work/run" --threads 1 --quiet >"$work/train.log" 2>&1 ||
  fatal "training failed: $(tail -3 "$work/train.log")"

export_csv() {  # export_csv <file> [--crop NAME]
  local out=$1; shift
  "$bin" export --run "$work/run" --figure attention --out "$out" "$@" >"$work/out" 2>"$work/err" ||
    { bad "export $*: $(cat "$work/err")"; return 1; }
}
# check_crop <full.csv> <cropped.csv> <rows> <cols>: the cropped file's heatmap cells are exactly
# rows x cols (python ranges "a:b", inclusive; "q" for the rows: at 8 or later, contiguous) with
# the full file's values.
check_crop() {
  python3 - "$@" <<'PY'
import csv, sys
def cells(path):
    out = {}
    for r in csv.DictReader(open(path)):
        if r["kind"] == "heatmap":
            out[(r["layer"], r["head"], int(r["query"]), int(r["key"]))] = r["weight"]
    return out
full, crop = cells(sys.argv[1]), cells(sys.argv[2])
rows = sorted({k[2] for k in crop}); cols = sorted({k[3] for k in crop})
def rng(s):
    a, b = map(int, s.split(":")); return list(range(a, b + 1))
want_cols = rng(sys.argv[4])
if sys.argv[3] == "q":
    ok_rows = rows and rows[0] >= 8 and rows == list(range(rows[0], rows[-1] + 1)) and len(rows) < 24
else:
    ok_rows = rows == rng(sys.argv[3])
problems = []
if not ok_rows: problems.append(f"rows {rows}")
if cols != want_cols: problems.append(f"cols {cols}")
if len({(k[0], k[1]) for k in crop}) != 2: problems.append("not both heads")
if any(full.get(k) != v for k, v in crop.items()): problems.append("values differ from the whole map's")
print("; ".join(problems))
sys.exit(1 if problems else 0)
PY
}

export_csv "$work/full.csv" && ok "whole attention figure exported"
export_csv "$work/context.csv" --crop context &&
  { msg=$(check_crop "$work/full.csv" "$work/context.csv" 0:7 0:7) && ok "--crop context: rows and keys 0-7 (the 4 pairs)" || bad "--crop context: $msg"; }
export_csv "$work/qc.csv" --crop queries-context &&
  { msg=$(check_crop "$work/full.csv" "$work/qc.csv" q 0:7) && ok "--crop queries-context: the query rows, the context's keys" || bad "--crop queries-context: $msg"; }
export_csv "$work/whole.csv" --crop whole &&
  { msg=$(check_crop "$work/full.csv" "$work/whole.csv" 0:31 0:31) && ok "--crop whole: the whole map" || bad "--crop whole: $msg"; }
export_csv "$work/qc.png" --crop queries-context && [ -s "$work/qc.png" ] && ok "--crop to a PNG"

# Refusals: exit 2, the message names the allowed regions, nothing written.
expect_fail -c 2 -a "$work/bad.csv" "give one of: whole, context, queries, queries-context" \
  "$bin" export --run "$work/run" --figure attention --out "$work/bad.csv" --crop answers
[ ! -e "$work/bad.json" ] && ok "no sidecar for a refused crop" || bad "bad.json written"
expect_fail -c 2 -a "$work/loss.csv" "--crop context goes with --figure attention" \
  "$bin" export --run "$work/run" --figure loss --out "$work/loss.csv" --crop context
summary
