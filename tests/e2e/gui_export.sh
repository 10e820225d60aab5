#!/usr/bin/env bash
# GUI test of figure export: the real window under Xvfb opens the Export dialog on a figure the
# way a panel's Export button does (--export-figure), writes it on its background job, and the
# dialog's on-screen preview (drawn with ImGui from the same figure and layout) is compared with
# the exported PDF rasterised by pdftoppm: coarse grey-level blocks must agree, and agree far
# better than with a different figure (the loss curves), so the comparison can fail.
# usage: gui_export.sh <attnlab>
set -u
ATTNLAB=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; TMP=$E2E_TMP
# The window records its runs under $XDG_DATA_HOME: keep them (and its layout) in here.
export XDG_CONFIG_HOME=$TMP/xdg XDG_DATA_HOME=$TMP/xdg-data
need xvfb-run "apt-get install xvfb xauth"
need pdftoppm "apt-get install poppler-utils"

cat >"$TMP/dot.json" <<'EOF'
{"name": "dot", "seed": 1, "task": {"name": "copy", "length": 6, "vocab": 10},
 "model": {"d_model": 32, "heads": 2, "layers": 2, "attention": "dot"},
 "train": {"steps": 400, "batch_size": 16, "lr": 3e-3, "warmup": 5, "eval_every": 20}}
EOF
run_gui() {  # run_gui <figure> <out file>
  ATTN_GUI_REPORT="$TMP/report_$1.json" timeout 240 "${XVFB_RUN[@]}" \
    "$ATTNLAB" gui --config "$TMP/dot.json" --autostart --layout "$TMP/layout.ini" \
    --export-figure "$1" --export-out "$2" --screenshot "$TMP/shot_$1.png" --frames 5000 \
    >"$TMP/log_$1" 2>&1 || fail "the window failed for $1: $(tail -5 "$TMP/log_$1")"
}
run_gui attention "$TMP/out/attention.pdf" || true
# The default folder is created on demand only for exports/; any other must exist: this first
# run asked for a missing folder and must have failed cleanly, in the dialog, with no file.
python3 - "$TMP/report_attention.json" <<'PY' || fail "a missing folder was not reported in the dialog"
import json, sys
e = json.load(open(sys.argv[1]))["export"]
assert e["state"] == "failed" and "does not exist" in e["message"], e
PY
[ ! -e "$TMP/out" ] || fail "the failed export created $TMP/out"
echo "ok   a missing output folder is shown as an error in the dialog"

mkdir -p "$TMP/out"
run_gui attention "$TMP/out/attention.pdf"
run_gui loss "$TMP/out/loss.pdf"
for f in attention loss; do
  python3 - "$TMP/report_$f.json" "$TMP/out/$f" <<'PY' || fail "export of $f did not complete"
import json, os, sys
e = json.load(open(sys.argv[1]))["export"]
assert e["state"] == "done", e
stem = sys.argv[2]
assert e["files"] == [stem + ".pdf", stem + ".csv", stem + ".json"], e["files"]
for f in e["files"]: assert os.path.getsize(f) > 0, f
PY
  pdffonts "$TMP/out/$f.pdf" | tail -n +3 | grep -q "Type 3" && fail "$f.pdf has a Type 3 font"
done
echo "ok   the dialog exported attention.pdf and loss.pdf with their CSV and JSON"

python3 - "$TMP" "$E2E_DIR" <<'PY' || fail "the preview and the PDF disagree in layout"
import json, subprocess, sys
tmp, here = sys.argv[1], sys.argv[2]
sys.path.insert(0, here)
from png_stats import read_png

def grey_blocks(pixels, w, h, bx, by):  # mean grey per block, bx x by blocks
    out = []
    for j in range(by):
        for i in range(bx):
            x0, x1 = i * w // bx, (i + 1) * w // bx
            y0, y1 = j * h // by, (j + 1) * h // by
            s = n = 0
            for y in range(y0, y1):
                row = pixels[y]
                for x in range(x0, x1):
                    s += row[x]; n += 1
            out.append(s / max(1, n))
    return out

def corr(a, b):
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) ** 0.5
    vb = sum((y - mb) ** 2 for y in b) ** 0.5
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / (va * vb)

def preview(name):
    rep = json.load(open(f"{tmp}/report_{name}.json"))["export"]
    x, y, w, h = (int(round(v)) for v in rep["preview"])
    width, height, bpp, rows = read_png(f"{tmp}/shot_{name}.png")
    assert w > 100 and h > 80 and x + w <= width and y + h <= height, (x, y, w, h, width, height)
    grey = [[(r[(x + i) * bpp] * 299 + r[(x + i) * bpp + 1] * 587 + r[(x + i) * bpp + 2] * 114) // 1000
             for i in range(w)] for r in rows[y:y + h]]
    return grey, w, h

