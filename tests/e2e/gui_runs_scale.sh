#!/usr/bin/env bash
# GUI test of the Runs panel at scale and of what it says: the real window under Xvfb.
# usage: gui_runs_scale.sh <path-to-attnlab>
# Checks:
#  1. Following a run of 300,000 metrics rows (12 MB): the window draws its curves (they were one
#     polyline too many for ImGui's 16-bit indices: SIGSEGV), survives its frames, takes a
#     screenshot with real content, and reads every row.
#  2. Following a folder of 2,000 runs, all ticked: every run is listed and the window survives.
#  3. Open on a run whose checkpoint/model.safetensors is corrupt reports the load's failure naming the
#     file (it said "opened ... loaded"); Open on an intact copy reports "loaded".
#  4. A followed run whose directory is deleted is marked "deleted", its last data kept.
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_runs_scale.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
need xvfb-run "apt-get install xvfb xauth"
need python3
MAKE_RUNS=$E2E_DIR/make_runs.py

cat >"$TMP/cfg.json" <<'JSON'
{"name": "scale", "seed": 3, "threads": 1, "task": {"name": "copy", "length": 6, "vocab": 10},
 "model": {"d_model": 16, "heads": 2, "layers": 1, "attention": "dot"},
 "train": {"steps": 20, "batch_size": 8, "lr": 3e-3, "warmup": 2, "eval_every": 10}}
JSON
"$ATTNLAB" train --config "$TMP/cfg.json" --out "$TMP/real" --threads 1 >"$TMP/train.log" 2>&1 ||
  fail "attnlab train failed: $(tail -3 "$TMP/train.log")"

# 1. 300,000 rows.
python3 "$MAKE_RUNS" "$TMP/real/config.json" "$TMP/big" 300000
ATTN_GUI_REPORT=$TMP/report1.json run_xvfb --run "$TMP/big" --panel runs --frames 400 \
  --screenshot "$TMP/big.png" || fail "1: the window following 300,000 rows exited with $?"
check_report "$TMP/report1.json" \
  '[x for x in r["runs"] if x["path"].endswith("/big") and x["metric_rows"] == 300000 and x["selected"]]' \
  "1: the 300,000-row run was not read whole"
screenshot_ok "$TMP/big.png" || fail "1: the screenshot of the 300,000-row run is blank"
ok "1: a run of 300,000 rows is followed and drawn"

# 2. 2,000 runs, all ticked.
python3 "$MAKE_RUNS" "$TMP/real/config.json" "$TMP/many" 5 2000
ATTN_GUI_REPORT=$TMP/report2.json run_xvfb --run "$TMP/many" --panel runs --frames 200 \
  --screenshot "$TMP/many.png" || fail "2: the window following 2,000 runs exited with $?"
check_report "$TMP/report2.json" \
  'len([x for x in r["runs"] if "/many/run-" in x["path"] and x["selected"]]) == 2000' \
  "2: the 2,000 runs are not all listed and ticked"
screenshot_ok "$TMP/many.png" || fail "2: the screenshot of 2,000 runs is blank"
ok "2: 2,000 followed runs are listed and drawn"

# 3. Open: a corrupt checkpoint fails naming the file; an intact one loads.
cp -r "$TMP/real" "$TMP/corrupt"
python3 - "$TMP/corrupt/checkpoint/model.safetensors" <<'PY'
import sys
p = sys.argv[1]
data = bytearray(open(p, "rb").read())
for i in range(64, min(len(data), 4096)):
    data[i] ^= 0x5A
open(p, "wb").write(bytes(data))
PY
ATTN_GUI_OPEN_RUN=$TMP/corrupt ATTN_GUI_REPORT=$TMP/report3.json \
  run_xvfb --config "$TMP/cfg.json" --panel runs --frames 200 || fail "3: the window exited with $?"
check_report "$TMP/report3.json" \
  '[x for x in r["runs"] if x["path"].endswith("/corrupt") and x["open"] == "failed" and "model.safetensors" in x["open_error"]]' \
  "3: Open of a corrupt checkpoint did not report the failure naming model.safetensors"
ATTN_GUI_OPEN_RUN=$TMP/real ATTN_GUI_REPORT=$TMP/report3b.json \
  run_xvfb --config "$TMP/cfg.json" --panel runs --frames 200 || fail "3: the window exited with $?"
check_report "$TMP/report3b.json" \
  '[x for x in r["runs"] if x["path"].endswith("/real") and x["open"] == "loaded" and x["open_error"] == ""]' \
  "3: Open of an intact checkpoint did not report loaded"
ok "3: Open reports the trainer's outcome (failed naming model.safetensors; loaded)"

# 4. A followed run deleted while the window is open.
cp -r "$TMP/real" "$TMP/doomed"
start_xvfb
ATTN_GUI_REPORT=$TMP/report4.json timeout 120 "$ATTNLAB" gui --config "$TMP/cfg.json" \
  --run "$TMP/doomed" --panel runs >"$TMP/log" 2>&1 &
APP_PID=$!
wait_window
sleep 3
rm -rf "$TMP/doomed"
sleep 3
alive || fatal "4: the window died when a followed run was deleted"
close_app
[[ $rc == 0 ]] || fail "4: the window exited with $rc"
check_report "$TMP/report4.json" \
  '[x for x in r["runs"] if x["path"].endswith("/doomed") and x["state"] == "deleted" and x["gone"] and x["metric_rows"] >= 1 and "gone" in x["error"]]' \
  "4: a deleted run is not marked deleted with its last data"
ok "4: a followed run that is deleted is marked deleted, its last data kept"
finish
