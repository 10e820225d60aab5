#!/usr/bin/env bash
# A refused `attnlab train` changes nothing on disk (issue 46, finding 5): for every refusal path
# of train and train --resume that a script can provoke (the config, the options, each run file
# unreadable, garbage, a directory, a FIFO or a symbolic link, a locked run, a directory that is
# not attnlab's, --until/--steps/--seed out of range, an edited config.json), the whole scratch
# tree is snapshotted (paths, types, sizes, sha256, inodes, modification times, link targets),
# the command must exit 2 naming the culprit, and the tree must be byte-identical afterwards.
# usage: train_refusals.sh <attnlab>
set -u
bin=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir
export ATTNLAB_PROGRESS=lines
unset ATTNLAB_RUN_LOCK_HELD

# The runs every case starts from: base stopped at step 50 of 100 (a checkpoint, a summary,
# metrics, views.rec), fin finished at 100.
tiny_config tiny.json 100 25 10
"$bin" train --config tiny.json --out base --until 50 -q >/dev/null 2>"$E2E_TMP/log" ||
  fatal "the base run did not train"
cp -a base fin
"$bin" train --resume fin -q >/dev/null 2>>"$E2E_TMP/log" || fatal "the finished run did not train"
for f in config.json metrics.csv summary.json views.rec checkpoint/state.json; do
  [ -f "base/$f" ] || fatal "the base run has no $f"
done
# other: another run of the same model (its own identity), for a recording copied between runs.
"$bin" train --config tiny.json --out other --until 20 -q >/dev/null 2>>"$E2E_TMP/log" ||
  fatal "the other run did not train"
mkdir -p w logs
mv base fin other w/
cd w || exit 1

# snap: every entry under . (not following links): path, type, size, sha256, inode, mtime,
# mode, link target; a FIFO or device is never opened.
snap() {
  python3 - <<'P'
import hashlib, os, stat
for root, dirs, files in os.walk(".", followlinks=False):
    dirs.sort()
    for name in sorted(dirs + files):
        p = os.path.join(root, name)
        st = os.lstat(p)
        line = [p, oct(st.st_mode), str(st.st_ino)]
        if stat.S_ISLNK(st.st_mode):
            line.append("-> " + os.readlink(p))
        elif stat.S_ISREG(st.st_mode):
            with open(p, "rb") as f:
                line += [str(st.st_size), str(st.st_mtime_ns), hashlib.sha256(f.read()).hexdigest()]
        print(" ".join(line))
P
}

n=0
# refused WANT CMD...: snapshot, run CMD, which must exit 2 with WANT in its stderr, and the
# tree must be as it was.
refused() {
  local want=$1 rc=0 before after
  shift
  n=$((n + 1))
  before=$(snap)
  "$@" >"../logs/$n.out" 2>"../logs/$n.err" </dev/null || rc=$?
  after=$(snap)
  local what="case $n ($want): ${*#"$bin"}"
  if [ "$rc" != 2 ]; then
    bad "$what: exit $rc, want 2: $(head -c 400 "../logs/$n.err")"
  elif ! grep -qF -- "$want" "../logs/$n.err"; then
    bad "$what: the message lacks '$want': $(head -c 400 "../logs/$n.err")"
  elif [ "$before" != "$after" ]; then
    bad "$what: the tree changed: $(diff <(echo "$before") <(echo "$after") | head -n 8 | tr '\n' ' ')"
  else
    ok "$what"
  fi
}
# fresh NAME: a copy of base as NAME (its own inodes and times), printed.
fresh() { rm -rf "$1" && cp -a base "$1" && echo "$1"; }

# --- the command line and the config (nothing may be created: not even --out) --------------
refused "exactly one" "$bin" train --out new -q
refused "exactly one" "$bin" train --config ../tiny.json --resume base --out new -q
refused "missing.json" "$bin" train --config missing.json --out new -q
echo '{"name": "x", "model": {"d_model": 16,' >broken.json
refused "broken.json" "$bin" train --config broken.json --out new -q
sed 's/"seed": 1,/"seed": 1, "colour": "red",/' ../tiny.json >unknown.json
refused "colour" "$bin" train --config unknown.json --out new -q
sed 's/"d_model": 16/"d_model": -16/' ../tiny.json >negative.json
refused "d_model" "$bin" train --config negative.json --out new -q
sed 's/"d_model": 16, "heads": 2, "layers": 1/"d_model": 16384, "heads": 2, "layers": 512/' \
  ../tiny.json >huge.json
refused "d_model" "$bin" train --config huge.json --out new -q
mkfifo fifo.json
refused "fifo.json" "$bin" train --config fifo.json --out new -q
rm -f fifo.json broken.json unknown.json negative.json huge.json
refused "--steps" "$bin" train --config ../tiny.json --out new --steps 0 -q
refused "--until" "$bin" train --config ../tiny.json --out new --until 0 -q
refused "--until" "$bin" train --config ../tiny.json --out new --until 500 -q
refused "--seed" "$bin" train --config ../tiny.json --out new --seed -1 -q
refused "--max-threads" "$bin" train --config ../tiny.json --out new --max-threads 0 -q
refused "--checkpoint-every" "$bin" train --config ../tiny.json --out new --checkpoint-every -1 -q

