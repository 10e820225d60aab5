#!/usr/bin/env bash
# `attnlab reproduce --quick` for every paper: each writes report.md with its tables, the
# claim-by-claim table (every claim of repro.json, each with an interval and a verdict) and every
# figure it promises (PDF that renders, PNG, non-empty CSV, JSON sidecar); report.json follows
# issue 34's contract (arms with learning-rate grids chosen on validation, claims with
# intervals, speed from the benchmark with path labels). Also: a manifest whose arms train
# different step counts is refused.
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
    neural) echo "loss_fortunes loss_fmnist" ;;
  esac
}
sections_of() {  # text each report must contain
  case $1 in
    condor) echo "ky-rope|ky-table|dot-alibi|ky-w32|## Arms|## Claims|## Speed and memory (isolated benchmark)|LibTorch ops|### ky-length" ;;
    conn)   echo "conn-norm-bound|conn-none|conn-spec|rho(I + C) under each stability control|## Arms" ;;
    kernel) echo "## Parameters|attention, one layer|pseudo|semi-fusion|gaussian|linear-sim|## Arms|### kernel-length" ;;
    neural) echo "fortunes-neural-d16|fortunes-neural-nodown|fortunes-neural-shared|## Speed and memory (isolated benchmark)|fused CPU kernel|## Scaling (isolated benchmark sweeps|### neural-down-1024" ;;
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
  # The report.json contract (issue 34): arms with their grids, chosen rates and seeds; claims
  # with intervals and verdicts; speed claims from the benchmark with path labels.
  python3 - "$out" "$configs/$p/repro.json" <<'PY' && ok "$p: arms (grid, chosen rate, seeds), claims (interval, verdict), benchmark paths" || bad "$p: report.json contract"
import json, math, os, sys
out, manifest = sys.argv[1], sys.argv[2]
r = json.load(open(os.path.join(out, "report.json")))
m = json.load(open(manifest))
assert r["quick"]
assert [a["name"] for a in r["arms"]] == [a["name"] for a in m["arms"]]
for arm, want in zip(r["arms"], m["arms"]):
    grid = arm["lr_grid"]
    quick_grid = m["quick"]["lr_grid"]
    # The grid, then at most lr_extend rates beyond its edge (grid-ext<k>), each a grid step on.
    assert len(quick_grid) <= len(grid) <= len(quick_grid) + m["quick"]["lr_extend"], arm
    for k, t in enumerate(grid[len(quick_grid):], 1):
        assert f"/grid-ext{k}/" in t["run"], t
    # An arm a claim on eval_loss names is chosen on its validation loss (ties to the higher
    # accuracy), every other on its accuracy (ties to the lower loss).
    on_loss = any(c.get("metric") == "eval_loss" and want["name"] in (c.get("arm"), c.get("than"))
                  for c in m["claims"])
    assert arm["lr_chosen_on"] == ("loss" if on_loss else "accuracy"), arm
    rank = ((lambda t: (-round(t["validation_loss"], 9), t["validation_accuracy"])) if on_loss
            else (lambda t: (round(t["validation_accuracy"], 9), -t["validation_loss"])))
    if len(grid) > len(quick_grid):  # extended: the choice before it was an edge
        prev = grid[:len(grid) - 1]
        best_prev = max(prev, key=rank)
        assert best_prev["lr"] in (min(t["lr"] for t in prev), max(t["lr"] for t in prev)), grid
    assert all(t["finished"] and not t["diverged"] for t in grid), arm
    best = max(grid, key=rank)
    assert math.isclose(arm["lr_chosen"], best["lr"]), (arm["name"], arm["lr_chosen"], best)
    assert arm["config"]["file"] == want["config"] and arm["config"]["set"] == want.get("set", {})
    assert len(arm["seeds"]) == m["quick"]["seeds"], arm
    seeds = [s["seed"] for s in arm["seeds"]]
    assert seeds == sorted(set(seeds)), seeds
    for s in arm["seeds"]:
        assert "eval_loss" in s and "eval_accuracy" in s, s
        assert "/grid/" in s["run"] or "/grid-ext" in s["run"] or "/seeds/" in s["run"], s
    # Every seed trained at the chosen rate: its config says so.
    for s in arm["seeds"]:
        assert not os.path.isabs(s["run"]), s  # named within OUT/runs, as the grid's trials
        c = json.load(open(os.path.join(out, "runs", s["run"], "config.json")))
        assert math.isclose(c["train"]["lr"], arm["lr_chosen"]), (s, arm["lr_chosen"])
