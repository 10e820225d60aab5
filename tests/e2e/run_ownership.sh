#!/usr/bin/env bash
# Nothing the user did not ask to lose (issue 30): --force removes only attnlab's run, a name
# stays one path component, a run that diverged before measuring reports no measurement, the
# row spanning an interruption is exact, and the messages for resuming, --steps and --until say
# what is true. Real processes, real files, real signals.
# usage: run_ownership.sh <attnlab>
set -u
bin=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir
export ATTNLAB_PROGRESS=lines

tiny_config tiny.json
sed 's/"steps": 400/"steps": 400000/' tiny.json >long.json
json_get() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1])).get(sys.argv[2], "absent"); print("null" if v is None else v)' "$1" "$2" 2>/dev/null; }
# tree_sum DIR: one checksum over every file's path and contents under DIR.
tree_sum() { (cd "$1" && find . -type f ! -name .attnlab.lock -print0 | sort -z | xargs -0 md5sum | md5sum); }
has_rows() { [ "$({ wc -l <"$1/metrics.csv"; } 2>/dev/null || echo 0)" -ge 2 ]; }
alive() { kill -0 "$1" 2>/dev/null; }

# --- 1. --force removes only attnlab's run ---------------------------------------------------
# A user's project folder that happens to have a config.json: never a run, --force or not.
mkdir -p proj/src proj/data
cp tiny.json proj/config.json
echo "my notes" >proj/notes.md; echo "print(1)" >proj/src/main.py
head -c 100000 /dev/urandom >proj/data/big.bin
before=$(tree_sum proj)
expect_fail -c 2 "attnlab did not write" "$bin" train --config proj/config.json --out proj
grep -q -- "--force" "$E2E_TMP/err" && bad "the refusal recommends --force: $(cat "$E2E_TMP/err")" \
  || ok "the refusal does not recommend --force"
expect_fail -c 2 "attnlab did not write" "$bin" train --config proj/config.json --out proj --force
[ "$(tree_sum proj)" = "$before" ] && ok "--force on a user's folder: every file is still there, unchanged" \
  || bad "the user's folder changed: $(find proj | head -20)"

# A run with a nested run, the user's notes and a folder inside checkpoint/.
"$bin" train --config tiny.json --out P -q >/dev/null 2>&1 || fatal "tiny run failed"
"$bin" train --config tiny.json --seed 5 --out P/child -q >/dev/null 2>&1 || fatal "nested run failed"
echo "notes" >P/notes.md
mkdir -p P/checkpoint/mine && echo keep >P/checkpoint/mine/file.txt
child=$(tree_sum P/child)
expect_fail -c 2 "checkpoint/mine" "$bin" train --config tiny.json --seed 2 --out P --force -q
[ -f P/checkpoint/mine/file.txt ] && [ -f P/summary.json ] \
  && ok "a folder inside checkpoint/ stops --force before anything is removed" || bad "P after refusal: $(ls -R P | head)"
mv P/checkpoint/mine mine-moved
"$bin" train --config tiny.json --seed 2 --out P --force -q >/dev/null 2>force.err \
  && ok "--force replaces the run once checkpoint/ holds only attnlab's files" || bad "--force: $(cat force.err)"
[ "$(json_get P/summary.json seed)" = 2 ] && ok "the replaced run is the new one (seed 2)" || bad "P seed $(json_get P/summary.json seed)"
[ "$(tree_sum P/child)" = "$child" ] && ok "--force left the nested run P/child untouched" || bad "P/child changed"
[ "$(cat P/notes.md 2>/dev/null)" = notes ] && ok "--force left P/notes.md" || bad "notes.md gone"

