#!/usr/bin/env python3
"""Plain PyTorch eager versions of attnlab's shipped small configs, for issue 24's end-to-end
target: attnlab's training steps/s against a PyTorch script of the same model on the same device.

Written the way a researcher would: nn.Module, torch.optim.AdamW with its defaults otherwise, no
torch.compile (unless --compile), no fused kernels, no custom CUDA. Per config the model is the
Python twin of attnlab's (python/attnlab/models/, the package `attnlab.load` uses: attnlab's
architecture, core/models/ and core/attention/, with its parameter names; neural attention with
its placement: "first-layer", the default, puts it in layer 0 and dot-product attention in the
others, as make_neural_attention) and exactly attnlab's parameter count (checked:
--expect-params N, or --attnlab-summary FILE whose "parameters" it must equal), the same batch
shapes, loss (cross-entropy, targets -1 ignored),
AdamW param groups (weight decay on tensors with dim >= 2 only, as core/training/session/session.cpp),
betas, warmup + cosine schedule and global-norm grad clipping (train.grad_clip; attnlab's
default 1.0 applies when a config does not set it). The conn model adds lambda ||C||_F^2 to the
loss and applies its stability control after each optimiser step, and tracks rho(I+C) and
||I+C||_2 every step when model.conn.track is on (attnlab's default), as attnlab's step does.
Neural attention materialises its [B, H, L, L, h] scorer activations, as plain autograd code
does (attnlab's blocks of query rows and fused kernels are what it is measured against).
The twins' hook points (nn.Identity modules) stay in the timed forward: each is one call of an
empty module.

Data. The step's speed does not depend on the content, so batches are generated here with the
task's shapes and token ranges: copy/reverse/sort and recall are the real tasks (same layout,
same scored positions); text reads the config's corpus (Debian's fortunes) and cuts random
windows like core/data/tasks.cpp; fashion-mnist uses random N(0, 1) patch vectors and random
labels of the real shapes (the IDX files are not read). Batches are built on the CPU each step
and copied to the device, as attnlab does.

Same model: --check-run RUN_DIR loads the final weights of attnlab's run of this config into the
PyTorch model and requires attnlab's final eval loss on attnlab's own eval set (rebuilt by the
package, python/attnlab/data/: text windows, the first test images, or the synthetic tasks'
mt19937_64 draws).

Timing: --warmup steps untimed, then --steps timed steps in --windows equal windows; steps/s is
the median over windows, with torch.cuda.synchronize() at every window edge on a GPU (no
per-step loss.item(): eager PyTorch may queue ahead, the conservative choice for the target).
Prints one JSON line per config on stdout (details on stderr); exits 1 when a parameter count
differs from attnlab's, naming both numbers, or when the --check-run losses differ.

--compile: the same script with the model wrapped in torch.compile(model) (default mode; the
optimiser, clipping and the conn model's control stay eager), a second baseline next to eager.
Needs torch >= 2.0 (else it exits 2 saying so) and a warm-up of at least one step: compilation
happens in the first steps (forward and backward), inside the untimed warm-up, whose time
(warmup_s, first_step_s) the JSON line reports apart; the line carries "compiled": true.

usage: pytorch_models.py [--config NAME|FILE ...] [--device cpu|cuda] [--steps N] [--warmup N]
         [--windows K] [--threads T] [--expect-params N | --attnlab-summary FILE]
         [--check-run RUN_DIR] [--ky-impl unfold|dense] [--no-conn-track] [--compile]
Needs torch (Debian's python3-torch 1.13 on the CPU machines, torch 2.x on the GPU image).
"""
import argparse
import json
import math
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))  # the attnlab package, install-free

import attnlab  # noqa: E402
from attnlab.config import resolve, shipped_config_path  # noqa: E402
from attnlab.data import FashionMnistTask, RecallTask, TextTask, TransformTask  # noqa: E402
from attnlab.models import ConnTransformer, KyAttention, Transformer, build_model  # noqa: E402

SHIPPED = ["copy", "fortunes", "ky_fortunes", "conn_recall", "fmnist_dot", "neural_fortunes"]


def load_config(arg):
    """A shipped config's name or a config file -> (resolved config, its path)."""
    path = arg if (arg.endswith(".json") or os.sep in arg) else shipped_config_path(arg, REPO)
    with open(path) as f:
        try:
            return resolve(json.load(f)), path
        except ValueError as e:
            raise SystemExit(f"pytorch_models.py: {path}: {e}")


# --------------------------------------------------------------------------------------------
# Data: the package's tasks (shapes, token ranges, attnlab's eval sets for --check-run) plus the
# batches the timed steps train on, generated here with torch's RNG.

