#!/usr/bin/env bash
# End-to-end checks of comparing runs: two runs started together with the same seed and
# mechanism are identical; `attnlab compare` prints summary.json's values and exports the
# overlay; `attnlab sweep` killed mid-way resumes without redoing finished runs; bad input.
# usage: compare_cli_test.sh <attnlab>
set -u
bin=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP
# rejects "<substring of stderr>" cmd...: exit 2 and the message (a wrong code is a FAIL, and the
# message is still checked).
rejects() { expect_fail -c 2 -k -- "$@"; }

cat > "$work/tiny.json" <<'JSON'
{"name": "tiny", "seed": 5, "threads": 1,
 "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 1, "dropout": 0.1},
 "train": {"steps": 60, "batch_size": 8, "warmup": 5, "eval_every": 20, "eval_batches": 2}}
JSON

# Two runs started together, same seed and mechanism: identical metrics (dropout on, so the
# per-step random streams are exercised too). steps_per_s (column 6) is a timing.
"$bin" train --config "$work/tiny.json" --out "$work/a" -q >"$work/a.log" 2>&1 &
pa=$!
"$bin" train --config "$work/tiny.json" --out "$work/b" -q >"$work/b.log" 2>&1 &
pb=$!
wait $pa && wait $pb || bad "parallel train runs failed: $(cat "$work/a.log" "$work/b.log")"
cut -d, -f1-5 "$work/a/metrics.csv" > "$work/ma"; cut -d, -f1-5 "$work/b/metrics.csv" > "$work/mb"
[ "$(wc -l < "$work/ma")" = 4 ] && cmp -s "$work/ma" "$work/mb" && ok "two runs started together: identical metrics.csv" || bad "metrics differ: $(diff "$work/ma" "$work/mb")"
python3 - "$work/a/summary.json" "$work/b/summary.json" <<'PY' && ok "two runs started together: identical summary metrics" || bad "summaries differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for k in ["eval_loss", "eval_accuracy", "final_train_loss", "parameters", "attention_parameters", "steps", "config_hash"]:
    assert a[k] == b[k], (k, a[k], b[k])
PY

# A third run, another mechanism, for the comparison.
sed 's/"dropout": 0.1}/"dropout": 0.1, "attention": "ky"}/' "$work/tiny.json" > "$work/tiny_ky.json"
"$bin" train --config "$work/tiny_ky.json" --out "$work/ky" -q >/dev/null 2>&1 || bad "ky run failed"

# compare --json: every value equals summary.json's.
"$bin" compare "$work/a" "$work/ky" --json > "$work/cmp.json" 2>"$work/cmp.err" || bad "compare --json failed: $(cat "$work/cmp.err")"
python3 - "$work/cmp.json" "$work/a" "$work/ky" <<'PY' && ok "compare --json equals summary.json" || bad "compare --json differs from summary.json"
import json, sys, os
rows = json.load(open(sys.argv[1]))
assert [r["run"] for r in rows] == ["a", "ky"], rows
for r, d in zip(rows, sys.argv[2:]):
    s = json.load(open(os.path.join(d, "summary.json")))
    for k in ["steps", "eval_loss", "eval_accuracy", "parameters", "attention_parameters", "steps_per_second", "peak_rss_mib"]:
        assert r[k] == s[k], (d, k, r[k], s[k])
assert rows[0]["mechanism"] == "dot" and rows[1]["mechanism"] == "ky", rows
PY
# The text table: the same values, rounded as printed.
"$bin" compare "$work/a" "$work/ky" > "$work/cmp.txt" || bad "compare failed"
python3 - "$work/cmp.txt" "$work/a" "$work/ky" <<'PY' && ok "compare table values equal summary.json (as rounded)" || bad "compare table: $(cat "$work/cmp.txt")"
import json, sys, os
lines = open(sys.argv[1]).read().splitlines()
assert lines[0].split()[:3] == ["run", "mechanism", "task"], lines[0]
for line, d in zip(lines[1:], sys.argv[2:]):
    c = line.split()
    s = json.load(open(os.path.join(d, "summary.json")))
    assert c[0] == os.path.basename(d) and c[2] == "copy"
    assert int(c[3]) == s["steps"]
    # Half the last printed digit, plus the binary representation's slack: a value that sits on
    # the rounding boundary (336.735) prints either way.
    assert abs(float(c[4]) - s["eval_loss"]) <= 5.01e-5, (c[4], s["eval_loss"])
    assert abs(float(c[5]) - s["eval_accuracy"]) <= 5.01e-5, (c[5], s["eval_accuracy"])
    assert int(c[6]) == s["parameters"] and int(c[7]) == s["attention_parameters"]
    assert abs(float(c[8]) - s["steps_per_second"]) <= 5.01e-3, (c[8], s["steps_per_second"])
    assert abs(float(c[9]) - s["peak_rss_mib"]) <= 0.0501, (c[9], s["peak_rss_mib"])