# --resume NB/A --out NB --force: the source run inside NB survives.
"$bin" train --config tiny.json --out NB -q >/dev/null 2>&1 || fatal "NB failed"
"$bin" train --config tiny.json --seed 3 --until 100 --out NB/A -q >/dev/null 2>&1 || fatal "NB/A failed"
a_sum=$(tree_sum NB/A/checkpoint)
"$bin" train --resume NB/A --out NB --force -q >/dev/null 2>nb.err && ok "--resume NB/A --out NB --force runs" || bad "NB: $(cat nb.err)"
[ "$(tree_sum NB/A/checkpoint)" = "$a_sum" ] && [ -f NB/A/config.json ] && ok "the source run NB/A is untouched" \
  || bad "NB/A changed: $(ls -R NB/A | head)"
[ "$(json_get NB/summary.json seed)" = 3 ] && [ "$(json_get NB/summary.json steps)" = 400 ] \
  && ok "NB now holds the resumed run (seed 3, 400 steps)" || bad "NB summary: $(cat NB/summary.json | head -c 300)"

# A run without the marker (written before it existed) is still recognised by its files.
"$bin" train --config tiny.json --out legacy -q >/dev/null 2>&1 && rm legacy/.attnlab-run
expect_fail -c 2 "already holds an attnlab run" "$bin" train --config tiny.json --out legacy

# --- 2. the config's name is one path component ------------------------------------------
for name in "" "." ".." "../../escape" "a/b" ".hidden"; do
  python3 -c 'import json,sys; c=json.load(open("tiny.json")); c["name"]=sys.argv[1]; json.dump(c, open("named.json","w"))' "$name"
  mkdir -p names && cd names
  expect_fail -c 2 "name" "$bin" train --config ../named.json
  grep -q '"'"$name"'"' "$E2E_TMP/err" || bad "the message does not quote the name '$name': $(cat "$E2E_TMP/err")"
  cd ..
done
[ -z "$(ls -A names)" ] && [ ! -e escape ] && [ ! -e ../escape ] && ok "no bad name wrote anything" \
  || bad "written by a bad name: $(ls -A names)"

# --- 4. a run that diverges before its first evaluation: no measurement, never 0 -----------
python3 -c 'import json; c=json.load(open("tiny.json")); c["name"]="div"; c["train"].update(lr=1e8, warmup=0); json.dump(c, open("div.json","w"))'
rc=0; "$bin" train --config div.json --out div -q >/dev/null 2>div.err || rc=$?
[ $rc = 3 ] && ok "lr 1e8 diverges (exit 3)" || bad "lr 1e8: exit $rc: $(cat div.err)"
[ "$(json_get div/summary.json eval_loss)" = null ] && [ "$(json_get div/summary.json eval_accuracy)" = null ] \
  && ok "its summary says eval_loss and eval_accuracy null" || bad "diverged summary: $(head -c 400 div/summary.json)"
rc=0; "$bin" sweep --config div.json --seeds 2 --out dsw >dsw1.out 2>dsw1.err || rc=$?
[ $rc = 3 ] && grep -q "(2 diverged)" dsw1.out && ok "sweep: exit 3, the table says 2 diverged" \
  || bad "sweep: exit $rc: $(cat dsw1.out dsw1.err | tail -5)"
grep -q "0\.0000" dsw1.out && bad "a diverged setting shows a loss of 0: $(cat dsw1.out)" || ok "no 0.0000 loss for it"
rc=0; "$bin" sweep --config div.json --seeds 2 --out dsw --json >dsw2.json 2>dsw2.err || rc=$?
[ $rc = 3 ] && [ "$(json_get dsw2.json diverged)" = 2 ] && ok "the re-run stays diverged: exit 3, \"diverged\": 2" \
  || bad "re-run: exit $rc: $(head -c 300 dsw2.json)"

