#!/usr/bin/env bash
# End-to-end checks of `attnlab geometry` (the 2-D geometry of softmax attention, headless): the
# real binary's JSON against the formulas recomputed in python, the text output, and bad input
# refused with exit 2, the option named and nothing on stdout.
# usage: geometry_cli_test.sh <attnlab>
set -u
bin=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP
# rejects "<substring of stderr>" args...: `attnlab geometry args` exits 2 with the message and
# nothing on stdout.
rejects() { expect_fail -c 2 -q -- "$1" "$bin" geometry "${@:2}"; }
# run_json <name> args...: runs with --json into $work/<name>.json; false (and a FAIL) on error.
run_json() {
  local name=$1; shift
  if "$bin" geometry "$@" --json >"$work/$name.json" 2>"$work/err"; then return 0; fi
  bad "$name exited non-zero: $* : $(cat "$work/err")"; return 1
}

# Shared python helpers: the formulas written out again, independent of the C++.
cat >"$work/geo.py" <<'PY'
import json, math, sys
def load(path):
    with open(path) as f:
        text = f.read()
    assert "NaN" not in text and "null" not in text, "non-finite number in output"
    return json.loads(text)
def mat(s): a, b, c, d = map(float, s.split(",")); return (a, b, c, d)
def mul(m, v): return (m[0] * v[0] + m[1] * v[1], m[2] * v[0] + m[3] * v[1])
def tokens(s): return [tuple(map(float, item.split(","))) for item in s.split(";")]
def attend(ts, v, wq=(1, 0, 0, 1), wk=(1, 0, 0, 1), wv=(1, 0, 0, 1), tau=1.0):
    q = mul(wq, v)
    logits = [(q[0] * k[0] + q[1] * k[1]) / tau for k in (mul(wk, t) for t in ts)]
    m = max(logits)
    e = [math.exp(l - m) for l in logits]
    p = [x / sum(e) for x in e]
    us = [mul(wv, t) for t in ts]
    return (sum(pj * u[0] for pj, u in zip(p, us)), sum(pj * u[1] for pj, u in zip(p, us))), p
def linear(ts, v, wq=(1, 0, 0, 1), wk=(1, 0, 0, 1), wv=(1, 0, 0, 1), tau=1.0):
    q = mul(wq, v)
    z = [0.0, 0.0]
    for t in ts:
        k, u = mul(wk, t), mul(wv, t)
        l = (q[0] * k[0] + q[1] * k[1]) / tau
        z[0] += l * u[0]; z[1] += l * u[1]
    return tuple(z)
def cross(a, b, c): return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
def check_ccw(hull, points):
    n = len(hull)
    assert n >= 3
    for i in range(n):
        a, b, c = hull[i], hull[(i + 1) % n], hull[(i + 2) % n]
        assert cross(a, b, c) > 0, ("not a strict left turn", a, b, c)
        for p in points:
            assert cross(a, b, p) >= -1e-12, ("point right of an edge", p, a, b)
    low = min(points, key=lambda p: (p[1], p[0]))
    assert tuple(hull[0]) == tuple(low), (hull[0], low)
def inside(hull, p, tol=1e-9):
    n = len(hull)
    return all(cross(hull[i], hull[(i + 1) % n], p) >= -tol for i in range(n))
def close(a, b, tol): return all(abs(x - y) <= tol for x, y in zip(a, b))
PY
export PYTHONPATH="$work"

"$bin" --help | grep -q "geometry" && ok "--help lists geometry" || bad "--help lacks geometry"
"$bin" geometry --help >"$work/help.txt" 2>&1 && grep -q -- "--circle" "$work/help.txt" \
  && grep -q "residual" "$work/help.txt" && ok "geometry --help documents modes and maps" \
  || bad "geometry --help: $(cat "$work/help.txt")"

# A query: output, weights, hull (counter-clockwise), inside.
T="1.5,0.2;0.4,1.3;-1.2,0.8;-0.9,-1;0.8,-1.2;0.1,0.1"
if run_json query --tokens "$T" --query 0.7,-0.4; then
  python3 - "$work/query.json" "$T" <<'PY' && ok "query: output and weights equal the softmax formula, hull ccw, inside" || bad "query: $(cat "$work/query.json")"
