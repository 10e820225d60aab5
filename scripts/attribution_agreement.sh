#!/usr/bin/env bash
# Attribution patching against activation patching on trained recall and MQAR (issue 48): does
# the gradient estimate rank the heads as patching does, with the same top head?
#
# Trains the shipped recall experiment (assets/configs/recall.json) and MQAR at context 16 (dot
# with RoPE, written below), seeds 1, 2 and 3 each (fixed in advance: six runs,
# one thread each, one after another; about 5 minutes of one core), then for every run
# reads `attnlab analyze --run DIR --attribution --json` (the probe and the task's twin, the metric
# the logit difference of the task's answers) and reports, over the model's heads:
#  - Spearman's rank correlation of "attribution" and "patched" (average ranks for ties);
#  - the top head of each (the largest value, the share of the difference it restores) and
#    whether they agree, with the gap: patching's value of its own top head minus patching's
#    value of attribution's top head;
#  - the metric's clean-minus-corrupted difference.
# A run whose final eval accuracy is below 0.9 did not learn the task: it is reported as not
# learned and left out of the summary line.
#
# usage: scripts/attribution_agreement.sh [--quick] [--bin ATTNLAB] [--work DIR] [OUT]
#   OUT (default bench/results/attribution_agreement.txt) gets the table with this command at
#   its top; OUT.json the same per run. --work DIR keeps the runs (default: a new temporary
#   folder); a run it already holds is analysed again, not retrained. --quick: one tiny recall run (40 steps, threshold 0,
#   --allow-small-difference), for tests/e2e/attribution_agreement_test.sh.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$repo/build/app/attnlab
work=
quick=0
out=
args="$*"
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --bin) bin=$2; shift ;;
    --work) work=$2; shift ;;
    -*) echo "attribution_agreement.sh: unknown option $1" >&2; exit 2 ;;
    *) out=$1 ;;
  esac
  shift
done
[ -n "$out" ] || out=$repo/bench/results/attribution_agreement.txt
[ -n "$work" ] || work=$(mktemp -d /tmp/attribution-agreement.XXXXXX)
mkdir -p "$work"

threshold=0.9
runs=()  # task:seed:config
if [ $quick = 1 ]; then
  threshold=0
  runs=("recall:1:$repo/assets/configs/recall.json")
  extra=(--set train.steps=40 --set model.d_model=32 --set train.warmup=5 --set train.eval_every=20)
  allow=(--allow-small-difference)
else
  for s in 1 2 3; do runs+=("recall:$s:$repo/assets/configs/recall.json"); done
  # MQAR with 4 pairs at context 16 (vocab 24, above the context as Zoology asserts), dot with
  # RoPE: learned positions plateau near 25% on some seeds (issue 48), and so does the suite's
  # context 64 at vocab 72 within 1000 steps (measured: 0.25-0.32 with RoPE, lr 3e-3, or 2500
  # steps at context 32); a run that did not learn says nothing about attribution.
  cat >"$work/mqar_16_rope.json" <<'J'
{"name": "mqar-16-rope", "seed": 1,
 "task": {"name": "mqar", "context": 16, "length": 4, "vocab": 24},
 "model": {"d_model": 64, "heads": 2, "layers": 2, "attention": "dot", "position": "rope"},
 "train": {"steps": 1000, "batch_size": 32, "lr": 0.001, "warmup": 100, "weight_decay": 0.0,
           "eval_every": 100, "eval_batches": 8}}
J
  for s in 1 2 3; do runs+=("mqar:$s:$work/mqar_16_rope.json"); done
  extra=()
  allow=()
fi

list=$work/runs.txt
: >"$list"
for r in "${runs[@]}"; do
  IFS=: read -r task seed config <<<"$r"
  dir=$work/${task}_s$seed
  start=$(date +%s)
  # A run that --work already holds (a finished earlier call) is analysed again, not retrained.
  [ -f "$dir/summary.json" ] ||
    "$bin" train --config "$config" --out "$dir" --threads 1 --quiet --set seed="$seed" \
      --set train.record_every=0 "${extra[@]}" >"$dir.train.log" 2>&1 ||
    { echo "training $task seed $seed failed: $(tail -3 "$dir.train.log")" >&2; exit 1; }
  # exit 2 is a refusal (a difference too small to read): kept, with its message, in the table.
  rc=0
  "$bin" analyze --run "$dir" --attribution --json "${allow[@]}" >"$dir/attribution.json" \
    2>"$dir/attribution.err" || rc=$?
  [ $rc = 0 ] || [ $rc = 2 ] || { cat "$dir/attribution.err" >&2; exit 1; }
  echo "$task $seed $dir $rc $(($(date +%s) - start))" >>"$list"
