#!/usr/bin/env bash
# scripts/attribution_agreement.sh --quick (issue 48's agreement figures): one tiny recall run.
# The report has its command on top, a header, one row per run and a summary line per task; its
# numbers are the ones the run's `analyze --attribution --json` gives: Spearman's correlation
# recomputed here by another route (ranks by counting, ties halved), the top heads, the
# clean-minus-corrupted difference. A bad option exits 2.
# usage: attribution_agreement_test.sh <attnlab> <repo>
set -u
bin=$1
repo=$2
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir

if bash "$repo/scripts/attribution_agreement.sh" --quick --bin "$bin" --work "$work/runs" \
  "$work/agreement.txt" >"$work/stdout.txt" 2>"$work/stderr.txt"; then
  ok "--quick ran"
else
  bad "--quick failed: $(tail -3 "$work/stderr.txt")"
fi
check "stdout is the report" cmp -s "$work/stdout.txt" "$work/agreement.txt"

python3 - "$work/agreement.txt" <<'PY' && ok "the report's rows are the JSON's numbers (Spearman recomputed)" || bad "the report disagrees with the runs' JSON"
import json, sys
text = open(sys.argv[1]).read().splitlines()
assert text[0].startswith("# scripts/attribution_agreement.sh --quick"), text[0]
header = [l for l in text if l.startswith("task ")]
assert len(header) == 1, text
rows = [l.split() for l in text if l.startswith("recall ")]
assert len(rows) == 1, text
summary = [l for l in text if l.startswith("recall: ")]
assert len(summary) == 1 and "1 learned runs" in summary[0], summary
report = json.load(open(sys.argv[1] + ".json"))
assert len(report["runs"]) == 1
run = report["runs"][0]
a = json.load(open(run["run"] + "/attribution.json"))
att = [h["attribution"] for h in a["heads"]]
pat = [h["patched"] for h in a["heads"]]
assert len(att) == 4 and all(isinstance(v, float) for v in att + pat)


def rank(v):  # 1 + how many are smaller + half of the others that tie
    return [1 + sum(w < x for w in v) + 0.5 * (sum(w == x for w in v) - 1) for x in v]


def pearson(x, y):
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    c = sum((p - mx) * (q - my) for p, q in zip(x, y))
    return c / (sum((p - mx) ** 2 for p in x) * sum((q - my) ** 2 for q in y)) ** 0.5


rho = pearson(rank(att), rank(pat))
row = rows[0]
assert abs(float(row[6]) - rho) < 1e-3, (row, rho)
assert abs(run["spearman"] - rho) < 1e-9, (run["spearman"], rho)
names = ["%d.%d" % (h["layer"], h["head"]) for h in a["heads"]]
top_a, top_p = names[att.index(max(att))], names[pat.index(max(pat))]
assert (row[7], row[8]) == (top_a, top_p), (row, top_a, top_p)
assert row[9] == ("yes" if top_a == top_p else "no")
assert abs(float(row[5]) - (a["clean"] - a["corrupted"])) < 1e-4, row
two = [h["two_point"] for h in a["heads"]]
rho2 = pearson(rank(two), rank(pat))
top_2 = names[two.index(max(two))]
assert abs(float(row[11]) - rho2) < 1e-3, (row, rho2)
assert row[12] == top_2 and row[13] == ("yes" if top_2 == top_p else "no"), (row, top_2)
assert abs(float(row[10]) - (max(pat) - pat[att.index(max(att))])) < 1e-3, row
assert a["metric"] == "logit_diff", a["metric"]  # the task's answers, even barely trained
PY

if bash "$repo/scripts/attribution_agreement.sh" --no-such-option >/dev/null 2>"$work/err.txt"; then
  bad "an unknown option was accepted"
else
  [ $? = 2 ] && grep -q -- "--no-such-option" "$work/err.txt" && ok "an unknown option exits 2 naming it" ||
    bad "an unknown option: $(cat "$work/err.txt")"
fi

finish