import sys; from geo import *
r = load(sys.argv[1]); ts = tokens(sys.argv[2])
z, p = attend(ts, (0.7, -0.4))
assert close(r["output"], z, 1e-12), (r["output"], z)
assert len(r["weights"]) == len(ts) and close(r["weights"], p, 1e-12)
assert abs(sum(r["weights"]) - 1) < 1e-12
assert len(r["hull"]) == 5 and [0.1, 0.1] not in r["hull"]   # the interior token is no vertex
check_ccw(r["hull"], ts)
assert r["inside_hull"] is True and inside(r["hull"], r["output"])
assert close(r["linear_output"], linear(ts, (0.7, -0.4)), 1e-12)
assert r["query"] == [0.7, -0.4]
PY
fi

# Matrices and a temperature: the full formula, and the hull of the value points W^V t_j.
WQ="0.8,0.3,-0.2,1.1"; WK="1.2,0,0.4,0.7"; WV="0.5,-1,1,0.3"
if run_json qm --tokens "$T" --wq "$WQ" --wk "$WK" --wv "$WV" --temperature 0.7 --query -1.3,2.1; then
  python3 - "$work/qm.json" "$T" "$WQ" "$WK" "$WV" <<'PY' && ok "query with W^Q, W^K, W^V, T: the formula; hull of W^V t_j" || bad "qm: $(cat "$work/qm.json")"
import sys; from geo import *
r = load(sys.argv[1]); ts = tokens(sys.argv[2]); wq, wk, wv = map(mat, sys.argv[3:6])
z, p = attend(ts, (-1.3, 2.1), wq, wk, wv, 0.7)
assert close(r["output"], z, 1e-12) and close(r["weights"], p, 1e-12), (r, z, p)
values = [mul(wv, t) for t in ts]
check_ccw(r["hull"], values)
assert r["inside_hull"] is True and inside(r["hull"], z)
assert close(r["linear_output"], linear(ts, (-1.3, 2.1), wq, wk, wv, 0.7), 1e-12)
PY
fi

# Random scenes: always inside the hull, always the formula (python draws, the binary computes;
# few of them: each run loads the binary, torch included, one core's half second, so two run at
# a time).
python3 - "$bin" <<'PY' && ok "12 random scenes: output is the formula and inside the hull" || bad "random scenes"
import math, random, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
from geo import *
random.seed(5)
scenes = []
for _ in range(12):
    n = random.randint(1, 12); s = 10 ** random.uniform(-1, 1)
    ts = ";".join("%.6f,%.6f" % (random.uniform(-s, s), random.uniform(-s, s)) for _ in range(n))
    r, a = 10 ** random.uniform(-2, 3), random.uniform(0, 2 * math.pi)
    q, tau = "%.6f,%.6f" % (r * math.cos(a), r * math.sin(a)), "%.4f" % 10 ** random.uniform(-1, 1)
    scenes.append((ts, q, tau))
def run(scene):
    ts, q, tau = scene
    return subprocess.run([sys.argv[1], "geometry", "--tokens", ts, "--query", q, "--temperature", tau,
                           "--json"], capture_output=True, text=True, check=True).stdout
with ThreadPoolExecutor(2) as pool:
    outs = list(pool.map(run, scenes))
for (ts, q, tau), out in zip(scenes, outs):
    res = json.loads(out); pts = tokens(ts); v = tuple(map(float, q.split(",")))
    z, p = attend(pts, v, tau=float(tau))
    scale = max(1.0, max(abs(c) for t in pts for c in t))
    assert close(res["output"], z, 1e-10 * scale), (ts, q, tau, res["output"], z)
    assert close(res["weights"], p, 1e-10), (res["weights"], p)
    assert res["inside_hull"] is True
    if len(res["hull"]) >= 3: assert inside(res["hull"], z, 1e-9 * scale)
PY

# Far-away query: finite, on the extreme token.
if run_json far --tokens "$T" --query 1e6,0; then
  python3 -c "
from geo import *; r = load('$work/far.json'); assert close(r['output'], (1.5, 0.2), 1e-9), r['output']
assert r['inside_hull'] is True" && ok "query (1e6, 0): finite, at the rightmost token" || bad "far: $(cat "$work/far.json")"
fi

# The Gaussian tilted mean (W = I, T = 1): mu + Sigma v.
if run_json gauss --tokens "$T" --query 0.5,-1 --gaussian "1,2;0.5,0.1,0.3"; then
  python3 -c "
from geo import *; r = load('$work/gauss.json')
assert close(r['tilted_mean'], (1 + 0.5 * 0.5 + 0.1 * -1, 2 + 0.1 * 0.5 + 0.3 * -1), 1e-14), r['tilted_mean']" \
    && ok "--gaussian: tilted mean mu + Sigma v" || bad "gaussian: $(cat "$work/gauss.json")"
fi

