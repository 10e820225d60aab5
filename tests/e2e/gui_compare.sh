#!/usr/bin/env bash
# GUI test of the Compare panel: the real window under Xvfb.
# usage: gui_compare.sh <path-to-attnlab>
# Checks:
#  1. --compare-vary model.attention=dot,ky starts two live runs from the config (each its own
#     trainer, one thread each on this machine's cores shared); both finish, are drawn with their
#     attention maps, and are saved as run directories that `attnlab compare` reads, with the
#     panel's final eval loss equal to summary.json's.
#  2. Two runs varying only a key that does not change training (the name) with the same seed
#     and mechanism end with identical eval losses.
#  3. --compare-dir adds the saved runs back: the report lists them as saved, with their curves.
#  4. A bad key is refused with a message naming it; the window still runs.
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_compare.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
need xvfb-run "apt-get install xvfb xauth"

cat >"$TMP/tiny.json" <<'EOF2'
{"name": "gui_compare", "seed": 4,
 "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 2},
 "train": {"steps": 120, "batch_size": 8, "warmup": 5, "eval_every": 20, "eval_batches": 2}}
EOF2

rc=0
ATTN_GUI_REPORT=$TMP/r1.json run_xvfb --config "$TMP/tiny.json" --compare-vary model.attention=dot,ky \
  --compare-out "$TMP/saved" --frames 1200 --screenshot "$TMP/shot.png" --layout "$TMP/layout.ini" || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui exited with $rc"
check_report "$TMP/r1.json" 'r["panels"]["compare"]["open"] and r["panels"]["compare"]["drawn"]' "Compare not open and drawn"
check_report "$TMP/r1.json" '[x["label"] for x in c["runs"]] == ["model.attention=dot", "model.attention=ky"]' "runs not labelled by their value"
check_report "$TMP/r1.json" 'all(x["state"] == "Finished" and x["step"] == 120 and x["saved"] for x in c["runs"])' "runs did not finish and save"
check_report "$TMP/r1.json" 'all(x["attention_maps"] == 4 for x in c["runs"])' "attention maps missing"
check_report "$TMP/r1.json" 'all(x["threads"] == max(1, os.cpu_count() // 2) for x in c["runs"])' "threads not shared fairly"
check_report "$TMP/r1.json" 'c["runs"][0]["color"] != c["runs"][1]["color"]' "runs share a colour"
screenshot_ok "$TMP/shot.png" >/dev/null || fail "the screenshot looks blank"
dirs=$(python3 -c 'import json,sys; print(" ".join(x["dir"] for x in json.load(open(sys.argv[1]))["compare"]["runs"]))' "$TMP/r1.json")
for d in $dirs; do
  for f in config.json metrics.csv summary.json; do [[ -s $d/$f ]] || fail "saved run $d lacks $f"; done
done
"$ATTNLAB" compare $dirs --json >"$TMP/cmp.json" || fail "attnlab compare cannot read the saved runs"
python3 - "$TMP/cmp.json" "$TMP/r1.json" <<'PY' || fail "compare's eval loss differs from the panel's"
import json, sys
rows = json.load(open(sys.argv[1])); runs = json.load(open(sys.argv[2]))["compare"]["runs"]
assert [r["mechanism"] for r in rows] == ["dot", "ky"], rows
for row, run in zip(rows, runs):
    assert abs(row["eval_loss"] - run["eval_loss"]) < 1e-6, (row, run)
    assert row["steps"] == 120
PY

# Same seed, same mechanism, started together: identical results.
rc=0
ATTN_GUI_REPORT=$TMP/r2.json run_xvfb --config "$TMP/tiny.json" --compare-vary name=a,b \
  --compare-out "$TMP/same" --frames 1200 || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (same seed) exited with $rc"
check_report "$TMP/r2.json" 'all(x["state"] == "Finished" for x in c["runs"]) and c["runs"][0]["eval_loss"] == c["runs"][1]["eval_loss"]' "two identical runs differ"
cmp -s <(cut -d, -f1-4 "$TMP"/same/*/name=a/metrics.csv) <(cut -d, -f1-4 "$TMP"/same/*/name=b/metrics.csv) || fail "identical runs saved different metrics"

# Saved runs added back.
rc=0
args=()
for d in $dirs; do args+=(--compare-dir "$d"); done
ATTN_GUI_REPORT=$TMP/r3.json run_xvfb --config "$TMP/tiny.json" "${args[@]}" --frames 20 || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (--compare-dir) exited with $rc"
check_report "$TMP/r3.json" '[x["kind"] for x in c["runs"]] == ["saved", "saved"] and all(x["eval_points"] == 6 for x in c["runs"])' "saved runs not shown with their curves"

# Issue 34: seed groups as a mean line with a band. Three seeds each of dot and ky, saved by a
# sweep, added with --compare-bands 2 (mean ± 95% CI): one line and one band per group, named by
# the group; with 0 every run is its own line.
"$ATTNLAB" sweep --config "$TMP/tiny.json" --vary model.attention=dot,ky --seeds 3 --out "$TMP/seeds" -j 2 -q >/dev/null 2>&1 || fail "seed sweep failed"
args=()
for m in dot ky; do for s in 4 5 6; do args+=(--compare-dir "$TMP/seeds/model.attention=$m/seed-$s"); done; done
for bands in 2 0; do
  rc=0
  ATTN_GUI_REPORT=$TMP/r5.json run_xvfb --config "$TMP/tiny.json" "${args[@]}" --compare-bands $bands \
    --panel compare --frames 30 --screenshot "$TMP/bands$bands.png" || rc=$?
  [[ $rc -eq 0 ]] || fail "attnlab gui (--compare-bands $bands) exited with $rc"
  if [[ $bands == 2 ]]; then
    check_report "$TMP/r5.json" 'c["seed_bands"] == 2 and c["eval_lines"] == ["model.attention=dot (mean of 3 seeds)", "model.attention=ky (mean of 3 seeds)"] and c["eval_bands"] == [n + " (mean of 3 seeds) 95% CI" for n in ("model.attention=dot", "model.attention=ky")]' "seed groups not drawn as mean lines with bands"
  else
    check_report "$TMP/r5.json" 'c["seed_bands"] == 0 and len(c["eval_lines"]) == 6 and c["eval_bands"] == []' "runs not drawn one by one"
  fi
  screenshot_ok "$TMP/bands$bands.png" >/dev/null || fail "the bands screenshot looks blank"
done

# A bad key: refused, named, the window still runs.
rc=0
ATTN_GUI_REPORT=$TMP/r4.json run_xvfb --config "$TMP/tiny.json" --compare-vary model.attentoin=dot --frames 10 || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (bad key) exited with $rc"
grep -q "unknown key 'model.attentoin'" "$TMP/log" || fail "bad key not named on stderr"
check_report "$TMP/r4.json" 'c["runs"] == [] and "model.attentoin" in c["error"]' "bad key not shown in the panel"
echo "gui_compare: ok"
