#!/usr/bin/env bash
# GUI test of the timeline (app/gui/timeline.h): the real window under Xvfb scrubs a recorded run.
# usage: gui_timeline.sh <path-to-attnlab>
# Checks:
#  1. A ky run trained headless (records at 0, 10, ..., 60) opened with `gui --run DIR --step 25`:
#     the report's timeline is at step 20 (the record at or before 25), not Latest, with the seven
#     recorded steps; Attention shows the maps of step 20, Connections the frame of step 20 out
#     of a history read from the recording (3 frames up to it, where the opened run's own history
#     has one; at 1280x720), Heads the metrics of all seven steps with its map at step 20 (at
#     1920x1080).
#  2. The same run at its last step: Connections has all seven recorded frames (the loaded
#     model's own history starts at its checkpoint).
#     File > Export weights (ATTN_GUI_EXPORT_WEIGHTS) writes the same bytes as `attnlab export
#     --weights`, and refuses a file that exists, leaving it unchanged.
#  3. --step without exactly one --run exits 2 naming the need.
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_timeline.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
need xvfb-run "apt-get install xvfb xauth"
need python3

cat >"$TMP/ky.json" <<'EOF'
{"name": "timeline", "seed": 1, "task": {"name": "copy", "length": 6, "vocab": 10},
 "model": {"d_model": 32, "heads": 2, "layers": 2, "attention": ["ky", "dot"],
           "attention_options": {"ky": {"window": 4}}},
 "train": {"steps": 60, "batch_size": 16, "lr": 3e-3, "warmup": 5, "eval_every": 10}}
EOF
"$ATTNLAB" train --config "$TMP/ky.json" --out "$TMP/run" --threads 1 --quiet >"$TMP/train.log" 2>&1 ||
  fail "training the run failed: $(tail -3 "$TMP/train.log")"
steps=$("$ATTNLAB" export --run "$TMP/run" --list-steps --json)
[[ $steps == '{"steps":[0,10,20,30,40,50,60]}' ]] || fail "the run recorded $steps"

# scrub WxH PANEL REPORT SHOT: the run opened at step 25 in a WxH window with Attention and PANEL
# (the last asked for, so in front in its tile; Connections is asked for too, before it, so that
# it does not open by itself in front when the ky curves appear).
scrub() {
  local size=$1 panel=$2 report=$3 shot=$4 rc=0
  ATTN_GUI_REPORT=$report timeout 240 xvfb-run -a -s "-screen 0 ${size}x24" "$ATTNLAB" gui \
    --run "$TMP/run" --step 25 --size "$size" --panel attention --panel connections \
    --panel "$panel" --frames 400 --screenshot "$shot" --layout "$TMP/$size.ini" \
    >"$TMP/log" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] || fail "attnlab gui --run --step 25 at $size exited with $rc: $(tail -5 "$TMP/log")"
  png_stats "$shot" --size "$size" --min-colors 50 --min-foreground 0.2 ||
    fail "the $size screenshot looks blank"
  check_report "$report" 'r["timeline"]["step"] == 20 and not r["timeline"]["latest"]' \
    "the timeline is not at step 20 ($size)"
  check_report "$report" 'r["timeline"]["steps"] == [0, 10, 20, 30, 40, 50, 60]' \
    "the timeline does not list the run's recorded steps ($size)"
  check_report "$report" 'r["attention"]["attention_step"] == 20 and r["attention"]["step"] == 60' \
    "Attention does not show the maps recorded at step 20 of the model loaded at 60 ($size)"
  for p in attention $panel; do
    check_report "$report" "r['panels']['$p']['drawn']" "$p was not drawn ($size)"
  done
}
scrub 1280x720 connections "$TMP/r720.json" "$TMP/timeline-1280x720.png"
check_report "$TMP/r720.json" 'r["connections"]["step"] == 20 and r["connections"]["frames"] == 3' \
  "Connections does not show step 20 with the recorded history up to it"
scrub 1920x1080 heads "$TMP/r1080.json" "$TMP/timeline-1920x1080.png"
check_report "$TMP/r1080.json" 'r["heads"]["step"] == 20 and r["heads"]["steps"] == 7 and r["heads"]["rows"] > 0' \
  "Heads does not show the seven recorded steps with its map at step 20"

# 2. At the last step: every recorded frame is in the Connections history. File > Export weights
# (its test hook) writes the opened run's checkpoint byte for byte as `attnlab export --weights`.
rc=0
ATTN_GUI_EXPORT_WEIGHTS=$TMP/gui.safetensors ATTN_GUI_REPORT=$TMP/latest.json run_xvfb \
  --run "$TMP/run" --step 60 --panel connections --frames 300 --layout "$TMP/latest.ini" || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui --run --step 60 exited with $rc"
check_report "$TMP/latest.json" 'r["timeline"]["step"] == 60 and r["connections"]["frames"] == 7' \
  "at the last recorded step Connections does not have the run's seven recorded frames"

check_report "$TMP/latest.json" 'r["help"]["weights_written"].endswith("gui.safetensors") and r["help"]["weights_error"] == ""' \
  "File > Export weights did not write the opened run's weights"
"$ATTNLAB" export --run "$TMP/run" --weights "$TMP/cli.safetensors" >/dev/null 2>&1 ||
  fail "attnlab export --weights failed"
cmp -s "$TMP/gui.safetensors" "$TMP/cli.safetensors" ||
  fail "the window's weights file differs from attnlab export --weights"
# Never over an existing file: the second export is refused and the file is left as it was.
cp "$TMP/gui.safetensors" "$TMP/before.safetensors"
ATTN_GUI_EXPORT_WEIGHTS=$TMP/gui.safetensors ATTN_GUI_REPORT=$TMP/again.json run_xvfb \
  --run "$TMP/run" --step 60 --frames 300 --layout "$TMP/latest.ini" || fail "the second export run failed"
check_report "$TMP/again.json" '"exists" in r["help"]["weights_error"] and r["help"]["weights_written"] == ""' \
  "an existing weights file was not refused"
cmp -s "$TMP/gui.safetensors" "$TMP/before.safetensors" || fail "the existing weights file was changed"

# 3. --step needs one --run.
expect_fail -c 2 -- "--step needs exactly one --run DIR" "$ATTNLAB" gui --step 5
finish
