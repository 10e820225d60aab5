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
# Issue 49, item 5: Condor's convergence claim, steps to a loss, recomputed from the runs'
# metrics.csv: the threshold is the higher of the two arms' mean final eval losses, each seed's
# figure the first evaluated step at or below it (a run that never gets there: its last step plus
# one evaluation interval), and the claim's difference the mean of the paired differences.
if [ -f "$work/condor/report.json" ]; then
  if python3 - "$work/condor" <<'PY'
import csv, json, os, sys
root = sys.argv[1]
r = json.load(open(os.path.join(root, "report.json")))
claim = next(c for c in r["claims"] if c["metric"] == "steps_to_loss")
arms = {a["name"]: a for a in r["arms"]}
def seeds(name):
    return [s for s in arms[name]["seeds"] if not s["diverged"]]
a, b = claim["arms"]
mean = lambda xs: sum(xs) / len(xs)
T = max(mean([s["eval_loss"] for s in seeds(a)]), mean([s["eval_loss"] for s in seeds(b)]))
def steps(run):
    d = os.path.join(root, "runs", run)
    rows = [x for x in csv.DictReader(open(os.path.join(d, "metrics.csv"))) if x["eval_loss"] not in ("", "nan")]
    every = json.load(open(os.path.join(d, "config.json")))["train"]["eval_every"]
    for x in rows:
        if float(x["eval_loss"]) <= T:
            return int(x["step"])
    return int(rows[-1]["step"]) + every
sa = {s["seed"]: steps(s["run"]) for s in seeds(a)}
sb = {s["seed"]: steps(s["run"]) for s in seeds(b)}
assert claim["values"] == {a: {str(k): float(v) for k, v in sa.items()},
                           b: {str(k): float(v) for k, v in sb.items()}}, claim["values"]
d = [sa[k] - sb[k] for k in sa if k in sb]
assert abs(mean(d) - claim["difference"]) < 1e-9, (d, claim["difference"])
assert ("threshold eval loss %.4f" % T) in claim["ours"], (T, claim["ours"])
assert claim["seeds"] == len(d), claim["seeds"]
PY
  then ok "condor: steps to the common loss recompute from the runs' metrics.csv"
  else bad "condor: the steps_to_loss claim does not recompute"; fi
fi
# Issue 49, item 2: the report records the manifest's and its binary's SHA-256 (recomputed here
# by Python's hashlib) and the commit; the seeds are the manifest's, fixed in advance.
if [ -f "$work/conn/report.json" ]; then
  if python3 - "$work/conn/report.json" "$root/assets/configs/repro/conn/repro.json" "$bin" <<'PY'
import hashlib, json, re, sys
r = json.load(open(sys.argv[1]))["provenance"]
sha = lambda f: hashlib.sha256(open(f, "rb").read()).hexdigest()
assert r["manifest_sha256"] == sha(sys.argv[2]), r["manifest_sha256"]
assert r["binary_sha256"] == sha(sys.argv[3]), r["binary_sha256"]
assert r["commit"] == "unknown" or re.fullmatch("[0-9a-f]{40}", r["commit"]), r["commit"]
assert sum(r["run_commits"].values()) == 12, r["run_commits"]
PY
  then ok "conn: report.json records repro.json's and the binary's SHA-256, the commit and the runs' commits"
  else bad "conn: report.json's provenance is wrong"; fi
  grep -q "^Provenance: assets/configs/repro/conn/repro.json sha256" "$work/conn/report.md" \
    && ok "conn: report.md has the provenance line" || bad "conn: report.md has no provenance line"
  # seeds_case NAME PYTHON: a copy of the conn configs whose repro.json PYTHON edits (m: the
  # manifest), then --report-only on the conn work directory; prints the exit code.
  seeds_case() {
    rm -rf "$work/cfg-$1"; mkdir -p "$work/cfg-$1"; cp -r "$root/assets/configs/repro/conn" "$work/cfg-$1/"
    python3 - "$work/cfg-$1/conn/repro.json" "$2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); exec(sys.argv[2]); json.dump(m, open(sys.argv[1], "w"), indent=2)
PY
    "$bin" reproduce --paper conn --configs "$work/cfg-$1" --out "$work/conn" --report-only \
      > /dev/null 2> "$work/seeds-$1.err"
    echo $?
  }
  before=$(cd "$work/conn" && find . -type f -exec sha256sum {} + | sort)
  # Seeds on disk beyond the manifest's count: a report would leave them out unseen.
  rc=$(seeds_case fewer 'm["seeds"] = 2')
  if [ "$rc" = 2 ] && grep -q 'seed(s) 3 beyond the 2 seed(s).*arm "conn-norm-bound"' "$work/seeds-fewer.err"
  then ok "seed runs beyond repro.json's count are refused (exit 2), naming the arm and the seeds"
  else bad "seeds beyond the manifest: rc $rc, $(cat "$work/seeds-fewer.err")"; fi
  # Seeds added after a look (report.json planned 3) with no recorded look.
  rc=$(seeds_case more 'm["seeds"] = 4')
  if [ "$rc" = 2 ] && grep -q 'written with 3 seed(s) of arm .* now plans 4: seeds added after a look must be a recorded look' "$work/seeds-more.err"
  then ok "seeds added after a report without a recorded look are refused (exit 2), naming repro.json looks"
  else bad "seeds added after a look: rc $rc, $(cat "$work/seeds-more.err")"; fi
  [ "$before" = "$(cd "$work/conn" && find . -type f -exec sha256sum {} + | sort)" ] \
    && ok "the refused reports changed nothing in OUT" || bad "a refused report changed OUT"
  # The same addition recorded as a look is allowed.
  rc=$(seeds_case recorded 'm["seeds"] = 4; m["looks"] = [{"at": "test", "note": "read at 3", "seeds": {a["name"]: 3 for a in m["arms"]}}]')
  [ "$rc" = 0 ] && ok "seeds added after a recorded look are accepted" \
    || bad "seeds added after a recorded look: rc $rc, $(cat "$work/seeds-recorded.err")"
fi
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
