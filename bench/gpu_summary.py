#!/usr/bin/env python3
"""The tables of one GPU lease (bench/gpu_session.sh OUT_DIR): attnlab's graphed training steps/s
against PyTorch eager on the same GPU and models, pack scaling, the window's frame times and the
reference-tier slice. Reads only what the session wrote; prints Markdown.

A run's steps/s is the median of its metrics.csv's steps_per_s rows after the first (the first
window holds the warm-up and the graph's capture). A pack's aggregate is the sum of its runs'
steps/s: its runs start together and train side by side (pack.json, when the sweep writes one,
gives the pack's own wall-clock figure too).

usage: gpu_summary.py OUT_DIR CONFIG...
"""
import csv
import glob
import json
import os
import statistics
import sys


def rate(run_dir):
    """(steps/s, summary dict) of one run directory; (None, {error}) when it has none."""
    try:
        s = json.load(open(os.path.join(run_dir, "summary.json")))
        rows = list(csv.DictReader(open(os.path.join(run_dir, "metrics.csv"))))
        rates = [float(r["steps_per_s"]) for r in rows[1:] if r.get("steps_per_s")]
        return (statistics.median(rates) if rates else None), s
    except Exception as e:  # a stage that failed or was skipped
        return None, {"error": str(e)}


def fmt(x, spec=".1f"):
    return "-" if x is None else format(x, spec)


def speed_table(out, configs):
    py = {}
    path = os.path.join(out, "pytorch.jsonl")
    if os.path.exists(path):
        for line in open(path):
            if line.strip().startswith("{"):
                r = json.loads(line)
                py[(r["config"], bool(r.get("compiled")))] = r
    print("| config | attnlab graphed steps/s | PyTorch eager | torch.compile | attnlab / eager "
          "| attnlab / compile | step path | eval loss |")
    print("|---|---|---|---|---|---|---|---|")
    for c in configs:
        try:
            name = json.load(open(os.path.join(out, "configs", c + ".json")))["name"]
        except Exception:
            name = c
        g, s = rate(os.path.join(out, "runs", c + "-graph"))
        p = py.get((name, False), {}).get("steps_per_s")
        pc = py.get((name, True), {}).get("steps_per_s")
        ratio = lambda a, b: "-" if not a or not b else f"{a / b:.2f}x"
        print(f"| {c} | {fmt(g)} | {fmt(p)} | {fmt(pc)} | {ratio(g, p)} | {ratio(g, pc)} "
              f"| {s.get('step_path', s.get('error', '?'))} | {fmt(s.get('eval_loss'), '.4f')} |")


def modes_table(out):
    rows = [(m, rate(os.path.join(out, "runs", "fortunes-" + m))) for m in ("graph", "modeeager", "mode0")]
    if not any(r for _, (r, _) in rows):
        return
    print("\n| fortunes, ATTN_CUDA_GRAPH | steps/s | step path |")
    print("|---|---|---|")
    for m, (r, s) in rows:
        name = {"graph": "(unset): graphed", "modeeager": "eager: uncaptured, no per-step sync",
                "mode0": "0: torch's eager step"}[m]
        print(f"| {name} | {fmt(r)} | {s.get('step_path', s.get('error', '?'))} |")


def pack_table(out):
    packs = sorted((int(d[len(os.path.join(out, "pack")):]), d)
                   for d in glob.glob(os.path.join(out, "pack[0-9]*")) if os.path.isdir(d))
    if not packs:
        return
    print("\n| runs in one process | runs finished | sum of runs' steps/s | per run | x one run | step paths |")
    print("|---|---|---|---|---|---|")
    base = None
    for n, d in packs:
        rates, paths = [], set()
        for m in glob.glob(os.path.join(d, "**", "metrics.csv"), recursive=True):
            r, s = rate(os.path.dirname(m))
            if r:
                rates.append(r)
                paths.add(s.get("step_path", "?"))
        total = sum(rates) if rates else None
        if n == 1 and total:
            base = total
        print(f"| {n} | {len(rates)} | {fmt(total)} | {fmt(total / len(rates) if rates else None)} "
              f"| {'-' if not base or not total else f'{total / base:.2f}x'} | {', '.join(sorted(paths))} |")
        pj = os.path.join(d, "pack.json")
        if os.path.exists(pj):
            print(f"|   pack.json | {json.dumps(json.load(open(pj)))[:200]} | | | | |")


def window_table(out):
    files = sorted(glob.glob(os.path.join(out, "window", "window_*.json")))
    if not files:
        return
    print("\n| window | frames | frame p50 ms | frame p99 ms | other |")
    print("|---|---|---|---|---|")
    for f in files:
        try:
            j = json.load(open(f))
        except Exception as e:
            print(f"| {os.path.basename(f)} | unreadable: {e} | | | |")
            continue
        flat = {k: v for k, v in j.items() if isinstance(v, (int, float, str))}
        p50 = next((flat[k] for k in flat if "p50" in k or "median" in k), None)
        p99 = next((flat[k] for k in flat if "p99" in k), None)
        frames = flat.get("frames")
        rest = {k: v for k, v in flat.items() if k not in ("frames",) and "p50" not in k
                and "p99" not in k and "median" not in k}
        print(f"| {os.path.basename(f)} | {frames} | {p50} | {p99} | {json.dumps(rest)[:160]} |")


def reference_table(out):
    ref = os.path.join(out, "reference")
    runs = glob.glob(os.path.join(ref, "**", "summary.json"), recursive=True)
    if not os.path.isdir(ref):
        return
    print("\n| reference slice (mqar-64) | runs finished | steps each | median steps/s per run | eval accuracy range |")
    print("|---|---|---|---|---|")
    rates, steps, accs = [], set(), []
    for f in runs:
        try:
            s = json.load(open(f))
        except Exception:
            continue
        if s.get("steps_per_second"):
            rates.append(float(s["steps_per_second"]))
        steps.add(s.get("steps"))
        if s.get("eval_accuracy") is not None:
            accs.append(float(s["eval_accuracy"]))
    print(f"| {ref} | {len(runs)} | {sorted(x for x in steps if x)} | "
          f"{fmt(statistics.median(rates) if rates else None)} | "
          f"{fmt(min(accs), '.3f') if accs else '-'} to {fmt(max(accs), '.3f') if accs else '-'} |")


def main():
    out, configs = sys.argv[1], sys.argv[2:]
    if os.path.exists(os.path.join(out, "device.txt")):
        print(open(os.path.join(out, "device.txt")).read().strip())
    if os.path.exists(os.path.join(out, "build_time.txt")):
        print(open(os.path.join(out, "build_time.txt")).read().strip())
    speed_table(out, configs)
    modes_table(out)
    pack_table(out)
    window_table(out)
    reference_table(out)


if __name__ == "__main__":
    main()
