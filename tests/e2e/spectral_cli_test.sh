#!/usr/bin/env bash
# End-to-end checks of `attnlab spectral` (the spectrum of I + C for a connection matrix C):
# the real binary's JSON against closed forms computed again in python (numpy is not on the
# CI machines: 2x2 and 3x3 matrices whose eigenvalues and singular values have closed forms),
# the controls and the matrix they write, and bad input refused with exit 2, the row and
# column named and nothing on stdout.
# usage: spectral_cli_test.sh <attnlab>
set -u
bin=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP
# rejects "<substring of stderr>" <csv text> [args...]: spectral on that matrix exits 2 with the
# message and nothing on stdout.
rejects() {
  printf '%b' "$2" >"$work/bad.csv"
  expect_fail -c 2 -q -- "$1" "$bin" spectral --matrix "$work/bad.csv" "${@:3}" --json
}
run_json() {  # run_json <name> <csv text> [args...]
  local name=$1 text=$2; shift 2
  printf '%b' "$text" >"$work/$name.csv"
  if "$bin" spectral --matrix "$work/$name.csv" "$@" --json >"$work/$name.json" 2>"$work/err"; then return 0; fi
  bad "$name exited non-zero: $(cat "$work/err")"; return 1
}
check_json() {  # check_json <name> <python assertions over j (the JSON) and helpers>
  local name=$1 code=$2
  if python3 - "$work/$name.json" "$work" <<PY 2>"$work/py.err"
import json, math, sys
j = json.load(open(sys.argv[1]))
work = sys.argv[2]
def close(a, b, tol=1e-9): assert abs(a - b) <= tol * max(1.0, abs(b)), (a, b)
def eig2(a, b, c, d):  # eigenvalues of [[a, b], [c, d]], closed form
    t, det = a + d, a * d - b * c
    disc = t * t / 4 - det
    if disc >= 0: return [(t / 2 + math.sqrt(disc), 0.0), (t / 2 - math.sqrt(disc), 0.0)]
    return [(t / 2, math.sqrt(-disc)), (t / 2, -math.sqrt(-disc))]
def norm2(a, b, c, d):  # largest singular value of [[a, b], [c, d]]: sqrt of A^T A's top eigenvalue
    p, q, r = a * a + c * c, a * b + c * d, b * b + d * d
    return math.sqrt((p + r) / 2 + math.sqrt(((p - r) / 2) ** 2 + q * q))
def same_set(got, want, tol=1e-9):
    assert len(got) == len(want), (got, want)
    left = list(want)
    for g in got:
        k = min(range(len(left)), key=lambda i: abs(g[0] - left[i][0]) + abs(g[1] - left[i][1]))
        assert abs(g[0] - left[k][0]) + abs(g[1] - left[k][1]) <= tol, (g, left[k])
        left.pop(k)
$code
PY
  then ok "$name"; else bad "$name: $(tail -3 "$work/py.err")"; fi
}

# 1. Diagonal: I + C = diag(1.5, 0.5).
run_json diag "0.5,0\n0,-0.5\n" && check_json diag '
assert j["n"] == 2
close(j["spectral_radius"], 1.5); close(j["spectral_norm"], 1.5)
same_set(j["eigenvalues"], [(1.5, 0), (0.5, 0)])
assert "output" not in j'

# 2. A complex dominant pair: I + C = [[0.9, -0.8], [0.8, 0.9]] (normal: norm = rho).
run_json rot "-0.1,-0.8\n0.8,-0.1\n" && check_json rot '
e = eig2(0.9, -0.8, 0.8, 0.9)
same_set(j["eigenvalues"], e)
close(j["spectral_radius"], math.hypot(0.9, 0.8)); close(j["spectral_norm"], norm2(0.9, -0.8, 0.8, 0.9))
assert abs(j["eigenvalues"][0][1]) > 0.5'

# 3. 3x3 non-normal, block triangular: eigenvalues 1.2, 0.7, 1.1; norm from the 2x2 block.
run_json tri "0.2,1,0\n0,-0.3,0\n0,0,0.1\n" && check_json tri '
same_set(j["eigenvalues"], [(1.2, 0), (0.7, 0), (1.1, 0)])
close(j["spectral_radius"], 1.2)
close(j["spectral_norm"], max(norm2(1.2, 1, 0, 0.7), 1.1))
assert j["spectral_norm"] > j["spectral_radius"] + 0.4'