# --- --out onto what is there ---------------------------------------------------------------
mkdir -p users && echo '{"mine": true}' >users/config.json
refused "did not write" "$bin" train --config ../tiny.json --out users -q
refused "already holds an attnlab run" "$bin" train --config ../tiny.json --out base -q
refused "already holds an attnlab run" "$bin" train --resume base --out fin -q
d=$(fresh foreign) && echo notes >"$d/checkpoint/notes.txt"
refused "notes.txt" "$bin" train --resume "$d" -q
refused "notes.txt" "$bin" train --config ../tiny.json --out "$d" --force -q
mkdir -p empty
refused "not an attnlab checkpoint" "$bin" train --resume empty -q
refused "not an attnlab checkpoint" "$bin" train --resume nowhere -q
d=$(fresh nockpt) && rm -r "$d/checkpoint"
refused "no checkpoint yet" "$bin" train --resume "$d" -q

# --- options against the run ----------------------------------------------------------------
refused "--seed" "$bin" train --resume base --seed 7 -q
refused "--steps" "$bin" train --resume base --steps 20 -q
refused "--until" "$bin" train --resume base --until 40 -q
refused "--until" "$bin" train --resume base --until 500 -q
refused "already finished" "$bin" train --resume fin -q

# --- each run file damaged or replaced ------------------------------------------------------
# damage NAME FILE HOW: a copy of base whose FILE is made garbage, a directory, a FIFO, a link
# to /dev/zero or a link to a copy of itself outside the run; prints the run's directory.
damage() {
  local d
  d=$(fresh "$1")
  case $3 in
    garbage) head -c 3000 /dev/urandom >"$d/$2" ;;
    dir) rm -f "$d/$2" && mkdir "$d/$2" && echo x >"$d/$2/inside" ;;
    fifo) rm -f "$d/$2" && mkfifo "$d/$2" ;;
    zero) rm -f "$d/$2" && ln -s /dev/zero "$d/$2" ;;
    link) cp "$d/$2" "$1.outside" && rm -f "$d/$2" && ln -s "../$1.outside" "$d/$2" ;;
  esac
  echo "$d"
}
for how in garbage dir fifo zero link; do
  refused "views.rec" "$bin" train --resume "$(damage "views-$how" views.rec $how)" -q
done
for how in dir fifo zero link; do
  refused "metrics.csv" "$bin" train --resume "$(damage "metrics-$how" metrics.csv $how)" -q
  refused "summary.json" "$bin" train --resume "$(damage "summary-$how" summary.json $how)" -q
  refused "config.json" "$bin" train --resume "$(damage "config-$how" config.json $how)" -q
done
for how in garbage dir fifo zero; do
  refused "state.json" "$bin" train --resume "$(damage "state-$how" checkpoint/state.json $how)" -q
done
refused "config.json" "$bin" train --resume "$(damage config-garbage config.json garbage)" -q
d=$(fresh views-other) && cp other/views.rec "$d/views.rec"
refused "views.rec" "$bin" train --resume "$d" -q
d=$(fresh disorder) && printf '%s\n50,1,1,0.5,0.001,10\n25,1,1,0.5,0.001,10\n' \
  "step,train_loss,eval_loss,eval_accuracy,lr,steps_per_s" >"$d/metrics.csv"
refused "metrics.csv" "$bin" train --resume "$d" -q
d=$(fresh conndir) && mkdir "$d/conn.json"
refused "conn.json" "$bin" train --resume "$d" -q
# Resumed into another directory: a damaged source creates nothing there.
refused "metrics.csv" "$bin" train --resume disorder --out elsewhere -q
# An edited config.json: another model, or any other key (a resume would write the checkpoint's
# config back over the edit).
d=$(fresh othermodel) && sed -i 's/"d_model": 16/"d_model": 32/' "$d/config.json"
refused "another model" "$bin" train --resume "$d" -q
d=$(fresh edited) && python3 - "$d/config.json" <<'P'
import json, sys
c = json.load(open(sys.argv[1])); c["train"]["lr"] = 0.5
json.dump(c, open(sys.argv[1], "w"), indent=2)
P
refused "train.lr" "$bin" train --resume "$d" -q
refused "train.lr" "$bin" train --resume "$d" --steps 200 -q

# --- a locked run ---------------------------------------------------------------------------
d=$(fresh locked)
python3 -c '
import fcntl, sys, time
f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close(); time.sleep(120)' "$d/.attnlab.lock" ../locked.ready &
holder=$!
wait_until 100 0.1 test -e ../locked.ready || bad "the lock holder did not start"
refused "being written by" "$bin" train --resume "$d" -q
refused "being written by" "$bin" train --config ../tiny.json --out "$d" --force -q
# The sweep's variable is no key to the lock: its holder is not this process's parent.
refused "being written by" env ATTNLAB_RUN_LOCK_HELD="$(realpath "$d")" "$bin" train --resume "$d" --steps 200 -q
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# The same checks let a good resume through (the rule is not "refuse everything").
d=$(fresh good)
if "$bin" train --resume "$d" -q >/dev/null 2>../logs/good.err; then
  ok "an untouched copy resumes"
else
  bad "an untouched copy was refused: $(cat ../logs/good.err)"
fi
finish
