#!/usr/bin/env bash
# GUI test of the Loss panel's eval-length field (issue 35): the real window under Xvfb on a saved
# copy run with RoPE (extrapolates) and one with a learned table (refused past its length).
# usage: gui_eval_length.sh <path-to-attnlab>
# Checks:
#  1. The field shows at once, filled with twice the training length.
#  2. Real keys (xdotool): click the field, type 18, Enter: the trainer answers with the eval at
#     task.length 18, finite; at the training length (6) it equals the run's own eval.
#  3. The learned-table run answers with the reason instead of a number; the window keeps running.
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_eval_length.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
need xvfb-run "apt-get install xvfb xauth"
need python3

for pos in rope learned; do
  cat >"$TMP/$pos.json" <<J
{"name": "$pos", "seed": 1, "threads": 1, "task": {"name": "copy", "length": 6, "vocab": 8},
 "model": {"d_model": 32, "heads": 2, "layers": 2, "position": "$pos"},
 "train": {"steps": 200, "batch_size": 16, "lr": 3e-3, "warmup": 20, "eval_every": 100,
           "eval_batches": 2}}
J
  "$ATTNLAB" train --config "$TMP/$pos.json" --out "$TMP/$pos" --quiet >"$TMP/train.log" 2>&1 ||
    fatal "training $pos failed: $(tail -3 "$TMP/train.log")"
done

rc=0
ATTN_GUI_REPORT=$TMP/open.json run_xvfb --run "$TMP/rope" --step 200 --panel loss \
  --size 1280x800 --layout "$TMP/layout.ini" --frames 40 --screenshot "$TMP/open.png" || rc=$?
[[ $rc -eq 0 ]] || fatal "attnlab gui --panel loss exited with $rc: $(tail -5 "$TMP/log")"
check_report open.json 'r["loss"]["length_eval"]["key"] == "task.length" and r["loss"]["length_eval"]["asked"] == 12' \
  "the eval-length field is not shown with twice the training length"
ok "the Loss panel shows the eval-length field (task.length, 12)"

if ! command -v xdotool >/dev/null; then
  echo "gui_eval_length: xdotool not found, the typing checks are skipped (apt-get install xdotool)"
  finish
  exit 0
fi
drive() {  # drive RUN LENGTH REPORT
  read -r fx fy < <(python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["loss"]["length_eval"]["field"]
print(int((f[0] + f[2]) / 2), int((f[1] + f[3]) / 2))' "$TMP/open.json")
  cat >"$TMP/drive.sh" <<EOF2
#!/usr/bin/env bash
"$ATTNLAB" gui --run "$1" --step 200 --panel loss --size 1280x800 \
  --layout "$TMP/layout.ini" --frames 1000000 >>"$TMP/log" 2>&1 &
pid=\$!
win=\$(timeout 60 xdotool search --sync --onlyvisible --name '^attnlab\$' | head -n1)
sleep 4
xdotool mousemove --window "\$win" $fx $fy click 1
sleep 1
# Real key events (not XSendEvent's synthetic ones, which GLFW ignores) go to the focus.
xdotool windowfocus --sync "\$win" 2>/dev/null || true
# ImGui 1.86 reads keys as held at each frame: a press and release inside one frame is lost, so
# control keys are held for a few frames (typed characters are queued and need no holding).
hold() { xdotool keydown "\$1"; sleep 0.3; xdotool keyup "\$1"; sleep 0.2; }
xdotool keydown ctrl; hold a; xdotool keyup ctrl
hold BackSpace
xdotool type --delay 80 "$2"
sleep 0.5
hold Return
sleep 4
kill -INT \$pid
wait \$pid
EOF2
  chmod +x "$TMP/drive.sh"
  local rc=0
  ATTN_GUI_REPORT=$TMP/$3 timeout 240 "${XVFB_RUN[@]}" "$TMP/drive.sh" || rc=$?
  [[ $rc -eq 0 ]] || fatal "the driven window exited with $rc: $(tail -5 "$TMP/log")"
}
drive "$TMP/rope" 18 rope18.json
check_report rope18.json 'r["loss"]["length_eval"]["length"] == 18 and r["loss"]["length_eval"]["error"] == "" and 0 <= r["loss"]["length_eval"]["eval_accuracy"] <= 1' \
  "typing 18 and Enter gave no eval at length 18"
ok "typing 18 + Enter evaluates the rope run at task.length 18"
drive "$TMP/rope" 6 rope6.json
python3 - "$TMP/rope6.json" "$TMP/rope/summary.json" <<'P' && ok "at the training length: the run's own eval" || fail "length 6 differs from summary.json"
import json, sys
r, s = json.load(open(sys.argv[1]))["loss"]["length_eval"], json.load(open(sys.argv[2]))
assert r["length"] == 6 and abs(r["eval_loss"] - s["eval_loss"]) <= 1e-6 * abs(s["eval_loss"]), (r, s["eval_loss"])
P
drive "$TMP/learned" 24 learned24.json
check_report learned24.json 'r["loss"]["length_eval"]["length"] == 24 and "rope, alibi and none extrapolate" in r["loss"]["length_eval"]["error"]' \
  "the learned table past its length gave no reason"
ok "a learned table past its length says why"
finish
