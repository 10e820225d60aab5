#!/usr/bin/env python3
"""Recomputes, independently of attnlab's C++, the statistics that report.json and
leaderboard.json carry (issue 49): p_raw (the t-test against the decisive boundary, its t
distribution integrated numerically), the exact sign-flip p, the looks, Bonferroni over looks,
Holm within the paper, the learned floors; and for a leaderboard solved k/n, the Clopper-Pearson
interval (bisection on binomial sums), lr_interior, learned_at_budget, Fisher's exact test
(enumerated tables) and Holm over the board.
usage: repro_stats_check.py report REPORT.json REPRO.json | leaderboard LEADERBOARD.json
Prints one line per problem and exits 1 when there is any."""
import itertools
import json
import math
import sys

problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def close(a, b, rel=1e-6, abs_=1e-12):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)


def t_pdf(x, df):
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    return c * (1 + x * x / df) ** (-(df + 1) / 2)


def t_two_sided(t, df):
    """2 P(T > |t|) = 1 - 2 * integral_0^|t| pdf, by Simpson's rule on the substitution-free
    integrand (|t| is at most a few hundred here)."""
    t = abs(t)
    if t == 0:
        return 1.0
    n = 20000
    h = t / n
    s = t_pdf(0, df) + t_pdf(t, df)
    for i in range(1, n):
        s += (4 if i % 2 else 2) * t_pdf(i * h, df)
    return max(0.0, 1 - 2 * s * h / 3)


def t_p(d, boundary):
    n = len(d)
    if n < 2:
        return None
    m = sum(d) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in d) / (n - 1))
    if sd == 0:
        return 1.0 if m == boundary else 0.0
    return t_two_sided((m - boundary) / (sd / math.sqrt(n)), n - 1)


def sign_flip(d, boundary):
    v = [x - boundary for x in d]
    obs = abs(sum(v))
    hits = sum(1 for s in itertools.product((1, -1), repeat=len(v))
               if abs(sum(a * b for a, b in zip(s, v))) >= obs - 1e-12 * max(1, obs))
    return hits / 2 ** len(v)


def holm(ps):
    idx = sorted((i for i, p in enumerate(ps) if p is not None), key=lambda i: ps[i])
    out, run, m = [None] * len(ps), 0.0, len(idx)
    for r, i in enumerate(idx):
        run = max(run, min(1.0, (m - r) * ps[i]))
        out[i] = run
    return out


def claim_values(report, claim):
    """Per-seed values of the claim's arms from report.json's arms (runs-based claims only)."""
    if "values" in claim:  # a derived metric (steps_to_loss): the claim carries its values
        return [{int(k): v for k, v in claim["values"][name].items()} for name in claim["arms"]]
    arms = {a["name"]: a for a in report["arms"]}
    out = []
    for name in claim["arms"]:
        vals = {}
        for s in arms[name]["seeds"]:
            v = s.get(claim["metric"])
            if not s.get("diverged") and isinstance(v, (int, float)):
                vals[s["seed"]] = v
        out.append(vals)
    return out


def decisive(claim, est):
    """The boundary and the direction an excluded boundary gives, on the estimate's scale."""
    kind, metric = claim["kind"], claim["metric"]
    b = claim["boundary"]
    if kind == "better":
        larger = metric in ("eval_accuracy", "steps_per_second")
        return 0.0, "held" if (est > 0) == larger else "did not hold"
    if kind == "within":
        return b, "held" if abs(est) < abs(b) else "did not hold"
    if kind == "ratio_at_most" or kind == "at_most":
        return b, "held" if est < b else "did not hold"
    return b, "held" if est > b else "did not hold"  # ratio_at_least


def check_report(path, repro_path):
    report, repro = json.load(open(path)), json.load(open(repro_path))
    floors = repro.get("learned", [])
    arms = {a["name"]: a for a in report["arms"]}
    family = []
    for i, c in enumerate(report["claims"]):
        w = f"{path} claims[{i}] ({c['claim'][:40]})"
        missing = [k for k in ("p_raw", "p_holm", "looks", "testable") if k not in c]
        check(not missing, f"{w}: no {', '.join(missing)}")
        if missing:
            family.append(None)
            continue
        if c["verdict"] == "not checked":
            family.append(None)
            continue
        if c["source"].startswith("parameter count"):
            check(c["p_raw"] is None and len(c["looks"]) == 1, f"{w}: a count has no p, one look")
            family.append(None)
            continue
        looks = c["looks"]
        check(looks and looks[-1]["seeds"] == c["seeds"], f"{w}: the last look is not the report")
        check(close(looks[-1]["p"], c["p_raw"]), f"{w}: the last look's p is not p_raw")
        if c["p_raw"] is not None:
            check(close(c["p_looks"], min(1.0, len(looks) * c["p_raw"])),
                  f"{w}: p_looks {c['p_looks']} is not min(1, {len(looks)} x p_raw)")
        if c["source"].startswith("runs") and c["paired"]:
            a, b = claim_values(report, c)
            keys = sorted(set(a) & set(b))
            ratio = c["kind"].startswith("ratio")
            d = [math.log(a[k] / b[k]) if ratio else a[k] - b[k] for k in keys]
            boundary = math.log(c["boundary"]) if ratio else c["boundary"]
            check(close(c["p_raw"], t_p(d, boundary), rel=1e-4, abs_=1e-9),
                  f"{w}: p_raw {c['p_raw']} vs recomputed {t_p(d, boundary)}")
            check(close(c["p_permutation"], sign_flip(d, boundary)), f"{w}: sign-flip p differs")
            for look in looks[:-1]:
                n = look["seeds"]
                check(close(look["p"], t_p(d[:n], boundary), rel=1e-4, abs_=1e-9),
                      f"{w}: look at {n} p {look['p']} vs {t_p(d[:n], boundary)}")
        # learned floors: an eval-metric claim whose arm's mean is on the wrong side of its floor
        learned = True
        if c["metric"] in ("eval_loss", "eval_accuracy", "steps_to_loss"):
            for arm in c["arms"]:
                for f in floors:
                    if arm not in f["arms"]:
                        continue
                    v = [s[f["metric"]] for s in arms[arm]["seeds"] if not s.get("diverged")]
                    mean = sum(v) / len(v)
                    ok = mean > f["above"] if "above" in f else mean < f["below"]
                    learned = learned and ok
        check(c["testable"] == learned, f"{w}: testable {c['testable']}, floors say {learned}")
        if not learned:
            check(c["verdict"].startswith("not testable") and c.get("why"),
                  f"{w}: an arm did not learn but the verdict is {c['verdict']}")
        family.append(c["p_looks"] if learned else None)
    for c, p in zip(report["claims"], holm(family)):
        if p is None:
            continue
        check(close(c["p_holm"], p), f"{path}: p_holm {c['p_holm']} vs recomputed {p}")
        _, direction = decisive(c, c["difference"])
        want = direction if p < 0.05 else "not resolved"
        check(c["verdict"] == want, f"{path}: '{c['claim'][:40]}' is {c['verdict']}, want {want}")


