#!/usr/bin/env bash
# End-to-end checks of `attnlab ky` (the KY Transform lab, headless): JSON output, limits,
# exit codes, and bad input named in the message.
# usage: ky_cli_test.sh <attnlab>
set -u
bin=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP
# rejects "<substring of stderr>" cmd...: exit 2 with the message, no NaN or Inf on stdout.
rejects() { expect_fail -c 2 -n -- "$@"; }

"$bin" --help | grep -q "ky" && ok "--help lists ky" || bad "--help lacks ky"
"$bin" ky --help | grep -q "poly-literal" && ok "ky --help documents the kinds" || bad "ky --help"

# x^3 at 1, degree 3: the (n+1)-point fit is exact, theta = (1, 3, 3, 1).
if "$bin" ky --function "x^3" --x0 1 --kind poly --degree 3 --json >"$work/cube.json" 2>"$work/err"; then
  python3 - "$work/cube.json" <<'PY' && ok "x^3 at 1, poly 3: theta (1,3,3,1), names, converged, history" || bad "x^3 poly 3 JSON: $(cat "$work/cube.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["names"] == ["a0", "a1", "a2", "a3"], r["names"]
assert all(abs(a - b) < 1e-8 for a, b in zip(r["theta"], [1, 3, 3, 1])), r["theta"]
assert r["converged"] is True and r["kind"] == "poly" and r["degree"] == 3
hs = [row[0] for row in r["history"]]
assert len(hs) == r["iterations"] >= 2 and r["h"] == hs[-1]
assert all(a > b for a, b in zip(hs, hs[1:])), hs          # strictly decreasing h
assert all(len(row) == 5 for row in r["history"])           # [h, a0..a3]
assert abs(hs[0] - 0.1) < 1e-15 and abs(hs[1] - 0.05) < 1e-15
PY
else bad "x^3 poly 3 exited non-zero: $(cat "$work/err")"; fi

# The two polynomial readings of the same function reach different limits.
"$bin" ky -f "x^3" --x0 1 --kind poly-literal --degree 2 --json >"$work/lit.json" 2>/dev/null
python3 - "$work/lit.json" <<'PY' && ok "poly-literal x^3 at 1: limit (1, 3, 0)" || bad "poly-literal: $(cat "$work/lit.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["converged"] and abs(r["theta"][0] - 1) < 1e-12 and abs(r["theta"][1] - 3) < 1e-8
assert abs(r["theta"][2]) < 1e-8 and "not the Taylor" in r["limit_note"]
PY

# exp(x) at 0, degree 4: a4 = 1/24 well within 1e-3 even where eps is not met (exit 4).
"$bin" ky -f "exp(x)" --x0 0 --degree 4 --eps 1e-5 --json >"$work/exp4.json" 2>/dev/null; rc=$?
python3 - "$work/exp4.json" $rc <<'PY' && ok "exp at 0, poly 4: a4 = 1/24 to 1e-6" || bad "exp poly 4 (rc $rc): $(cat "$work/exp4.json")"
import json, sys
r = json.load(open(sys.argv[1])); rc = int(sys.argv[2])
assert abs(r["theta"][4] - 1 / 24) < 1e-6, r["theta"]
assert (rc == 0) == r["converged"]
PY

# Linear, exp, harmonic kinds; the chain rule.
"$bin" ky -f "sin(x)" --x0 0.5 --kind linear --json >"$work/lin.json" 2>/dev/null
python3 -c "import json,math,sys; r=json.load(open('$work/lin.json')); assert abs(r['theta'][0]-math.cos(0.5))<1e-9 and r['names']==['a (slope)','b (value)']" \
  && ok "linear sin at 0.5 = (cos 0.5, sin 0.5)" || bad "linear: $(cat "$work/lin.json")"
"$bin" ky -f "exp(x)" --x0 0 --kind exp --amplitude 2 --json >"$work/e.json" 2>/dev/null
python3 -c "import json; r=json.load(open('$work/e.json')); t=r['theta']; assert t[0]==2 and abs(t[1]-0.5)<1e-9 and abs(t[2]+1)<1e-12 and r['amplitude']==2" \
  && ok "exp kind: (M, f'/M, f - M)" || bad "exp kind: $(cat "$work/e.json")"
