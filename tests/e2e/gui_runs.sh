#!/usr/bin/env bash
# GUI test of run recording and following: the real window under Xvfb.
# usage: gui_runs.sh <path-to-attnlab>
# Checks:
#  1. A run trained in the window and closed mid-training leaves a complete run directory under
#     $XDG_DATA_HOME/attnlab/runs: config.json, metrics.csv (whole rows), checkpoint/, and a
#     summary.json written last that says "window closed" at the checkpoint's step; `attnlab
#     train --resume` continues it (the checkpoint is real); the exit report lists it under
#     "runs". A run that finishes in the window has one metrics row per evaluation, at the
#     steps the config implies, and a plain (not interrupted) summary; --runs-dir moves it.
#  2. `gui --run DIR` on a directory a concurrent `attnlab train` is writing reads more metric
#     rows while it is open (rows first seen < rows at the end, several reads), state "live".
#  3. A half-written last line of metrics.csv is never parsed as data.
#  4. Help > Getting started and Help > Experiments draw; the picker lists every shipped config.
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_runs.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
need xvfb-run "apt-get install xvfb xauth"
need python3
ROOT=$XDG_DATA_HOME/attnlab/runs

cat >"$TMP/long.json" <<'JSON'
{"name": "rec", "seed": 3, "threads": 1, "task": {"name": "copy", "length": 6, "vocab": 10},
 "model": {"d_model": 32, "heads": 2, "layers": 1, "attention": "dot"},
 "train": {"steps": 100000, "batch_size": 16, "lr": 3e-3, "warmup": 5, "eval_every": 10}}
JSON
sed -e 's/"rec"/"fin"/' -e 's/"steps": 100000/"steps": 60/' "$TMP/long.json" >"$TMP/short.json"

# 1a. Closed while training.
ATTN_GUI_REPORT=$TMP/report1.json run_xvfb --config "$TMP/long.json" --autostart --frames 400 ||
  fail "the window exited with $?"
E2E_TMP=$E2E_TMP python3 - "$ROOT" "$TMP/report1.json" <<'PY' || fail "1a: the recorded run is incomplete"
import glob, json, os, sys
root, report = sys.argv[1], json.load(open(sys.argv[2]))
dirs = glob.glob(os.path.join(root, "rec-*"))
assert len(dirs) == 1, "want one run directory under %s, found %s" % (root, os.listdir(root))
d = dirs[0]
for f in ("config.json", "metrics.csv", "summary.json", "checkpoint/state.json"):
    assert os.path.isfile(os.path.join(d, f)), "missing " + f
cfg = json.load(open(os.path.join(d, "config.json")))
assert cfg["name"] == "rec" and cfg["train"]["eval_every"] == 10, cfg
# The Run panel shows the config's fixed thread count and says why.
run = report["run"]
assert run["threads"] == 1 and "fixed" in run["threads_reason"], run
text = open(os.path.join(d, "metrics.csv")).read()
assert text.endswith("\n"), "metrics.csv ends in a partial row"
lines = text.splitlines()
assert lines[0] == "step,train_loss,eval_loss,eval_accuracy,lr,steps_per_s", lines[0]
rows = [l.split(",") for l in lines[1:]]
assert rows, "no metrics rows"
steps = [int(r[0]) for r in rows]
assert all(len(r) == 6 for r in rows), "a row without 6 fields"
assert steps == [10 * (i + 1) for i in range(len(steps))], "rows at %s" % steps
# A learned copy task's loss reaches exactly 0 in float32 (CI's faster window trained that far),
# so losses must be present, finite and non-negative, not positive.
import math
for r in rows:
    assert r[1] != "" and r[2] != "", "a row without its losses: %s" % r
    for v in (float(r[1]), float(r[2])):
        assert math.isfinite(v) and v >= 0, "a row with a bad loss: %s" % r
summary = json.load(open(os.path.join(d, "summary.json")))
state = json.load(open(os.path.join(d, "checkpoint/state.json")))
assert summary["interrupted"] is True and summary["interrupted_by"] == "window closed", summary
assert summary["steps"] == state["step"] >= steps[-1], (summary["steps"], state["step"], steps[-1])
assert summary["source"] == "gui" and summary["mechanism"] == "dot", summary
runs = report["runs"]
mine = [r for r in runs if r["path"] == os.path.realpath(d) or r["path"] == d]
assert mine, "the report's runs %s lack %s" % (runs, d)
assert mine[0]["own"] and mine[0]["metric_rows"] >= 1, mine[0]
print("1a: %s: %d rows, step %d" % (os.path.basename(d), len(rows), summary["steps"]))
open(os.path.join(os.environ["E2E_TMP"], "rec_dir"), "w").write(d)
PY
REC=$(cat "$TMP/rec_dir")
STEP=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["step"])' "$REC/checkpoint/state.json")
"$ATTNLAB" train --resume "$REC" --out "$TMP/resumed" --steps $((STEP + 10)) --threads 1 \
  >"$TMP/resume.log" 2>&1 || fail "1a: train --resume of the window's run failed: $(tail -3 "$TMP/resume.log")"
ok "1a: a run closed mid-training is complete and resumable ($REC)"

# 1b. Finished in the window, recorded under --runs-dir.
run_xvfb --config "$TMP/short.json" --autostart --frames 1500 --runs-dir "$TMP/mine" ||
  fail "the window exited with $?"
