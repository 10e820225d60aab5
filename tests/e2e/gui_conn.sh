#!/usr/bin/env bash
# GUI test of the Connection Transformer panel: the real window under Xvfb.
# usage: gui_conn.sh <path-to-attnlab>
# Checks:
#  1. A small conn experiment (recall, N 24, D 32, K 2, norm-bound r 0.95) training live at
#     1920x1080 opens the "Connection Transformer" panel by itself: exit 0, the screenshot is a
#     1920x1080 PNG with real content, the
#     exit report says the panel was open and drawn, and the panel's screen region (the
#     report's rect) holds the rho curve's orange, the norm curve's sky blue and the limit's
#     vermillion. (1920x1080: at 1280x800 the panel's bottom tile leaves the rho plot ~100 px
#     tall, the norm curve lies on the limit line and only 41-61 of its pixels are exactly sky
#     blue, run to run, against the threshold of 50; at 1920x1080 about 590.)
#  2. A dot experiment: the panel stays closed; --panel conn shows it with its explanation.
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_conn.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
need xvfb-run "apt-get install xvfb xauth"

cat >"$TMP/conn.json" <<'EOF2'
{
  "name": "gui_conn",
  "seed": 1,
  "task": {"name": "recall", "length": 4, "vocab": 8},
  "model": {"architecture": "conn", "d_model": 32, "heads": 1,
            "conn": {"slots": 24, "steps": 2, "control": "norm-bound", "limit": 0.95,
                     "eigen_every": 5, "matrix_every": 5}},
  "train": {"steps": 100000, "batch_size": 16, "lr": 3e-3, "warmup": 20, "eval_every": 25}
}
EOF2
sed -e 's/"architecture": "conn"/"architecture": "transformer"/' -e 's/"gui_conn"/"gui_dot"/' \
  "$TMP/conn.json" >"$TMP/dot.json"

rc=0
ATTN_GUI_REPORT=$TMP/report.json timeout 240 xvfb-run -a -s "-screen 0 1920x1080x24" \
  "$ATTNLAB" gui --config "$TMP/conn.json" --autostart --frames 300 --size 1920x1080 \
  --screenshot "$TMP/shot.png" --layout "$TMP/layout.ini" >"$TMP/log" 2>&1 || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (conn) exited with $rc"
# Not blank: the window is cleared to the panels' background, so even an untrained window is
# only ~15% foreground at this size; a window that drew nothing is ~1%.
png_stats "$TMP/shot.png" --size 1920x1080 --min-colors 50 --min-foreground 0.08 >/dev/null ||
  fail "the screenshot is not a 1920x1080 picture with real content"
check_report "$TMP/report.json" 'r["panels"]["conn"]["open"] and r["panels"]["conn"]["drawn"]' \
  "the Connection Transformer panel was not open and drawn"
region=$(report_region "$TMP/report.json" conn)
[[ -n $region ]] || fail "the report has no rect for the conn panel"
png_stats "$TMP/shot.png" --region "$region" --min-colors 30 \
  --min-pixels e69f00:50 --min-pixels 56b4e9:50 --min-pixels d55e00:50 >/dev/null ||
  fail "the panel's region ($region) lacks the rho, norm or limit colours"
[[ -n ${GUI_CONN_SHOT:-} ]] && cp "$TMP/shot.png" "$GUI_CONN_SHOT"

rc=0
ATTN_GUI_REPORT=$TMP/dot.out run_xvfb --config "$TMP/dot.json" --frames 10 || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (dot) exited with $rc"
check_report "$TMP/dot.out" 'not r["panels"]["conn"]["open"]' "the panel opened for a dot model"
rc=0
ATTN_GUI_REPORT=$TMP/dot2.out run_xvfb --config "$TMP/dot.json" --frames 10 --panel conn || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (dot, --panel conn) exited with $rc"
check_report "$TMP/dot2.out" 'r["panels"]["conn"]["drawn"]' "--panel conn did not show the panel"
echo "gui_conn: ok"
