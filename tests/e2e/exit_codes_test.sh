#!/usr/bin/env bash
# The exit-code table (app/common/exit_codes.h, docs/guide/cli.md) holds for every subcommand:
# 2 for every usage error (an unknown option, a bad value: CLI11's own 100+ codes must not
# leak), 3 for a diverged run from train and from sweep, 1 for a failed sweep cell; and the
# output contract: progress on stderr, results on stdout, --json output that parses.
# usage: exit_codes_test.sh <attnlab>
set -u
bin=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir

# exits WANT WHAT CMD...: CMD exits exactly WANT.
exits() {
  local want=$1 what=$2 rc=0
  shift 2
  "$@" >"$work/out" 2>"$work/err" </dev/null || rc=$?
  if [ "$rc" = "$want" ]; then ok "$what: exit $want"; else bad "$what: exit $rc, want $want: $(head -3 "$work/err")"; fi
}
# parses WHAT FILE: FILE holds exactly one JSON document.
parses() {
  if python3 -c 'import json,sys; json.load(sys.stdin)' <"$2" 2>"$work/json_err"; then ok "$1 parses"
  else bad "$1 is not one JSON document: $(cat "$work/json_err") $(head -c 300 "$2")"; fi
}

cat >tiny.json <<'J'
{"name": "tiny", "seed": 1, "threads": 1, "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 1},
 "train": {"steps": 40, "batch_size": 4, "warmup": 20, "eval_every": 5, "eval_batches": 1}}
J
printf '0.1,0\n0,0.2\n' >c.csv

# --- usage errors: every subcommand, an unknown option and a bad value ----------------------
exits 2 "unknown top-level option" "$bin" --bogus
exits 2 "unknown subcommand" "$bin" frobnicate
exits 0 "--help" "$bin" --help
grep -q "2 usage or bad input" out && ok "--help states the exit codes" || bad "--help lacks the exit codes"
exits 2 "train: unknown option" "$bin" train --config tiny.json --bogus
exits 2 "train: bad value" "$bin" train --config tiny.json --steps many
exits 2 "train: missing config" "$bin" train --config missing.json --out x
exits 2 "ky: unknown option" "$bin" ky --function x --x0 0 --bogus
exits 2 "ky: bad value" "$bin" ky --function x --x0 zero
exits 2 "geometry: unknown option" "$bin" geometry --query 0,0 --bogus
exits 2 "geometry: bad value" "$bin" geometry --query 0,0 --temperature 0
exits 2 "spectral: unknown option" "$bin" spectral --matrix c.csv --bogus
exits 2 "spectral: bad value" "$bin" spectral --matrix c.csv --limit wide
exits 2 "compare: unknown option" "$bin" compare x --bogus
exits 2 "compare: bad value" "$bin" compare x --width wide
exits 2 "sweep: unknown option" "$bin" sweep --config tiny.json --out s --bogus
exits 2 "sweep: bad value" "$bin" sweep --config tiny.json --out s --jobs 0
exits 2 "reproduce: unknown option" "$bin" reproduce --paper conn --out r --bogus
exits 2 "reproduce: bad value" "$bin" reproduce --paper nosuch --out r
exits 2 "export: unknown option" "$bin" export --run x --list --bogus
exits 2 "export: bad value" "$bin" export --run x --figure loss --out f.pdf --dpi many
exits 2 "analyze: unknown option" "$bin" analyze --run x --importance --bogus
exits 2 "analyze: bad value" "$bin" analyze --run x --importance --batches many
exits 2 "eval: unknown option" "$bin" eval --run x --context 4 --bogus
exits 2 "eval: bad value" "$bin" eval --run x --context 4 --dpi many
exits 2 "suite: unknown option" "$bin" suite --out s --quick --bogus
exits 2 "suite: bad value" "$bin" suite --out s --quick --jobs 0
exits 2 "bench-step: unknown option" "$bin" bench-step --config tiny.json --bogus
exits 2 "bench-step: bad value" "$bin" bench-step --config tiny.json --steps 0
exits 2 "bench-step: a missing config" "$bin" bench-step --config nothing.json
exits 2 "migrate: unknown option" "$bin" migrate --run x --bogus
exits 2 "migrate: a missing run" "$bin" migrate --run nothing-here --trust
for cmd in train ky geometry spectral compare sweep reproduce suite export analyze eval migrate bench-step; do
  exits 0 "$cmd --help" "$bin" "$cmd" --help
  grep -q "Exit codes: 0 ok, 1 run failed, 2 usage or bad input, 3 diverged" out \
    && ok "$cmd --help lists the exit codes" || bad "$cmd --help lacks the exit codes"
