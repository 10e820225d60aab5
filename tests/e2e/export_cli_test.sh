#!/usr/bin/env bash
# End-to-end checks of `attnlab export` on real run directories (a dot run, a ky run and a
# Connection Transformer, trained for a few steps): PDFs embed only non-Type-3 fonts and render
# with pdftoppm; SVGs parse with xmllint and keep <text>; PNGs have the requested size and
# pHYs; CSVs equal the run's own files (metrics.csv, C.csv); the sidecar names the run; --all
# writes every listed figure; bad requests exit 2 with a message naming the culprit and leave
# no file behind.
# usage: export_cli_test.sh <attnlab> <repo>
set -u
bin=$1
repo=$2
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP

# Small versions of the shipped configs, so the three runs take seconds.
cat >"$work/dot.json" <<'EOF'
{"name": "dot", "seed": 1, "task": {"name": "copy", "length": 6, "vocab": 10},
 "model": {"d_model": 32, "heads": 2, "layers": 2, "attention": "dot"},
 "train": {"steps": 60, "batch_size": 16, "lr": 3e-3, "warmup": 5, "eval_every": 20}}
EOF
cat >"$work/ky.json" <<'EOF'
{"name": "ky", "seed": 1, "task": {"name": "copy", "length": 6, "vocab": 10},
 "model": {"d_model": 32, "heads": 2, "layers": 2, "attention": "ky",
           "attention_options": {"ky": {"window": 4}}},
 "train": {"steps": 60, "batch_size": 16, "lr": 3e-3, "warmup": 5, "eval_every": 20}}
EOF
cat >"$work/conn.json" <<'EOF'
{"name": "conn", "seed": 1, "task": {"name": "recall", "length": 4, "vocab": 8},
 "model": {"architecture": "conn", "d_model": 32, "heads": 1,
           "conn": {"slots": 32, "steps": 2, "control": "norm-bound", "limit": 0.95}},
 "train": {"steps": 40, "batch_size": 16, "lr": 3e-3, "warmup": 5, "eval_every": 20}}
EOF
train() {  # train <name>
  "$bin" train --config "$work/$1.json" --out "$work/$1" --threads 1 --quiet \
    >"$work/$1.log" 2>&1 || { bad "training $1 failed: $(tail -3 "$work/$1.log")"; return 1; }
}
train dot
train ky
train conn

export_ok() {  # export_ok <description> args...
  local what=$1; shift
  if "$bin" export "$@" >"$work/out" 2>"$work/err"; then ok "$what"; return 0; fi
  bad "$what: $(cat "$work/err")"; return 1
}
# rejects "<substring of stderr>" <file that must not appear, or ""> args...: `attnlab export
# args` exits 2 with the message and leaves no such file.
rejects() { expect_fail -c 2 -a "$2" -- "$1" "$bin" export "${@:3}"; }

# --list: what each model gives.
export_ok "list dot" --run "$work/dot" --list
grep -q "^  loss" "$work/out" && grep -q "^  attention" "$work/out" && ok "dot lists loss and attention" || bad "dot list: $(cat "$work/out")"
export_ok "list ky" --run "$work/ky" --list
grep -q "^  connections" "$work/out" && ok "ky lists connections" || bad "ky list: $(cat "$work/out")"
export_ok "list conn" --run "$work/conn" --list
for f in conn-matrix conn-eigenvalues conn-spectral conn-trace; do
  grep -q "^  $f" "$work/out" && ok "conn lists $f" || bad "conn list lacks $f: $(cat "$work/out")"
done

# PDF: embedded TrueType (CID) fonts only, never Type 3; pdftoppm renders it.
mkdir -p "$work/fig"
export_ok "loss pdf" --run "$work/dot" --figure loss --out "$work/fig/loss.pdf" --width-in 7
fonts=$(pdffonts "$work/fig/loss.pdf" | tail -n +3)
if [ -n "$fonts" ] && ! grep -q "Type 3" <<<"$fonts" && awk '{ if ($(NF-4) != "yes" || $(NF-3) != "yes") exit 1 }' <<<"$fonts"; then
  ok "loss.pdf fonts embedded, no Type 3"
else bad "pdffonts: $fonts"; fi
for f in loss attention; do
  [ "$f" = attention ] && export_ok "attention pdf" --run "$work/dot" --figure attention --out "$work/fig/attention.pdf" --colormap cividis
  if pdftoppm -r 40 -png -singlefile "$work/fig/$f.pdf" "$work/fig/${f}_page" 2>/dev/null && [ -s "$work/fig/${f}_page.png" ]; then
    ok "pdftoppm renders $f.pdf"; else bad "pdftoppm failed on $f.pdf"; fi