PY

# --export: the overlay figure, its CSV and JSON sidecar; the PDF renders.
"$bin" compare "$work/a" "$work/ky" --export "$work/fig/overlay.pdf" >/dev/null 2>"$work/err" && bad "export into a missing directory accepted" || ok "export into a missing directory refused"
[ ! -e "$work/fig" ] && ok "refused export left nothing" || bad "refused export left files"
mkdir "$work/fig"
"$bin" compare "$work/a" "$work/ky" --export "$work/fig/overlay.pdf" >/dev/null || bad "compare --export failed"
for f in overlay.pdf overlay.csv overlay.json; do [ -s "$work/fig/$f" ] && ok "export wrote $f" || bad "export lacks $f"; done
pdftoppm -r 50 -png "$work/fig/overlay.pdf" "$work/fig/page" && [ -s "$work/fig/page-1.png" ] && ok "overlay PDF renders" || bad "overlay PDF does not render"
python3 - "$work/fig/overlay.csv" "$work/a/metrics.csv" <<'PY' && ok "overlay CSV holds the runs' eval loss" || bad "overlay CSV content"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
series = {r["series"] for r in rows}
assert "a" in series and "ky" in series, series
m = [r for r in csv.DictReader(open(sys.argv[2]))]
pts = [(float(r["x"]), float(r["y"])) for r in rows if r["series"] == "a" and r["panel"] == "0"]
for row in m:  # metrics.csv has 7 digits, the series holds floats: equal to float precision
    assert any(x == float(row["step"]) and abs(y - float(row["eval_loss"])) < 1e-6 for x, y in pts), (row, pts)
PY
rejects "--export $work/fig/x.gif: the file must end in .pdf, .svg, .png or .csv" "$bin" compare "$work/a" --export "$work/fig/x.gif"
rejects "run directory $work/nothing does not exist" "$bin" compare "$work/a" "$work/nothing"

# sweep: bad --vary names the key and the allowed values; nothing is created.
rejects "--vary model.attentoin=dot: unknown key 'model.attentoin'" "$bin" sweep --config "$work/tiny.json" --vary model.attentoin=dot --out "$work/s0"
rejects "must be one of" "$bin" sweep --config "$work/tiny.json" --vary model.attention=dot,nope --out "$work/s0"
rejects "--shard 3/2" "$bin" sweep --config "$work/tiny.json" --shard 3/2 --out "$work/s0"
[ ! -e "$work/s0" ] && ok "refused sweeps created nothing" || bad "refused sweep left $work/s0"

# sweep --list: the grid, in order.
"$bin" sweep --config "$work/tiny.json" --vary model.attention=dot,ky --seeds 2 --out "$work/s" --list > "$work/list"
[ "$(cut -d' ' -f3 "$work/list" | tr '\n' ' ')" = "model.attention=dot/seed-5 model.attention=dot/seed-6 model.attention=ky/seed-5 model.attention=ky/seed-6 " ] && ok "sweep --list names the cells" || bad "sweep --list: $(cat "$work/list")"

