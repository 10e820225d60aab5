#!/usr/bin/env bash
# The committed reproductions are what their committed runs say: for every docs/repro/<paper>
# that keeps its runs (scripts/repro_runs.sh keep), `attnlab reproduce --report-only` on a copy
# rewrites report.json with the same arms (grids, validation figures, chosen rates, per-seed
# metrics) and the same claims (differences, intervals, p-values, verdicts).
# usage: repro_reports.sh <attnlab>
set -u
bin=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
checked=0
for dir in "$root"/docs/repro/*/; do
  p=$(basename "$dir")
  [ -d "$dir/runs" ] || continue
  cp -r "$dir" "$work/$p"
  rm -rf "$work/$p/unfinished"
  if ! "$bin" reproduce --paper "$p" --out "$work/$p" --report-only > /dev/null 2> "$work/$p.err"; then
    bad "$p: --report-only on the committed runs failed: $(tail -3 "$work/$p.err")"; continue
  fi
  if python3 - "$dir/report.json" "$work/$p/report.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for key in ("arms", "claims", "benchmark"):
    assert a[key] == b[key], f"{key} differs"
PY
  then ok "$p: the committed report is what its committed runs give"
  else bad "$p: the committed report differs from its runs"; fi
  checked=$((checked + 1))
done
[ $checked -gt 0 ] || echo "     no docs/repro/<paper>/runs yet"
summary