done

# SVG parses and keeps text.
export_ok "attention svg" --run "$work/dot" --figure attention --layer 1 --out "$work/fig/att.svg"
xmllint --noout "$work/fig/att.svg" 2>"$work/err" && ok "svg parses" || bad "xmllint: $(cat "$work/err")"
grep -q "<text[^>]*>layer 1, head 0</text>" "$work/fig/att.svg" && ok "svg keeps panel titles as <text>" || bad "svg lacks <text>"

# PNG size and pHYs.
export_ok "conn png" --run "$work/conn" --figure conn-matrix --format png --dpi 600 --width-in 2 --height-in 1.5 --out "$work/fig/c.png"
python3 - "$work/fig/c.png" <<'PY' && ok "png 1200x900 with pHYs 600 dpi" || bad "png size or pHYs wrong"
import struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n"
w, h = struct.unpack(">II", d[16:24])
assert (w, h) == (1200, 900), (w, h)
i = d.index(b"pHYs")
x, y, unit = struct.unpack(">IIB", d[i + 4:i + 13])
assert x == y == round(600 / 0.0254) and unit == 1, (x, y, unit)
PY

# conn-trace (the Connection Transformer panel's reasoning trace): every slot's norm after
# compression and after each of K = 2 steps, and their mean, which equals the slots' mean.
export_ok "conn-trace csv" --run "$work/conn" --figure conn-trace --out "$work/fig/trace.csv"
python3 - "$work/fig/trace.csv" <<'PY' && ok "conn-trace: 32 slots x 3 norms, the mean their mean" || bad "conn-trace csv: $(head -3 "$work/fig/trace.csv")"
import csv, math, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["kind"] == "line"]
slots = [(int(float(r["x"])), float(r["y"])) for r in rows if r["series"] == "slots" and r["y"] not in ("", "nan")]
slots = [(k, y) for k, y in slots if math.isfinite(y)]
mean = {int(float(r["x"])): float(r["y"]) for r in rows if r["series"] == "mean over slots"}
assert len(slots) == 32 * 3 and sorted(mean) == [0, 1, 2], (len(slots), mean)
for k in mean:
    ys = [y for kk, y in slots if kk == k]
    assert len(ys) == 32 and abs(sum(ys) / 32 - mean[k]) <= 1e-5 * max(1, abs(mean[k])), (k, mean[k])
PY

# CSV equals the run's own files: the loss curves equal metrics.csv, C equals C.csv.
export_ok "loss csv" --run "$work/dot" --figure loss --out "$work/fig/loss_data.csv"
export_ok "conn csv" --run "$work/conn" --figure conn-matrix --out "$work/fig/c_data.csv"
python3 - "$work" <<'PY' && ok "csv values equal metrics.csv and C.csv" || bad "csv values differ"
import csv, sys
w = sys.argv[1]
rows = list(csv.DictReader(open(w + "/fig/loss_data.csv")))
metrics = list(csv.DictReader(open(w + "/dot/metrics.csv")))
train = {int(r["step"]): float(r["train_loss"]) for r in metrics}
evals = {int(r["step"]): float(r["eval_loss"]) for r in metrics if r["eval_loss"]}
got_train = {int(float(r["x"])): float(r["y"]) for r in rows if r["series"] == "train"}
got_eval = {int(float(r["x"])): float(r["y"]) for r in rows if r["series"] == "eval"}
assert got_train.keys() == train.keys() and len(train) == 3, (len(got_train), len(train))
for k in train: assert abs(got_train[k] - train[k]) <= 1e-6 * abs(train[k]), (k, got_train[k], train[k])
assert got_eval.keys() == evals.keys() and evals
for k in evals: assert abs(got_eval[k] - evals[k]) <= 1e-6 * abs(evals[k])
c = [[float(v) for v in line.split(",")] for line in open(w + "/conn/C.csv") if line.strip()]
cells = {(int(r["i"]), int(r["j"])): float(r["value"]) for r in csv.DictReader(open(w + "/fig/c_data.csv")) if r["kind"] == "heatmap"}
assert len(cells) == len(c) * len(c[0]) == 32 * 32
for (i, j), v in cells.items(): assert abs(v - c[i][j]) <= 1e-6 * max(1.0, abs(c[i][j])), (i, j, v, c[i][j])
PY