# A sweep killed mid-way (SIGKILL) resumes without redoing finished runs.
sed 's/"steps": 60/"steps": 3000/; s/"eval_every": 20/"eval_every": 100/' "$work/tiny.json" > "$work/long.json"
"$bin" sweep --config "$work/long.json" --vary model.attention=dot,ky --out "$work/s" --checkpoint-every 100 -q > "$work/s1.log" 2>&1 &
sp=$!
cell0="$work/s/model.attention=dot/seed-5"; cell1="$work/s/model.attention=ky/seed-5"
wait_until 2400 0.05 test -e "$cell1/checkpoint/state.json"
kill -KILL $sp; wait $sp 2>/dev/null
[ -e "$cell0/summary.json" ] && [ ! -e "$cell1/summary.json" ] && [ -e "$cell1/checkpoint/state.json" ] && ok "killed mid-way: cell 0 done, cell 1 checkpointed" || bad "kill timing: $(ls -R "$work/s" | head -30)"
sleep 0.5
pgrep -f "$work/s/model.attention=ky" >/dev/null && bad "the killed sweep's training process lives on" || ok "the killed sweep's training process died with it"
before=$(stat -c %.9Y "$cell0/summary.json" 2>/dev/null; md5sum < "$cell0/metrics.csv")
"$bin" sweep --config "$work/long.json" --vary model.attention=dot,ky --out "$work/s" --checkpoint-every 100 -q > "$work/s2.log" 2>&1 || bad "resumed sweep failed: $(cat "$work/s2.log")"
after=$(stat -c %.9Y "$cell0/summary.json" 2>/dev/null; md5sum < "$cell0/metrics.csv")
[ "$before" = "$after" ] && ok "finished cell untouched by the re-run" || bad "finished cell rewritten"
grep -q "\[1/2\] model.attention=dot/seed-5: done already, skipped" "$work/s2.log" && ok "re-run logs the skip" || bad "no skip line: $(cat "$work/s2.log")"
grep -q "\[2/2\] model.attention=ky/seed-5: resuming from its checkpoint" "$work/s2.log" && ok "re-run resumes the interrupted cell" || bad "no resume line: $(cat "$work/s2.log")"
grep -q "0 run, 1 resumed, 1 already done" "$work/s2.log" && ok "re-run counts" || bad "re-run counts: $(tail -5 "$work/s2.log")"
[ -e "$cell1/summary.json" ] && python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['steps']==3000" "$cell1/summary.json" && ok "resumed cell finished its 3000 steps" || bad "resumed cell unfinished"
grep -q "| model.attention=ky | ky | 1/1 |" "$work/s2.log" && ok "sweep prints the group table" || bad "group table: $(tail -4 "$work/s2.log")"
# A different grid in the same directory is refused.
rejects "describes a different sweep" "$bin" sweep --config "$work/long.json" --vary model.attention=dot --out "$work/s"
# --index: one cell only, in its own process (a Slurm array task).
"$bin" sweep --config "$work/tiny.json" --vary model.attention=dot,ky --seeds 2 --out "$work/arr" --index 3 -q >/dev/null 2>&1 || bad "--index 3 failed"
[ "$(find "$work/arr" -name summary.json | wc -l)" = 1 ] && [ -e "$work/arr/model.attention=ky/seed-6/summary.json" ] && ok "--index 3 ran exactly cell 3" || bad "--index: $(find "$work/arr")"
# compare on a sweep directory expands its cells.
"$bin" compare "$work/arr" --json | python3 -c "import json,sys; r=json.load(sys.stdin); assert [x['run'] for x in r]==['model.attention=ky/seed-6'], r" && ok "compare expands a sweep directory" || bad "compare on a sweep dir"

# Issue 34: seed groups. Three seeds each of dot and ky: compare groups them (mean ± sd equal to
# the runs' own values), prints each group's paired interval against the first (t table: 4.303
# for 2 degrees of freedom), and --seed-bands draws one mean line and band per group.
"$bin" sweep --config "$work/tiny.json" --vary model.attention=dot,ky --seeds 3 --out "$work/seeds" -j 2 -q >/dev/null 2>&1 || bad "seed sweep failed"
"$bin" compare "$work/seeds" > "$work/groups.txt" || bad "compare on the seed sweep failed"
python3 - "$work/groups.txt" "$work/seeds" <<'PY' && ok "compare: seed groups with mean ± sd and the paired interval by hand" || bad "seed groups: $(cat "$work/groups.txt")"
import json, math, os, statistics as st, sys
text = open(sys.argv[1]).read()
assert "Seed groups (runs that differ only in their seed):" in text, text
loss = {}
for mech in ("dot", "ky"):
    for seed in (5, 6, 7):
        s = json.load(open(os.path.join(sys.argv[2], f"model.attention={mech}", f"seed-{seed}", "summary.json")))
        loss.setdefault(mech, {})[seed] = s["eval_loss"]
