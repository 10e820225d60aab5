#!/usr/bin/env bash
# GUI test of the Image attention panel: the real window under Xvfb, real Fashion-MNIST files.
# usage: gui_image_attention.sh <path-to-attnlab>
# Checks:
#  1. Two saved runs (dot and pseudo, trained here for a few steps with `attnlab train`) beside
#     a live gaussian run, all on test image 123 (--image): exit 0; the exit report says the
#     panel drew three rows, every row shows image 123 with the label the t10k label file holds
#     (read here with Python's gzip, independently of attnlab), 2 layers x (4 heads + mean) maps
#     of 16 patch weights each, every weight in [0, 1] with each head's 16 summing to at most 1
#     (the CLS row also weighs CLS itself), a prediction per row; the panel's screen region holds
#     the hot overlay's reds over the grey picture.
#  1b. A real mouse click on a cell opens that head's full S x S map (xdotool).
#  2. A saved run that is not an image classifier, and a directory that is no run: the rows show
#     their errors (named in the report); the window still runs and exits 0.
#  3. A token task live: the panel says the live run is not an image task.
set -euo pipefail

ATTNLAB=$(realpath "${1:?usage: gui_image_attention.sh <attnlab>}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_tmpdir; TMP=$E2E_TMP
need xvfb-run "apt-get install xvfb xauth"
need python3
DATA=/usr/share/datasets/fashion-mnist
[[ -f $DATA/t10k-labels-idx1-ubyte.gz ]] ||
  fail "$DATA is missing (apt-get install dataset-fashion-mnist)"

config() {  # config NAME MECHANISM D STEPS
  cat <<EOF2
{
  "name": "$1", "seed": 1, "threads": 1,
  "task": {"name": "fashion-mnist", "patch": 7, "train_examples": 3000, "test_examples": 200},
  "model": {"d_model": $3, "heads": 4, "layers": 2, "attention": "$2", "head": "classifier"},
  "train": {"steps": $4, "batch_size": 32, "lr": 3e-3, "warmup": 5, "eval_every": 40}
}
EOF2
}
config dot dot 32 40 >dot.json
config pseudo pseudo 32 40 >pseudo.json
config live gaussian 16 100000 >live.json
cat >copy.json <<'EOF2'
{"name": "copy", "task": {"name": "copy", "length": 4, "vocab": 8}, "threads": 1,
 "model": {"d_model": 16, "heads": 2, "layers": 1}, "train": {"steps": 5, "warmup": 1}}
EOF2
for run in dot pseudo copy; do
  "$ATTNLAB" train --config $run.json --out runs/$run >"$TMP/log" 2>&1 ||
    fail "attnlab train ($run) failed"
done

# 1. Live gaussian + saved dot and pseudo on test image 123.
rc=0
ATTN_GUI_REPORT=$TMP/report.json run_xvfb --config live.json --autostart \
  --compare-run runs/dot --compare-run runs/pseudo --image 123 --frames 400 \
  --screenshot shot.png --layout layout.ini || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui exited with $rc"
check_report report.json 'r["panels"]["image-attention"]["open"] and r["panels"]["image-attention"]["drawn"]' \
  "the Image attention panel was not open and drawn"
python3 - report.json "$DATA/t10k-labels-idx1-ubyte.gz" <<'PY' || fail "report check failed: $(head -c 3000 report.json)"
import gzip, json, sys
r = json.load(open(sys.argv[1]))["image_attention"]
labels = gzip.open(sys.argv[2]).read()[8:]  # IDX: magic, count, then one byte per label
assert r["drawn"] and r["image_index"] == 123, (r["drawn"], r["image_index"])
rows = r["rows"]
assert [row["source"] for row in rows] == ["live", "runs/dot", "runs/pseudo"], [x["source"] for x in rows]
for row in rows:
    where = row["source"]
    assert row["error"] == "", (where, row["error"])
    assert row["image_index"] == 123 and row["image_label"] == labels[123], (where, row["image_index"], row["image_label"], labels[123])
    assert row["layers"] == 2 and row["heads"] == 4 and row["grid"] == 4, where
    assert 0 <= row["predicted"] <= 9, where
    maps = row["maps"]
    assert len(maps) == 2 * 5, (where, len(maps))
    for m in maps:
        w = m["cls_patch_weights"]
        assert len(w) == 16 and all(0 <= x <= 1 for x in w), (where, m["layer"], m["column"])
        assert sum(w) <= 1 + 1e-5, (where, m["layer"], m["column"], sum(w))
    for layer in range(2):
        heads = [m["cls_patch_weights"] for m in maps if m["layer"] == layer and not m["mean"]]
        mean = [m["cls_patch_weights"] for m in maps if m["layer"] == layer and m["mean"]][0]
        for k in range(16):
            assert abs(mean[k] - sum(h[k] for h in heads) / 4) < 1e-5, (where, layer, k)
assert rows[0]["step"] > 0, "the live row shows no map after step 0"
assert rows[1]["step"] == 40 and rows[2]["step"] == 40
# The saved runs differ (different mechanisms): their maps must not be identical.
assert rows[1]["maps"][0]["cls_patch_weights"] != rows[2]["maps"][0]["cls_patch_weights"]
PY
region=$(report_region report.json image-attention)
[[ -n $region ]] || fail "the report has no rect for the image-attention panel"
python3 - shot.png "$region" "$E2E_DIR" <<'PY' || fail "the panel's region ($region) lacks the overlay's reds"
import sys
sys.path.insert(0, sys.argv[3])
from png_stats import read_png
w, h, bpp, rows = read_png(sys.argv[1])
x0, y0, rw, rh = (int(v) for v in sys.argv[2].split(","))
red = grey = 0
for y in range(max(0, y0), min(h, y0 + rh)):
    line = rows[y]
    for x in range(max(0, x0), min(w, x0 + rw)):
        r, g, b = line[x * bpp], line[x * bpp + 1], line[x * bpp + 2]
        red += r > 120 and r - b > 80 and r - g > 40
        grey += abs(r - g) < 6 and abs(g - b) < 6 and r > 90
print(f"reddish {red}, light grey {grey}")
assert red > 300 and grey > 200, (red, grey)
PY

# 1b. A real click (xdotool) on the dot run's first head cell opens its full 17 x 17 map. The
#     same window size and saved layout put the cell where an idle run's report says it was.
#     The cell is found in a run of the same window in the same state (idle at step 0): the
#     figure's title, which names each row's step and prediction, wraps to another number of
#     lines while the live model trains, moving the grid.
if command -v xdotool >/dev/null; then
  rc=0
  ATTN_GUI_REPORT=$TMP/idle.json run_xvfb --config live.json --compare-run runs/dot \
    --compare-run runs/pseudo --image 123 --frames 200 --layout layout.ini || rc=$?
  [[ $rc -eq 0 ]] || fail "the idle window exited with $rc"
  cell=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["image_attention"]["rows"][1]["first_cell"]; print("%d %d" % ((r[0]+r[2])/2, (r[1]+r[3])/2))' idle.json)
  cat >drive.sh <<EOF2
#!/usr/bin/env bash
"$ATTNLAB" gui --config live.json --compare-run runs/dot --compare-run runs/pseudo --image 123 \
  --frames 1000000 --layout layout.ini >>"$TMP/log" 2>&1 &
pid=\$!
win=\$(timeout 60 xdotool search --sync --onlyvisible --name '^attnlab$' | head -n1)
sleep 20  # the live run builds, records its first view (with head importance) and probes: the grid's rows settle
xdotool mousemove --window "\$win" $cell click 1
sleep 2
kill -INT \$pid
wait \$pid
EOF2
  chmod +x drive.sh
  rc=0
  ATTN_GUI_REPORT=$TMP/click.json timeout 240 "${XVFB_RUN[@]}" ./drive.sh || rc=$?
  [[ $rc -eq 0 ]] || fail "the clicked window exited with $rc"
  check_report click.json 'r["image_attention"]["full_map"] == {"row": 1, "layer": 0, "head": 0, "size": 17}' \
    "a click on the dot run's head 0 cell (at $cell) did not open its full 17x17 map"
else
  echo "gui_image_attention: xdotool not found, the click check is skipped (apt-get install xdotool)"
fi

# 2. Bad comparison runs: shown as errors, nothing lost.
mkdir -p empty
rc=0
ATTN_GUI_REPORT=$TMP/bad.json run_xvfb --config live.json --compare-run runs/copy \
  --compare-run empty --frames 30 --layout bad.ini || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui with bad runs exited with $rc"
check_report bad.json 'len(r["image_attention"]["rows"]) == 3' "the bad runs have no rows"
check_report bad.json '"only image classifiers" in r["image_attention"]["rows"][1]["error"]' \
  "a token-task run was not refused with its reason"
check_report bad.json '"holds no attnlab checkpoint" in r["image_attention"]["rows"][2]["error"]' \
  "a directory without a checkpoint was not named"
check_report bad.json 'r["image_attention"]["rows"][0]["error"] == "" and (r["image_attention"]["rows"][0]["image_index"] == 0 or "waiting" in r["image_attention"]["rows"][0]["note"])' \
  "the live row suffered from the bad runs"
# 3. A token task live, no runs: the panel says the live run is no image task.
rc=0
ATTN_GUI_REPORT=$TMP/token.json run_xvfb --config copy.json --panel image-attention --frames 10 \
  --layout token.ini || rc=$?
[[ $rc -eq 0 ]] || fail "attnlab gui (copy, --panel image-attention) exited with $rc"
check_report token.json '"not an image task" in r["image_attention"]["rows"][0]["error"]' \
  "a token task's live row did not say it is no image task"

echo "gui_image_attention: OK"