# The linear image of a circle: M v for every sample, on the predicted ellipse.
if run_json lin --tokens "$T" --wq "$WQ" --wk "$WK" --wv "$WV" --circle 1.5 --samples 90 --mode linear; then
  python3 - "$work/lin.json" "$T" "$WQ" "$WK" "$WV" <<'PY' && ok "circle, linear: 90 points = M v, on the predicted ellipse to 1e-9" || bad "linear circle: $(head -c 600 "$work/lin.json")"
import math, sys; from geo import *
r = load(sys.argv[1]); ts = tokens(sys.argv[2]); wq, wk, wv = map(mat, sys.argv[3:6])
assert r["mode"] == "linear" and len(r["points"]) == 90 and r["samples"] == 90
e = r["ellipse"]; a1, a2 = e["axes"]; r1, r2 = e["radii"]
assert e["center"] == [0, 0] and r1 >= r2 > 0
assert abs(a1[0] * a2[0] + a1[1] * a2[1]) < 1e-14 and abs(math.hypot(*a1) - 1) < 1e-14
for k, p in enumerate(r["points"]):
    a = 2 * math.pi * k / 90
    assert close(p, linear(ts, (1.5 * math.cos(a), 1.5 * math.sin(a)), wq, wk, wv), 1e-9 * r1)
    x1 = (p[0] * a1[0] + p[1] * a1[1]) / r1; x2 = (p[0] * a2[0] + p[1] * a2[1]) / r2
    assert abs(math.hypot(x1, x2) - 1) < 1e-9, (k, x1, x2)
assert max(math.hypot(*p) for p in r["points"]) <= r1 * (1 + 1e-12)
PY
fi
if run_json col --preset collinear --circle 2 --samples 36 --mode linear; then
  python3 -c "
from geo import *; r = load('$work/col.json'); e = r['ellipse']
assert e['radii'][1] <= 1e-12 * e['radii'][0]
assert all(abs(p[1] - p[0] / 2) <= 1e-9 for p in r['points'])" \
    && ok "collinear preset: the linear image is a segment on y = x/2" || bad "collinear: $(head -c 400 "$work/col.json")"
fi

# The softmax image of a circle stays inside the hull; a big circle hugs its boundary.
if run_json soft --preset five --circle 50 --samples 200; then
  python3 -c "
from geo import *; r = load('$work/soft.json'); h = r['hull']
assert r['mode'] == 'softmax' and len(r['points']) == 200 and len(h) == 5 and 'ellipse' not in r
assert all(inside(h, p) for p in r['points'])
n = len(h)
assert all(min(abs(cross(h[i], h[(i + 1) % n], p)) for i in range(n)) < 1e-6 for p in r['points'])" \
    && ok "circle, softmax: inside the hull, r = 50 on its boundary" || bad "softmax circle: $(head -c 400 "$work/soft.json")"
fi

# Grids: 2N lines of S points; residual alpha 0 is the plain grid; linear lines are M v.
if run_json grid --preset three --grid 5 --extent 2 --samples 7; then
  python3 -c "
from geo import *; r = load('$work/grid.json')
assert r['lines_per_axis'] == 5 and r['samples'] == 7 and r['extent'] == 2 and r['mode'] == 'softmax'
assert len(r['lines']) == 10 and all(len(l) == 7 for l in r['lines'])
ts = tokens('1.2,0.3;-0.9,1;-0.3,-1.1')
for i, line in enumerate(r['lines']):
    for k, p in enumerate(line):
        fixed, along = -2 + i % 5, -2 + 4 * k / 6
        v = (fixed, along) if i < 5 else (along, fixed)
        assert close(p, attend(ts, v)[0], 1e-12), (i, k, p)" \
    && ok "grid softmax: 10 lines x 7 points, vertical then horizontal, the formula" || bad "grid: $(head -c 400 "$work/grid.json")"
fi
if run_json grid0 --grid 3 --extent 1 --samples 3 --mode residual --alpha 0; then
  python3 -c "
from geo import *; r = load('$work/grid0.json')
assert r['alpha'] == 0 and r['lines'][0] == [[-1, -1], [-1, 0], [-1, 1]] and r['lines'][3] == [[-1, -1], [0, -1], [1, -1]]
assert r['lines'][5] == [[-1, 1], [0, 1], [1, 1]]" \
    && ok "grid residual alpha 0: the identity" || bad "grid alpha 0: $(cat "$work/grid0.json")"
fi
if run_json gridl --tokens "$T" --grid 4 --extent 3 --samples 5 --mode linear; then
  python3 -c "
