#!/usr/bin/env bash
# GUI test of the window's rough edges at small sizes (issue 48 item 8): the real window under
# Xvfb, training recall, at 1280x720 and 1920x1080, and at 1280x720 with --ui-scale 2.
# usage: gui_scale2.sh <path-to-attnlab> <source-dir>
# Checks, from the exit report (ATTN_GUI_REPORT) of each launch:
#  1. The Run panel's buttons (Start, Reset at the end of its row, "Set peak lr") lie within the
#     panel's width: a button that does not fit beside the one before it wraps to the next row
#     (at UI scale 2 Reset and "Set peak lr" ran past the tile's edge).
#  2. The Loss plots are at least nine font sizes tall (the tile scrolls below them; at UI scale 2
#     they had no height left under the controls).
#  3. The screenshot has real content (kept in $ATTN_E2E_SHOTS when set, to be looked at).
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_scale2.sh <attnlab> <source-dir>}")
SRC=$(realpath "${2:?usage: gui_scale2.sh <attnlab> <source-dir>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP  # cd there: anything the app writes (runs/, its layout) stays in here
need xvfb-run "apt-get install xvfb xauth"
need python3

for spec in 1280x720:1 1920x1080:1 1280x720:2; do
  size=${spec%:*} scale=${spec#*:} name=${spec/:/-s}
  rc=0
  ATTN_GUI_REPORT=$TMP/$name.json timeout 240 xvfb-run -a -s "-screen 0 2000x1200x24" \
    "$ATTNLAB" gui --config "$SRC/assets/configs/recall.json" --autostart --frames 300 \
    --size "$size" --ui-scale "$scale" --layout "$TMP/$name-layout.json" \
    --screenshot "$TMP/$name.png" >"$TMP/log" 2>&1 || rc=$?
  if [[ $rc -ne 0 ]]; then
    bad "$name: attnlab gui exited with $rc: $(tail -3 "$TMP/log")"
    continue
  fi
  if [[ -n ${ATTN_E2E_SHOTS:-} ]]; then cp "$TMP/$name.png" "$ATTN_E2E_SHOTS/"; fi
  check "$name: the screenshot has content" \
    png_stats "$TMP/$name.png" --size "$size" --min-colors 50 --min-foreground 0.2
  if python3 - "$TMP/$name.json" <<'PY'; then ok "$name: the Run panel's buttons stay inside it"; else bad "$name: a Run panel button runs past the panel's edge"; fi
import json, sys
r = json.load(open(sys.argv[1]))
px, py, pw, ph = r["panels"]["run"]["rect"]
for key in ("start_rect", "buttons_rect", "set_lr_rect"):
    x, y, w, h = r["run"][key]
    inside = w > 0 and x >= px - 0.5 and x + w <= px + pw + 0.5
    print(f"  {key} {[round(v) for v in (x, y, w, h)]} in run {[round(v) for v in (px, py, pw, ph)]}: {inside}")
    if not inside:
        sys.exit(1)
PY
  if python3 - "$TMP/$name.json" <<'PY'; then ok "$name: the Loss plots keep their least height"; else bad "$name: the Loss plots are too short to read"; fi
import json, sys
r = json.load(open(sys.argv[1]))
w, h = r["loss"]["plot_px"]
font = r["loss"]["font_px"]
print(f"  loss plots {round(w)} x {round(h)} px, font {font} px")
sys.exit(0 if font > 0 and h >= 9 * font else 1)
PY
done
finish