"$bin" ky -f "exp(x)" --x0 0 --kind harmonic --json >"$work/hm.json" 2>/dev/null
python3 -c "import json; r=json.load(open('$work/hm.json')); t=r['theta']; assert t[0]==1 and abs(t[1]-1)<1e-9 and t[2]==1" \
  && ok "harmonic kind: (M, f'/M, f)" || bad "harmonic: $(cat "$work/hm.json")"
"$bin" ky -f "sin(x)" --x0 0.5 --kind linear --chain "x^2 + 1" --json >"$work/ch.json" 2>/dev/null
python3 - "$work/ch.json" <<'PY' && ok "chain rule: slope holds, eq. 32 second off by a_f g(x0)" || bad "chain: $(cat "$work/ch.json")"
import json, math, sys
c = json.load(open(sys.argv[1]))["chain"]
assert abs(c["fg_at_x0"][0] - math.cos(1.25) * 1.0) < 1e-8 and c["slope_error"] < 1e-8
assert abs(c["eq32_second_error"] - math.cos(1.25) * 1.25) < 1e-8
assert c["uncentred"]["error"] < 1e-8 and c["converged"] is True
PY
"$bin" ky -f "x^3" --x0 1 >"$work/table.txt" 2>&1 && grep -q "a2" "$work/table.txt" && grep -q "converged" "$work/table.txt" \
  && ok "table output" || bad "table output: $(cat "$work/table.txt")"

# No convergence: exit 4, converged false, finite numbers, a message.
"$bin" ky -f "sqrt(abs(x))" --x0 0 --kind linear --json >"$work/nc.json" 2>"$work/err"; rc=$?
python3 -c "import json; r=json.load(open('$work/nc.json')); assert r['converged'] is False" 2>/dev/null && [ $rc = 4 ] \
  && ! grep -qi -e nan -e null "$work/nc.json" && grep -q "no convergence" "$work/err" \
  && ok "sqrt(|x|) at 0: exit 4, converged false, no NaN" || bad "no convergence rc=$rc: $(cat "$work/nc.json" "$work/err")"

# Bad input: exit 2 and a message naming the culprit.
rejects 'cannot parse "sin(x" at position 5: Missing parenthesis' "$bin" ky -f "sin(x" --x0 0
rejects "f is not finite at x = 0 (log(x)" "$bin" ky -f "log(x)" --x0 0
rejects "f is not finite at x = 0.05" "$bin" ky -f "log(-x)" --x0 -0.05
rejects "--rho must be in (0, 1), got 1.5" "$bin" ky -f "x" --x0 0 --rho 1.5
rejects "--h0 must be > 0, got 0" "$bin" ky -f "x" --x0 0 --h0 0
rejects "--eps must be > 0 (or 0 for automatic), got -1" "$bin" ky -f "x" --x0 0 --eps -1
rejects "--degree must be in [1, 12], got 13" "$bin" ky -f "x" --x0 0 --degree 13
rejects "--degree must be in [1, 12], got 0" "$bin" ky -f "x" --x0 0 --kind poly-literal --degree 0
rejects "--amplitude must be > 0, got 0" "$bin" ky -f "x" --x0 0 --kind exp --amplitude 0
rejects "--kind: unknown KY kind 'spline'" "$bin" ky -f "x" --x0 0 --kind spline
rejects "amplitude bound M = 0.01 is too small" "$bin" ky -f "x" --x0 0 --kind harmonic --amplitude 0.01
rejects "--chain: cannot parse" "$bin" ky -f "x" --x0 0 --chain "x +"
rejects "--x0" "$bin" ky -f "x" --x0 abc
rejects "--function is required" "$bin" ky --x0 1

