#!/usr/bin/env bash
# GUI test of the Neural Attention views: the real window under Xvfb.
# usage: gui_neural.sh <path-to-attnlab>
# Checks:
#  1. A small neural experiment (copy task, d_model 32, 2 heads, layers ["neural", "dot"],
#     d' = 2, hidden 16), training live at 1920x1080 with --panel neural: exit 0; the
#     screenshot is a 1920x1080 picture with real content; the exit report (ATTN_GUI_REPORT) says the Neural panel drew layer 0's score
#     surface (finite, with contour lines) and slice at a step > 0, and a parameter table of 2
#     heads with gradients, b_a's exactly 0; the panel's screen region (the report's rect)
#     holds the slice's two colours (learned: orange, dot product: sky blue). (1920x1080: at
#     1280x800 the panel shares the bottom row with Attention and its slice plot is so small
#     that only ~88 of its pixels are exactly sky blue; at 1920x1080 140-160.)
#  2. d' = "none": the panel is drawn with its table but no surface, and says it needs d' = 2.
#  3. A dot experiment: Neural is hidden by default; --panel neural shows it with no view.
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_neural.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP  # cd there: anything the app writes (runs/, its layout) stays in here
need xvfb-run "apt-get install xvfb xauth"
need python3

cat >"$TMP/neural.json" <<'EOF2'
{
  "name": "gui_neural",
  "seed": 1,
  "task": {"name": "copy", "length": 8, "vocab": 10},
  "model": {"d_model": 32, "heads": 2, "layers": 2, "attention": ["neural", "dot"],
            "attention_options": {"neural": {"down": 2, "hidden": 16}}},
  "train": {"steps": 100000, "batch_size": 32, "lr": 3e-3, "warmup": 50, "eval_every": 25}
}
EOF2
sed -e 's/"down": 2/"down": "none"/' -e 's/"gui_neural"/"gui_neural_none"/' "$TMP/neural.json" \
  >"$TMP/none.json"
sed -e 's/\["neural", "dot"\]/"dot"/' -e 's/"gui_neural"/"gui_dot"/' "$TMP/neural.json" \
  >"$TMP/dot.json"

# 1. Training live with the Neural panel.
rc=0
ATTN_GUI_REPORT=$TMP/report.json timeout 240 xvfb-run -a -s "-screen 0 1920x1080x24" \
  "$ATTNLAB" gui --config "$TMP/neural.json" --autostart --panel neural --frames 300 \
  --size 1920x1080 --screenshot "$TMP/shot.png" --layout "$TMP/layout.ini" >"$TMP/log" 2>&1 ||
  rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (neural) exited with $rc"
# Not blank: the window is cleared to the panels' background, so even an untrained window is
# only ~15% foreground at this size; a window that drew nothing is ~1%.
png_stats "$TMP/shot.png" --size 1920x1080 --min-colors 50 --min-foreground 0.08 ||
  fail "the screenshot is not a 1920x1080 picture with real content"
check_report "$TMP/report.json" 'r["panels"]["neural"]["open"] and r["panels"]["neural"]["drawn"]' \
  "the Neural panel was not open and drawn"
check_report "$TMP/report.json" 'r["neural"]["drawn"] and r["neural"]["layer"] == 0 and r["neural"]["head"] == 0' \
  "the Neural panel showed no view of layer 0, head 0"
check_report "$TMP/report.json" 'r["neural"]["surface_available"] and r["neural"]["grid"] >= 11' \
  "the Neural panel drew no score surface"
check_report "$TMP/report.json" 'r["neural"]["surface_finite"]' \
  "the learned score surface or slice has non-finite values"
check_report "$TMP/report.json" 'r["neural"]["contour_segments"] > 0 and r["neural"]["slice_points"] > 1' \
  "the Neural panel drew no contour lines or no slice"
check_report "$TMP/report.json" 'r["neural"]["step"] > 0' \
  "the Neural panel showed no view after step 0"
check_report "$TMP/report.json" 'r["neural"]["table_heads"] == 2 and r["neural"]["gradients_present"]' \
  "the parameter table lacks 2 heads with gradients"
check_report "$TMP/report.json" 'r["neural"]["score_bias_gradient_zero"]' \
  "b_a's gradient is not shown as exactly 0"
region=$(report_region "$TMP/report.json" neural)
[[ -n $region ]] || fail "the report has no rect for the neural panel"
png_stats "$TMP/shot.png" --region "$region" --min-colors 30 \
  --min-pixels e69f00:100 --min-pixels 56b4e9:100 ||
  fail "the Neural panel's region ($region) lacks the slice's colours"

# 2. No down-projection: no surface, a reason, the table still there.
rc=0
ATTN_GUI_REPORT=$TMP/none.json.out run_xvfb --config "$TMP/none.json" --panel neural --frames 20 \
  --layout "$TMP/none.ini" || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (neural, down none) exited with $rc"
check_report "$TMP/none.json.out" \
  'r["neural"]["drawn"] and not r["neural"]["surface_available"] and "d'"'"' = 2" in r["neural"]["note"]' \
  "down none: the panel drew a surface or did not say it needs d' = 2"
check_report "$TMP/none.json.out" 'r["neural"]["table_heads"] == 2' \
  "down none: the parameter table is missing"

# 3. A dot experiment: Neural hidden by default; on request it has nothing to show.
rc=0
ATTN_GUI_REPORT=$TMP/dot.json.out run_xvfb --config "$TMP/dot.json" --frames 10 \
  --layout "$TMP/dot.ini" || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (dot) exited with $rc"
check_report "$TMP/dot.json.out" 'not r["panels"]["neural"]["open"]' \
  "Neural is shown by default for an experiment without neural"
rc=0
ATTN_GUI_REPORT=$TMP/dot2.json.out run_xvfb --config "$TMP/dot.json" --panel neural --frames 10 \
  --layout "$TMP/dot2.ini" || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (dot, --panel neural) exited with $rc"
check_report "$TMP/dot2.json.out" 'r["panels"]["neural"]["drawn"] and not r["neural"]["drawn"]' \
  "Neural on a dot experiment: not shown, or it drew a view"

echo "gui_neural: OK"
