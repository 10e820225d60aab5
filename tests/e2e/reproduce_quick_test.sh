#!/usr/bin/env bash
# `attnlab reproduce --quick` for every paper: each writes report.md with its tables, the
# claim-by-claim table (every claim of repro.json, each with a verdict) and every figure it
# promises (PDF that renders, PNG, non-empty CSV, JSON sidecar). Also: the shipped manifests ask
# for 3 seeds, and a manifest whose arms train different step counts is refused.
# usage: reproduce_quick_test.sh <attnlab> [paper...]
set -u
bin=$1; shift
papers=${*:-condor conn kernel neural}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP
configs=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../assets/configs/repro" && pwd)

figures_of() {  # the figures each report promises
  case $1 in
    condor) echo "loss window_ablation connections" ;;
    conn)   echo "loss spectral_radius" ;;
    kernel) echo "loss params_accuracy" ;;
    neural) echo "loss_fortunes loss_fmnist speed_memory" ;;
  esac
}
sections_of() {  # text each report must contain
  case $1 in
    condor) echo "ky|window|dot|dot-rope|dot-alibi|ky-w4|ky-w8|ky-w32|## Claims" ;;
    conn)   echo "conn-norm-bound|conn-none|conn-spec|dot|rho(I + C) under each stability control" ;;
    kernel) echo "## Parameters|attention, one layer|pseudo|semi-fusion|gaussian|linear-sim" ;;
    neural) echo "## Speed and memory (neural over dot)|fortunes-neural|fortunes-neural-shared|fmnist-dot|time per step" ;;
  esac
}

total_start=$(date +%s)
for p in $papers; do
  out="$work/$p"
  start=$(date +%s)
  if ! "$bin" reproduce --paper "$p" --quick --seeds 2 --jobs 2 --out "$out" > "$work/$p.log" 2>&1; then
    bad "$p: reproduce --quick failed: $(tail -20 "$work/$p.log")"; continue
  fi
  echo "     $p --quick took $(( $(date +%s) - start )) s"
  [ -s "$out/report.md" ] && ok "$p: report.md" || bad "$p: no report.md"
  # Every arm x 2 seeds finished and appears with mean ± sd.
  python3 - "$out/report.json" "$configs/$p/repro.json" <<'PY' && ok "$p: every group finished both seeds, every claim has a verdict, one step budget" || bad "$p: report.json groups/claims"
import json, sys
r = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
assert r["quick"] and r["seeds"] == 2
assert m["seeds"] == 3, "the full run asks for 3 seeds"
assert [g["group"] for g in r["groups"]] == [a["name"] for a in m["arms"]]
for g in r["groups"]:
    assert g["finished"] == 2 == g["runs"], g
    assert g["eval_loss"]["n"] == 2 and "sd" in g["eval_loss"], g
assert len(r["claims"]) == len(m["claims"]) > 0
for c, want in zip(r["claims"], m["claims"]):
    assert c["claim"] == want["claim"] and c["paper"] == want["paper"], c
    assert c["verdict"] in ("held", "did not hold", "not resolved"), c
    assert c["ours"] and c["setting"], c
PY
  grep -q "± " "$out/report.md" && ok "$p: table shows the spread" || bad "$p: no ± in the table"
  grep -qF "| claim | the paper | ours | same setting? | verdict |" "$out/report.md" && grep -Eq "\*\*(held|did not hold|not resolved)\*\* \|" "$out/report.md" && ok "$p: claim table with verdicts" || bad "$p: no claim table"
  ! grep -q "matches or beats dot" "$out/report.md" && ok "$p: no claim the paper never made" || bad "$p: a 'matches or beats dot' claim"
  IFS='|' read -ra want <<< "$(sections_of "$p")"
  for w in "${want[@]}"; do grep -qF -- "$w" "$out/report.md" && ok "$p: report mentions '$w'" || bad "$p: report lacks '$w'"; done
  for f in $(figures_of "$p"); do
    for ext in pdf png csv json; do [ -s "$out/$f.$ext" ] || bad "$p: missing $f.$ext"; done
    grep -qF "($f.png)" "$out/report.md" || bad "$p: report does not link $f.png"
    [ "$(tail -n +2 "$out/$f.csv" | wc -l)" -gt 0 ] || bad "$p: $f.csv has no data rows"
    if pdftoppm -r 40 -png "$out/$f.pdf" "$work/$p-$f" && [ -s "$work/$p-$f-1.png" ]; then ok "$p: $f.pdf renders, png/csv/json present"; else bad "$p: $f.pdf does not render"; fi
  done
  # A second invocation redoes nothing.
  "$bin" reproduce --paper "$p" --quick --seeds 2 --jobs 2 --out "$out" > "$work/$p.again.log" 2>&1 && grep -q "0 trained, 0 resumed" "$out/report.md" && ok "$p: re-run reuses every finished run" || bad "$p: re-run: $(tail -5 "$work/$p.again.log")"
done
echo "     all papers --quick: $(( $(date +%s) - total_start )) s"
# Unequal step budgets are refused before anything trains, naming the arm and train.steps.
cp -r "$configs" "$work/repro-bad"
python3 - "$work/repro-bad/condor/repro.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["arms"][1]["set"] = {"train.steps": 400}
json.dump(m, open(sys.argv[1], "w"))
PY
"$bin" reproduce --paper condor --configs "$work/repro-bad" --out "$work/y" 2>"$work/err"; rc=$?
[ $rc = 2 ] && grep -qF 'arm "window" trains 400 steps (train.steps)' "$work/err" && [ ! -e "$work/y/runs" ] && ok "unequal step budgets refused" || bad "unequal steps: rc $rc $(cat "$work/err")"
# Usage errors name the flag and the allowed values.
"$bin" reproduce --paper vaswani --quick --out "$work/x" 2>"$work/err"; rc=$?
[ $rc = 2 ] && grep -qF -- "--paper vaswani: allowed: condor, conn, kernel, neural" "$work/err" && [ ! -e "$work/x" ] && ok "unknown paper refused" || bad "unknown paper: rc $rc $(cat "$work/err")"
summary
