#!/usr/bin/env bash
# Every shipped synthetic experiment must reach eval accuracy >= 0.99 within its own step
# budget (modadd, held-out pairs: >= 0.9, see below), and the fortunes LMs (dot, ky) must beat
# the unigram baseline. copy_gap_ky/_window are left out on purpose: a window of 4 cannot reach 9
# tokens back (that is their point).
# Prints one line per config with its wall time. usage: converge.sh <attnlab> <source dir> [config names...]
# Without names: a quick slice in the test suite (copy, reverse, modadd, copy_gap_mixed: dot and
# ky, memory and generalisation, about 2 of the 7 minutes), every config with ATTN_CONVERGE_ALL=1
# (the last full run: docs/guide/hardening.md).
set -u
bin=$1; src=$2; shift 2
all="copy reverse sort recall modadd induction fortunes copy_gap_mixed ky_fortunes"
quick="copy reverse modadd copy_gap_mixed"
names=${*:-$([ -n "${ATTN_CONVERGE_ALL:-}" ] && echo "$all" || echo "$quick")}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP
for name in $names; do
  start=$(date +%s.%N)
  extra=()
  # The fortunes LM is checked on a shortened run in CI; its full run is in docs/guide/comparing.md.
  case $name in *fortunes) extra=(--steps "${FORTUNES_STEPS:-300}") ;; esac
  if ! "$bin" train --config "$src/assets/configs/$name.json" --out "$work/$name" -q "${extra[@]}" >"$work/$name.log" 2>&1; then
    echo "FAIL $name: exited non-zero: $(tail -3 "$work/$name.log")"; fails=$((fails+1)); continue
  fi
  if python3 - "$work/$name/summary.json" "$name" "$start" <<'PY'
import json, sys, time
s = json.load(open(sys.argv[1])); name = sys.argv[2]; secs = time.time() - float(sys.argv[3])
if name.endswith("fortunes"):
    ok = s["eval_loss"] < s["unigram_baseline_loss"] - 0.2
    print(f"{'ok  ' if ok else 'FAIL'} {name}: eval loss {s['eval_loss']:.3f} vs unigram baseline "
          f"{s['unigram_baseline_loss']:.3f} after {s['steps']} steps, {secs:.1f} s")
else:
    # modadd's accuracy is on 106 pairs never trained on (chance 1/23, memory alone stays near
    # it); whether the last one or two are learnt within the budget varies with the CPU's float
    # order as with the seed (seeds 1..50 on one machine: 48 reach 1.00, the lowest 0.943), so
    # it must generalise (>= 0.9) rather than finish. Every other task must be solved.
    ok = s["eval_accuracy"] >= (0.9 if name == "modadd" else 0.99)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: eval accuracy {s['eval_accuracy']:.4f} after "
          f"{s['steps']} steps, {secs:.1f} s, {s['steps_per_second']:.1f} steps/s")
sys.exit(0 if ok else 1)
PY
  then passes=$((passes+1)); else fails=$((fails+1)); fi
done
summary