def binom_upper(k, n, p):
    return sum(math.comb(n, x) * p ** x * (1 - p) ** (n - x) for x in range(k, n + 1))


def bisect(f, target):
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return (lo + hi) / 2


def clopper_pearson(k, n):
    lo = 0.0 if k == 0 else bisect(lambda p: binom_upper(k, n, p), 0.025)
    hi = 1.0 if k == n else bisect(lambda p: binom_upper(k + 1, n, p), 0.975)
    return lo, hi


def fisher(k1, n1, k2, n2):
    s, total = k1 + k2, math.comb(n1 + n2, k1 + k2)
    prob = lambda x: math.comb(n1, x) * math.comb(n2, s - x) / total
    obs = prob(k1)
    return sum(prob(x) for x in range(0, n1 + 1) if 0 <= s - x <= n2 and prob(x) <= obs * (1 + 1e-7))


def check_leaderboard(path):
    board = json.load(open(path))
    th = board["threshold"]
    cells = {(c["task"], c["mechanism"]): c for c in board["cells"]}
    for c in board["cells"]:
        w = f"{path} {c['task']}/{c['mechanism']}"
        missing = [k for k in ("solved", "n", "threshold", "ci95_exact", "lr_interior",
                               "eval_sequences") if k not in c]
        check(not missing, f"{w}: no {', '.join(missing)}")
        if missing:
            continue
        v = c.get("values", [])
        k = sum(1 for x in v if x >= th)
        check(c["solved"] == k and c["n"] == len(v), f"{w}: solved {c['solved']}/{c['n']}, values say {k}/{len(v)}")
        if v:
            lo, hi = clopper_pearson(k, len(v))
            check(close(c["ci95_exact"][0], lo, 1e-7, 1e-9) and close(c["ci95_exact"][1], hi, 1e-7, 1e-9),
                  f"{w}: ci95_exact {c['ci95_exact']} vs {lo, hi}")
        if isinstance(c.get("ci95"), list):
            check(0 <= c["ci95"][0] <= c["ci95"][1] <= 1, f"{w}: ci95 {c['ci95']} leaves [0, 1]")
        # a rate that diverged bounds the choice (leaderboard_stats.cpp, extend_lr_choice)
        rates = [t["lr"] for t in c.get("lr_grid", []) if t.get("finished", True)]
        if c.get("lr_chosen") is not None:
            check(c["lr_interior"] == (min(rates) < c["lr_chosen"] < max(rates)), f"{w}: lr_interior")
        solved = [x >= th for x in v]
        for l in c.get("length_eval", []):
            if "values_all" in l:
                kept = [x for x, s in zip(l["values_all"], solved) if s]
                check(l["values"] == kept, f"{w}: length {l['length']} keeps unsolved seeds")
    ps = []
    check("comparisons" in board and all("learned_at_budget" in t for t in board["tasks"]),
          f"{path}: no comparisons or learned_at_budget")
    if problems:
        return
    for t in board["tasks"]:
        ref = cells.get((t["name"], t["reference"]))
        rk, rn = (ref["solved"], ref["n"]) if ref else (0, 0)
        check(t["learned_at_budget"] == (rn > 0 and rk >= 0.8 * rn - 1e-9), f"{path} {t['name']}: learned_at_budget")
    for cmp in board["comparisons"]:
        (k1, n1), (k2, n2) = cmp["solved"], cmp["against_solved"]
        check(close(cmp["p_fisher"], fisher(k1, n1, k2, n2), 1e-7), f"{path}: Fisher {cmp}")
        ps.append(cmp["p_fisher"])
    for cmp, p in zip(board["comparisons"], holm(ps)):
        check(close(cmp["p_holm"], p), f"{path}: Holm {cmp}")


if __name__ == "__main__":
    if sys.argv[1] == "report":
        check_report(sys.argv[2], sys.argv[3])
    else:
        check_leaderboard(sys.argv[2])
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)
