#!/usr/bin/env bash
# Results that cannot be written are never a success (issue 46, finding 6): compare, analyze,
# eval and train with their results on /dev/full (a full disk) exit 1 and name standard output;
# and two of finding 11's messages: analyze --batches 0 is refused like -1, naming --batches.
# usage: stdout_errors.sh <attnlab>
set -u
bin=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir
export ATTNLAB_PROGRESS=lines
[ -w /dev/full ] || fail "/dev/full is not writable here"

tiny_config tiny.json 60 20 10
"$bin" train --config tiny.json --out run -q >/dev/null 2>"$E2E_TMP/log" || fatal "training the run"

# full WHAT CMD...: CMD with stdout on /dev/full must exit 1 and say "standard output".
full() {
  local what=$1 rc=0
  shift
  "$@" >/dev/full 2>err || rc=$?
  if [ "$rc" = 1 ] && grep -q "cannot write to standard output" err; then
    ok "$what > /dev/full: exit 1, $(grep -o 'cannot write to standard output[^(]*' err | head -n1)"
  else
    bad "$what > /dev/full: exit $rc, stderr: $(head -c 300 err)"
  fi
}
full "compare --json" "$bin" compare run --json
full "compare" "$bin" compare run
full "analyze --json" "$bin" analyze --run run --importance --json
full "analyze" "$bin" analyze --run run --ablate 0.0
full "eval --json" "$bin" eval --run run --context 4 --json
full "eval" "$bin" eval --run run --context 4
full "train --json" "$bin" train --config tiny.json --out run2 --json -q
full "train" "$bin" train --config tiny.json --out run3 -q
full "train --resume --json" "$bin" train --resume run2 --steps 80 --json -q
full "--version" "$bin" --version
# The same commands to a working stdout still exit 0 (the check is not a false alarm).
if "$bin" compare run --json >ok.json 2>err && python3 -m json.tool ok.json >/dev/null; then
  ok "compare --json to a file: exit 0, valid JSON"
else
  bad "compare --json to a file: $(cat err)"
fi

# analyze --batches: 0 would evaluate nothing, so it is refused like -1 (the default, all of the
# run's eval batches, is the option left out).
expect_fail -c 2 -q -- "--batches" "$bin" analyze --run run --importance --batches 0
expect_fail -c 2 -q -- "--batches" "$bin" analyze --run run --importance --batches -1
expect_fail -c 2 -q -- "--batches" "$bin" analyze --run run --importance --batches 2x
finish
