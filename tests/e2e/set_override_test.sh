#!/usr/bin/env bash
# `--set key=value` (issue 51, item 4) on every command that takes a config: train, sweep,
# suite, eval, bench-step and gui. An accepted override reaches the run's config.json (and so the run),
# a later --set wins over an earlier one, values are parsed as JSON where they are JSON; an
# unknown key, a value out of range, a malformed spec and --set on --resume exit 2 naming the
# culprit and leave the directory byte-identical.
# usage: set_override_test.sh <attnlab>
set -u
bin=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir
export ATTNLAB_PROGRESS=lines
tiny_config tiny.json 40 20 2

# config KEY DIR: the value at a dotted KEY of DIR/config.json, as JSON.
config() {
  python3 -c 'import json,sys
v = json.load(open(sys.argv[2] + "/config.json"))
for p in sys.argv[1].split("."): v = v[p]
print(json.dumps(v))' "$1" "$2"
}

# train: two keys, one of them given twice (the later wins), a string and a number.
if "$bin" train --config tiny.json --out a --threads 1 -q --set train.steps=30 \
  --set model.attention=ky --set train.lr=3e-3 --set train.steps=12 >/dev/null 2>log; then
  # (config.json resolves the attention to one name per layer)
  check "train --set: config.json records model.attention" [ "$(config model.attention a)" = '["ky"]' ]
  check "train --set: the later --set train.steps wins" [ "$(config train.steps a)" = 12 ]
  check "train --set: train.lr as a number" python3 -c "import json; assert json.load(open('a/config.json'))['train']['lr'] == 3e-3"
  check "train --set: the run trained the overridden length" \
    python3 -c "import csv; rows = list(csv.DictReader(open('a/metrics.csv'))); assert int(rows[-1]['step']) == 12, rows[-1]"
else
  bad "train --set: $(tail -3 log)"
fi
# The file itself is untouched: --set edits the config in memory.
check "train --set leaves the config file alone" grep -q '"steps": 40' tiny.json

# Refusals: exit 2, the culprit named, nothing written, nothing changed.
before=$(find . -mindepth 1 -not -name out -not -name err -not -name log -printf '%p %s %T@\n' | sort | sha256sum)
expect_fail -c 2 -q -a b -- "unknown config key 'model.attentoin'" \
  "$bin" train --config tiny.json --out b --set model.attentoin=ky
expect_fail -c 2 -q -a b -- "train.lr" "$bin" train --config tiny.json --out b --set train.lr=-1
expect_fail -c 2 -q -a b -- "expected key=value" "$bin" train --config tiny.json --out b --set train.lr
expect_fail -c 2 -q -a b -- "unknown config key 'model'" "$bin" train --config tiny.json --out b --set model=1
expect_fail -c 2 -q -- "resumed run keeps its own config" "$bin" train --resume a --set train.lr=1e-3
expect_fail -c 2 -q -a sw2 -- "unknown config key 'train.stepz'" \
  "$bin" sweep --config tiny.json --out sw2 --vary train.lr=1e-3,2e-3 --set train.stepz=4
expect_fail -c 2 -q -a st -- "unknown config key 'task.lenght'" \
  "$bin" suite --quick --out st --tasks parity --mechanisms dot --set task.lenght=3
expect_fail -c 2 -q -- "model.heads" "$bin" bench-step --config tiny.json --set model.heads=0
expect_fail -c 2 -q -- "unknown config key 'train.nope'" \
  "$bin" gui --config tiny.json --set train.nope=1 --frames 1
after=$(find . -mindepth 1 -not -name out -not -name err -not -name log -printf '%p %s %T@\n' | sort | sha256sum)
check "refused commands changed nothing" [ "$before" = "$after" ]

# eval: the eval set drawn otherwise (its size, its seed); the model's keys are refused.
if "$bin" eval --run a --context 4 --set train.eval_batches=3 --json >ev.json 2>log &&
  "$bin" eval --run a --context 4 --set train.eval_batches=3 --set seed=9 --json >ev9.json 2>>log; then
  check "eval --set train.eval_batches=3: three batches" python3 -c "import json; assert json.load(open('ev.json'))['batches'] == 3"
  check "eval --set seed=9: another eval set" python3 -c "import json; assert json.load(open('ev.json'))['eval_loss'] != json.load(open('ev9.json'))['eval_loss']"
else
  bad "eval --set: $(tail -3 log)"
fi
expect_fail -c 2 -q -- "eval keeps the checkpoint's model" "$bin" eval --run a --context 4 --set model.heads=4
expect_fail -c 2 -q -- "--context sets that" "$bin" eval --run a --context 4 --set task.length=5

# sweep: the override under every cell, beside the swept key.
if "$bin" sweep --config tiny.json --out sw --vary train.lr=1e-3,2e-3 --set train.steps=6 \
  --threads 1 -q >/dev/null 2>log; then
  n=0
  for d in $(find sw -name config.json -printf '%h\n'); do
    [ "$(config train.steps "$d")" = 6 ] || bad "sweep --set: $d has train.steps $(config train.steps "$d")"
    n=$((n + 1))
  done
  check "sweep --set: both cells record train.steps 6" [ "$n" = 2 ]
else
  bad "sweep --set: $(tail -3 log)"
fi

# bench-step: the override reaches the timed config (batch 1 is cheaper than the file's 4: the
# message for a bad value above proves it is checked, this that it is used at all).
if "$bin" bench-step --config tiny.json --set train.batch_size=1 --warmup 0 --steps 1 >bs.json 2>log; then
  check "bench-step --set: prints its JSON" python3 -c "import json; json.load(open('bs.json'))['mean_seconds']"
else
  bad "bench-step --set: $(tail -3 log)"
fi
# data: the eval set as the override builds it (a seed of its own gives other tokens), and the
# specs recorded; a bad key is refused naming it, writing nothing.
if "$bin" data --config tiny.json --batches 1 --out d0.json 2>log &&
  "$bin" data --config tiny.json --batches 1 --set seed=9 --set train.batch_size=2 --out d9.json 2>>log; then
  check "data --set: the overridden batch size and seed reach the eval set" python3 -c '
import json
a, b = json.load(open("d0.json")), json.load(open("d9.json"))
assert b["set"] == ["seed=9", "train.batch_size=2"] and "set" not in a
assert len(b["eval"][0]["inputs"]) == 2 != len(a["eval"][0]["inputs"]), (len(a["eval"][0]["inputs"]), len(b["eval"][0]["inputs"]))
assert b["seed"] == 9 and a["seed"] != 9'
else
  bad "data --set: $(tail -3 log)"
fi
expect_fail -c 2 -q -- "unknown config key 'train.stepz'" "$bin" data --config tiny.json --set train.stepz=3 --out d1.json
check "a refused data --set writes no file" [ ! -e d1.json ]
finish