# The sidecar.
python3 - "$work" <<'PY' && ok "sidecar names the run, config hash, seed, step, mechanism, font" || bad "sidecar wrong"
import json, sys
w = sys.argv[1]
j = json.load(open(w + "/fig/loss.json"))
s = json.load(open(w + "/dot/summary.json"))
assert j["run_id"] == "dot" and j["config_hash"] == s["config_hash"] and j["seed"] == 1, j
assert j["step"] == 60 and j["mechanism"] == "dot" and j["figure"] == "loss", j
assert j["font"]["family"] == "DejaVu Sans" and j["width_in"] == 7 and j["date"].startswith("20"), j
assert j["version"].startswith("attnlab"), j
PY

# --all writes every listed figure (with CSV and JSON), --step picks a connection frame.
export_ok "ky --all" --run "$work/ky" --all --format svg --out "$work/all"
n=0; for f in loss attention connections; do
  [ -s "$work/all/$f.svg" ] && [ -s "$work/all/$f.csv" ] && [ -s "$work/all/$f.json" ] && n=$((n+1)); done
[ $n = 3 ] && ok "--all wrote loss, attention, connections (+csv, json)" || bad "--all wrote $n of 3: $(ls "$work/all")"
export_ok "connections at step 0" --run "$work/ky" --figure connections --step 0 --out "$work/fig/g0.csv"
python3 - "$work" <<'PY' && ok "connections at step 0 differ from the latest (g_h(t) learned)" || bad "--step had no effect"
import csv, sys
w = sys.argv[1]
a = [r for r in csv.DictReader(open(w + "/fig/g0.csv")) if r["kind"] == "line"]
b = [r for r in csv.DictReader(open(w + "/all/connections.csv")) if r["kind"] == "line"]
assert len(a) == len(b) > 0
assert any(abs(float(x["y"]) - float(y["y"])) > 1e-6 for x, y in zip(a, b))
PY

# Bad requests: exit 2, the culprit named, no file left behind.
rejects "unknown figure 'lossy' for this run; it has: loss, attention" "$work/fig/x.pdf" --run "$work/dot" --figure lossy --out "$work/fig/x.pdf"
rejects "dpi 0 is out of range: allowed 30 to 2400" "$work/fig/x.png" --run "$work/dot" --figure loss --dpi 0 --out "$work/fig/x.png"
rejects "output directory $work/nowhere does not exist" "" --run "$work/dot" --figure loss --out "$work/nowhere/x.pdf"
rejects "cannot tell the format from the extension" "$work/fig/x.eps" --run "$work/dot" --figure loss --out "$work/fig/x.eps"
rejects "run directory $work/missing does not exist" "" --run "$work/missing" --figure loss --out "$work/fig/x.pdf"
rejects "layer 5 is out of range: the model has 2 layers" "$work/fig/x.pdf" --run "$work/dot" --figure attention --layer 5 --out "$work/fig/x.pdf"
rejects "unknown figure 'connections' for this run; it has: loss, attention" "$work/fig/x.pdf" --run "$work/dot" --figure connections --out "$work/fig/x.pdf"
rejects "font file /no/font.ttf cannot be read" "$work/fig/x.pdf" --run "$work/dot" --figure loss --font /no/font.ttf --out "$work/fig/x.pdf"
mkdir -p "$work/ro"; touch "$work/ro/locked"; chmod 500 "$work/ro"
if [ "$(id -u)" != 0 ]; then
  rejects "cannot write $work/ro/x.pdf" "$work/ro/x.pdf" --run "$work/dot" --figure loss --out "$work/ro/x.pdf"
fi
chmod 700 "$work/ro"
# Recorded views (views.rec): the steps a run recorded, a figure at a recorded step (the last at
# or before the one asked for, said on stderr), and a run without recordings said so.
steps=$("$bin" export --run "$work/dot" --list-steps --json)
[ "$steps" = '{"steps":[0,20,40,60]}' ] && ok "--list-steps --json lists the recorded steps" ||
  bad "--list-steps --json printed $steps"
"$bin" export --run "$work/dot" --figure attention --step 45 --format csv --out "$work/fig/a45.csv" \
  >/dev/null 2>"$work/a45.err" && grep -q "the view recorded at step 40 (the last at or before 45)" "$work/a45.err" &&
  grep -q "^attention," "$work/fig/a45.csv" && ok "--step 45 exports the view recorded at step 40" ||
  bad "--step 45: $(cat "$work/a45.err")"
