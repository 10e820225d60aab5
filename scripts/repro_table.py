#!/usr/bin/env python3
"""Prints a committed reproduction's claims as the markdown table docs/guide/comparing.md and the
README quote: claim | the paper | ours (difference or ratio with its 95% interval) | verdict.

usage: scripts/repro_table.py docs/repro/<paper>/report.json [--short]

--short leaves out the paper column (the README's table). Every number comes from report.json,
so the guide's tables are the committed reports' own.
"""
import json
import math
import sys


def fmt(x, digits=4):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}f}"


def ours(c):
    lo, hi = c["ci95"] if c.get("ci95") else (None, None)
    kind = c.get("kind", "")
    unit = "rounds" if c.get("source", "").startswith("benchmark") else (
        "pairs" if c.get("paired") else "seeds")
    if c.get("source", "").startswith("parameter count"):
        return f'{c["ours"]} (a count)'
    what = "ratio" if kind.startswith("ratio") else ("mean" if kind == "at_most" else "difference")
    text = f'{c["arms"][0]}'
    if len(c["arms"]) > 1:
        text += f' − {c["arms"][1]}' if what == "difference" else f' / {c["arms"][1]}'
    text += f' {c["metric"].replace("_", " ")}: {what} {fmt(c["difference"])} [{fmt(lo)}, {fmt(hi)}], {c["seeds"]} {unit}'
    if unit == "rounds":
        text += f' ({c["source"]})'
    return text


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    report = json.load(open(sys.argv[1]))
    short = "--short" in sys.argv[2:]
    head = ["claim"] + ([] if short else ["the paper"]) + ["ours (95% interval)", "verdict"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for c in report["claims"]:
        verdict = f'**{c["verdict"]}**'
        row = [c["claim"]] + ([] if short else [c["paper"]]) + [ours(c), verdict]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