python3 - "$TMP/mine" <<'PY' || fail "1b: the finished run's directory is wrong"
import glob, json, os, sys
dirs = glob.glob(os.path.join(sys.argv[1], "fin-*"))
assert len(dirs) == 1, dirs
d = dirs[0]
summary = json.load(open(os.path.join(d, "summary.json")))
assert summary["steps"] == 60 and "interrupted" not in summary, summary
steps = [int(l.split(",")[0]) for l in open(os.path.join(d, "metrics.csv")).read().splitlines()[1:]]
assert steps == [10, 20, 30, 40, 50, 60], steps
PY
[[ ! -e $ROOT/$(ls "$TMP/mine")  ]] || fail "1b: --runs-dir also wrote under the default root"
ok "1b: a run finished in the window has a row per evaluation and a plain summary"

# 2. Following a run another process is writing.
sed -e 's/"rec"/"remote"/' "$TMP/long.json" >"$TMP/remote.json"
"$ATTNLAB" train --config "$TMP/remote.json" --out "$TMP/remote" --threads 1 >"$TMP/train.log" 2>&1 &
TRAIN_PID=$!
rows() { [[ -f $TMP/remote/metrics.csv ]] && echo $(($(wc -l <"$TMP/remote/metrics.csv") - 1)) || echo 0; }
has_rows() { [ "$(rows)" -ge 2 ]; }
wait_until 300 0.1 has_rows || { kill "$TRAIN_PID"; fail "2: attnlab train wrote no rows"; }
ATTN_GUI_REPORT=$TMP/report2.json run_xvfb --run "$TMP/remote" --frames 900 ||
  { kill "$TRAIN_PID"; fail "the window exited with $?"; }
kill -INT "$TRAIN_PID"; wait "$TRAIN_PID" || true
python3 - "$TMP/report2.json" "$TMP/remote" <<'PY' || fail "2: the followed run did not update"
import json, os, sys
runs = json.load(open(sys.argv[1]))["runs"]
r = [x for x in runs if x["path"] == os.path.abspath(sys.argv[2])]
assert r, "the report's runs %s lack %s" % (runs, sys.argv[2])
r = r[0]
assert r["state"] == "live", r
assert r["selected"] and not r["own"], r
assert r["reads"] >= 2 and r["metric_rows"] > r["first_rows"] >= 1, r
print("2: rows %d when first read, %d at the end, %d reads" % (r["first_rows"], r["metric_rows"], r["reads"]))
PY
ok "2: gui --run follows a run that attnlab train is writing"

# 3. A half-written last line is not data.
mkdir "$TMP/half"
cp "$TMP/remote/config.json" "$TMP/half/"
head -n 4 "$TMP/remote/metrics.csv" >"$TMP/half/metrics.csv"
printf '999,0.5,0.4' >>"$TMP/half/metrics.csv"  # no newline: being written
ATTN_GUI_REPORT=$TMP/report3.json run_xvfb --run "$TMP/half" --frames 20 ||
  fail "the window exited with $?"
python3 - "$TMP/report3.json" "$TMP/half" <<'PY' || fail "3: a half-written line was parsed"
import json, os, sys
r = [x for x in json.load(open(sys.argv[1]))["runs"] if x["path"] == os.path.abspath(sys.argv[2])][0]
complete = open(os.path.join(sys.argv[2], "metrics.csv")).read().count("\n") - 1
assert r["metric_rows"] == complete == 3 and r["step"] != 999 and r["error"] == "", r
PY
ok "3: a half-written last metrics line is not read"

# 4. Help: the guide and the experiment picker draw (ImGui would abort on a broken table), and
#    the picker lists exactly the shipped top-level configs.
ATTN_GUI_OPEN_HELP=guide,experiments ATTN_GUI_REPORT=$TMP/report4.json \
  run_xvfb --config "$TMP/long.json" --frames 30 --screenshot "$TMP/help.png" ||
  fail "the window with the Help windows exited with $?"
python3 - "$TMP/report4.json" <<'PY' || fail "4: the Help windows are wrong"
import json, os, sys
h = json.load(open(sys.argv[1]))["help"]
assert h["guide"] and h["experiments"], h
d = h["configs_dir"]
shipped = sorted(f for f in os.listdir(d) if f.endswith(".json"))
assert sorted(h["listed"]) == shipped and len(shipped) >= 20, (h["listed"], shipped)
print("4: the picker lists %d experiments from %s" % (len(shipped), d))
PY
ok "4: Help shows the guide and one row per shipped experiment"

# 5. `gui --run A --run B` opens every run given in Runs (listed, ticked, overlaid), each with
#    the config keys that tell them apart; --step with two is refused (gui_timeline.sh).
cp -r "$TMP/half" "$TMP/half2"
sed -i 's/"seed": 3/"seed": 5/' "$TMP/half2/config.json"
ATTN_GUI_REPORT=$TMP/report5.json run_xvfb --run "$TMP/half" --run "$TMP/half2" --frames 40 ||
  fail "5: the window with two --run exited with $?"
python3 - "$TMP/report5.json" "$TMP/half" "$TMP/half2" <<'PY' || fail "5: not every --run run is open"
import json, os, sys
runs = {x["path"]: x for x in json.load(open(sys.argv[1]))["runs"]}
for d in sys.argv[2:]:
    r = runs[os.path.abspath(d)]
    assert r["selected"] and r["metric_rows"] == 3, r
    # (the runs root's runs are listed too: other keys may differ among them)
    assert ("seed=5" if d.endswith("2") else "seed=3") in r["differs"].split(", "), r
PY
ok "5: gui --run A --run B lists and ticks both, telling them apart by seed"
finish