"$bin" export --run "$work/dot" --figure attention --step 0 --format csv --out "$work/fig/a0.csv" \
  >/dev/null 2>&1 && ! cmp -s "$work/fig/a0.csv" "$work/fig/a45.csv" &&
  ok "the views at steps 0 and 40 differ (the model learned)" || bad "steps 0 and 40 exported the same maps"
# The head metrics of the recorded views, as CSV rows step,layer,head,metric,value; at step 0 they
# equal the formulas applied to the attention CSV of the same step.
"$bin" export --run "$work/dot" --figure heads --format csv --out "$work/fig/heads.csv" >/dev/null 2>&1 &&
  python3 - "$work/fig/heads.csv" "$work/fig/a0.csv" <<'PY' && ok "heads CSV: every step, layer, head and metric; step 0 matches the formulas on the maps" || bad "heads CSV is wrong"
import csv, math, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
assert list(rows[0].keys()) == ["step", "layer", "head", "metric", "value"], rows[0].keys()
assert {r["metric"] for r in rows} == {"entropy", "diagonal", "previous_token", "induction"}
assert sorted({int(r["step"]) for r in rows}) == [0, 20, 40, 60]
maps = defaultdict(dict)
for r in csv.DictReader(open(sys.argv[2])):
    if r["kind"] == "heatmap":
        maps[r["series"]][(int(r["i"]), int(r["j"]))] = float(r["value"])
w = maps["layer0_head0"]
n = 1 + max(i for i, _ in w)
entropy = sum(-p * math.log(p) for p in w.values() if p > 0) / n
diagonal = sum(w[(q, q)] for q in range(n)) / n
previous = sum(w[(q, q - 1)] for q in range(1, n)) / (n - 1)
got = {r["metric"]: float(r["value"]) for r in rows
       if r["step"] == "0" and r["layer"] == "0" and r["head"] == "0" and r["value"]}
for name, want in (("entropy", entropy), ("diagonal", diagonal), ("previous_token", previous)):
    assert abs(got[name] - want) < 1e-5, (name, got[name], want)
PY
# The attention CSV in long format: step, layer, head, query, key and weight columns, and the
# weights equal the heatmap values; a filmstrip (--steps) draws one column per recorded step.
python3 - "$work/fig/a45.csv" <<'PY' && ok "attention CSV: step, layer, head, query, key, weight columns" || bad "attention CSV lacks the long-format columns"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["kind"] == "heatmap"]
assert rows and all(r["step"] == "40" for r in rows), {r["step"] for r in rows}
for r in rows:
    assert r["series"] == "layer%s_head%s" % (r["layer"], r["head"]), r
    assert (r["query"], r["key"], r["weight"]) == (r["i"], r["j"], r["value"]), r
assert {(r["layer"], r["head"]) for r in rows} == {("0", "0"), ("0", "1"), ("1", "0"), ("1", "1")}
PY
export_ok "filmstrip" --run "$work/dot" --figure attention --layer 1 --steps 0:60:20 --format csv --out "$work/fig/film.csv"
python3 - "$work/fig/film.csv" "$work/fig/a0.csv" <<'PY' && ok "--steps 0:60:20: layer 1's heads at 0, 20, 40, 60, the same weights as --step" || bad "the filmstrip CSV is wrong"
import csv, sys
film = [r for r in csv.DictReader(open(sys.argv[1])) if r["kind"] == "heatmap"]
assert sorted({int(r["step"]) for r in film}) == [0, 20, 40, 60]
assert {r["layer"] for r in film} == {"1"}
single = {(r["layer"], r["head"], r["i"], r["j"]): r["value"]
          for r in csv.DictReader(open(sys.argv[2])) if r["kind"] == "heatmap"}