class TransformData(TransformTask):  # x SEP f(x); only the n answer tokens after SEP are scored
    def batch(self, b, g):
        n, v, name = self.c["length"], self.c["vocab"], self.c["name"]
        x = torch.randint(0, v, (b, n), generator=g)
        y = x.flip(1) if name == "reverse" else x.sort(1).values if name == "sort" else x
        seq = torch.cat([x, torch.full((b, 1), v), y], 1)
        targets = seq[:, 1:].clone()
        targets[:, :n] = -1
        return seq[:, :-1], targets


class RecallData(RecallTask):  # k1 v1 .. kn vn SEP q1 a1 .. qn an; keys distinct, answers scored
    def batch(self, b, g):
        n, v = self.c["length"], self.c["vocab"]
        keys = torch.rand(b, v, generator=g).argsort(1)[:, :n]
        values = torch.randint(0, v, (b, n), generator=g) + v
        order = torch.rand(b, n, generator=g).argsort(1)
        first = torch.stack([keys, values], 2).reshape(b, 2 * n)
        second = torch.stack([keys.gather(1, order), values.gather(1, order)], 2).reshape(b, 2 * n)
        seq = torch.cat([first, torch.full((b, 1), 2 * v), second], 1)
        targets = seq[:, 1:].clone()
        targets[:, : 2 * n] = -1
        targets[:, 2 * n::2] = -1  # the queries are inputs, not answers
        return seq[:, :-1], targets


class TextData(TextTask):  # random windows of the corpus's training part, as TextTask draws them
    def batch(self, b, g):
        starts = torch.randint(0, self.split - self.length, (b,), generator=g)
        w = self.tokens[starts.unsqueeze(1) + torch.arange(self.length + 1)]
        return w[:, :-1], w[:, 1:]


class ImageData(FashionMnistTask):  # random patches of the real shapes (speed ignores pixels)
    def batch(self, b, g):
        return (torch.randn(b, self.length, self.patch_dim, generator=g),
                torch.randint(0, self.classes, (b,), generator=g))


def make_data(c):
    t = c["task"]
    args = (t, c["seed"], c["train"]["eval_batches"], c["train"]["batch_size"])
    if t["name"] in ("copy", "reverse", "sort"):
        return TransformData(*args), "generated (the real task)"
    if t["name"] == "recall":
        return RecallData(*args), "generated (the real task)"
    if t["name"] == "text":
        try:
            return TextData(*args), f"random windows of {t['text_path']}"
        except (OSError, ValueError) as e:
            raise SystemExit(f"pytorch_models.py: {e}")
    if t["name"] == "fashion-mnist":
        return ImageData(*args), "random N(0,1) patches, random labels"
    raise SystemExit(f"pytorch_models.py: task {t['name']!r} is not written here "
                     "(only the shipped end-to-end configs' tasks are)")


# --------------------------------------------------------------------------------------------
# Models: the package's twins (python/attnlab/models/).

def build(c, data, ky_impl):
    try:
        return build_model(c, data, ky_impl)
    except ValueError as e:
        raise SystemExit(f"pytorch_models.py: {e}")


@torch.no_grad()
def conn_after_step(model, track):
    """The conn model's stability control on every head (attnlab's, in the package), then with
    track rho(I+C) and ||I+C||_2 computed exactly, the plain way, as a script that logs them
    each step would. Returns (rho, norm) or (None, None)."""
    conn = model.conn
    conn.apply_control()
    if not track:
        return None, None
    m = (torch.eye(conn.connection.shape[1]) + conn.effective_connection().cpu()).double()
    return (torch.linalg.eigvals(m).abs().max().item(),
            torch.linalg.matrix_norm(m, ord=2).item())


def breakdown(model):
    parts = {}
    for name, p in model.named_parameters():
        parts_of = name.split(".")
        key = parts_of[0] + ("." + parts_of[1] if parts_of[0] == "conn" else "")
        parts[key] = parts.get(key, 0) + p.numel()
    return parts


