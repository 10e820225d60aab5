#!/usr/bin/env bash
# End-to-end checks of the headless CLI on real files: train, resume, bad input.
# usage: cli_test.sh <attnlab> <source dir>
set -u
bin=$1; src=$2
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP

cat > "$work/tiny.json" <<'JSON'
{"name": "tiny", "seed": 3, "threads": 1,
 "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 1},
 "train": {"steps": 40, "batch_size": 8, "warmup": 5, "eval_every": 10, "eval_batches": 2}}
JSON

# --help and --version
"$bin" --help | grep -q "train" && ok "--help lists train" || bad "--help"
"$bin" --version | grep -q "attnlab 0.1.0" && ok "--version" || bad "--version"

# A full run writes the run directory.
"$bin" train --config "$work/tiny.json" --out "$work/run" -q >"$work/log" 2>&1 || bad "train exited non-zero: $(cat "$work/log")"
for f in config.json metrics.csv summary.json checkpoint/state.json checkpoint/model.safetensors checkpoint/optimizer.safetensors; do
  [ -s "$work/run/$f" ] && ok "wrote $f" || bad "missing $f"
done
head -1 "$work/run/metrics.csv" | grep -qx "step,train_loss,eval_loss,eval_accuracy,lr,steps_per_s" && ok "metrics header" || bad "metrics header"
[ "$(tail -n +2 "$work/run/metrics.csv" | wc -l)" = 4 ] && ok "4 metric rows" || bad "metric rows: $(cat "$work/run/metrics.csv")"
python3 - "$work/run/summary.json" "$work/run/config.json" <<'PY' && ok "summary.json keys and resolved config" || bad "summary/config content"
import json, sys
s = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
keys = ["mechanism","task","steps","final_train_loss","eval_loss","eval_accuracy","parameters",
        "attention_parameters","steps_per_second","seed","device"]
assert all(k in s for k in keys), [k for k in keys if k not in s]
assert s["steps"] == 40 and s["seed"] == 3 and s["task"] == "copy" and s["device"] == "cpu"
assert c["train"]["lr"] == 0.003 and c["model"]["attention"] == ["dot"]  # defaults resolved
PY

# Resume: 40 steps straight == stop at 20 + resume (bit-identical metrics).
"$bin" train --config "$work/tiny.json" --out "$work/half" --until 20 -q >/dev/null 2>&1
[ "$(tail -n +2 "$work/half/metrics.csv" | wc -l)" = 2 ] && ok "--until 20 stopped at 20" || bad "--until"
"$bin" train --resume "$work/half" -q >/dev/null 2>&1 || bad "resume exited non-zero"
cut -d, -f1-5 "$work/run/metrics.csv" > "$work/a"; cut -d, -f1-5 "$work/half/metrics.csv" > "$work/b"
if cmp -s "$work/a" "$work/b"; then ok "resumed run equals uninterrupted run"; else bad "resume differs: $(diff "$work/a" "$work/b")"; fi

# Bad input: each with a message naming the culprit, and nothing overwritten.
echo '{"model": {"heads": 3}}' > "$work/bad1.json"
expect_fail "model.d_model (64) must be divisible by model.heads (3)" "$bin" train --config "$work/bad1.json" --out "$work/x"
echo '{"trian": {}}' > "$work/bad2.json"
expect_fail "unknown key 'trian'" "$bin" train --config "$work/bad2.json" --out "$work/x"
expect_fail "cannot open config file $work/none.json" "$bin" train --config "$work/none.json"
echo '{"task": {"name": "text", "text_path": "/nonexistent/corpus"}}' > "$work/bad3.json"
expect_fail "/nonexistent/corpus does not exist" "$bin" train --config "$work/bad3.json" --out "$work/x"
expect_fail "give exactly one of --config FILE or --resume DIR" "$bin" train --out "$work/x"
expect_fail "not an attnlab checkpoint" "$bin" train --resume "$work/nothing-here"
expect_fail "already finished" "$bin" train --resume "$work/run"
[ ! -e "$work/x" ] && ok "failed runs created no output directory" || bad "failed run left $work/x"