at0 = {(r["layer"], r["head"], r["i"], r["j"]): r["value"] for r in film if r["step"] == "0"}
assert at0 and all(single[k] == v for k, v in at0.items())
PY
export_ok "filmstrip pdf" --run "$work/dot" --figure attention --layer 1 --steps 0,40,60 --out "$work/fig/film.pdf"
rejects "--steps 0:60:0: the step k must be at least 1" "$work/fig/f.pdf" --run "$work/dot" --figure attention --steps 0:60:0 --out "$work/fig/f.pdf"
rejects "--steps: loss is not recorded over training" "$work/fig/f.pdf" --run "$work/dot" --figure loss --steps 0,20 --out "$work/fig/f.pdf"
# A conn run records C and the spectrum of I + C: C at a recorded step, and rho(I + C) among the
# head metrics with one value per recorded step.
export_ok "conn-matrix at step 20" --run "$work/conn" --figure conn-matrix --step 20 --format csv --out "$work/fig/c20.csv"
export_ok "conn heads" --run "$work/conn" --figure heads --format csv --out "$work/fig/conn_heads.csv"
python3 - "$work/fig/c20.csv" "$work/fig/c_data.csv" "$work/fig/conn_heads.csv" <<'PY' && ok "conn: C at step 20 differs from the final C; rho(I + C) per recorded step" || bad "conn's recorded views are wrong"
import csv, sys
c20 = {(r["i"], r["j"]): float(r["value"]) for r in csv.DictReader(open(sys.argv[1])) if r["kind"] == "heatmap"}
assert {r["step"] for r in csv.DictReader(open(sys.argv[1])) if r["kind"] == "heatmap"} == {"20"}
final = {(r["i"], r["j"]): float(r["value"]) for r in csv.DictReader(open(sys.argv[2])) if r["kind"] == "heatmap"}
assert c20.keys() == final.keys() and c20 != final
rho = [r for r in csv.DictReader(open(sys.argv[3])) if r["metric"] == "spectral_radius"]
assert [int(r["step"]) for r in rho] == [0, 20, 40] and all(float(r["value"]) > 0 for r in rho), rho
assert all(r["layer"] == "" and r["head"] == "" for r in rho), rho
PY
sed 's/"eval_every": 20}/"eval_every": 20, "record_every": 0}/' "$work/dot.json" >"$work/norec.json"
"$bin" train --config "$work/norec.json" --out "$work/norec" --threads 1 --quiet >/dev/null 2>&1
[ ! -e "$work/norec/views.rec" ] && ok "train.record_every 0 records no views" || bad "record_every 0 wrote views.rec"
rejects "has no recorded views" "$work/fig/n.pdf" --run "$work/norec" --figure attention --step 10 --out "$work/fig/n.pdf"
# --weights: the checkpoint's tensors as safetensors, read back by a reader written here from the
# format's definition (no safetensors package), against the model's own numbers.
for r in dot ky conn; do
  if "$bin" export --run "$work/$r" --weights "$work/fig/$r.safetensors" >/dev/null 2>"$work/err" &&
    python3 - "$work/fig/$r.safetensors" "$work/$r/summary.json" "$work/$r/config.json" <<'PY'
import json, struct, sys
blob = open(sys.argv[1], "rb").read()
(n,) = struct.unpack("<Q", blob[:8])
assert n % 8 == 0 and 8 + n <= len(blob), n
header = json.loads(blob[8:8 + n])
meta = header.pop("__metadata__")
data = blob[8 + n:]
end, params, buffers = 0, 0, set(meta["buffers"].split(",")) - {""}
for name, t in header.items():  # in file order: contiguous, no gaps, no overlaps
    b, e = t["data_offsets"]
    assert t["dtype"] == "F32" and b == end and e - b == 4 * eval("*".join(map(str, t["shape"])) or "1"), (name, t)
    end = e
    vals = struct.unpack(f"<{(e - b) // 4}f", data[b:e])
    assert all(v == v for v in vals), name  # no NaN
    if name not in buffers:
        params += len(vals)
assert end == len(data), (end, len(data))
summary = json.load(open(sys.argv[2]))
assert params == summary["parameters"], (params, summary["parameters"])
assert meta["format"] == "attnlab-weights-1" and meta["attnlab_version"].startswith("attnlab")
assert json.loads(meta["config"])["model"] == json.load(open(sys.argv[3]))["model"]
assert int(meta["step"]) == summary["steps"], (meta["step"], summary["steps"])
print(len(header), "tensors,", params, "parameters, buffers", sorted(buffers))
PY
  then ok "--weights $r: safetensors parses; its parameters are summary.json's count"
  else bad "--weights $r: $(tail -2 "$work/err")"; fi
done
rejects "must end in .safetensors" "$work/fig/w.bin" --run "$work/dot" --weights "$work/fig/w.bin"
rejects "exactly one of" "$work/fig/w2.safetensors" --run "$work/dot" --weights "$work/fig/w2.safetensors" --figure attention
leftovers=$(find "$work/fig" -name '*.tmp.*')
[ -z "$leftovers" ] && ok "no temporary files left" || bad "temporaries left: $leftovers"

summary
