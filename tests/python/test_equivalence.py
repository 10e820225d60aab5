#!/usr/bin/env python3
"""The Python twins compute what attnlab computes (issue 36): for every shipped config
(assets/configs/**/*.json, the suite's and the reproductions' included, named by their path below
assets/configs: suite/mqar_64; their manifests suite.json and repro.json are not configs) and a
few variants that reach what no shipped config does (ALiBi, no
position, ky's zero-pad edges, neural's options, causal kernel attention, conn's options), attnlab
trains a short derived run, and with the run's weights loaded by ``attnlab.load``:

  (a) run.evaluate()["eval_loss"] equals summary.json's eval_loss to relative 1e-5, on the eval
      set rebuilt in Python (synthetic tasks: the mt19937_64 replica; text: the corpus tail;
      fashion-mnist: the first test images);
  (b) the parameter count equals summary.json's "parameters";
  (c) the attention maps of run.model(run.probe, return_attention=True) equal
      `attnlab export --run DIR --figure attention --format csv` to 1e-5 absolute (conn models
      draw no maps: their connection matrix C is compared with the conn-matrix CSV instead);
      ky models are checked in both of the twin's forms, dense and unfold, for (a) and (c);
  (d) the weights load the same from a safetensors file: `attnlab export --run DIR --weights
      FILE` where the binary has it, else a file written here from the checkpoint in the
      documented layout; load(DIR) must then take it, and it and the lone file (load(FILE): the
      config from its metadata) must give the very tensors checkpoint/model.safetensors gives;
and tests/python/example.py runs on one of the runs.

A derived config: train.steps 20 (30 for ky and neural, whose scorer and bias start nearly
flat: the extra steps make their maps depend on their own parameters), eval_every = steps,
eval_batches 2, batch_size at most 32, warmup scaled as `attnlab train --steps` scales it,
threads 2; fashion-mnist evaluates its first 520 test images (two eval batches, one partial), and
a text task split in "blocks" holds out 1% of them for eval (its eval set tiles them all).

usage: test_equivalence.py [--attnlab BIN] [--quick] [--config NAME ...] [--keep DIR]
  --quick   QUICK's five configs only (ky + dot layers on copy, semi-fusion on fashion-mnist,
            conn on recall, neural + dot on the fortunes text, dot on the suite's MQAR): every
            data path, the explicit-target benchmark tasks, and the mechanisms with their own
            code paths, in about a minute on 2 cores (everything: about 20 minutes)
Plain python (no pytest); exit 0 when every check passed, 1 otherwise, 77 (skipped) without
torch.
"""
import argparse
import csv
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))  # install-free, as the guide says

try:
    import torch
except ImportError:  # ctest reads 77 as skipped (tests/CMakeLists.txt)
    print(f"test_equivalence.py: skipped: {sys.executable} has no torch (Debian: python3-torch)")
    sys.exit(77)

import attnlab  # noqa: E402

QUICK = ["copy_gap_mixed", "fmnist_semi_fusion", "conn_recall", "neural_fortunes",
         "suite/mqar_64"]
LOSS_RTOL, MAP_ATOL = 1e-5, 1e-5

# Variants: (name, shipped config it starts from, changes). What no shipped config reaches.
VARIANTS = [
    ("v_dot_alibi", "copy", {"model": {"position": "alibi"}}),
    ("v_dot_none", "reverse", {"model": {"position": "none"}}),
    ("v_ky_zeropad_alibi", "copy", {"model": {"position": "alibi", "attention": "ky",
                                              "attention_options": {"ky": {
                                                  "window": 5, "edges": "zero-pad",
                                                  "hidden": 8}}}}),
    ("v_ky_rope", "induction", {"model": {"position": "rope", "attention": "ky",
                                          "attention_options": {"ky": {"window": 6}}}}),
    ("v_neural_options", "copy", {"model": {"position": "alibi", "attention": "neural",
                                            "attention_options": {"neural": {
                                                "placement": "all-layers", "down": 4,
                                                "down_bias": True, "share_across_heads": True,
                                                "activation": "gelu", "hidden": 16}}}}),
    ("v_neural_none_tanh", "sort", {"model": {"attention": "neural", "attention_options": {
        "neural": {"down": "none", "activation": "tanh", "hidden": 8}}}}),
    ("v_kernel_causal", "copy", {"model": {"layers": 4, "attention": [
        "pseudo", "semi-fusion", "gaussian", "linear-sim"], "position": "alibi",
        "attention_options": {"linear-sim": {"max_len": 16}, "gaussian": {"sigma": 2.0}}}}),
    ("v_pseudo_alibi_image", "fmnist_pseudo", {"model": {"position": "alibi",
                                                         "d_model": 32, "layers": 2}}),
    ("v_conn_options", "conn_recall", {"model": {"d_model": 32, "conn": {
        "slots": 32, "mixing": "literal", "variant": "nonlinear", "connection_heads": 2,
        "control": "spec", "steps": 2}}}),
    ("v_modadd_linear_sim", "modadd", {"model": {"attention": "linear-sim"}}),
]