# --- 6. the row spanning an interruption is exact ----------------------------------------
"$bin" train --config tiny.json --out ref -q >/dev/null 2>&1 || fatal "reference run failed"
# columns step..lr (steps_per_s is a timing).
cols() { cut -d, -f1-5 "$1"; }
# --checkpoint-every 1 slows the steps (a save each) so the signal lands mid-run on a fast machine.
"$bin" train --config long.json --steps 400 --checkpoint-every 1 --out hup -q >/dev/null 2>/dev/null &
p=$!
wait_until 300 0.02 has_rows hup
kill -HUP $p; wait $p
steps=$(json_get hup/summary.json steps)
[ "$(json_get hup/summary.json interrupted)" = True ] && [ "$steps" -lt 400 ] \
  && ok "SIGHUP stopped the run at step $steps" || bad "SIGHUP did not interrupt the run (steps $steps)"
"$bin" train --resume hup -q >/dev/null 2>hup.err || bad "resume after SIGHUP: $(cat hup.err)"
[ "$(cols hup/metrics.csv)" = "$(cols ref/metrics.csv)" ] \
  && ok "SIGHUP at step $steps, resumed: metrics.csv equals the uninterrupted run's" \
  || bad "SIGHUP: metrics differ: $(diff <(cols hup/metrics.csv) <(cols ref/metrics.csv) | head -6)"
kills=0
for i in 1 2 3 4 5 6; do
  if [ -f k9/checkpoint/state.json ] && [ ! -f k9/summary.json ]; then args=(--resume k9)
  elif [ ! -f k9/summary.json ]; then args=(--config tiny.json --out k9 --force)
  else break; fi
  "$bin" train "${args[@]}" --checkpoint-every 1 -q >/dev/null 2>&1 &
  p=$!
  sleep "0.$((RANDOM % 8 + 2))"
  kill -KILL $p 2>/dev/null && kills=$((kills + 1)); wait $p 2>/dev/null
done
if [ ! -f k9/summary.json ]; then
  if [ -f k9/checkpoint/state.json ]; then "$bin" train --resume k9 -q >/dev/null 2>k9.err
  else "$bin" train --config tiny.json --out k9 --force -q >/dev/null 2>k9.err; fi
fi
[ "$(cols k9/metrics.csv)" = "$(cols ref/metrics.csv)" ] \
  && ok "kill -9 x$kills with --checkpoint-every 1: metrics.csv equals the uninterrupted run's" \
  || bad "kill -9: metrics differ: $(diff <(cols k9/metrics.csv) <(cols ref/metrics.csv) | head -6)"

# --- 13. killed before its first checkpoint: say so, offer to start over -------------------
"$bin" train --config long.json --out early -q >/dev/null 2>&1 &
p=$!
wait_until 300 0.05 has_rows early
kill -KILL $p; wait $p 2>/dev/null
expect_fail -c 2 "no checkpoint yet" "$bin" train --resume early
grep -q -- "--force" "$E2E_TMP/err" && ok "--resume offers to start over (--force)" || bad "no way out: $(cat "$E2E_TMP/err")"
expect_fail -c 2 "no checkpoint yet" "$bin" train --config long.json --out early
grep -q -- "--resume" "$E2E_TMP/err" && bad "--out advises --resume on a run without a checkpoint: $(cat "$E2E_TMP/err")" \
  || ok "--out on it does not advise --resume"
"$bin" train --config tiny.json --out early --force -q >/dev/null 2>e.err && ok "and --force starts it over" || bad "start over: $(cat e.err)"

# --- 15. --steps and --until name themselves; nothing is changed by a refusal -----------
before=$(tree_sum ref)
expect_fail -c 2 "--steps 300" "$bin" train --resume ref --steps 300
grep -q -- "--until" "$E2E_TMP/err" && bad "--steps 300 is reported as --until: $(cat "$E2E_TMP/err")" || ok "--steps 300 is named, not --until"
expect_fail -c 2 "past the run's end" "$bin" train --resume ref --until 500
expect_fail -c 2 "past the run's end" "$bin" train --config tiny.json --until 500 --out u500
[ "$(tree_sum ref)" = "$before" ] && ok "the refused requests left the finished run as it was" || bad "ref changed by a refusal"
[ -e u500 ] && bad "a refused --until created u500" || ok "a refused --until creates nothing"
finish