def check_against_run(model, data, c, run_dir, device):
    """Loads attnlab's final weights (RUN_DIR/checkpoint/model.safetensors, read by the package
    by attnlab's parameter names) into this model and recomputes attnlab's final
    eval loss on its own eval set: the architectures agree when the two losses do. The synthetic
    eval sets come from StdRng, which follows libstdc++ (GCC >= 11): a binary built otherwise
    draws other examples and fails the check."""
    with open(os.path.join(run_dir, "summary.json")) as f:
        want = json.load(f)["eval_loss"]
    path = os.path.join(run_dir, "checkpoint", "model.safetensors")
    try:
        attnlab.load_state(model, attnlab.read_weights(path)[0], path)
    except ValueError as e:  # unreadable, or names / shapes that do not fit this model
        print(f"pytorch_models.py: {c['name']}: cannot load attnlab's weights in {run_dir}: {e}",
              file=sys.stderr)
        sys.exit(1)
    model.eval()
    total = count = 0.0
    with torch.no_grad():
        for x, y in data.eval_set():
            logits = model(x.to(device))
            y = y.to(device)
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]).double(), y.reshape(-1),
                                     ignore_index=-1, reduction="sum").item()
            count += (y != -1).sum().item()
    model.train()
    got = total / max(1.0, count)
    # Equal models agree to ~1e-7 here (float32 sums in another order); a ky window of 31
    # instead of 32 after 20 steps moves the loss by 5e-5 relative. Neural attention's scorer
    # starts nearly flat: after 30 steps of neural_fortunes a scale 1/sqrt(d') for 1/sqrt(Dh) or
    # gelu for relu moves the loss by < 1e-5 relative, after 300 steps by 3e-2 and 7e-5.
    if not abs(got - want) <= 1e-5 * max(1.0, abs(want)):
        print(f"pytorch_models.py: {c['name']}: with attnlab's final weights ({run_dir}) this "
              f"model's eval loss is {got:.8g}, attnlab's {want:.8g}: not the same model"
              + ("" if c["task"]["name"] in ("text", "fashion-mnist") else
                 " (or not the same eval set: StdRng follows GCC >= 11's libstdc++)"),
              file=sys.stderr)
        sys.exit(1)
    return {"attnlab_eval_loss": want, "pytorch_eval_loss": got, "tolerance_relative": 1e-5}


# --------------------------------------------------------------------------------------------
# Training and timing.

