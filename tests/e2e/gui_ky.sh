#!/usr/bin/env bash
# GUI test of the Neural KY-Attention views: the real window under Xvfb.
# usage: gui_ky.sh <path-to-attnlab>
# Checks:
#  1. A small ky experiment (copy task, d_model 32, 2 heads, layers ["ky", "dot"], window 4),
#     training live with --panel connections: exit 0; the screenshot is not blank; the exit
#     report (ATTN_GUI_REPORT) says the Connections panel drew 2 heads' curves, 2 attention
#     maps and 2 computed summaries for layer 0 at a step > 0; the panel's screen region (the
#     report's rect) holds the first two heads' Okabe-Ito colours (curves, dots, beta bars).
#  2. --panel ky-lab opens the KY Transform lab (and it draws).
#  3. A dot experiment: Connections is hidden by default; --panel connections shows it with its
#     "no layer uses ky" message and no curves.
#  4. --panel bogus exits 2 naming the allowed values.
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_ky.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP  # cd there: anything the app writes (runs/, its layout) stays in here
need xvfb-run "apt-get install xvfb xauth"
need python3

cat >"$TMP/ky.json" <<'EOF'
{
  "name": "gui_ky",
  "seed": 1,
  "task": {"name": "copy", "length": 8, "vocab": 10},
  "model": {"d_model": 32, "heads": 2, "layers": 2, "attention": ["ky", "dot"],
            "attention_options": {"ky": {"window": 4}}},
  "train": {"steps": 100000, "batch_size": 32, "lr": 3e-3, "warmup": 50, "eval_every": 25}
}
EOF
sed -e 's/\["ky", "dot"\]/"dot"/' -e 's/"gui_ky"/"gui_dot"/' "$TMP/ky.json" >"$TMP/dot.json"

# 1. Training live with the Connections panel.
rc=0
ATTN_GUI_REPORT=$TMP/report.json run_xvfb --config "$TMP/ky.json" --autostart \
  --panel connections --frames 300 --screenshot "$TMP/shot.png" --layout "$TMP/layout.ini" || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (ky) exited with $rc"
screenshot_ok "$TMP/shot.png" || fail "the screenshot looks blank"
check_report "$TMP/report.json" 'r["panels"]["connections"]["open"] and r["panels"]["connections"]["drawn"]' \
  "the Connections panel was not open and drawn"
check_report "$TMP/report.json" 'r["connections"]["drawn"] and r["connections"]["layer"] == 0' \
  "the Connections panel showed no curves for layer 0"
check_report "$TMP/report.json" 'r["connections"]["heads"] == 2 and r["connections"]["curves"] == 2' \
  "the Connections panel did not draw 2 heads' curves"
check_report "$TMP/report.json" 'r["connections"]["step"] > 0' \
  "the Connections panel showed no frame after step 0"
check_report "$TMP/report.json" 'r["connections"]["maps"] == 2' \
  "the Connections panel did not draw the 2 heads' attention maps"
check_report "$TMP/report.json" \
  'len(r["connections"]["summaries"]) == 2 and all("offset" in s or "flat" in s for s in r["connections"]["summaries"])' \
  "the Connections panel has no computed per-head summaries"
check_report "$TMP/report.json" 'not r["panels"]["ky-lab"]["open"]' \
  "the KY Transform lab is open without being asked for"
# The panel's region (the report's rect) holds head 0's blue and head 1's orange (the figure's okabe_ito).
region=$(report_region "$TMP/report.json" connections)
[[ -n $region ]] || fail "the report has no rect for the connections panel"
png_stats "$TMP/shot.png" --region "$region" --min-colors 30 \
  --min-pixels 0072b2:300 --min-pixels e69f00:300 ||
  fail "the Connections panel's region ($region) lacks the heads' curve colours (okabe_ito 0 and 1, the figure's)"

# 2. The KY Transform lab opens on request.
rc=0
ATTN_GUI_REPORT=$TMP/lab.json run_xvfb --config "$TMP/ky.json" --panel ky-lab --frames 20 \
  --layout "$TMP/lab.ini" || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui --panel ky-lab exited with $rc"
check_report "$TMP/lab.json" 'r["panels"]["ky-lab"]["open"] and r["panels"]["ky-lab"]["drawn"]' \
  "--panel ky-lab did not show the KY Transform lab"

# 3. A dot experiment: Connections hidden by default; on request it explains why it is empty.
rc=0
ATTN_GUI_REPORT=$TMP/dot.json run_xvfb --config "$TMP/dot.json" --frames 10 \
  --layout "$TMP/dot.ini" || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (dot) exited with $rc"
check_report "$TMP/dot.json" 'not r["panels"]["connections"]["open"]' \
  "Connections is shown by default for an experiment without ky"
check_report "$TMP/dot.json" 'all(r["panels"][p]["open"] for p in ("run", "loss", "attention"))' \
  "Run, Loss and Attention are not all shown by default"
rc=0
ATTN_GUI_REPORT=$TMP/dot2.json run_xvfb --config "$TMP/dot.json" --panel connections \
  --frames 10 --layout "$TMP/dot2.ini" || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (dot, --panel connections) exited with $rc"
check_report "$TMP/dot2.json" \
  'r["panels"]["connections"]["drawn"] and not r["connections"]["drawn"] and r["connections"]["heads"] == 0' \
  "Connections on a dot experiment: not shown, or it drew curves"

# 4. An unknown panel: exit 2, naming the allowed values.
rc=0
run_xvfb --config "$TMP/ky.json" --panel bogus --frames 5 || rc=$?
[[ $rc -eq 2 ]] || fail "--panel bogus: exit $rc, expected 2"
grep -q "unknown panel 'bogus'" "$TMP/log" || fail "--panel bogus: the name is not reported"
# Every panel named in the allowed list (mechanism panels register their own rows, so the
# order follows the registry, not this test).
allowed=$(grep -o "(allowed: [^)]*)" "$TMP/log" || true)
for panel in run loss attention connections ky-lab neural conn geometry runs; do
  [[ $allowed == *" $panel,"* || $allowed == *" $panel)"* ]] ||
    fail "--panel bogus: the allowed values do not name '$panel' ($allowed)"
done
# 5. `gui --help` names every panel the table has (the refusal's allowed list above).
"$ATTNLAB" gui --help >"$TMP/help.txt" 2>&1 || fail "gui --help exited with $?"
for panel in $(sed -e 's/.*(allowed: //' -e 's/)$//' -e 's/,/ /g' <<<"$allowed"); do
  grep -qE "(: |, )$panel(,|\s*$)" "$TMP/help.txt" || fail "gui --help does not list the panel '$panel'"
done
[[ -n $allowed ]] || fail "no allowed list to check gui --help against"

echo "gui_ky: OK"