def merged(base, over):
    out = dict(base)
    for k, v in over.items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def shipped_configs():
    """{name: path} of every run config under assets/configs, recursively (name: the path below
    it without .json), manifests (a suite's "tasks", a reproduction's "arms") left out."""
    root = os.path.join(REPO, "assets", "configs")
    out = {}
    for path in sorted(glob.glob(os.path.join(root, "**", "*.json"), recursive=True)):
        raw = json.load(open(path))
        if "tasks" not in raw and "arms" not in raw:
            out[os.path.relpath(path, root)[:-5]] = path
    return out


def derive(raw, name):
    """The short config a check trains (see the module docstring)."""
    c = json.loads(json.dumps(raw))
    c["name"], c["threads"] = name.replace("/", "_"), 2
    t, task, m = c.setdefault("train", {}), c.setdefault("task", {}), c.setdefault("model", {})
    names = m.get("attention", "dot")
    names = [names] if isinstance(names, str) else names
    steps = 30 if any(n in ("ky", "neural") for n in names) else 20
    # `attnlab train --steps`'s scaling: the warmup keeps its share of the schedule
    t["warmup"] = int(t.get("warmup", 100) * steps / t.get("steps", 2000))
    t["steps"], t["eval_every"], t["eval_batches"] = steps, steps, 2
    t["batch_size"] = min(t.get("batch_size", 32), 32)  # the time goes into training
    if task.get("name") == "fashion-mnist":
        task["test_examples"] = 520
    if task.get("split") == "blocks":  # its eval set tiles every eval block: fewer blocks
        task["eval_fraction"] = 0.01
    return c


def wait_for(binary, seconds=300):
    """The binary may be briefly missing while it is rebuilt: wait for it to come back."""
    deadline = time.time() + seconds
    while not os.access(binary, os.X_OK):
        if time.time() > deadline:
            raise SystemExit(f"test_equivalence.py: no attnlab binary at {binary}")
        time.sleep(2)


def attnlab_cmd(binary, *args, retries=3):
    """Runs attnlab; retried when the binary vanished under us (a rebuild), not otherwise."""
    for attempt in range(retries):
        wait_for(binary)
        p = subprocess.run([binary, *args], capture_output=True, text=True)
        if p.returncode != 127 and os.access(binary, os.X_OK):
            return p
        time.sleep(5)
    return p


def read_map_csv(path):
    """{layer: [H, T, T] tensor} from an attention figure's CSV."""
    cells = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["layer"] == "":
                continue
            cells[(int(row["layer"]), int(row["head"]), int(row["query"]), int(row["key"]))] = \
                float(row["weight"])
    maps = {}
    for layer in sorted({k[0] for k in cells}):
        keys = [k for k in cells if k[0] == layer]
        H = 1 + max(k[1] for k in keys)
        T = 1 + max(max(k[2], k[3]) for k in keys)
        m = torch.zeros(H, T, T, dtype=torch.float64)
        for (_, h, i, j) in keys:
            m[h, i, j] = cells[(layer, h, i, j)]
        maps[layer] = m
    return maps


def read_matrix_csv(path):
    cells = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            cells[(int(row["i"]), int(row["j"]))] = float(row["value"])
    n = 1 + max(i for i, _ in cells)
    m = torch.zeros(n, n, dtype=torch.float64)
    for (i, j), v in cells.items():
        m[i, j] = v
    return m