assert len(r["claims"]) == len(m["claims"]) > 0
for c, want in zip(r["claims"], m["claims"]):
    assert c["claim"] == want["claim"] and c["paper"] == want["paper"], c
    assert c["verdict"] in ("held", "did not hold", "not resolved"), c
    assert c["metric"] == want["metric"] and c["arms"][0] == want["arm"], c
    assert c["ours"] and c["setting"], c
    # issue 49's fields: quick applies no recorded looks and no floors, so one look, testable.
    assert c["testable"] is True and len(c["looks"]) == 1 and "p_raw" in c and "p_holm" in c, c
    if want["metric"].startswith(("parameters", "attention_parameters")):
        assert c["source"].startswith("parameter count"), c
        assert c["ci95"][0] == c["ci95"][1] == c["difference"], c  # a count is exact
    elif want["metric"] in ("steps_per_second", "memory_increment_mib"):
        assert c["source"].startswith("benchmark"), c
        assert c["ci95"] is not None and c["ci95"][0] <= c["difference"] <= c["ci95"][1], c
    elif want["kind"] != "at_most":
        assert c["paired"] and c["seeds"] == 2, c
        lo, hi = c["ci95"]
        assert lo <= c["difference"] <= hi, c
        # held only when the interval excludes zero on the claimed side
        if c["verdict"] == "held" and want["kind"] == "better":
            assert lo > 0 or hi < 0, c
# Issue 49, item 5: the scaling sweeps (time and memory against L, d', ...) and their claims,
# each with an interval over rounds, p_raw and a verdict.
sweeps = {w["name"]: w for w in (r["scaling"] or {}).get("sweeps", [])}
assert sorted(sweeps) == sorted(w["name"] for w in m.get("scaling", [])), sweeps.keys()
for want in m.get("scaling", []):
    w, q = sweeps[want["name"]], want.get("quick", {})
    assert w["key"] == want["key"] and w["values"] == q.get("values", want["values"]), w
    assert [a["name"] for a in w["arms"]] == [a["name"] for a in want["arms"]], w
    for a in w["arms"]:
        assert len(a["rounds"]) == q.get("rounds", want.get("rounds", 3)), a
        for rnd in a["rounds"]:
            assert len(rnd) == len(w["values"]), rnd
            assert all(pt["mean_seconds"] > 0 and pt["increment_mib"] >= 0 for pt in rnd), rnd
    assert w["loadavg_before"] and w["loadavg_after"], w
    # Memory comes from the memory pass (repro_bench.h), the timed process's kept beside it.
    assert w["memory"] == {"process": "separate", "environment": "MALLOC_MMAP_THRESHOLD_=131072",
                           "warmup": min(w["warmup"], 1), "steps": min(w["steps"], 3)}, w
    assert all(pt["heap_increment_mib"] >= 0 for a in w["arms"] for rnd in a["rounds"] for pt in rnd), w
    assert w["measured_by"]["commit"] == r["analysis_commit"], w["measured_by"]
for c, want in zip(r["claims"], m["claims"]):
    if not want["metric"].startswith("sweep_"):
        continue
    assert c["source"].startswith("scaling sweep " + want["sweep"]), c
    assert c["seeds"] >= 2 and c["ci95"] is not None, c
    assert c["p_raw"] is None or 0 <= c["p_raw"] <= 1, c
    assert math.isclose(c["boundary"], want["value"], rel_tol=1e-6), c  # stored as a float
    lo, hi = c["ci95"]
    # Held: the interval on the claimed side of the bound, the bound itself included
    # (core/analysis/verdict.cpp side(): "at most 1" holds at 1; at
    # --quick sizes both memory arms can sit at the process floor, a ratio of exactly 1).
    slack = 1e-6 * max(1.0, abs(want["value"]))  # the bound is stored as a float
    if c["verdict_uncorrected"] == "held":
        assert hi <= want["value"] + slack if want["kind"] in ("at_most", "ratio_at_most") else lo >= want["value"] - slack, c