cp -r "$work/run" "$work/corrupt"
truncate -s 100 "$work/corrupt/checkpoint/model.safetensors"
sum_before=$(cat "$work/corrupt"/*.json "$work/corrupt"/metrics.csv "$work/corrupt/checkpoint"/* | md5sum)
expect_fail "checkpoint/model.safetensors is corrupt" "$bin" train --resume "$work/corrupt" --steps 80
sum_after=$(cat "$work/corrupt"/*.json "$work/corrupt"/metrics.csv "$work/corrupt/checkpoint"/* | md5sum)
[ "$sum_before" = "$sum_after" ] && ok "corrupt checkpoint: nothing overwritten" || bad "corrupt resume modified the run"

# Divergence: exit code 3 and a summary that says so.
echo '{"threads": 1, "task": {"name": "copy", "length": 4, "vocab": 8}, "model": {"d_model": 16, "heads": 2, "layers": 1}, "train": {"steps": 50, "lr": 1000000.0, "warmup": 0, "grad_clip": 0, "batch_size": 8}}' > "$work/nan.json"
"$bin" train --config "$work/nan.json" --out "$work/nan" -q >"$work/out" 2>&1; rc=$?
[ $rc = 3 ] && grep -q '"diverged": true' "$work/nan/summary.json" && ok "divergence: exit 3, summary says diverged" || bad "divergence rc=$rc $(cat "$work/out")"

# ky: a mixed ky/dot run writes the learned connection functions; a centred window in a causal
# LM is refused with the reason.
cat > "$work/ky.json" <<'JSON'
{"threads": 1, "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 2, "attention": ["ky", "dot"],
           "attention_options": {"ky": {"window": 3, "hidden": 4}}},
 "train": {"steps": 30, "batch_size": 8, "warmup": 5, "eval_every": 10, "eval_batches": 2}}
JSON
"$bin" train --config "$work/ky.json" --out "$work/ky" -q >"$work/out" 2>&1 || bad "ky train: $(cat "$work/out")"
python3 - "$work/ky/mechanism_views.json" <<'PY' && ok "ky run writes mechanism_views.json (steps 0..30, layer 0, 2 heads x 3 slots)" || bad "mechanism_views.json"
import json, sys
j = json.load(open(sys.argv[1]))
steps = [f["step"] for f in j["frames"]]
assert j["format"] == "attnlab-mechanism-views" and steps[0] == 0 and steps[-1] == 30, steps
layer = j["frames"][-1]["layers"][0]
assert layer["mechanism"] == "ky" and layer["layer"] == 0
curves = {c["name"]: c for c in layer["curves"]}
scalars = {s["name"]: s["value"] for s in layer["scalars"] if s["head"] < 0}
assert scalars["window"] == 3 and scalars["query_slot"] == 2
beta = curves["beta"]
assert len(beta["series"]) == 2 and len(beta["ys"]) == 6 and abs(sum(beta["ys"][:3]) - 1) < 1e-5
assert len(curves["g"]["ys"]) == 2 * len(curves["g"]["xs"])
PY
# The generic figure draws any mechanism's view; connections reads ky's by its names.
"$bin" export --run "$work/ky" --figure mechanism-views --out "$work/mv.csv" >"$work/out" 2>&1 &&
  grep -q "layer 0 ky: beta" "$work/mv.csv" && ok "export --figure mechanism-views draws ky's view (curves g, slot_g, beta)" ||
  bad "mechanism-views export: $(cat "$work/out")"
"$bin" export --run "$work/ky" --figure connections --out "$work/g.csv" >"$work/out" 2>&1 && [ -s "$work/g.csv" ] &&
  ok "export --figure connections reads ky's curves from mechanism_views.json" || bad "connections export: $(cat "$work/out")"
sed 's/"window": 3, "hidden": 4/"window": 3, "placement": "centered"/' "$work/ky.json" > "$work/kyc.json"
expect_fail "the very token it must predict" "$bin" train --config "$work/kyc.json" --out "$work/kyc"
[ ! -e "$work/kyc" ] && ok "refused config leaves no run directory" || bad "refused config created $work/kyc"

summary