def write_safetensors(path, tensors, metadata):
    """The layout attnlab export --weights writes (docs/guide/python.md), from the checkpoint:
    for testing the reader where the binary cannot export yet."""
    header, offset, blobs = {}, 0, []
    for name, t in tensors.items():
        data = t.detach().contiguous().float().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # aligned data, as the safetensors writers pad
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def check(name, raw, binary, work, export_weights):
    """Trains the derived config and checks it; returns a result dict (ok, numbers, notes)."""
    r = {"config": name, "ok": False, "notes": []}
    t0 = time.time()
    flat = name.replace("/", "_")  # suite/mqar_64: one directory, suite_mqar_64
    cfg_path, run_dir = os.path.join(work, flat + ".json"), os.path.join(work, flat)
    c = derive(raw, name)
    with open(cfg_path, "w") as f:
        json.dump(c, f, indent=1)
    p = attnlab_cmd(binary, "train", "--config", cfg_path, "--out", run_dir, "--force", "-q")
    if p.returncode != 0:
        r["notes"].append(f"attnlab train failed (exit {p.returncode}): {p.stderr.strip()[-500:]}")
        return r
    summary = json.load(open(os.path.join(run_dir, "summary.json")))
    r["train_s"] = time.time() - t0
    run = attnlab.load(run_dir)
    m = run.config["model"]
    r["mechanism"] = "conn" if m["architecture"] == "conn" else "+".join(
        dict.fromkeys(m["attention"])) + ("" if m["position"] == "learned" else "/" + m["position"])

    # (a) the eval loss, (b) the parameter count
    got = run.evaluate()
    r["attnlab_loss"], r["python_loss"] = summary["eval_loss"], got["eval_loss"]
    r["loss_rel"] = abs(got["eval_loss"] - summary["eval_loss"]) / abs(summary["eval_loss"])
    r["acc_match"] = abs(got["eval_accuracy"] - summary["eval_accuracy"]) < 1e-9
    r["params"], r["attnlab_params"] = run.parameter_count(), summary["parameters"]
    ok = r["loss_rel"] <= LOSS_RTOL and r["params"] == r["attnlab_params"]
    if r["loss_rel"] > LOSS_RTOL:
        r["notes"].append(f"eval loss {got['eval_loss']:.9g}, attnlab's {summary['eval_loss']:.9g}")
    if r["params"] != r["attnlab_params"]:
        r["notes"].append(f"{r['params']} parameters, attnlab's {r['attnlab_params']}")
    if not r["acc_match"]:  # reported; an argmax tie may flip within the loss tolerance
        r["notes"].append(f"eval accuracy {got['eval_accuracy']}, "
                          f"attnlab's {summary['eval_accuracy']}")

    # (c) the maps (conn: C)
    def export_csv(figure):  # attnlab's CSV of the figure, or None (noted) when export failed
        out = os.path.join(run_dir, figure + ".csv")
        p = attnlab_cmd(binary, "export", "--run", run_dir, "--figure", figure,
                        "--format", "csv", "--out", out)
        if p.returncode != 0:
            r["notes"].append(f"attnlab export {figure} failed: {p.stderr.strip()[-300:]}")
            return None
        return out

    if m["architecture"] == "conn":
        out = export_csv("conn-matrix")
        if out is None:
            ok = False
        else:
            want = read_matrix_csv(out)
            have = run.model.conn.effective_connection().detach().double()
            r["map_diff"] = (want - have).abs().max().item()
            r["map_what"] = "C"
    else:
        out = export_csv("attention")
        if out is None:
            ok = False
        else:
            want = read_map_csv(out)
            have = run.attention()
            if sorted(want) != list(range(len(have))) or any(
                    want[l].shape != have[l].shape for l in want):
                r["notes"].append("map shapes differ: attnlab "
                                  f"{[tuple(want[l].shape) for l in sorted(want)]}, "
                                  f"python {[tuple(h.shape) for h in have]}")
                ok = False
            else:
                r["map_diff"] = max((want[l] - have[l].double()).abs().max().item() for l in want)
                r["map_what"] = f"{len(want)}x{tuple(want[0].shape)}"
    # ky's other form (the seed's unfold, O(L W)): the same loss and maps
    if any(isinstance(b.attention, attnlab.models.KyAttention) for b in run.model.blocks) \
            and "map_diff" in r:
        unfold = attnlab.load(run_dir, weights=os.path.join(run_dir, "checkpoint",
                                                            "model.safetensors"),
                              ky_impl="unfold")
        u_loss = unfold.evaluate()["eval_loss"]
        u_maps = unfold.attention()
        r["unfold"] = (abs(u_loss - summary["eval_loss"]) / abs(summary["eval_loss"]),
                       max((want[l] - u_maps[l].double()).abs().max().item() for l in want))
        if r["unfold"][0] > LOSS_RTOL or r["unfold"][1] > MAP_ATOL:
            r["notes"].append(f"ky unfold: loss rel diff {r['unfold'][0]:.3g}, "
                              f"maps {r['unfold'][1]:.3g}")
            ok = False
        r["map_diff"] = max(r["map_diff"], r["unfold"][1])
        r["loss_rel"] = max(r["loss_rel"], r["unfold"][0])
        r["mechanism"] += " (dense, unfold)"
    if "map_diff" in r and r["map_diff"] > MAP_ATOL:
        r["notes"].append(f"maps differ by {r['map_diff']:.3g}")
        ok = False

    # (d) safetensors: attnlab's own export where it exists, else a file in the same layout
    st = os.path.join(run_dir, "weights.safetensors")
    how = "attnlab export --weights"
    if export_weights:
        p = attnlab_cmd(binary, "export", "--run", run_dir, "--weights", st)
        if p.returncode != 0:
            r["notes"].append(f"attnlab export --weights failed: {p.stderr.strip()[-300:]}")
            ok = False
    if not os.path.exists(st):
        how = "written here from checkpoint/model.safetensors"
        tensors = attnlab.read_safetensors(
            os.path.join(run_dir, "checkpoint", "model.safetensors"))[0]
        write_safetensors(st, tensors, {"attnlab_version": summary["attnlab"],
                                        "config": json.dumps(run.config),
                                        "step": str(summary["steps"])})
    if os.path.exists(st):
        # Same tensors bit for bit means the same model: (a) to (c) then hold for this file too.
        st_run = attnlab.load(run_dir)  # prefers DIR/weights.safetensors
        loaded = [st_run]
        # A file of parameters only lacks the conn model's fixed slots (a buffer): load(DIR)
        # takes them from the checkpoint, a lone file cannot. Said, not failed: the run dir is the
        # way such a file loads.
        buffers = [k for k in attnlab.saved_buffers(run.model)
                   if k not in attnlab.read_safetensors(st)[0]]
        if buffers:
            r["notes"].append(f"the safetensors file has no {', '.join(buffers)} (a buffer): "
                              "it loads with its run directory only")
        else:
            loaded.append(attnlab.load(st))  # the lone file: its metadata's config
        want = run.model.state_dict()
        same = [all(torch.equal(want[k], other.model.state_dict()[k]) for k in want)
                for other in loaded]
        r["safetensors"] = how
        if st_run.weights != st:
            r["notes"].append(f"load() took {st_run.weights}, not {st}")
            ok = False
        if not all(same) or loaded[-1].config != run.config:
            r["notes"].append(f"safetensors ({how}): the tensors differ from the checkpoint's "
                              f"({same}: run dir, lone file) or the lone file's config from "
                              "config.json")
            ok = False
    # (e) ablation: attnlab analyze --ablate 0.H (zero) against the twin with its hook_z
    # zeroing the same head's output: two implementations of one intervention.
    if m["architecture"] != "conn" and binary_analyzes(binary):
        head = m["heads"] - 1
        p = attnlab_cmd(binary, "analyze", "--run", run_dir, "--ablate", f"0.{head}", "--json")
        if p.returncode != 0:
            r["notes"].append(f"attnlab analyze failed: {p.stderr.strip()[-300:]}")
            ok = False
        else:
            want = json.loads(p.stdout)["ablated"]["eval_loss"]

            def zero_head(z, hook):  # z: [batch, heads, L, Dh]
                z = z.clone()
                z[:, head] = 0
                return z
            with attnlab.hooks(run.model, {"block0.attention.hook_z": zero_head}):
                have = run.evaluate()["eval_loss"]
            r["ablation_rel"] = abs(have - want) / abs(want)
            if r["ablation_rel"] > LOSS_RTOL:
                r["notes"].append(f"head 0.{head} zero-ablated: eval loss {have:.9g}, "
                                  f"attnlab analyze's {want:.9g}")
                ok = False
    r["ok"], r["total_s"] = ok, time.time() - t0
    return r


