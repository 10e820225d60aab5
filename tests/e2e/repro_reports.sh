#!/usr/bin/env bash
# The committed reproductions are what their committed runs say: for every docs/repro/<paper>
# whose runs data/repro/<paper>/runs keeps (scripts/repro_runs.sh keep), `attnlab reproduce
# --report-only` on a copy of the two rewrites report.json with the same arms (grids, validation
# figures, chosen rates, per-seed metrics) and the same claims (differences, intervals, p-values,
# verdicts), and its statistics recompute in Python (repro_stats_check.py); the committed
# leaderboard is what `suite --reanalyze` gives from its own values, and its statistics recompute
# too. And every report's links resolve: its figures, its runs in data/repro/<paper>/runs/,
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
# same_keys A.json B.json KEY...: the two files hold equal values under every KEY.
same_keys() {
  python3 - "$@" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for key in sys.argv[3:]:
    assert a[key] == b[key], f"{key} differs"
PY
}
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
  if same_keys "$dir/report.json" "$work/$p/report.json" arms claims benchmark
  then ok "$p: the committed report is what its committed runs give"
  else bad "$p: the committed report differs from its runs"; fi
  # The statistics of issue 49, recomputed in Python from the report's per-seed values.
  if python3 "$E2E_DIR/repro_stats_check.py" report "$work/$p/report.json" \
      "$root/assets/configs/repro/$p/repro.json" > "$work/$p.stats" 2>&1
  then ok "$p: p_raw, sign-flip p, looks, Holm, floors and verdicts recompute"
  else bad "$p: report.json's statistics: $(head -5 "$work/$p.stats")"; fi
  checked=$((checked + 1))
done
[ $checked -gt 0 ] || bad "no data/repro/<paper>/runs: the committed reproductions' runs are missing"
# The committed leaderboard, re-analysed from its own per-seed values (suite --reanalyze): the
# same board as committed, and its solved counts, exact intervals, learned_at_budget and
# Fisher/Holm comparisons recompute in Python.
board=$root/docs/leaderboard
mkdir -p "$work/lb"
cp "$board/leaderboard.json" "$work/lb/"
if "$bin" suite --reanalyze --out "$work/lb" > /dev/null 2> "$work/lb.err"; then
  if same_keys "$board/leaderboard.json" "$work/lb/leaderboard.json" cells tasks comparisons
  then ok "leaderboard: the committed board is what --reanalyze gives"
  else bad "leaderboard: the committed board differs from --reanalyze of it"; fi
  if python3 "$E2E_DIR/repro_stats_check.py" leaderboard "$work/lb/leaderboard.json" > "$work/lb.stats"
  then ok "leaderboard: solved k/n, Clopper-Pearson, lr_interior, learned_at_budget, Fisher and Holm recompute"
  else bad "leaderboard statistics: $(head -5 "$work/lb.stats")"; fi
  grep -qF "52.5 ± 102.3" "$work/lb/leaderboard.md" && bad "leaderboard.md still shows a t-interval past 100%"
else
  bad "suite --reanalyze failed: $(tail -3 "$work/lb.err")"
fi
rm -rf "$work/lb2"; mkdir -p "$work/lb2"
if "$bin" suite --reanalyze --out "$work/lb2" > /dev/null 2> "$work/lb2.err"; then
  bad "suite --reanalyze without a leaderboard.json succeeded"
elif [ "$(ls -A "$work/lb2")" = "" ] && grep -q "leaderboard.json is not there" "$work/lb2.err"; then
  ok "suite --reanalyze without a leaderboard.json is refused, naming the file, writing nothing"
else bad "suite --reanalyze without a board: $(cat "$work/lb2.err")"; fi
summary
