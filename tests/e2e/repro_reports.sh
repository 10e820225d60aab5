#!/usr/bin/env bash
# The committed reproductions are what their committed runs say: for every docs/repro/<paper>
# whose runs data/repro/<paper>/runs keeps (scripts/repro_runs.sh keep), `attnlab reproduce
# --report-only` on a copy of the two rewrites report.json with the same arms (grids, validation
# figures, chosen rates, per-seed metrics) and the same claims (differences, intervals, p-values,
# verdicts). And every report's links resolve: its figures, its runs in data/repro/<paper>/runs/,
# and every run its report.json names (repro_links.py).
# usage: repro_reports.sh <attnlab>
set -u
bin=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if python3 "$E2E_DIR/repro_links.py" "$root" > "$work/links.txt"; then
  ok "reports' links resolve: $(tail -1 "$work/links.txt")"
else
  bad "broken links in docs/repro: $(head -5 "$work/links.txt")"
fi
checked=0
for dir in "$root"/docs/repro/*/; do
  p=$(basename "$dir")
  runs=$root/data/repro/$p/runs
  [ -d "$runs" ] || continue
  # The layout of attnlab reproduce --out: the report's files beside runs/.
  mkdir -p "$work/$p"
  find "$dir" -maxdepth 1 -type f -exec cp -p {} "$work/$p/" \;
  cp -r "$runs" "$work/$p/runs"
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
[ $checked -gt 0 ] || bad "no data/repro/<paper>/runs: the committed reproductions' runs are missing"
summary
