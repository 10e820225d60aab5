#!/usr/bin/env bash
# Bad input at every entry point of the real binary, one table row per case: configs, CLI
# arguments, KY expressions, geometry token lists and matrices, CSV matrices, checkpoints and
# run directories, dataset files. Each row must exit non-zero with the exit code it names, not
# by a signal (no crash: exit >= 128 fails), print a message containing the row's substring (the
# culprit: key, file, option, allowed range), print nothing on stdout, and leave no output
# behind (the --out path of the row, and no temporary files beside it).
# usage: bad_inputs.sh <attnlab> <source dir>
set -u
bin=$(realpath "$1")
src=$(realpath "$2")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP
cd "$work"
ulimit -c 0  # a crash must show as a signal exit here, not a core file
fails=0 rows=0 lane=""
has_gui=0
# A build without the GUI (the ASan pass) has no gui subcommand; `gui --help` would still exit 0.
"$bin" --help 2>/dev/null | grep -E "^ +gui +" >/dev/null && has_gui=1

# row <exit code> <stderr substring> <path that must not exist afterwards, or -> <args...>
# (rows are numbered within their lane: A1, A2, ..., B1, ...)
row() {
  local want_rc=$1 want=$2 out=$3
  shift 3
  rows=$((rows + 1))
  local rc=0 stdout=$work/stdout$lane stderr=$work/stderr$lane
  timeout 120 "$bin" "$@" >"$stdout" 2>"$stderr" </dev/null || rc=$?
  local what="row $lane$rows: attnlab $*"
  if [ $rc -ge 124 ]; then
    fails=$((fails + 1)); echo "FAIL $what: exit $rc (a crash, a signal or a hang)"; sed 's/^/  | /' "$stderr" | tail -5; return
  fi
  if [ $rc != "$want_rc" ]; then
    fails=$((fails + 1)); echo "FAIL $what: exit $rc, want $want_rc"; sed 's/^/  | /' "$stderr" | tail -5; return
  fi
  if ! grep -qF -- "$want" "$stderr"; then
    fails=$((fails + 1)); echo "FAIL $what: message lacks '$want':"; sed 's/^/  | /' "$stderr" | tail -5; return
  fi
  if [ -s "$stdout" ] && [ "$1" != train ]; then
    fails=$((fails + 1)); echo "FAIL $what: printed on stdout"; return
  fi
  if [ "$out" != - ] && { [ -e "$out" ] || compgen -G "$out.tmp*" >/dev/null; }; then
    fails=$((fails + 1)); echo "FAIL $what: left $out behind"; return
  fi
  echo "ok   $lane$rows: $want"
}