def pdf(name, w, h):
    subprocess.run(["pdftoppm", "-gray", "-scale-to-x", str(w), "-scale-to-y", str(h), "-singlefile",
                    f"{tmp}/out/{name}.pdf", f"{tmp}/{name}_pdf"], check=True)
    data = open(f"{tmp}/{name}_pdf.pgm", "rb").read()
    parts = data.split(maxsplit=4)  # P5 w h maxval data
    pw, ph = int(parts[1]), int(parts[2])
    raw = parts[4]
    assert (pw, ph) == (w, h), (pw, ph, w, h)
    return [list(raw[r * w:(r + 1) * w]) for r in range(h)]

grey, w, h = preview("attention")
bx, by = 24, max(4, round(24 * h / w))
screen = grey_blocks(grey, w, h, bx, by)
same = grey_blocks(pdf("attention", w, h), w, h, bx, by)
other = grey_blocks(pdf("loss", w, h), w, h, bx, by)
c_same, c_other = corr(screen, same), corr(screen, other)
mad = sum(abs(a - b) for a, b in zip(screen, same)) / len(screen)
print(f"preview {w}x{h}: correlation with its PDF {c_same:.3f}, with another figure's {c_other:.3f}, "
      f"mean block difference {mad:.1f}/255")
assert c_same > 0.9, c_same
assert c_same > c_other + 0.2, (c_same, c_other)
assert mad < 20, mad
PY
echo "ok   the on-screen preview and the exported PDF agree in layout"

# One builder per figure: the Connections panel's Export (its controls applied: small multiples,
# the beta row, faded history, the grid the space allows) writes the same SVG and CSV, byte for
# byte, as `attnlab export --figure connections` of the recorded run with the same options.
cat >"$TMP/ky.json" <<'EOF'
{"name": "kyeq", "seed": 3, "task": {"name": "copy", "length": 6, "vocab": 10},
 "model": {"d_model": 16, "heads": 2, "layers": 2, "attention": "ky",
           "attention_options": {"ky": {"window": 4, "hidden": 4}}},
 "train": {"steps": 200, "batch_size": 8, "lr": 3e-3, "warmup": 2, "eval_every": 10}}
EOF
mkdir -p "$TMP/eq"
ATTN_GUI_REPORT="$TMP/report_ky.json" timeout 240 xvfb-run -a -s "-screen 0 1920x1080x24" \
  "$ATTNLAB" gui --config "$TMP/ky.json" --autostart --runs-dir "$TMP/runs" --panel connections \
  --size 1920x1080 --layout "$TMP/layout_ky.ini" --export-figure connections \
  --export-out "$TMP/eq/panel.svg" --export-after-step 60 --frames 5000 >"$TMP/log_ky" 2>&1 ||
  fail "the window failed for connections: $(tail -5 "$TMP/log_ky")"
# The options the panel built with (the report) and the frame's step (the figure's title: the
# window trains on after the export).
args=$(python3 - "$TMP/report_ky.json" "$TMP/eq/panel.svg" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
assert r["export"]["state"] == "done", r["export"]
o = r["connections"]["options"]
step = re.search(r"<title>[^<]*, step (\d+)</title>", open(sys.argv[2]).read()).group(1)
assert int(step) >= 60 and o["beta"] and not o["overlaid"] and o["history"] > 0, (step, o)
print(f"--layer {o['layer']} --step {step} --history {o['history']} --cols {o['cols']}"
      + (" --beta" if o["beta"] else "") + ("" if o["overlaid"] else " --multiples"))
PY
) || fail "the Connections panel's export or its report is not what this test sets up"
run=$(ls -d "$TMP"/runs/kyeq-*)
# shellcheck disable=SC2086  # $args is a list of options
"$ATTNLAB" export --run "$run" --figure connections $args --out "$TMP/eq/cli.svg" >/dev/null ||
  fail "attnlab export --figure connections $args failed"
cmp "$TMP/eq/panel.svg" "$TMP/eq/cli.svg" ||
  fail "the panel's Export and attnlab export $args wrote different SVGs"
cmp "$TMP/eq/panel.csv" "$TMP/eq/cli.csv" ||
  fail "the panel's Export and attnlab export $args wrote different CSVs"
grep -q 'stroke-opacity' "$TMP/eq/panel.svg" || fail "the exported figure has no faded history"
# The comparison can fail: the same run at the CLI's defaults is another figure.
"$ATTNLAB" export --run "$run" --figure connections --out "$TMP/eq/default.svg" >/dev/null ||
  fail "attnlab export --figure connections (defaults) failed"
cmp -s "$TMP/eq/panel.svg" "$TMP/eq/default.svg" && fail "the defaults wrote the panel's figure too"
echo "ok   the Connections panel's Export and attnlab export ($args) write the same SVG and CSV"