rows = [l for l in text.splitlines() if l.startswith("model.attention=")]
rows = [l for l in rows if "/seed-" not in l.split()[0]]
assert [r.split()[0] for r in rows] == ["model.attention=dot", "model.attention=ky"], rows
for r, mech in zip(rows, ("dot", "ky")):
    c = r.split()
    assert c[2] == "3", r
    v = list(loss[mech].values())
    assert abs(float(c[3]) - st.mean(v)) <= 5.01e-5 and abs(float(c[5]) - st.stdev(v)) <= 5.01e-5, (r, v)
d = [loss["ky"][s] - loss["dot"][s] for s in (5, 6, 7)]
m, sd = st.mean(d), st.stdev(d)
half = 4.303 * sd / math.sqrt(3)
line = [l for l in text.splitlines() if "model.attention=ky - model.attention=dot eval_loss" in l][0]
nums = line.split(": ", 1)[1].replace("[", " ").replace("]", " ").replace(",", " ").split()
assert abs(float(nums[0]) - m) <= 5.01e-5, (line, m)
assert abs(float(nums[1]) - (m - half)) <= 2e-4 and abs(float(nums[2]) - (m + half)) <= 2e-4, (line, m, half)
assert "3 pairs" in line, line
PY
"$bin" compare "$work/seeds" --json-groups > "$work/groups.json" || bad "compare --json-groups failed"
python3 - "$work/groups.json" "$work/seeds" <<'PY' && ok "compare --json-groups: groups, paired interval and p-value by hand" || bad "json groups: $(cat "$work/groups.json")"
import json, math, os, statistics as st, sys
g = json.load(open(sys.argv[1]))
val = {}
for mech in ("dot", "ky"):
    for seed in (5, 6, 7):
        s = json.load(open(os.path.join(sys.argv[2], f"model.attention={mech}", f"seed-{seed}", "summary.json")))
        val.setdefault(mech, {})[seed] = s
assert [x["group"] for x in g["groups"]] == ["model.attention=dot", "model.attention=ky"], g["groups"]
for x, mech in zip(g["groups"], ("dot", "ky")):
    assert x["mechanism"] == mech and x["seeds"] == [5, 6, 7], x
    assert x["runs"] == [f"model.attention={mech}/seed-{s}" for s in (5, 6, 7)], x
    v = [val[mech][s]["eval_loss"] for s in (5, 6, 7)]
    assert abs(x["eval_loss"]["mean"] - st.mean(v)) < 1e-12 and abs(x["eval_loss"]["sd"] - st.stdev(v)) < 1e-12, (x, v)
diffs = {d["metric"]: d for d in g["differences"]}
assert set(diffs) == {"eval_loss", "eval_accuracy"} and len(g["differences"]) == 2, g["differences"]
for metric, d in diffs.items():
    assert d["group"] == "model.attention=ky" and d["against"] == "model.attention=dot" and d["paired"] and d["n"] == 3, d
    x = [val["ky"][s][metric] - val["dot"][s][metric] for s in (5, 6, 7)]
    m, sd = st.mean(x), st.stdev(x)
    half = 4.303 * sd / math.sqrt(3)  # t table, 2 degrees of freedom
    assert abs(d["difference"] - m) < 1e-12, (d, m)
    assert abs(d["ci95"][0] - (m - half)) < 1e-3 * max(half, 1e-9) + 1e-9 and abs(d["ci95"][1] - (m + half)) < 1e-3 * max(half, 1e-9) + 1e-9, (d, m, half)
    t = m / (sd / math.sqrt(3))
    p = 1 - abs(t) / math.sqrt(t * t + 2)  # two-sided, Student t with 2 degrees of freedom
    assert abs(d["p_value"] - p) < 1e-6, (d, p)