# --- files the rows read --------------------------------------------------------------------
cfg() { printf '%s' "$2" >"$work/$1.json"; }
cfg not_json '{ "model": '
cfg empty ''
cfg array '[1, 2]'
cfg unknown_key '{"modle": {"d_model": 64}}'
cfg unknown_nested '{"train": {"learning_rate": 0.1}}'
cfg heads '{"model": {"d_model": 30, "heads": 4}}'
cfg lr_negative '{"train": {"lr": -0.001}}'
cfg lr_string '{"train": {"lr": "fast"}}'
cfg steps_zero '{"train": {"steps": 0}}'
cfg batch_negative '{"train": {"batch_size": -8}}'
cfg warmup '{"train": {"steps": 10, "warmup": 100}}'
cfg mechanism '{"model": {"attention": "telepathy"}}'
cfg mechanism_count '{"model": {"layers": 2, "attention": ["dot", "dot", "dot"]}}'
cfg task '{"task": {"name": "chess"}}'
cfg text_missing '{"task": {"name": "text", "text_path": "/nonexistent/corpus.txt"}}'
cfg ky_window '{"model": {"attention": "ky", "attention_options": {"ky": {"window": 1}}}}'
cfg conn_literal '{"model": {"architecture": "conn", "d_model": 64, "conn": {"slots": 32, "mixing": "literal"}}}'
cfg position_rope_neural '{"model": {"attention": "neural", "position": "rope"}}'
cfg rope_mechanism '{"model": {"attention": "rope"}}'
cfg neural_down_bias '{"model": {"attention": "neural", "attention_options": {"neural": {"down": "none", "down_bias": true}}}}'
cfg huge_model '{"model": {"d_model": 4000000000}}'
cfg lr_overflow '{"train": {"lr": 1e400}}'
cfg cuda '{"device": "cuda"}'
cfg seed_negative '{"seed": -1}'
python3 -c "print('[' * 200000 + ']' * 200000)" >deep.json  # once a stack overflow (SIGSEGV)
mkdir -p fmnist_empty fmnist_bad
fmnist() { cfg "$1" "{\"task\": {\"name\": \"fashion-mnist\", \"data_dir\": \"$2\"}, \"model\": {\"head\": \"classifier\"}}"; }
fmnist fmnist_missing /nonexistent/fmnist
fmnist fmnist_empty "$work/fmnist_empty"
# The real dataset's files, each cut short: the reader must name the damaged file.
fm=/usr/share/datasets/fashion-mnist
if [ -d $fm ]; then
  for f in $fm/*; do head -c 3000 "$f" >"fmnist_bad/$(basename "$f")"; done
fi
fmnist fmnist_bad "$work/fmnist_bad"
printf '\xff\xfe\x00\x01binary' >corpus.bin
cfg text_binary "{\"task\": {\"name\": \"text\", \"text_path\": \"$work/corpus.bin\"}}"

# A real (tiny) run to damage: checkpoints and run directories.
cat >tiny.json <<'J'
{"name": "tiny", "task": {"name": "copy", "length": 4, "vocab": 8},
 "model": {"d_model": 16, "heads": 2, "layers": 1},
 "train": {"steps": 4, "batch_size": 4, "warmup": 1, "eval_every": 2, "eval_batches": 1},
 "threads": 1}
J
"$bin" train --config tiny.json --out good --quiet >/dev/null 2>&1 || { echo "FAIL: cannot make the good run"; exit 1; }
damaged() {  # damaged <name>: a copy of the good run to break
  rm -rf "$1"; cp -r good "$1"
}
damaged state_garbage; printf '{"format": "attn' >state_garbage/checkpoint/state.json
damaged model_cut; truncate -s 200 model_cut/checkpoint/model.safetensors
damaged optimizer_gone; rm optimizer_gone/checkpoint/optimizer.safetensors
damaged model_gone; rm model_gone/checkpoint/model.safetensors
damaged format_version; python3 - format_version/checkpoint/state.json <<'P'
import json, sys
j = json.load(open(sys.argv[1])); j["format_version"] = 99; json.dump(j, open(sys.argv[1], "w"))
P
damaged other_config; python3 - other_config/checkpoint/state.json <<'P'
import json, sys
j = json.load(open(sys.argv[1])); j["config"]["model"]["d_model"] = "wide"; json.dump(j, open(sys.argv[1], "w"))
P
damaged no_step; python3 - no_step/checkpoint/state.json <<'P'
import json, sys
j = json.load(open(sys.argv[1])); del j["step"]; json.dump(j, open(sys.argv[1], "w"))
P
mkdir -p not_a_run

csv() { printf '%b' "$2" >"$work/$1.csv"; }
csv ragged '1,2\n3\n'
csv nonsquare '1,2,3\n4,5,6\n'
csv word '1,2\n3,abc\n'
csv inf '1,inf\n3,4\n'
csv nan '1,2\nnan,4\n'
csv empty ''
csv huge '1e308,1e308\n1e308,1e308\n'
csv good '0.1,0\n0,0.2\n'

# --- configs (attnlab train) ----------------------------------------------------------------
config_rows() {
  row 2 "cannot open config file"            out1 train --config missing.json --out out1
  row 2 "not valid JSON"                     out2 train --config not_json.json --out out2
  row 2 "not valid JSON"                     out3 train --config empty.json --out out3
  row 2 "is a directory"                     out3b train --config "$work" --out out3b
  row 2 "array.json"                         out4 train --config array.json --out out4
  row 2 "unknown key 'modle'"                out5 train --config unknown_key.json --out out5
  row 2 "train.learning_rate"                out6 train --config unknown_nested.json --out out6
  row 2 "model.d_model (30)"                 out7 train --config heads.json --out out7
  row 2 "train.lr"                           out8 train --config lr_negative.json --out out8
  row 2 "train.lr"                           out9 train --config lr_string.json --out out9
  row 2 "train.steps"                        out10 train --config steps_zero.json --out out10
  row 2 "train.batch_size"                   out11 train --config batch_negative.json --out out11
  row 2 "train.warmup (100)"                 out12 train --config warmup.json --out out12
  row 2 "telepathy"                          out13 train --config mechanism.json --out out13
  row 2 "model.attention lists 3"            out14 train --config mechanism_count.json --out out14
  row 2 "chess"                              out15 train --config task.json --out out15
  row 2 "/nonexistent/corpus.txt"            out16 train --config text_missing.json --out out16
  row 2 "window"                             out17 train --config ky_window.json --out out17
  row 2 "model.conn.mixing"                  out18 train --config conn_literal.json --out out18
  row 2 'model.position "rope" does not apply to mechanism "neural"' out18p train --config position_rope_neural.json --out out18p
  row 2 '"position": "rope"'                   out18r train --config rope_mechanism.json --out out18r
  row 2 "model.attention_options.neural.down_bias" out18b train --config neural_down_bias.json --out out18b
  row 2 "model.d_model"                      out19 train --config huge_model.json --out out19
  row 2 "lr_overflow.json: not valid JSON"                 out20 train --config lr_overflow.json --out out20
  row 2 "device: \"cuda\" was requested"     out21 train --config cuda.json --out out21
  row 2 "seed"                               out22 train --config seed_negative.json --out out22
  row 2 "nested more than 32 levels deep"    out22b train --config deep.json --out out22b
  row 2 "/nonexistent/fmnist"                out23 train --config fmnist_missing.json --out out23
  row 2 "$work/fmnist_empty"                 out24 train --config fmnist_empty.json --out out24
  [ -d $fm ] && row 2 "$work/fmnist_bad/"    out25 train --config fmnist_bad.json --out out25
  row 2 "corpus.bin"                         out26 train --config text_binary.json --out out26
}

# --- CLI arguments --------------------------------------------------------------------------
cli_rows() {
  row 2 "exactly one of --config FILE or --resume DIR" - train
  row 2 "exactly one of --config FILE or --resume DIR" - train --config tiny.json --resume good
  row 2 "--steps"                          out27 train --config tiny.json --steps -5 --out out27
  row 2 "--steps"                          out28 train --config tiny.json --steps many --out out28
  row 2 "--until"                          out29 train --config tiny.json --until 0 --out out29
  row 2 "--threads"                        out30 train --config tiny.json --threads -2 --out out30
  row 2 "--bogus"                          - train --config tiny.json --bogus
  row 2 "frobnicate"                       - frobnicate
  if [ $has_gui = 1 ]; then
    row 2 "--size must look like 1280x800"   - gui --size 12
    row 2 "unknown panel 'nosuch'"           - gui --panel nosuch
    row 2 "--cycle-panels"                 - gui --cycle-panels 0
  fi
}

# --- checkpoints and run directories (attnlab train --resume) --------------------------------
resume_rows() {
  row 2 "not an attnlab checkpoint"          - train --resume /nonexistent/run
  row 2 "not an attnlab checkpoint"          - train --resume not_a_run
  row 2 "state.json is corrupt"              - train --resume state_garbage --steps 8
  row 2 "model.safetensors is corrupt"       - train --resume model_cut --steps 8
  row 2 "optimizer.safetensors is missing"   - train --resume optimizer_gone --steps 8
  row 2 "model.safetensors is missing"       - train --resume model_gone --steps 8
  row 2 "format version 99"                  - train --resume format_version --steps 8
  row 2 "model.d_model"                      - train --resume other_config --steps 8
  row 2 "state.json is incomplete"           - train --resume no_step --steps 8
  row 2 "already finished its 4 steps"       - train --resume good
  row 2 "--seed 5 differs"                   - train --resume good --steps 8 --seed 5
  row 2 "--until 2 is not after"             - train --resume good --steps 8 --until 2
}

# --- KY expressions (attnlab ky) --------------------------------------------------------------
ky_rows() {
  row 2 "position"                           - ky --function "sin(x" --x0 0
  row 2 "cannot parse"                       - ky --function "" --x0 0
  row 2 "cannot parse"                       - ky --function "x +* 2" --x0 0
  row 2 "y"                                  - ky --function "y*x" --x0 0
  row 2 "log(x)"                             - ky --function "log(x)" --x0 -1
  row 2 "poly"                               - ky --function "x" --x0 0 --kind quadratic
  row 2 "--degree"                           - ky --function "x" --x0 0 --degree 0
  row 2 "--h0"                               - ky --function "x" --x0 0 --h0 -1
  row 2 "--rho"                              - ky --function "x" --x0 0 --rho 1.5
  row 2 "--chain"                            - ky --function "x" --x0 0 --chain "cos("
  row 2 "--x0"                               - ky --function "x"
}

# --- geometry token lists and matrices (attnlab geometry) ------------------------------------
geometry_rows() {
  row 2 "--tokens"                           - geometry --tokens "1,2;3" --query 0,0
  row 2 "--tokens"                           - geometry --tokens "a,b" --query 0,0
  row 2 "--tokens"                           - geometry --tokens "" --query 0,0
  row 2 "--wq"                               - geometry --wq "1,2,3" --query 0,0
  row 2 "--query"                            - geometry --query 1
  row 2 "--temperature"                      - geometry --temperature 0 --query 0,0
  row 2 "--grid"                             - geometry --grid 100000
  row 2 "exactly one of --query, --circle, --grid" - geometry --query 0,0 --circle 1
  row 2 "--preset"                           - geometry --preset nosuch --query 0,0
  row 2 "--alpha"                            - geometry --circle 1 --mode residual --alpha 2
}

# --- CSV matrices (attnlab spectral) ---------------------------------------------------------
csv_rows() {
  row 2 "cannot open"                        cout1 spectral --matrix missing.csv --control none --out cout1
  row 2 "row 2"                              cout2 spectral --matrix ragged.csv --control none --out cout2
  row 2 "square"                             cout3 spectral --matrix nonsquare.csv --control none --out cout3
  row 2 "column 2"                           cout4 spectral --matrix word.csv --control none --out cout4
  row 2 "inf"                                cout5 spectral --matrix inf.csv --control none --out cout5
  row 2 "nan"                                cout6 spectral --matrix nan.csv --control none --out cout6
  row 2 "empty.csv"                          cout7 spectral --matrix empty.csv --control none --out cout7
  row 2 "not finite"                         cout8 spectral --matrix huge.csv --control none --out cout8
  row 2 "none, spec or norm-bound, got 'wobble'"             cout9 spectral --matrix good.csv --control wobble --out cout9
  row 2 "--limit"                            cout10 spectral --matrix good.csv --control spec --limit -1 --out cout10
  row 2 "--out writes the controlled matrix" cout11 spectral --matrix good.csv --out cout11
  row 2 "$work/no/dir/c.csv"                 "$work/no/dir/c.csv" spectral --matrix good.csv --control none --out "$work/no/dir/c.csv"
  row 2 "$work"                              cout12 spectral --matrix "$work" --control none --out cout12
}

# --- the rows, in two lanes ------------------------------------------------------------------
# Each row starts the binary (about half a second of loading LibTorch, one core's work), so the
# rows run in two lanes side by side, which keeps both cores of a small CI machine busy. No row
# writes a file that a row of the other lane reads or writes.
# run_lane NAME FUNCTION...: runs FUNCTION...'s rows in the background, numbered NAME1, NAME2, ...;
# their lines go to $work/lane.NAME, the lane's rows and failures to $work/lane.NAME.count.
run_lane() {
  local name=$1
  shift
  (
    lane=$name rows=0 fails=0
    for f in "$@"; do "$f"; done
    echo "$rows $fails" >"$work/lane.$name.count"
  ) >"$work/lane.$name" 2>&1 &
}
run_lane A config_rows cli_rows
run_lane B resume_rows ky_rows geometry_rows csv_rows
wait
for name in A B; do
  cat "$work/lane.$name"
  if read -r lane_rows lane_fails <"$work/lane.$name.count"; then
    rows=$((rows + lane_rows)) fails=$((fails + lane_fails))
  else
    fails=$((fails + 1)); echo "FAIL lane $name did not finish"
  fi
done

echo "bad_inputs: $rows rows, $fails failed"
[ "$rows" -ge 40 ] || { echo "FAIL: fewer than 40 rows"; exit 1; }
[ $fails = 0 ]