b = r["benchmark"]
if "benchmark" in m:
    assert b and [a["arm"] for a in b["arms"]] == m["benchmark"]["arms"], b
    for a in b["arms"]:
        assert len(a["as_trained"]) == len(a["libtorch"]) == b["rounds"], a
        fused = any(x["fused_path"] for x in a["as_trained"])
        assert a["path"] == ("fused" if fused else "libtorch"), a
        assert not any(x["fused_path"] for x in a["libtorch"]), a
        assert all(x["increment_mib"] > 0 and x["floor_mib"] > 50 for x in a["as_trained"]), a
        assert all(x["heap_increment_mib"] > 0 for x in a["as_trained"] + a["libtorch"]), a
    assert b["memory"] == {"process": "separate", "environment": "MALLOC_MMAP_THRESHOLD_=131072",
                           "warmup": min(b["warmup"], 1), "steps": min(b["steps"], 3)}, b
    # The binary that measured (it need not be the one that trained or that writes the report).
    assert b["measured_by"]["commit"] == r["analysis_commit"], b["measured_by"]
    sha = b["measured_by"]["binary_sha256"]
    assert sha is None or (len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)), sha
    paths = {a["arm"]: a["path"] for a in b["arms"]}
    want = {"condor": {"ky": "libtorch", "dot": "fused"},
            "neural": {"fortunes-neural": "fused", "fortunes-dot": "fused",
                       "fortunes-neural-nodown": "fused"}}.get(m["paper"], {})
    for arm, path in want.items():
        assert paths[arm] == path, (arm, paths)
else:
    assert b is None
PY
  # The memory figure is the memory pass's: the benchmark's first arm, and each sweep's first
  # point, measured again by hand under the same allocator setting give the same increment
  # (processes and builds agree to 0.1 MiB there; under the kept heap they moved by a third).
  python3 - "$bin" "$out" "$configs/$p/repro.json" <<'PY' && ok "$p: memory figures are the memory pass's (re-measured by hand)" || bad "$p: memory figure does not re-measure"
import json, os, subprocess, sys
bin, out, manifest = sys.argv[1:4]
r, m = json.load(open(os.path.join(out, "report.json"))), json.load(open(manifest))
def again(config, memory, unfused):
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="131072")
    cmd = [bin, "bench-step", "--config", config, "--warmup", str(memory["warmup"]),
           "--steps", str(memory["steps"])] + (["--unfused"] if unfused else [])
    got = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)
    assert got["allocator"] == "environment: MALLOC_MMAP_THRESHOLD_=131072", got
    return got["increment_mib"]
checked = 0
if r["benchmark"]:
    b = r["benchmark"]
    arm = b["arms"][0]
    got = again(os.path.join(out, "bench", arm["arm"] + ".json"), b["memory"], False)
    assert all(abs(x["increment_mib"] - got) < 1.0 for x in arm["as_trained"]), (arm, got)
    checked += 1
for w, want in zip((r["scaling"] or {}).get("sweeps", []), m.get("scaling", [])):
    got = again(os.path.join(out, "scaling", w["name"] + "-0-0.json"), w["memory"],
                want["arms"][0].get("unfused", False))
    assert all(abs(rnd[0]["increment_mib"] - got) < 1.0 for rnd in w["arms"][0]["rounds"]), (w, got)
    checked += 1
assert checked == bool(m.get("benchmark")) + len(m.get("scaling", [])), checked
PY
  grep -qF "MALLOC_MMAP_THRESHOLD_=131072 attnlab bench-step" "$out/report.md" && ok "$p: the report says how memory was measured" || bad "$p: report does not name the memory pass"
  grep -q "± " "$out/report.md" && ok "$p: table shows the spread" || bad "$p: no ± in the table"
  grep -qF "| claim | the paper | ours | 95% interval | p: raw, sign-flip, looks, Holm | looks (seeds: p) | same setting? | verdict |" "$out/report.md" && grep -Eq "\*\*(held|did not hold|not resolved)\*\*" "$out/report.md" && ok "$p: claim table with intervals and verdicts" || bad "$p: no claim table"
  # Provenance (issue 49): every run's summary.json and the report name the binary's commit.
  python3 - "$out" <<'PY' && ok "$p: runs and report record the commit" || bad "$p: no commit recorded"
