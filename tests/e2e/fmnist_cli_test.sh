#!/usr/bin/env bash
# End-to-end: `attnlab train` on Fashion-MNIST (Debian's dataset-fashion-mnist) with a very short
# ViT run; checks summary.json reports test-set accuracy, and the image task's config errors.
# usage: fmnist_cli_test.sh <attnlab>
set -u
bin=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP

cat > "$work/vit.json" <<'JSON'
{"name": "vit-e2e", "seed": 2, "threads": 1,
 "task": {"name": "fashion-mnist", "patch": 7, "train_examples": 10000, "test_examples": 2000},
 "model": {"d_model": 32, "heads": 4, "layers": 2, "head": "classifier"},
 "train": {"steps": 400, "batch_size": 64, "warmup": 20, "eval_every": 200}}
JSON
start=$(date +%s)
"$bin" train --config "$work/vit.json" --out "$work/run" -q >"$work/log" 2>&1 || bad "train exited non-zero: $(cat "$work/log")"
python3 - "$work/run/summary.json" "$work/run/config.json" <<'PY' && ok "summary.json: test accuracy on 2000 test images" || bad "summary/config content"
import json, sys
s = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
print(f"     test accuracy {s['test_accuracy']:.3f}, {s['steps_per_second']:.1f} steps/s, "
      f"{s['parameters']} parameters ({s['attention_parameters']} in attention)")
assert s["task"] == "fashion-mnist" and s["steps"] == 400
assert s["test_examples"] == 2000
assert s["test_accuracy"] == s["eval_accuracy"] and s["test_accuracy"] > 0.65, s["test_accuracy"]
assert s["attention_parameters"] == 2 * (4 * 32 * 32 + 4 * 32)  # dot: 4D^2 + 4D per layer
assert c["model"]["classes"] == 10 and c["task"]["data_dir"] == "/usr/share/datasets/fashion-mnist"
PY
echo "     run took $(( $(date +%s) - start )) s"

echo '{"task": {"name": "fashion-mnist", "patch": 6}, "model": {"head": "classifier"}}' > "$work/bad1.json"
expect_fail "task.patch must divide the 28-pixel image side: one of 1, 2, 4, 7, 14, 28, got 6" "$bin" train --config "$work/bad1.json" --out "$work/x"
echo '{"task": {"name": "fashion-mnist"}}' > "$work/bad2.json"
expect_fail 'model.head "lm" needs a token task' "$bin" train --config "$work/bad2.json" --out "$work/x"
echo '{"task": {"name": "fashion-mnist", "data_dir": "/nonexistent/fm"}, "model": {"head": "classifier"}}' > "$work/bad3.json"
expect_fail "task.data_dir: /nonexistent/fm does not exist" "$bin" train --config "$work/bad3.json" --out "$work/x"

summary
