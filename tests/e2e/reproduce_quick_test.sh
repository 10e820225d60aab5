#!/usr/bin/env bash
# `attnlab reproduce --quick` for every paper: each writes report.md with its tables and claims
# and every figure it promises (PDF that renders, PNG, non-empty CSV, JSON sidecar).
# usage: reproduce_quick_test.sh <attnlab> [paper...]
set -u
bin=$1; shift
papers=${*:-condor conn kernel neural}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP

figures_of() {  # the figures each report promises
  case $1 in
    condor) echo "loss connections" ;;
    conn)   echo "loss spectral_radius" ;;
    kernel) echo "loss params_accuracy" ;;
    neural) echo "loss_fortunes loss_fmnist speed_memory" ;;
  esac
}
sections_of() {  # text each report must contain
  case $1 in
    condor) echo "ky|window|dot|Claims" ;;
    conn)   echo "conn-norm-bound|conn-none|conn-spec|dot|rho(I + C) under each stability control" ;;
    kernel) echo "## Parameters|attention, one layer|pseudo|semi-fusion|gaussian|linear-sim" ;;
    neural) echo "## Speed and memory (neural over dot)|fortunes-neural|fmnist-dot|time per step" ;;
  esac
}

total_start=$(date +%s)
for p in $papers; do
  out="$work/$p"
  start=$(date +%s)
  if ! "$bin" reproduce --paper "$p" --quick --jobs 2 --out "$out" > "$work/$p.log" 2>&1; then
    bad "$p: reproduce --quick failed: $(tail -20 "$work/$p.log")"; continue
  fi
  echo "     $p --quick took $(( $(date +%s) - start )) s"
  [ -s "$out/report.md" ] && ok "$p: report.md" || bad "$p: no report.md"
  # Every arm x 2 seeds finished and appears with mean ± sd.
  python3 - "$out/report.json" <<'PY' && ok "$p: every group finished both seeds, mean and sd given" || bad "$p: report.json groups"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["quick"] and r["seeds"] == 2
for g in r["groups"]:
    assert g["finished"] == 2 == g["runs"], g
    assert g["eval_loss"]["n"] == 2 and "sd" in g["eval_loss"], g
PY
  grep -q "± " "$out/report.md" && ok "$p: table shows the spread" || bad "$p: no ± in the table"
  grep -Eq "\*\*(Held here|Did not hold here|Not resolved here)\.\*\*" "$out/report.md" && ok "$p: claims stated plainly" || bad "$p: no verdict sentence"
  IFS='|' read -ra want <<< "$(sections_of "$p")"
  for w in "${want[@]}"; do grep -qF -- "$w" "$out/report.md" && ok "$p: report mentions '$w'" || bad "$p: report lacks '$w'"; done
  for f in $(figures_of "$p"); do
    for ext in pdf png csv json; do [ -s "$out/$f.$ext" ] || bad "$p: missing $f.$ext"; done
    grep -qF "($f.png)" "$out/report.md" || bad "$p: report does not link $f.png"
    [ "$(tail -n +2 "$out/$f.csv" | wc -l)" -gt 0 ] || bad "$p: $f.csv has no data rows"
    if pdftoppm -r 40 -png "$out/$f.pdf" "$work/$p-$f" && [ -s "$work/$p-$f-1.png" ]; then ok "$p: $f.pdf renders, png/csv/json present"; else bad "$p: $f.pdf does not render"; fi
  done
  # A second invocation redoes nothing.
  "$bin" reproduce --paper "$p" --quick --jobs 2 --out "$out" > "$work/$p.again.log" 2>&1 && grep -q "0 trained, 0 resumed" "$out/report.md" && ok "$p: re-run reuses every finished run" || bad "$p: re-run: $(tail -5 "$work/$p.again.log")"
done
echo "     all papers --quick: $(( $(date +%s) - total_start )) s"
# Usage errors name the flag and the allowed values.
"$bin" reproduce --paper vaswani --quick --out "$work/x" 2>"$work/err"; rc=$?
[ $rc = 2 ] && grep -qF -- "--paper vaswani: allowed: condor, conn, kernel, neural" "$work/err" && [ ! -e "$work/x" ] && ok "unknown paper refused" || bad "unknown paper: rc $rc $(cat "$work/err")"
summary