done

# --- train: progress on stderr, the result on stdout, --json, warmup scaled -----------------
exits 0 "train --steps 10 under a warmup of 20" "$bin" train --config tiny.json --steps 10 --out run
grep -q "train.warmup" err && grep -q "scaled to 5" err && ok "the warmup notice names train.warmup" \
  || bad "no warmup notice: $(cat err)"
grep -q '"warmup": 5' run/config.json && ok "the run used the scaled warmup" || bad "warmup in config.json: $(grep warmup run/config.json)"
grep -q "^step " err && ! grep -q "^step " out && ok "progress lines on stderr only" || bad "progress: stdout $(head -3 out)"
grep -q "^done: " out && ok "the result on stdout" || bad "no result line on stdout: $(cat out)"
exits 0 "train --json" "$bin" train --config tiny.json --steps 10 --out run_json --json
parses "train --json" out
python3 - out "$work/run_json" <<'P' && ok "train --json is summary.json plus run_dir" || bad "train --json content: $(head -c 300 out)"
import json, os, sys
printed = json.load(open(sys.argv[1]))
saved = json.load(open(os.path.join(sys.argv[2], "summary.json")))
assert os.path.realpath(printed.pop("run_dir")) == os.path.realpath(sys.argv[2]), "run_dir"
assert printed == saved, "differs from summary.json"
assert printed["steps"] == 10
P

# --- divergence: 3 from train and from sweep ------------------------------------------------
cat >nan.json <<'J'
{"name": "nan", "threads": 1, "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 1},
 "train": {"steps": 50, "lr": 1000000.0, "warmup": 0, "grad_clip": 0, "batch_size": 8}}
J
exits 3 "train: diverged" "$bin" train --config nan.json --out nan -q
exits 3 "sweep: a cell diverged" "$bin" sweep --config nan.json --out nan_sweep -q

# --- a failed sweep cell: 1 (the config is valid, its corpus is missing) ---------------------
cat >text.json <<'J'
{"name": "text", "threads": 1, "task": {"name": "text", "text_path": "/nonexistent/corpus.txt"},
 "model": {"d_model": 16, "heads": 2, "layers": 1},
 "train": {"steps": 4, "batch_size": 4, "warmup": 1}}
J
exits 1 "sweep: a cell failed" "$bin" sweep --config text.json --out text_sweep -q
grep -q "/nonexistent/corpus.txt" err && ok "the failed cell's message names the corpus" || bad "cell failure message: $(cat err)"
exits 2 "sweep: --index out of range" "$bin" sweep --config tiny.json --out idx --index 9

# --- sweep: -j 2 shares the cores, --list --json, results on stdout -------------------------
cat >sweep.json <<'J'
{"name": "sw", "seed": 1, "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 1},
 "train": {"steps": 6, "batch_size": 4, "warmup": 1, "eval_every": 3, "eval_batches": 1}}
J
exits 0 "sweep --list --json" "$bin" sweep --config sweep.json --vary model.attention=dot,ky --out sw --list --json
parses "sweep --list --json" out
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); assert [x["dir"] for x in c]==["model.attention=dot/seed-1","model.attention=ky/seed-1"] and c[0]["state"]' out \
  && ok "sweep --list --json names the cells" || bad "sweep --list --json: $(cat out)"
cores=$(nproc)
share=$((cores / 2)); [ $share -ge 1 ] || share=1
exits 0 "sweep -j 2" "$bin" sweep --config sweep.json --vary model.attention=dot,ky --out sw -j 2 --json
parses "sweep --json" out
# Each cell chooses by measurement up to cores/2 (a single core's share is simply 1 thread).
if [ $share = 1 ]; then want=", 1 threads\?$"; else want="threads chosen by measurement (1 to $share)"; fi
n=$(grep -c "$want" err)
[ "$n" = 2 ] && ok "-j 2 without --threads: each run at most $share threads of $cores cores" || bad "-j 2 threads: $(grep threads err)"
! grep -q "^step \|: step \|^done: " out && ok "sweep: no progress or child output on stdout" || bad "sweep stdout: $(head -3 out)"

# --- export --list --json ---------------------------------------------------------------------
exits 0 "export --list --json" "$bin" export --run run --list --json
parses "export --list --json" out
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert "loss" in [f["name"] for f in j["figures"]], j' out \
  && ok "export --list --json names the loss figure" || bad "export --list --json: $(cat out)"

finish