from geo import *; r = load('$work/gridl.json'); ts = tokens('$T')
pts = [p for l in r['lines'] for p in l]
assert len(pts) == 40
import itertools
for i, line in enumerate(r['lines']):
    for k, p in enumerate(line):
        fixed, along = -3 + 2 * (i % 4), -3 + 6 * k / 4
        v = (fixed, along) if i < 4 else (along, fixed)
        assert close(p, linear(ts, v), 1e-12), (i, k, p)" \
    && ok "grid linear: M v on every line" || bad "grid linear: $(head -c 400 "$work/gridl.json")"
fi

# Text output: readable for queries, "x y" rows for gnuplot (blank lines between grid lines).
"$bin" geometry --query 0.2,0.1 >"$work/q.txt" 2>&1 && grep -q "^output " "$work/q.txt" \
  && grep -q "^inside_hull true" "$work/q.txt" && ok "query text output" || bad "query text: $(cat "$work/q.txt")"
"$bin" geometry --grid 3 --samples 4 >"$work/g.txt" 2>&1 \
  && [ "$(grep -c '^-\?[0-9]' "$work/g.txt")" = 24 ] && [ "$(grep -c '^$' "$work/g.txt")" = 5 ] \
  && ok "grid text output: 24 rows, 6 blocks" || bad "grid text: $(cat "$work/g.txt")"
"$bin" geometry --preset far --circle 1 --samples 16 >"$work/c.txt" 2>&1 \
  && [ "$(grep -c '^[0-9]' "$work/c.txt")" = 16 ] && ok "circle text output, preset far" || bad "circle text: $(cat "$work/c.txt")"

# Bad input: exit 2, the option named, nothing on stdout.
rejects '--tokens: no points given' --tokens "" --query 0,0
rejects '--tokens: item 2 "3,x" is not two numbers' --tokens "1,2;3,x" --query 0,0
rejects '--tokens: item 1 "nan,1" is not finite' --tokens "nan,1" --query 0,0
rejects '--tokens: item 2 is empty' --tokens "1,2;;3,4" --query 0,0
rejects '--temperature must be > 0, got 0' --temperature 0 --query 0,0
rejects '--temperature must be > 0, got -2' --temperature -2 --query 0,0
rejects '--temperature: "nan" is not finite' --temperature nan --query 0,0
rejects '--wq: expected four numbers "a,b,c,d" (row-major), got "1,2,3"' --wq 1,2,3 --query 0,0
rejects '--wv: entry 2 "y" is not a number' --wv 1,y,0,1 --query 0,0
rejects '--query: expected two numbers "x,y", got "1"' --query 1
rejects "--preset: unknown preset 'square' (presets: three, five, collinear, far)" --preset square --query 0,0
rejects 'give exactly one of --query, --circle, --grid (got none)' --tokens "1,2"
rejects 'give exactly one of --query, --circle, --grid (got 2)' --query 1,1 --circle 1
rejects '--grid must be in [2, 4096], got 100000' --grid 100000
rejects '--grid must be in [2, 4096], got 1' --grid 1
rejects '--grid must be an integer, got 2.5' --grid 2.5
rejects '--samples must be in [2, 65536], got 100000' --grid 4 --samples 100000
rejects 'at most 33554432' --grid 4096 --samples 65536
rejects '--samples must be in [3, 1000000], got 2' --circle 1 --samples 2
rejects '--circle (the radius) must be >= 0, got -1' --circle -1
rejects '--circle: "big" is not a number' --circle big
rejects '--extent must be > 0, got 0' --grid 4 --extent 0
rejects '--extent applies only to --grid' --circle 1 --extent 2
rejects '--mode must be softmax, linear or residual, got' --circle 1 --mode warp
rejects '--mode applies only to --circle and --grid' --query 1,1 --mode linear
rejects '--samples applies only to --circle and --grid' --query 1,1 --samples 9
rejects '--alpha must be in [0, 1], got 2' --grid 4 --mode residual --alpha 2
rejects '--alpha applies only to --mode residual' --grid 4 --alpha 0.5
rejects '--gaussian applies only to --query' --circle 1 --gaussian "0,0;1,0,1"
rejects '--gaussian: Gaussian covariance is not positive semi-definite' --query 1,1 --gaussian "0,0;1,3,1"
rejects '--gaussian: expected "mx,my;sxx,sxy,syy"' --query 1,1 --gaussian "0,0"
rejects 'the value point W^V t_1 = (inf, inf) overflows' --tokens "1e10,1e10" --wv "1e300,1e300,1e300,1e300" --query 1,1
rejects 'the result is not finite' --tokens "1e200,1e200" --circle 1e200 --mode linear
rejects '--export' --query 1,1 --export fig.pdf
rejects '--query' --query

summary