# 4. norm-bound on the rotation: I + C rescaled to norm 0.95; rho(I + C) <= 0.95; the CSV written.
run_json nb "-0.1,-0.8\n0.8,-0.1\n" --control norm-bound --limit 0.95 --out "$work/nb_out.csv" && check_json nb '
o = j["output"]
assert o["changed"] is True and o["control"] == "norm-bound"
s = 0.95 / math.hypot(0.9, 0.8)
same_set(o["eigenvalues"], eig2(0.9 * s, -0.8 * s, 0.8 * s, 0.9 * s))
close(o["spectral_radius"], 0.95); close(o["spectral_norm"], 0.95)
close(j["spectral_radius"], math.hypot(0.9, 0.8))  # the input is reported too
rows = [list(map(float, l.split(","))) for l in open(work + "/nb_out.csv").read().split()]
want = [[0.9 * s - 1, -0.8 * s], [0.8 * s, 0.9 * s - 1]]
for i in range(2):
    for k in range(2): close(rows[i][k], want[i][k], 1e-12)'

# 5. norm-bound on the non-normal 3x3: rho ends below r (rho <= norm = r).
run_json nb3 "0.2,1,0\n0,-0.3,0\n0,0,0.1\n" --control norm-bound --limit 0.9 && check_json nb3 '
o = j["output"]
close(o["spectral_norm"], 0.9)
s = 0.9 / max(norm2(1.2, 1, 0, 0.7), 1.1)
same_set(o["eigenvalues"], [(1.2 * s, 0), (0.7 * s, 0), (1.1 * s, 0)])
assert o["spectral_radius"] <= 0.9 + 1e-12'

# 6. The seed'"'"'s control on trace(C) = 0: C *= r / rho leaves rho(I + C) = 1 + 0.5 r / 1.5 > 1.
run_json spec "0.5,0\n0,-0.5\n" --control spec --limit 0.95 && check_json spec '
o = j["output"]
assert o["changed"] is True
close(o["spectral_radius"], 1 + 0.5 * 0.95 / 1.5)
assert o["spectral_radius"] > 1'

# 7. Within the limit: nothing changes.
run_json none "-0.5,0\n0,-0.5\n" --control norm-bound --limit 0.95 && check_json none '
assert j["output"]["changed"] is False
close(j["output"]["spectral_radius"], 0.5)'

# 8. Text output (no --json).
printf '0.5,0\n0,-0.5\n' >"$work/t.csv"
if "$bin" spectral --matrix "$work/t.csv" --control spec >"$work/t.out" 2>&1 && grep -q "rho(I+C) 1.5" "$work/t.out" && grep -q "after spec" "$work/t.out"; then ok "text output"; else bad "text output: $(cat "$work/t.out")"; fi

# 9. A trained C: `attnlab train` writes C.csv; spectral on it agrees with the run's conn.json,
#    and norm-bound held ||I + C||_2 <= r during training.
cat >"$work/conn.json" <<'EOF2'
{"name": "spectral_e2e", "seed": 1, "threads": 1, "task": {"name": "recall", "length": 4, "vocab": 8},
 "model": {"architecture": "conn", "d_model": 16, "heads": 1,
           "conn": {"slots": 12, "steps": 2, "control": "norm-bound", "limit": 0.9}},
 "train": {"steps": 30, "batch_size": 8, "warmup": 5, "eval_every": 30, "eval_batches": 1}}
EOF2
if "$bin" train --config "$work/conn.json" --out "$work/run" -q >"$work/train.log" 2>&1 &&
   "$bin" spectral --matrix "$work/run/C.csv" --json >"$work/trained.json" 2>"$work/err"; then
  check_json trained '
run = json.load(open(work + "/run/conn.json"))["final"]
assert j["n"] == 12
close(j["spectral_radius"], run["spectral_radius"], 1e-5)
close(j["spectral_norm"], run["spectral_norm"], 1e-5)
assert j["spectral_norm"] <= 0.9 + 1e-5 and j["spectral_radius"] <= j["spectral_norm"] + 1e-9'
else
  bad "trained C: $(tail -3 "$work/train.log") $(cat "$work/err")"
fi

# Bad input: exit 2, row and column named, nothing on stdout.
rejects "row 2, column 2" "1,2\n3,abc\n"
rejects "not finite" "1,inf\n3,4\n"
rejects "row 1, column 1" "nan,0\n0,1\n"
rejects "must be square" "1,2,3\n4,5,6\n"
rejects "row 2 has 1 columns" "1,2\n3\n"
rejects "no matrix rows" ""
rejects "control must be none, spec or norm-bound" "1,0\n0,1\n" --control clip
rejects "--limit must be" "1,0\n0,1\n" --control spec --limit -1
rejects "--out writes the controlled matrix" "1,0\n0,1\n" --out "$work/x.csv"
"$bin" spectral --matrix "$work/does-not-exist.csv" >"$work/out" 2>"$work/err"; rc=$?
if [ $rc = 2 ] && grep -q "cannot open" "$work/err"; then ok "missing file"; else bad "missing file: exit $rc $(cat "$work/err")"; fi

summary spectral_cli
