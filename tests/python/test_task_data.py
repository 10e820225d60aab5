#!/usr/bin/env python3
"""The Python package's task data is attnlab's, token for token (issue 51): for every shipped
config (assets/configs/**/*.json; the suite's and the reproductions' manifests are not configs
and are skipped), `attnlab data --config F --batches N` writes the eval set and probe the C++
side builds, and attnlab.make_task(resolve(config)) must give the same vocabulary, input length,
number of eval batches, first N eval batches (inputs and targets, exactly) and probe.

Fashion-MNIST configs are compared at task.test_examples 64 (the eval set is the first N test
images in order, so these are the shipped set's first 64): the whole 10,000 as JSON would take
most of the test's time. Everything else is the shipped config as it is.

Also: `attnlab data` refuses what it cannot do with exit 2 and writes nothing (an --out that
exists, an unknown task, --batches 0).

usage: test_task_data.py [--attnlab BIN] [--batches N] [--config NAME ...]
Plain python; exit 0 when every check passed, 1 otherwise, 77 (skipped) without torch.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

try:
    import torch
except ImportError:  # ctest reads 77 as skipped (tests/CMakeLists.txt)
    print(f"test_task_data.py: skipped: {sys.executable} has no torch (Debian: python3-torch)")
    sys.exit(77)

import attnlab  # noqa: E402


def shipped_configs():
    """{name: path} of every run config under assets/configs (name: the path below it, no
    .json), manifests (a suite's "tasks", a reproduction's "arms") left out."""
    root = os.path.join(REPO, "assets", "configs")
    out = {}
    for path in sorted(glob.glob(os.path.join(root, "**", "*.json"), recursive=True)):
        with open(path) as f:
            raw = json.load(f)
        if "tasks" in raw or "arms" in raw:
            continue
        out[os.path.relpath(path, root)[:-5]] = path
    return out


def derived(raw):
    c = json.loads(json.dumps(raw))
    if c.get("task", {}).get("name") == "fashion-mnist":
        c["task"]["test_examples"] = 64
    return c


def same(name, what, want, have, notes):
    if want.dtype != have.dtype and want.is_floating_point() != have.is_floating_point():
        notes.append(f"{what}: dtype {have.dtype}, attnlab's {want.dtype}")
        return False
    if tuple(want.shape) != tuple(have.shape):
        notes.append(f"{what}: shape {tuple(have.shape)}, attnlab's {tuple(want.shape)}")
        return False
    equal = torch.equal(want.to(have.dtype), have)
    if not equal:
        where = (want.to(have.dtype) != have).nonzero()[0].tolist()
        notes.append(f"{what} differ first at {where}: {have[tuple(where)].item()}, attnlab's "
                     f"{want[tuple(where)].item()}")
    return equal


def check(name, path, binary, batches, work):
    """Returns (ok, notes, batches compared)."""
    notes = []
    cfg = os.path.join(work, name.replace("/", "_") + ".json")
    with open(path) as f:
        raw = derived(json.load(f))
    with open(cfg, "w") as f:
        json.dump(raw, f)
    out = cfg[:-5] + ".data.json"
    p = subprocess.run([binary, "data", "--config", cfg, "--batches", str(batches), "--out", out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return False, [f"attnlab data failed (exit {p.returncode}): {p.stderr.strip()[-300:]}"], 0
    with open(out) as f:
        want = json.load(f)
    task = attnlab.make_task(attnlab.resolve(raw, cfg))
    ok = True
    if task.vocab != want["vocab"] or task.length != want["sequence_length"]:
        notes.append(f"vocab {task.vocab}, input length {task.length}; attnlab's "
                     f"{want['vocab']}, {want['sequence_length']}")
        ok = False
    have_set = task.eval_set()
    if len(have_set) != want["eval_batches"]:
        notes.append(f"{len(have_set)} eval batches, attnlab's {want['eval_batches']}")
        ok = False
    image = want["patch_dim"] > 0
    for b, batch in enumerate(want["eval"]):
        if b >= len(have_set):
            break
        inputs = torch.tensor(batch["inputs"], dtype=torch.float32 if image else torch.long)
        ok &= same(name, f"eval batch {b} inputs", inputs, have_set[b][0], notes)
        ok &= same(name, f"eval batch {b} targets", torch.tensor(batch["targets"]),
                   have_set[b][1], notes)
    probe = torch.tensor(want["probe"], dtype=torch.float32 if image else torch.long)
    ok &= same(name, "probe", probe, task.probe(), notes)
    return ok, notes, len(want["eval"])


def check_refusals(binary, work):
    """attnlab data's refusals: exit 2, a message naming the culprit, nothing written."""
    notes = []
    existing = os.path.join(work, "existing.json")
    with open(existing, "w") as f:
        f.write("keep me\n")
    bad = os.path.join(work, "bad_task.json")
    with open(bad, "w") as f:
        json.dump({"task": {"name": "no-such-task"}}, f)
    copy = os.path.join(REPO, "assets", "configs", "copy.json")
    fresh = os.path.join(work, "never_written.json")
    cases = [(["--config", copy, "--out", existing], "exists"),
             (["--config", bad, "--out", fresh], "no-such-task"),
             (["--config", copy, "--batches", "0", "--out", fresh], "--batches")]
    for args, culprit in cases:
        p = subprocess.run([binary, "data", *args], capture_output=True, text=True)
        if p.returncode != 2 or culprit not in p.stderr:
            notes.append(f"attnlab data {' '.join(args)}: exit {p.returncode}, stderr "
                         f"{p.stderr.strip()[-200:]!r} (want exit 2 naming {culprit!r})")
    if open(existing).read() != "keep me\n" or os.path.exists(fresh):
        notes.append("a refused attnlab data wrote a file")
    return notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attnlab", default=os.path.join(REPO, "build", "app", "attnlab"))
    ap.add_argument("--batches", type=int, default=2, help="eval batches compared per config")
    ap.add_argument("--config", action="append", help="only these (e.g. suite/mqar_64)")
    args = ap.parse_args()
    binary = os.path.abspath(args.attnlab)
    configs = shipped_configs()
    names = args.config or list(configs)
    unknown = [n for n in names if n not in configs]
    if unknown:
        ap.error(f"unknown config {unknown} (shipped: {' '.join(configs)})")
    failed = 0
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="attnlab_task_data_") as work:
        for name in names:
            t = time.time()
            try:
                ok, notes, compared = check(name, configs[name], binary, args.batches, work)
            except Exception as e:  # noqa: BLE001 (reported per config; the others still run)
                ok, notes, compared = False, [f"{type(e).__name__}: {e}"], 0
            failed += not ok
            print(f"{name:<32} {compared} batch(es) {time.time() - t:5.1f} s  "
                  f"{'ok' if ok else 'FAILED: ' + '; '.join(notes)}", flush=True)
        refusals = check_refusals(binary, work)
    print("attnlab data refusals: " + ("ok" if not refusals else "FAILED: " + "; ".join(refusals)))
    print(f"{len(names) - failed}/{len(names)} configs' task data equal attnlab's in "
          f"{time.time() - t0:.0f} s")
    sys.exit(0 if failed == 0 and not refusals else 1)


if __name__ == "__main__":
    main()