import glob, json, os, re, sys
out = sys.argv[1]
commit = json.load(open(os.path.join(out, "report.json")))["analysis_commit"]
assert commit == "unknown" or re.fullmatch(r"[0-9a-f]{40}", commit), commit
runs = glob.glob(os.path.join(out, "runs", "**", "summary.json"), recursive=True)
assert runs and all(json.load(open(r)).get("commit") == commit for r in runs), runs[:1]
PY
  IFS='|' read -ra want <<< "$(sections_of "$p")"
  for w in "${want[@]}"; do grep -qF -- "$w" "$out/report.md" && ok "$p: report mentions '$w'" || bad "$p: report lacks '$w'"; done
  for f in $(figures_of "$p"); do
    for ext in pdf png csv json; do [ -s "$out/$f.$ext" ] || bad "$p: missing $f.$ext"; done
    grep -qF "($f.png)" "$out/report.md" || bad "$p: report does not link $f.png"
    [ "$(tail -n +2 "$out/$f.csv" | wc -l)" -gt 0 ] || bad "$p: $f.csv has no data rows"
    if pdftoppm -r 40 -png "$out/$f.pdf" "$work/$p-$f" && [ -s "$work/$p-$f-1.png" ]; then ok "$p: $f.pdf renders, png/csv/json present"; else bad "$p: $f.pdf does not render"; fi
  done
  # A second invocation redoes nothing (nor the benchmark: benchmark.json is kept).
  cp "$out/report.json" "$work/$p.first.json"
  "$bin" reproduce --paper "$p" --quick --jobs 2 --out "$out" > "$work/$p.again.log" 2>&1 && grep -q "0 trained, 0 resumed" "$out/report.md" && ok "$p: re-run reuses every finished run" || bad "$p: re-run: $(tail -5 "$work/$p.again.log")"
  python3 -c "import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); assert a['claims']==b['claims'] and a['benchmark']==b['benchmark']" "$work/$p.first.json" "$out/report.json" && ok "$p: the same verdicts and benchmark on the re-run" || bad "$p: re-run changed the verdicts"
  # --report-only trains nothing and keeps the training invocation's header.
  if "$bin" reproduce --paper "$p" --quick --out "$out" --report-only > /dev/null 2>&1 && grep -qF -- " -j 2" "$out/report.md"; then ok "$p: --report-only keeps the training command"; else bad "$p: --report-only"; fi
  # A benchmark and sweeps measured before the memory pass (no "memory") still read, and the
  # report says their memory came from the timed process's kept heap.
  if [ -f "$out/scaling.json" ] || [ -f "$out/benchmark.json" ]; then
    rm -rf "$work/$p-old"; cp -r "$out" "$work/$p-old"
    python3 - "$work/$p-old" <<'PY'
import json, os, sys
for name in ("benchmark.json", "scaling.json"):
    f = os.path.join(sys.argv[1], name)
    if not os.path.exists(f):
        continue
    j = json.load(open(f))
    for part in [j] + j.get("sweeps", []):
        part.pop("memory", None); part.pop("measured_by", None)
    json.dump(j, open(f, "w"))
PY
    if "$bin" reproduce --paper "$p" --quick --out "$work/$p-old" --report-only > /dev/null 2>&1 &&
       grep -qF "taken in the timed process" "$work/$p-old/report.md" &&
       ! grep -qF "taken in a second process" "$work/$p-old/report.md"
    then ok "$p: files from before the memory pass say how their memory was taken"
    else bad "$p: a benchmark without \"memory\""; fi
  fi
  # Both training invocations are recorded, and the report's time is their sum.
  python3 -c "
import json, math, sys
inv = json.load(open(sys.argv[1] + '/invocations.json')); r = json.load(open(sys.argv[1] + '/report.json'))
assert [i['ended'] for i in inv] == ['finished', 'finished'] and inv[1]['trained'] == 0, inv
assert all(i['commit'] == r['analysis_commit'] for i in inv), inv  # the binary of each
assert r['invocations'] == inv and math.isclose(r['wall_seconds'], sum(i['wall_seconds'] for i in inv)), r['wall_seconds']
" "$out" && grep -qF "over 2 invocations" "$out/report.md" && ok "$p: invocations recorded, their time summed" || bad "$p: invocations.json"
  # The slim copy that data/repro keeps (scripts/repro_runs.sh: no checkpoints, no views)
  # rewrites the same report on its own.
  slim="$work/$p.slim"
  eval "$(sed -n '/^slim_copy()/,/^}/p' "$(dirname "${BASH_SOURCE[0]}")/../../scripts/repro_runs.sh")"
  slim_copy "$out" "$slim"
  [ -z "$(find "$slim/runs" -name checkpoint -o -name views.rec)" ] || bad "$p: the slim copy kept checkpoints or views"
  if "$bin" reproduce --paper "$p" --quick --out "$slim" --report-only > /dev/null 2>"$work/$p.slim.err" &&
     python3 -c "import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); assert a['claims']==b['claims'] and a['arms']==b['arms'], 'differs'" "$out/report.json" "$slim/report.json"; then
    ok "$p: the slim copy of the runs rewrites the same report"
  else bad "$p: slim copy: $(tail -3 "$work/$p.slim.err")"; fi
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
