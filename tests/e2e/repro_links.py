#!/usr/bin/env python3
"""Every link of the committed reproductions resolves: in each docs/repro/<paper>/report.md,
every relative markdown link target exists (figures, CSVs, the runs in data/repro/<paper>/runs/),
the report links to its runs, and every run report.json names (each arm's grid and seeds) is a
directory there holding summary.json. Prints one line per broken link; exits 1 if there is one.

usage: repro_links.py ROOT   (the repository)
"""
import json
import os
import re
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")


def check_paper(root, paper):
    bad = []
    doc = os.path.join(root, "docs", "repro", paper)
    md = os.path.join(doc, "report.md")
    runs = os.path.join(root, "data", "repro", paper, "runs")
    text = open(md, encoding="utf-8").read()
    targets = [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]
    for t in targets:
        path = os.path.normpath(os.path.join(doc, t.split("#")[0]))
        if not os.path.exists(path):
            bad.append(f"{md}: link ({t}) -> {path} does not exist")
    if not any(os.path.normpath(os.path.join(doc, t)) == os.path.normpath(runs) for t in targets):
        bad.append(f"{md}: no link to its runs ({os.path.relpath(runs, doc)}/)")
    report = json.load(open(os.path.join(doc, "report.json")))
    for arm in report["arms"]:
        for entry in arm.get("lr_grid", []) + arm.get("seeds", []):
            run = entry.get("run")
            if run and not os.path.isfile(os.path.join(runs, run, "summary.json")):
                bad.append(f"{doc}/report.json: arm {arm['name']}: run {run} has no "
                           f"{os.path.relpath(os.path.join(runs, run), root)}/summary.json")
    return bad


def main():
    root = sys.argv[1]
    bad, papers = [], 0
    for paper in sorted(os.listdir(os.path.join(root, "docs", "repro"))):
        if os.path.isfile(os.path.join(root, "docs", "repro", paper, "report.md")):
            papers += 1
            bad += check_paper(root, paper)
    for line in bad:
        print(line)
    print(f"{papers} reports checked, {len(bad)} broken links")
    return 1 if bad or papers == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