PY
"$bin" compare "$work/seeds" "$work/arr" --json > "$work/two.json" || bad "compare of two sweeps failed"
python3 - "$work/two.json" "$work/seeds" "$work/arr" <<'PY' && ok "compare: cells of the same name in two sweeps keep apart (named by their sweep)" || bad "two sweeps: $(cat "$work/two.json")"
import json, os, sys
rows = json.load(open(sys.argv[1]))
labels = [r["run"] for r in rows]
assert len(labels) == 7 and len(set(labels)) == 7, labels
assert os.path.normpath(sys.argv[3]) + "/model.attention=ky/seed-6" in labels, labels
assert os.path.normpath(sys.argv[2]) + "/model.attention=ky/seed-6" in labels, labels
PY
"$bin" compare "$work/seeds" --export "$work/fig/bands.csv" --seed-bands sd >/dev/null || bad "compare --seed-bands failed"
python3 - "$work/fig/bands.csv" "$work/seeds" <<'PY' && ok "compare --seed-bands: one mean line per group, equal to the seeds' mean, with its band" || bad "seed bands CSV"
import csv, os, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1])))
series = {r["series"] for r in rows}
for mech in ("dot", "ky"):
    name = f"model.attention={mech} (mean of 3 seeds)"
    assert name in series and name + " ± sd" in series, series
    assert not any(s.startswith(f"model.attention={mech}/seed-6") for s in series), series
    per_step = {}
    for seed in (5, 6, 7):
        for r in csv.DictReader(open(os.path.join(sys.argv[2], f"model.attention={mech}", f"seed-{seed}", "metrics.csv"))):
            if r["eval_loss"]:
                per_step.setdefault(float(r["step"]), []).append(float(r["eval_loss"]))
    pts = [(float(r["x"]), float(r["y"])) for r in rows if r["series"] == name and r["panel"] == "0"]
    assert len(pts) == len(per_step), (pts, per_step)
    for x, y in pts:
        assert abs(y - st.mean(per_step[x])) < 1e-5, (x, y, per_step[x])
PY

# Issue 34: sweep --lr-grid tunes each group: its first seed at every rate, the rate chosen on
# the validation set, its other seeds at that rate.
"$bin" sweep --config "$work/tiny.json" --vary model.attention=dot,ky --seeds 2 --lr-grid 0.5,2 --out "$work/tuned" -j 2 -q > "$work/tuned.txt" 2>"$work/tuned.err" || bad "sweep --lr-grid failed: $(cat "$work/tuned.err")"
python3 - "$work/tuned.txt" "$work/tuned" <<'PY' && ok "sweep --lr-grid: a grid per group, the chosen rate for its other seeds" || bad "sweep --lr-grid: $(cat "$work/tuned.txt")"
import json, os, re, sys
text, out = open(sys.argv[1]).read(), sys.argv[2]
for mech in ("dot", "ky"):
    g = f"model.attention={mech}"
    m = re.search(re.escape(g) + r": learning rate ([0-9.e-]+) chosen on the validation set", text)
    assert m, text
    lr = float(m.group(1))
    grid = sorted(os.listdir(os.path.join(out, g, "grid")))
    assert [d for d in grid if d.startswith("lr=")] == ["lr=0.0015", "lr=0.006"], grid
    seeds = os.listdir(os.path.join(out, g, "seeds"))
    assert [d for d in seeds if d.startswith("lr=")] == [f"lr={m.group(1)}"], seeds
    c = json.load(open(os.path.join(out, g, "seeds", f"lr={m.group(1)}", "seed-6", "config.json")))
    assert abs(c["train"]["lr"] - lr) < 1e-12 and c["seed"] == 6, c
    for d in ("lr=0.0015", "lr=0.006"):
        assert os.path.exists(os.path.join(out, g, "grid", d, "seed-5", "validation.json"))
PY
rejects "--lr-grid runs each group's grid" "$bin" sweep --config "$work/tiny.json" --lr-grid 0.5,2 --out "$work/t2" --index 0

summary