done

python3 - "$list" "$threshold" "$out" "scripts/attribution_agreement.sh $args" <<'PY'
import json, sys

list_path, threshold, out, command = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else float("nan")


rows = []
for line in open(list_path):
    task, seed, d, rc, seconds = line.split()
    summary = json.load(open(d + "/summary.json"))
    row = {"task": task, "seed": int(seed), "run": d, "steps": summary.get("steps"),
           "accuracy": summary.get("eval_accuracy"), "seconds": int(seconds)}
    row["learned"] = row["accuracy"] is not None and row["accuracy"] >= threshold
    if rc != "0":
        row["refused"] = open(d + "/attribution.err").read().strip()
    else:
        a = json.load(open(d + "/attribution.json"))
        heads = a["heads"]
        att = [h["attribution"] for h in heads]
        pat = [h["patched"] for h in heads]
        name = lambda i: "%d.%d" % (heads[i]["layer"], heads[i]["head"])
        two = [h["two_point"] for h in heads]
        ta, tp = max(range(len(att)), key=att.__getitem__), max(range(len(pat)), key=pat.__getitem__)
        t2 = max(range(len(two)), key=two.__getitem__)
        row.update(metric=a["metric"], difference=a["clean"] - a["corrupted"],
                   spearman=spearman(att, pat), top_attribution=name(ta), top_patched=name(tp),
                   top_agree=ta == tp, top_gap=pat[tp] - pat[ta], heads=len(heads),
                   spearman_two_point=spearman(two, pat), top_two_point=name(t2),
                   top_agree_two_point=t2 == tp)
    rows.append(row)

lines = ["# " + command,
         "# attribution patching vs activation patching per head (shares of the clean-corrupted",
         "# difference; `attnlab analyze --run DIR --attribution --json`); learned: eval accuracy",
         "# >= %g. gap: patching's value of its top head minus its value of attribution's top head." % threshold,
         "# two-point: the same forward and backward, the gradient averaged over the corrupted and the",
         "# clean run (the trapezoid rule; \"two_point\" in the JSON): its Spearman, top head, agreement.",
         "%-7s %4s %6s %8s %7s %10s %9s %8s %8s %5s %6s %9s %8s %5s" % ("task", "seed", "steps", "accuracy",
         "learned", "difference", "spearman", "top_att", "top_pat", "agree", "gap", "spear_2pt", "top_2pt",
         "agree")]
for r in rows:
    head = "%-7s %4d %6s %8.4f %7s" % (r["task"], r["seed"], r["steps"], r["accuracy"] or 0,
                                       "yes" if r["learned"] else "no")
    if "refused" in r:
        lines.append(head + "  refused: " + r["refused"].splitlines()[-1])
    else:
        lines.append(head + " %10.4f %9.3f %8s %8s %5s %6.3f %9.3f %8s %5s" % (
            r["difference"], r["spearman"], r["top_attribution"], r["top_patched"],
            "yes" if r["top_agree"] else "no", r["top_gap"], r["spearman_two_point"],
            r["top_two_point"], "yes" if r["top_agree_two_point"] else "no"))
for task in sorted({r["task"] for r in rows}):
    done = [r for r in rows if r["task"] == task and r["learned"] and "refused" not in r]
    skipped = [r for r in rows if r["task"] == task and r not in done]
    if done:
        lines.append("%s: %d learned runs, Spearman mean %.3f (min %.3f), top head agrees on %d of %d"
                     "; left out: %s" % (task, len(done), sum(r["spearman"] for r in done) / len(done),
                     min(r["spearman"] for r in done), sum(r["top_agree"] for r in done), len(done),
                     ", ".join("seed %d" % r["seed"] for r in skipped) or "none"))
        lines.append("  %s, two-point: Spearman mean %.3f (min %.3f), top head agrees on %d of %d" % (
            task, sum(r["spearman_two_point"] for r in done) / len(done),
            min(r["spearman_two_point"] for r in done), sum(r["top_agree_two_point"] for r in done),
            len(done)))
    else:
        lines.append("%s: no learned run" % task)
text = "\n".join(lines) + "\n"
print(text, end="")
open(out, "w").write(text)
json.dump({"command": command, "threshold": threshold, "runs": rows}, open(out + ".json", "w"), indent=1)
PY