def binary_analyzes(binary):
    return attnlab_cmd(binary, "analyze", "--help").returncode == 0


def binary_exports_weights(binary):
    p = attnlab_cmd(binary, "export", "--help")
    return "--weights" in p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attnlab", default=os.path.join(REPO, "build", "app", "attnlab"))
    ap.add_argument("--quick", action="store_true", help="the four configs of QUICK only")
    ap.add_argument("--config", action="append", help="only these (shipped names or variants)")
    ap.add_argument("--keep", help="train into this directory and keep it "
                                   "(default: a temporary one)")
    args = ap.parse_args()
    binary = os.path.abspath(args.attnlab)
    torch.set_num_threads(2)

    shipped = shipped_configs()
    configs = {n: json.load(open(p)) for n, p in shipped.items()}
    for name, base, change in VARIANTS:
        configs[name] = merged(configs[base], change)
    names = QUICK if args.quick else list(configs)
    if args.config:
        unknown = [n for n in args.config if n not in configs]
        if unknown:
            ap.error(f"unknown config {unknown} (shipped: {' '.join(shipped)}; variants: "
                     f"{' '.join(v[0] for v in VARIANTS)})")
        names = args.config

    work = args.keep or tempfile.mkdtemp(prefix="attnlab_twins_")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    export_weights = binary_exports_weights(binary)
    print(f"attnlab: {binary}; torch {torch.__version__}; {len(names)} configs into {work}; "
          "safetensors: " + ("attnlab export --weights" if export_weights else
                             "written from the checkpoint (this binary has no export --weights)"))
    print(f"{'config':<22} {'mechanism':<34} {'params':>8} {'eval loss':>10} {'rel diff':>9} "
          f"{'map diff':>9} {'maps':<12} {'s':>5}")
    results, ok = [], True
    try:
        for name in names:
            try:
                r = check(name, configs[name], binary, work, export_weights)
            except Exception as e:  # noqa: BLE001 (reported per config; the others still run)
                r = {"config": name, "ok": False, "notes": [f"{type(e).__name__}: {e}"]}
            results.append(r)
            ok = ok and r["ok"]
            f = lambda k, fmt: format(r[k], fmt) if k in r else "-"  # noqa: E731
            print(f"{name:<22} {r.get('mechanism', '?'):<34} {f('params', ',d'):>8} "
                  f"{f('python_loss', '.6f'):>10} {f('loss_rel', '.1e'):>9} "
                  f"{f('map_diff', '.1e'):>9} "
                  f"{r.get('map_what', '-'):<12} {f('total_s', '.1f'):>5} "
                  f"{'ok' if r['ok'] else 'FAILED: ' + '; '.join(r['notes'])}", flush=True)
            if r["ok"] and r["notes"]:
                print("    note: " + "; ".join(r["notes"]))

        # The README-style example, on the first passing run of a transformer.
        example_run = next((os.path.join(work, r["config"].replace("/", "_")) for r in results
                            if r.get("ok") and r.get("mechanism") != "conn"), None)
        if example_run:
            env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
            p = subprocess.run([sys.executable, os.path.join(HERE, "example.py"), example_run],
                               capture_output=True, text=True, env=env, cwd=example_run)
            print(f"example.py {example_run}: exit {p.returncode}\n    "
                  + "\n    ".join((p.stdout + p.stderr).strip().splitlines()))
            ok = ok and p.returncode == 0
        else:
            print("example.py: not run (no passing transformer run among these configs)")
    finally:
        if args.keep:
            with open(os.path.join(work, "results.json"), "w") as f:
                json.dump(results, f, indent=1)
        else:
            shutil.rmtree(work, ignore_errors=True)
    losses = [r["loss_rel"] for r in results if "loss_rel" in r]
    maps = [r["map_diff"] for r in results if "map_diff" in r]
    print(f"{sum(r['ok'] for r in results)}/{len(results)} configs passed in "
          f"{time.time() - t0:.0f} s; worst relative loss difference "
          f"{max(losses, default=float('nan')):.2e}, worst map difference "
          f"{max(maps, default=float('nan')):.2e}")
    ablations = [r["ablation_rel"] for r in results if "ablation_rel" in r]
    print(f"{len(ablations)} head ablations (attnlab analyze against hook_z) agree to "
          f"{max(ablations, default=float('nan')):.2e} relative")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