# --figure ky-theta | ky-fit --out FILE: the KY lab panel's figures (app/figures/models/ky_lab_figures.h),
# their data CSV equal to the transform printed; bad figure options refused before anything is
# written.
mkdir -p "$work/fig"
if "$bin" ky -f "x^3" --x0 1 --kind poly --degree 3 --json --figure ky-theta --out "$work/fig/theta.csv" \
    >"$work/theta.json" 2>"$work/err"; then
  python3 - "$work/theta.json" "$work/fig/theta.csv" <<'PY' && ok "ky-theta CSV: every component's theta(h) as printed" || bad "ky-theta CSV: $(head -5 "$work/fig/theta.csv")"
import csv, json, sys
r = json.load(open(sys.argv[1]))
rows = [x for x in csv.DictReader(open(sys.argv[2])) if x["figure"] == "ky-theta" and x["kind"] == "line"]
for i, name in enumerate(r["names"]):
    pts = [(float(x["x"]), float(x["y"])) for x in rows if x["series"] == name]
    assert len(pts) == len(r["history"]), (name, len(pts))
    for (h, y), row in zip(pts, r["history"]):
        assert abs(h - row[0]) <= 1e-12 * h and abs(y - row[1 + i]) <= 1e-7 * max(1, abs(y)), (name, h, y, row)
PY
else bad "ky --figure ky-theta exited non-zero: $(cat "$work/err")"; fi
grep -q "wrote .*theta.csv" "$work/err" && ok "ky --figure says what it wrote" || bad "ky --figure: $(cat "$work/err")"
if "$bin" ky -f "x^3" --x0 1 --kind poly --degree 3 --figure ky-fit --fit-step 2 --out "$work/fig/fit.csv" \
    >/dev/null 2>"$work/err"; then
  python3 - "$work/fig/fit.csv" <<'PY' && ok "ky-fit CSV: f = x^3 and the fit's points at h_2 = 0.025" || bad "ky-fit CSV: $(head -5 "$work/fig/fit.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
f = [(float(x["x"]), float(x["y"])) for x in rows if x["series"] == "f"]
assert len(f) > 100 and all(abs(y - t ** 3) < 1e-7 for t, y in f), f[:3]
dots = [float(x["x"]) for x in rows if x["series"] == "fit points"]
assert [round(d, 9) for d in dots] == [1.0, 1.025, 1.05, 1.075], dots
PY
else bad "ky --figure ky-fit exited non-zero: $(cat "$work/err")"; fi
"$bin" ky -f "exp(x)" --x0 0 --figure ky-fit --out "$work/fig/fit.pdf" >/dev/null 2>&1 &&
  head -c 4 "$work/fig/fit.pdf" | grep -q "%PDF" && ok "ky-fit as PDF" || bad "ky-fit PDF"
rejects "--figure 'ky-nope': the KY lab draws ky-theta or ky-fit" \
  "$bin" ky -f "x" --x0 0 --figure ky-nope --out "$work/fig/n.pdf"
rejects "--figure ky-theta needs --out FILE" "$bin" ky -f "x" --x0 0 --figure ky-theta
rejects "--out $work/fig/t.txt: cannot tell the format" \
  "$bin" ky -f "x" --x0 0 --figure ky-theta --out "$work/fig/t.txt"
rejects "no/such" "$bin" ky -f "x" --x0 0 --figure ky-theta --out "$work/no/such/t.pdf"
rejects "step 99 is outside" "$bin" ky -f "x^2" --x0 0 --figure ky-fit --fit-step 99 --out "$work/fig/s.pdf"
rejects "component 7 is out of range" \
  "$bin" ky -f "x^2" --x0 0 --figure ky-theta --component 7 --out "$work/fig/c.pdf"
for f in n.pdf t.txt s.pdf s.csv c.pdf c.csv; do
  [ -e "$work/fig/$f" ] && bad "a refused ky --figure left $f behind"
done
[ "$(ls "$work/fig" | sort | tr '\n' ' ')" = "fit.csv fit.json fit.pdf theta.csv theta.json " ] &&
  ok "refused figures wrote nothing" || bad "files after the refusals: $(ls "$work/fig")"

summary
