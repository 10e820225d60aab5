#!/usr/bin/env bash
# GUI smoke test: the real window under Xvfb, training live, for a fixed number of frames.
# usage: gui_smoke.sh <path-to-attnlab> <config.json>
# Checks: exit 0; the screenshot is a 1280x800 PNG with real content (not blank); the workspace
# layout (layout.json beside the --layout file) was written as a version-1 tile tree whose tabs
# name run, loss and attention; the frame-stats JSON has frames and timings; a broken config
# still opens the window (error shown, defaults used) and the default layout directory is
# created with its layout.json; with no display the command exits 2 and points to
# `attnlab train`.
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_smoke.sh <attnlab> <config.json>}")
CONFIG=$(realpath "${2:?usage: gui_smoke.sh <attnlab> <config.json>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP  # cd there: anything the app writes (runs/, its layout) stays in here
need xvfb-run "apt-get install xvfb xauth"
need python3

# 1. Training live for 240 frames.
rc=0
run_xvfb --config "$CONFIG" --autostart --frames 240 --screenshot "$TMP/shot.png" \
  --frame-stats "$TMP/stats.json" --layout "$TMP/layout.ini" || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui exited with $rc"
[[ -s $TMP/shot.png ]] || fail "no screenshot written"
screenshot_ok "$TMP/shot.png" || fail "the screenshot looks blank"
[[ -s $TMP/layout.json ]] || fail "workspace layout $TMP/layout.json not written"
python3 - "$TMP/layout.json" <<'PY' || fail "bad workspace layout: $(head -c 2000 "$TMP/layout.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j.get("version") == 1, "version %r, want 1" % j.get("version")
tabs = []
def walk(n):
    if "split" in n:
        assert n["split"] in ("columns", "rows"), n["split"]
        assert 0 < n["ratio"] < 1, n["ratio"]
        walk(n["a"]); walk(n["b"])
    else:
        assert n.get("tile"), "a leaf without a tile id: %r" % n
        tabs.extend(n["tabs"])
walk(j["root"])
for p in ("run", "loss", "attention"):
    assert p in tabs, "no tile holds %s (tabs: %s)" % (p, tabs)
assert len(tabs) == len(set(tabs)), "a panel is in two tiles: %s" % tabs
PY
python3 - "$TMP/stats.json" <<'PY' || fail "bad frame stats"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["frames"] == 240, s
assert s["frames_measured"] > 0, s
for key in ("frame_ms_p50", "frame_ms_p99", "frame_ms_max"):
    assert s[key] > 0, (key, s)
assert s["frame_ms_p50"] <= s["frame_ms_p99"] <= s["frame_ms_max"], s
assert s["launch_to_first_frame_ms"] > 0, s
print("gui_smoke: frames %d, p50 %.1f ms, p99 %.1f ms, launch %.0f ms" % (
    s["frames"], s["frame_ms_p50"], s["frame_ms_p99"], s["launch_to_first_frame_ms"]))
PY

# 2. A broken config: the window still opens (error in the Run panel, built-in defaults).
#    No --layout: ImGui's settings go to $XDG_CONFIG_HOME/attnlab/layout.ini (directory
#    created), the workspace's tiles beside it as layout.json.
echo '{"model": {"heads": "four"}}' >"$TMP/bad.json"
rc=0
run_xvfb --config "$TMP/bad.json" --frames 5 || rc=$?
[[ $rc -eq 0 ]] || fail "a broken config made attnlab gui exit with $rc"
[[ -s $XDG_CONFIG_HOME/attnlab/layout.json ]] ||
  fail "no layout.json in \$XDG_CONFIG_HOME/attnlab (has: $(ls "$XDG_CONFIG_HOME/attnlab" 2>&1))"

# 3. No display: exit code 2 and a pointer to the headless command.
rc=0
env -u DISPLAY -u WAYLAND_DISPLAY "$ATTNLAB" gui --config "$CONFIG" >"$TMP/log" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "without a display: exit $rc, expected 2"
grep -q "cannot open a window" "$TMP/log" || fail "without a display: no 'cannot open a window'"
grep -q "DISPLAY is unset" "$TMP/log" || fail "without a display: reason not given"
grep -q "attnlab train" "$TMP/log" || fail "without a display: no hint to use 'attnlab train'"

echo "gui_smoke: OK"
