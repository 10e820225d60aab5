#!/usr/bin/env bash
# GUI test of the probe editor: the real window under Xvfb with a probe typed at start
# (--probe, the same Trainer::request_probe the editor's field sends).
# usage: gui_probe.sh <path-to-attnlab>
# Checks: the Attention panel's maps are of the typed tokens (the report's probe_tokens), not the
# task's own probe; bad text (an unknown token, too long) is shown as a message naming it while
# the run keeps training (step > 0, state running), with the task's probe still shown.
# (The maps themselves are compared with a direct forward pass in test_core, "a typed probe
# gives the maps of a direct forward pass on those tokens".)
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_probe.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
need xvfb-run "apt-get install xvfb xauth"
need python3

cat >"$TMP/probe.json" <<'JSON'
{"name": "probe", "seed": 2, "threads": 1, "task": {"name": "copy", "length": 6, "vocab": 10},
 "model": {"d_model": 32, "heads": 2, "layers": 2, "attention": "dot"},
 "train": {"steps": 100000, "batch_size": 16, "lr": 3e-3, "warmup": 5, "eval_every": 50}}
JSON
report() {  # report <name> <probe text>
  ATTN_GUI_REPORT=$TMP/$1.json run_xvfb --config "$TMP/probe.json" --autostart --frames 300 \
    --probe "$2" || fail "the window exited with $? for --probe '$2'"
}

report task " "  # blank: refused as empty, the task's own probe stays
report typed "3 1 4 1 5 9 2 6"
python3 - "$TMP/task.json" "$TMP/typed.json" <<'PY' || fail "the typed probe is not what the maps show"
import json, sys
task, typed = (json.load(open(p))["attention"] for p in sys.argv[1:])
assert typed["probe_tokens"] == "3 1 4 1 5 9 2 6".split(), typed
assert typed["probe_error"] == "" and typed["probe_text"] == "3 1 4 1 5 9 2 6", typed
assert typed["attention_step"] >= 0, typed
assert task["probe_tokens"] != typed["probe_tokens"], task
assert "empty" in task["probe_error"], task
print("typed probe shown: %s (task's: %s)" % (" ".join(typed["probe_tokens"]), " ".join(task["probe_tokens"])))
PY
ok "the maps are computed on the typed probe"

report unknown "3 zz 4"
report long "$(python3 -c 'print(" ".join(["1"] * 200))')"
python3 - "$TMP/unknown.json" "$TMP/long.json" "$TMP/task.json" <<'PY' || fail "bad probe text was not reported, or stopped the run"
import json, sys
unknown, long_, task = (json.load(open(p))["attention"] for p in sys.argv[1:])
assert "'zz'" in unknown["probe_error"] and "token 2" in unknown["probe_error"], unknown
assert "too long" in long_["probe_error"] and "at most" in long_["probe_error"], long_
for r in (unknown, long_):
    assert r["state"] == "Running" and r["step"] > 0, r
    assert r["probe_text"] == "" and r["probe_tokens"] == task["probe_tokens"], r
print("unknown: %s\nlong: %s" % (unknown["probe_error"], long_["probe_error"]))
PY
ok "bad probe text gets a message in the panel and the run goes on"
finish