def lr_at(t, step, total):  # TrainingSession::lr_at: linear warmup, cosine to lr * min_lr_ratio
    if step < t["warmup"]:
        return t["lr"] * (step + 1) / t["warmup"]
    progress = min(1.0, (step - t["warmup"]) / max(1, total - t["warmup"]))
    floor = t["lr"] * t["min_lr_ratio"]
    return floor + (t["lr"] - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


def expected_params(args):
    if args.expect_params is not None:
        return args.expect_params, "--expect-params"
    if args.attnlab_summary:
        with open(args.attnlab_summary) as f:
            return int(json.load(f)["parameters"]), args.attnlab_summary
    return None, None


def run(name, args):
    c, path = load_config(name)
    if args.threads:
        torch.set_num_threads(args.threads)
    elif c["threads"] > 0:  # a config's own thread count, as attnlab applies it
        torch.set_num_threads(c["threads"])
    device = torch.device(args.device)
    data, data_note = make_data(c)
    torch.manual_seed(c["seed"])
    model = build(c, data, args.ky_impl).to(device)
    # --compile: the training forward goes through torch.compile's wrapper (same parameters);
    # the checks and the conn model's own steps use the module itself.
    forward = torch.compile(model) if args.compile else model
    params = sum(p.numel() for p in model.parameters())
    want, source = expected_params(args)
    if want is not None and want != params:
        print(f"pytorch_models.py: {c['name']}: parameter count differs: attnlab {want} "
              f"(from {source}), PyTorch {params}; PyTorch's by part: {breakdown(model)}",
              file=sys.stderr)
        sys.exit(1)
    checked = check_against_run(model, data, c, args.check_run, device) if args.check_run else None

    t = dict(c["train"])
    total = args.warmup + args.steps
    decay = [p for p in model.parameters() if p.dim() >= 2]  # as session.cpp: matrices decay
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": t["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=t["lr"], betas=(t["beta1"], t["beta2"]))
    conn = isinstance(model, ConnTransformer)
    # model.conn.track on (attnlab's default) and not switched off here
    track = conn and model.conn.o["track"] and not args.no_conn_track
    g = torch.Generator().manual_seed(c["seed"])
    B = t["batch_size"]
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)

    def step(i):
        x, y = data.batch(B, g)
        x, y = x.to(device), y.to(device)
        logits = forward(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1),
                               ignore_index=-1)
        if conn:
            loss = loss + model.conn.regularization()
        opt.zero_grad()
        loss.backward()
        if t["grad_clip"] > 0:
            nn.utils.clip_grad_norm_(model.parameters(), t["grad_clip"])
        for group in opt.param_groups:
            group["lr"] = lr_at(t, i, total)
        opt.step()
        if conn:
            conn_after_step(model, track)
        return loss

    model.train()
    # The warm-up (with --compile: compilation, in the first step's forward and backward) stays
    # out of the timed windows; its time is reported apart.
    warmup_s = first_step_s = None
    if args.warmup:
        t0 = time.perf_counter()
        for i in range(args.warmup):
            step(i)
            if i == 0:
                if cuda:
                    torch.cuda.synchronize(device)
                first_step_s = time.perf_counter() - t0
        if cuda:
            torch.cuda.synchronize(device)
        warmup_s = time.perf_counter() - t0
    per_window = max(1, args.steps // args.windows)
    rates, i, loss = [], args.warmup, None
    for _ in range(args.windows):
        if cuda:
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        for _ in range(per_window):
            loss = step(i)
            i += 1
        if cuda:
            torch.cuda.synchronize(device)
        rates.append(per_window / (time.perf_counter() - t0))
    final_loss = float(loss.item()) if loss is not None else None
    if cuda:
        peak, kind = torch.cuda.max_memory_allocated(device) / 2**20, "cuda_max_allocated"
        dev_name = torch.cuda.get_device_name(device)
    else:
        # The process's peak: with several configs in one process, the largest so far.
        peak, kind = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "process_max_rss"
        dev_name = "cpu"
    x, _ = data.batch(B, g)
    out = {
        "config": c["name"], "config_file": os.path.relpath(path, REPO) if path.startswith(REPO) else path,
        "device": device.type, "device_name": dev_name, "torch": torch.__version__,
        "threads": torch.get_num_threads(), "params": params,
        "attnlab_params": want, "params_match": None if want is None else want == params,
        "steps_per_s": statistics.median(rates),
        "steps_per_s_windows": [round(r, 3) for r in rates],
        "warmup_steps": args.warmup, "timed_steps": per_window * args.windows,
        "warmup_s": None if warmup_s is None else round(warmup_s, 3),
        "first_step_s": None if first_step_s is None else round(first_step_s, 3),
        "compiled": args.compile,
        "batch_shape": list(x.shape), "peak_memory_mib": round(peak, 1), "peak_memory_kind": kind,
        "data": data_note, "final_train_loss": final_loss,
    }
    if args.check_run:
        out["same_model_check"] = checked
    if isinstance(model, Transformer):
        out["attention"] = sorted({type(b.attention).__name__ for b in model.blocks})
        if any(isinstance(b.attention, KyAttention) for b in model.blocks):
            out["ky_impl"] = args.ky_impl
    if conn:
        out["conn_control"] = c["model"]["conn"]["control"]
        out["conn_track"] = track
    print(json.dumps(out), flush=True)


def main():
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--config", action="append",
                    help="a shipped config's name or a config file; repeat for several "
                         f"(default: {' '.join(SHIPPED)})")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                    choices=["cpu", "cuda"])
    ap.add_argument("--steps", type=int, default=200, help="timed steps (default 200)")
    ap.add_argument("--warmup", type=int, default=20, help="untimed steps first (default 20)")
    ap.add_argument("--windows", type=int, default=5, help="timed windows; steps/s is their median")
    ap.add_argument("--threads", type=int, default=0,
                    help="torch threads (default: the config's `threads`, else torch's)")
    ap.add_argument("--expect-params", type=int, help="attnlab's parameter count for the config")
    ap.add_argument("--attnlab-summary", help="attnlab's summary.json: its \"parameters\" must match")
    ap.add_argument("--check-run", metavar="RUN_DIR",
                    help="attnlab's run directory of this config: load its final weights and "
                         "require its final eval loss on its own eval set")
    ap.add_argument("--ky-impl", default="unfold", choices=["unfold", "dense"],
                    help="ky attention as the seed's Pad + Unfold (default) or dense banded L x L")
    ap.add_argument("--no-conn-track", action="store_true",
                    help="conn: skip the per-step rho(I+C), ||I+C||_2 that model.conn.track asks for")
    ap.add_argument("--compile", action="store_true",
                    help="train through torch.compile(model) (torch >= 2.0); compilation happens "
                         "in the warm-up, which must then be at least one step")
    args = ap.parse_args()
    if args.compile and not hasattr(torch, "compile"):
        print(f"pytorch_models.py: --compile needs torch >= 2.0, this is {torch.__version__}",
              file=sys.stderr)
        sys.exit(2)
    if args.compile and args.warmup < 1:
        ap.error("--compile needs --warmup >= 1: compilation happens in the first step, which "
                 "must not be timed")
    configs = args.config or SHIPPED
    if (args.expect_params is not None or args.attnlab_summary or args.check_run) and \
            len(configs) != 1:
        ap.error("--expect-params / --attnlab-summary / --check-run check one config: "
                 "pass one --config")
    if args.device == "cuda" and not torch.cuda.is_available():
        ap.error("--device cuda: this torch sees no GPU")
    if args.steps < 1 or args.windows < 1 or args.warmup < 0:
        ap.error("--steps and --windows must be >= 1, --warmup >= 0")
    for name in configs:
        run(name, args)
        if args.device == "cuda":  # the next config's peak starts from an empty cache
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
