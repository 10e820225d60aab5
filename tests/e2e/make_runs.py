#!/usr/bin/env python3
"""Writes run directories for the Runs panel's scale tests and frame benchmark, fast.

usage: make_runs.py CONFIG OUT ROWS [RUNS]
  RUNS omitted: OUT is one run directory with ROWS metrics rows (every column filled);
  RUNS given:   OUT holds RUNS run directories run-0000 ... with ROWS rows each.
Each directory gets CONFIG as config.json and a summary.json (a finished run).
"""
import json, math, os, sys


def write_run(config_text, out, rows, seed):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        f.write(config_text)
    parts = ["step,train_loss,eval_loss,eval_accuracy,lr,steps_per_s\n"]
    for i in range(1, rows + 1):
        loss = 2.3 * math.exp(-i / (rows / 4 + 1)) + 0.05 * math.sin(i * 0.37 + seed) + 0.1
        parts.append("%d,%.5f,%.5f,%.4f,0.001,100\n" % (i, loss, loss + 0.02, min(1.0, i / rows)))
    with open(os.path.join(out, "metrics.csv"), "w") as f:
        f.write("".join(parts))
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"steps": rows, "mechanism": "dot"}, f)


def main():
    config_text = open(sys.argv[1]).read()
    out, rows = sys.argv[2], int(sys.argv[3])
    if len(sys.argv) > 4:
        for k in range(int(sys.argv[4])):
            write_run(config_text, os.path.join(out, "run-%04d" % k), rows, k)
    else:
        write_run(config_text, out, rows, 0)


main()
