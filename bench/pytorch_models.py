#!/usr/bin/env python3
"""Plain PyTorch eager versions of attnlab's shipped small configs, for issue 24's end-to-end
target: attnlab's training steps/s against a PyTorch script of the same model on the same device.

Written the way a researcher would: nn.Module, torch.optim.AdamW with its defaults otherwise, no
torch.compile, no fused kernels, no custom CUDA. Per config the model has attnlab's architecture
(core/models/model.cpp, core/models/conn_model.cpp, core/attention/{dot,ky}/) and exactly
attnlab's parameter count (checked: --expect-params N, or --attnlab-summary FILE whose
"parameters" it must equal), the same batch shapes, loss (cross-entropy, targets -1 ignored),
AdamW param groups (weight decay on tensors with dim >= 2 only, as core/training/session.cpp),
betas, warmup + cosine schedule and global-norm grad clipping (train.grad_clip; attnlab's
default 1.0 applies when a config does not set it). The conn model adds lambda ||C||_F^2 to the
loss and applies its stability control after each optimiser step, and tracks rho(I+C) and
||I+C||_2 every step when model.conn.track is on (attnlab's default), as attnlab's step does.

Data. The step's speed does not depend on the content, so batches are generated here with the
task's shapes and token ranges: copy/reverse/sort and recall are the real tasks (same layout,
same scored positions); text reads the config's corpus (Debian's fortunes) and cuts random
windows like core/data/tasks.cpp; fashion-mnist uses random N(0, 1) patch vectors and random
labels of the real shapes (the IDX files are not read). Batches are built on the CPU each step
and copied to the device, as attnlab does.

Same model: --check-run RUN_DIR loads the final weights of attnlab's run of this config into the
PyTorch model and requires attnlab's final eval loss on attnlab's own eval set (rebuilt here:
text windows, the first test images, or the synthetic tasks' mt19937_64 draws).

Timing: --warmup steps untimed, then --steps timed steps in --windows equal windows; steps/s is
the median over windows, with torch.cuda.synchronize() at every window edge on a GPU (no
per-step loss.item(): eager PyTorch may queue ahead, the conservative choice for the target).
Prints one JSON line per config on stdout (details on stderr); exits 1 when a parameter count
differs from attnlab's, naming both numbers, or when the --check-run losses differ.

usage: pytorch_models.py [--config NAME|FILE ...] [--device cpu|cuda] [--steps N] [--warmup N]
         [--windows K] [--threads T] [--expect-params N | --attnlab-summary FILE]
         [--check-run RUN_DIR] [--ky-impl unfold|dense] [--no-conn-track]
Needs torch (Debian's python3-torch 1.13 on the CPU machines, torch 2.x on the GPU image).
"""
import argparse
import copy as copy_module
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
SHIPPED = ["copy", "fortunes", "ky_fortunes", "conn_recall", "fmnist_dot"]

# core/config/config.h's defaults: a shipped config lists only what differs from them. A resolved
# config.json from an attnlab run (every key) needs none of these.
DEFAULTS = {
    "seed": 1, "threads": 0,
    "task": {"name": "copy", "length": 8, "vocab": 10, "modulus": 23, "train_fraction": 0.8,
             "text_path": "/usr/share/games/fortunes", "context": 128, "eval_fraction": 0.1,
             "data_dir": "/usr/share/datasets/fashion-mnist", "patch": 7, "shift": 0,
             "train_examples": 0, "test_examples": 0},
    "model": {"architecture": "transformer", "d_model": 64, "heads": 4, "layers": 2,
              "mlp_ratio": 4, "dropout": 0.0, "attention": ["dot"], "head": "lm", "classes": 0,
              "attention_options": {},
              "conn": {"slots": 32, "steps": 4, "init_std": 0.01, "mixing": "slots",
                       "variant": "linear", "connection_heads": 1, "regularization": 1e-4,
                       "control": "norm-bound", "limit": 0.95, "track": True,
                       "eigen_every": 50, "matrix_every": 10, "link_threshold": 0.1}},
    "train": {"steps": 2000, "batch_size": 32, "lr": 3e-3, "min_lr_ratio": 0.1, "warmup": 100,
              "weight_decay": 0.01, "beta1": 0.9, "beta2": 0.98, "grad_clip": 1.0,
              "eval_every": 100, "eval_batches": 8},
}
KY_DEFAULTS = {"window": 16, "placement": "causal", "edges": "masked", "hidden": 32,
               "connection": "learned"}


def merged(base, over):
    out = copy_module.deepcopy(base)
    for k, v in over.items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_config(arg):
    path = arg if (arg.endswith(".json") or os.sep in arg) else \
        os.path.join(REPO, "assets", "configs", arg + ".json")
    with open(path) as f:
        c = merged(DEFAULTS, json.load(f))
    if isinstance(c["model"]["attention"], str):
        c["model"]["attention"] = [c["model"]["attention"]]
    return c, path


# --------------------------------------------------------------------------------------------
# Data: shapes and token ranges of core/data/tasks.cpp and fashion_mnist.cpp.

M64 = (1 << 64) - 1


def mix_seed(seed, salt):  # core/data/tasks.cpp's splitmix-style mix
    z = (seed + 0x9E3779B97F4A7C15 * (salt + 1)) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class StdRng:
    """std::mt19937_64 and libstdc++'s (GCC >= 11) uniform_int_distribution over it (Lemire's
    nearly divisionless method on 128-bit products), to rebuild attnlab's synthetic eval sets
    for --check-run only; the timed batches never use it."""

    def __init__(self, seed):
        self.mt, self.i = [seed & M64], 312
        for k in range(1, 312):
            self.mt.append((6364136223846793005 * (self.mt[-1] ^ (self.mt[-1] >> 62)) + k) & M64)

    def next(self):
        if self.i >= 312:
            mt = self.mt
            for k in range(312):
                y = (mt[k] & ~0x7FFFFFFF & M64) | (mt[(k + 1) % 312] & 0x7FFFFFFF)
                mt[k] = mt[(k + 156) % 312] ^ (y >> 1) ^ (0xB5026F5AA96619E9 if y & 1 else 0)
            self.i = 0
        y = self.mt[self.i]
        self.i += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        return y ^ (y >> 43)

    def uniform(self, a, b):  # inclusive, b - a < 2^64 - 1
        r = b - a + 1
        product = self.next() * r
        if product & M64 < r:
            threshold = (-r) % r
            while product & M64 < threshold:
                product = self.next() * r
        return a + (product >> 64)

    def symbols(self, n, v):
        return [self.uniform(0, v - 1) for _ in range(n)]

    def distinct(self, n, v):  # partial Fisher-Yates, as SyntheticTask::distinct_symbols
        all_ = list(range(v))
        for i in range(n):
            j = self.uniform(i, v - 1)
            all_[i], all_[j] = all_[j], all_[i]
        return all_[:n]


def synthetic_eval_set(data, c):  # SyntheticTask::eval_set: one rng over every eval batch
    rng = StdRng(mix_seed(c["seed"], 0xE7A1))
    for _ in range(c["train"]["eval_batches"]):
        seqs, scored = zip(*(data.example(rng) for _ in range(c["train"]["batch_size"])))
        seq, sc = torch.tensor(seqs), torch.tensor(scored)
        yield seq[:, :-1], seq[:, 1:].masked_fill(~sc[:, 1:], -1)


class TransformData:  # x SEP f(x); only the n answer tokens after SEP are scored
    def __init__(self, t):
        self.n, self.v, self.name = t["length"], t["vocab"], t["name"]
        self.vocab, self.length = self.v + 1, 2 * self.n

    def batch(self, b, g):
        x = torch.randint(0, self.v, (b, self.n), generator=g)
        y = x.flip(1) if self.name == "reverse" else x.sort(1).values if self.name == "sort" else x
        seq = torch.cat([x, torch.full((b, 1), self.v), y], 1)
        targets = seq[:, 1:].clone()
        targets[:, : self.n] = -1
        return seq[:, :-1], targets

    def example(self, rng):
        x = rng.symbols(self.n, self.v)
        y = x[::-1] if self.name == "reverse" else sorted(x) if self.name == "sort" else x
        return x + [self.v] + y, [False] * (self.n + 1) + [True] * self.n

    def eval_set(self, c):
        return synthetic_eval_set(self, c)


class RecallData:  # k1 v1 .. kn vn SEP q1 a1 .. qn an; keys distinct, every answer scored
    def __init__(self, t):
        self.n, self.v = t["length"], t["vocab"]
        self.vocab, self.length = 2 * self.v + 1, 4 * self.n

    def batch(self, b, g):
        n, v = self.n, self.v
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

    def example(self, rng):
        n, v = self.n, self.v
        keys, values, order = rng.distinct(n, v), rng.symbols(n, v), rng.distinct(n, n)
        seq = [t for i in range(n) for t in (keys[i], v + values[i])] + [2 * v]
        seq += [t for i in range(n) for t in (keys[order[i]], v + values[order[i]])]
        return seq, [False] * (2 * n + 1) + [False, True] * n

    def eval_set(self, c):
        return synthetic_eval_set(self, c)


class TextData:  # attnlab's corpus reading: the files of a directory in name order, no .dat
    def __init__(self, t):
        path, files = t["text_path"], []
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                p = os.path.join(path, name)
                if not os.path.islink(p) and os.path.isfile(p) and not name.endswith(".dat"):
                    files.append(p)
        else:
            files = [path]
        if not files:
            raise SystemExit(f"pytorch_models.py: task.text_path {path}: no text files")
        # Decoded per file, malformed bytes as U+FFFD like text_corpus.cpp; the parameter-count
        # check catches any alphabet that still came out different.
        text = "".join(open(p, "rb").read().decode("utf-8", errors="replace") for p in files)
        chars = sorted(set(text))
        index = {c: i for i, c in enumerate(chars)}
        self.tokens = torch.tensor([index[c] for c in text], dtype=torch.long)
        self.vocab, self.length = len(chars), t["context"]
        self.split = int(len(self.tokens) * (1.0 - t["eval_fraction"]))

    def eval_set(self, c):  # TextTask's fixed windows, evenly spaced over the held-out tail
        B, n, L = c["train"]["batch_size"], len(self.tokens), self.length
        windows, span = c["train"]["eval_batches"] * B, n - self.split - (L + 1)
        for b in range(c["train"]["eval_batches"]):
            starts = torch.tensor([self.split + span * (b * B + i) // max(1, windows - 1)
                                   for i in range(B)])
            w = self.tokens[starts.unsqueeze(1) + torch.arange(L + 1)]
            yield w[:, :-1], w[:, 1:]

    def batch(self, b, g):
        starts = torch.randint(0, self.split - self.length, (b,), generator=g)
        rows = starts.unsqueeze(1) + torch.arange(self.length + 1)
        w = self.tokens[rows]
        return w[:, :-1], w[:, 1:]


class ImageData:  # random patches of the real shapes (the speed does not depend on the pixels)
    def __init__(self, t, classes):
        if 28 % t["patch"]:
            raise SystemExit(f"pytorch_models.py: task.patch {t['patch']} does not divide 28")
        self.patch_dim, self.length = t["patch"] ** 2, (28 // t["patch"]) ** 2
        self.classes, self.vocab = classes, 0

    def eval_set(self, c):  # the first test images, as FashionMnistTask (chunks of 500)
        import gzip
        t, p = c["task"], c["task"]["patch"]
        d = os.path.join(t["data_dir"], "t10k-images-idx3-ubyte.gz")
        raw = gzip.open(d).read()
        count = int.from_bytes(raw[4:8], "big")
        n = min(t["test_examples"], count) if t["test_examples"] > 0 else count
        images = torch.frombuffer(bytearray(raw[16:16 + n * 784]), dtype=torch.uint8).view(n, 28, 28)
        labels = torch.frombuffer(bytearray(gzip.open(os.path.join(
            t["data_dir"], "t10k-labels-idx1-ubyte.gz")).read()[8:8 + n]), dtype=torch.uint8)
        x = (images.float() / 255.0 - 0.2860) / 0.3530
        x = x.reshape(n, 28 // p, p, 28 // p, p).permute(0, 1, 3, 2, 4).reshape(n, -1, p * p)
        for i in range(0, n, 500):
            yield x[i:i + 500], labels[i:i + 500].long()

    def batch(self, b, g):
        return (torch.randn(b, self.length, self.patch_dim, generator=g),
                torch.randint(0, self.classes, (b,), generator=g))


def make_data(c):
    t = c["task"]
    if t["name"] in ("copy", "reverse", "sort"):
        return TransformData(t), "generated (the real task)"
    if t["name"] == "recall":
        return RecallData(t), "generated (the real task)"
    if t["name"] == "text":
        return TextData(t), f"random windows of {t['text_path']}"
    if t["name"] == "fashion-mnist":
        return ImageData(t, c["model"]["classes"] or 10), "random N(0,1) patches, random labels"
    raise SystemExit(f"pytorch_models.py: task {t['name']!r} is not written here "
                     "(only the shipped end-to-end configs' tasks are)")


# --------------------------------------------------------------------------------------------
# Models.

class DotAttention(nn.Module):
    def __init__(self, d, heads, causal, dropout, max_len):
        super().__init__()
        self.h, self.causal, self.dropout = heads, causal, dropout
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.register_buffer("mask", torch.ones(max_len, max_len, dtype=torch.bool).triu(1),
                             persistent=False)

    def forward(self, x):
        B, L, D = x.shape
        q, k, v = self.qkv(x).view(B, L, 3, self.h, D // self.h).permute(2, 0, 3, 1, 4)
        s = q @ k.transpose(-2, -1) / math.sqrt(D // self.h)
        if self.causal:
            s = s.masked_fill(self.mask[:L, :L], float("-inf"))
        w = F.dropout(s.softmax(-1), self.dropout, self.training)
        return self.out((w @ v).transpose(1, 2).reshape(B, L, D))


class KyAttention(nn.Module):
    """Window-W attention plus a per-head learned bias g_h(t_j) over the slots (Condor's KY).
    impl "unfold": the seed's Pad + Unfold of keys and values, [B, H, L, W] scores; "dense":
    full L x L scores with the band and the bias scattered in (masked edges only)."""

    def __init__(self, d, heads, causal, dropout, opts, impl):
        super().__init__()
        o = merged(KY_DEFAULTS, opts)
        if causal and o["placement"] != "causal":
            raise SystemExit("ky: a centred window in a causal model leaks the target")
        self.h, self.dropout, self.impl = heads, dropout, impl
        self.w, self.masked = o["window"], o["edges"] == "masked"
        self.first = self.w - 1 if o["placement"] == "causal" else self.w // 2
        if impl == "dense" and not self.masked:
            raise SystemExit("ky --ky-impl dense covers masked edges only")
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.learned = o["connection"] == "learned"
        if self.learned:  # g_h(t) = w3 . GELU(W2 GELU(w1 t + b1) + b2) + b3, batched over heads
            n = o["hidden"]
            self.w1, self.b1 = nn.Parameter(torch.empty(heads, n)), nn.Parameter(torch.empty(heads, n))
            self.w2, self.b2 = nn.Parameter(torch.empty(heads, n, n)), nn.Parameter(torch.empty(heads, n))
            self.w3, self.b3 = nn.Parameter(torch.empty(heads, n)), nn.Parameter(torch.empty(heads))
            self.reset_connection()

    def reset_connection(self):
        if not self.learned:
            return
        with torch.no_grad():  # nn.Linear's init: fan-in 1 for layer 1, the hidden width after
            for p in (self.w1, self.b1):
                p.uniform_(-1.0, 1.0)
            bound = 1.0 / math.sqrt(self.w2.shape[-1])
            for p in (self.w2, self.b2, self.w3, self.b3):
                p.uniform_(-bound, bound)

    def bias(self, x):
        if not self.learned:
            return x.new_zeros(self.h, self.w)
        t = torch.linspace(0.0, 1.0, self.w, device=x.device, dtype=x.dtype).view(1, -1, 1)
        h1 = F.gelu(t * self.w1.unsqueeze(1) + self.b1.unsqueeze(1))
        h2 = F.gelu(h1 @ self.w2.transpose(1, 2) + self.b2.unsqueeze(1))
        return (h2 * self.w3.unsqueeze(1)).sum(-1) + self.b3.unsqueeze(1)  # [H, W]

    def forward(self, x):
        B, L, D = x.shape
        Dh = D // self.h
        q, k, v = self.qkv(x).view(B, L, 3, self.h, Dh).permute(2, 0, 3, 1, 4)
        g = self.bias(x)
        if self.impl == "dense":
            i = torch.arange(L, device=x.device)
            slot = i.view(1, -1) - i.view(-1, 1) + self.first  # [L, L]: slot of key j for query i
            inside = (slot >= 0) & (slot < self.w)
            band = g[:, slot.clamp(0, self.w - 1)].masked_fill(~inside, float("-inf"))
            s = q @ k.transpose(-2, -1) / math.sqrt(Dh) + band
            w = F.dropout(s.softmax(-1), self.dropout, self.training)
            y = w @ v
        else:
            pad = (0, 0, self.first, self.w - 1 - self.first)
            ku = F.pad(k, pad).unfold(2, self.w, 1)  # [B, H, L, Dh, W]
            vu = F.pad(v, pad).unfold(2, self.w, 1)
            s = (q.unsqueeze(-2) @ ku).squeeze(-2) / math.sqrt(Dh) + g.view(1, self.h, 1, self.w)
            if self.masked:  # slots before the first / after the last token are left out
                key = torch.arange(L, device=x.device).view(-1, 1) - self.first + \
                    torch.arange(self.w, device=x.device)
                s = s.masked_fill((key < 0) | (key >= L), float("-inf"))
            w = F.dropout(s.softmax(-1), self.dropout, self.training)
            y = (w.unsqueeze(-2) @ vu.transpose(-1, -2)).squeeze(-2)
        return self.out(y.transpose(1, 2).reshape(B, L, D))


class Block(nn.Module):  # pre-LN: x + attn(LN x), x + mlp(LN x), dropout on both branches
    def __init__(self, m, mechanism, causal, max_len, ky_impl):
        super().__init__()
        d, self.dropout = m["d_model"], m["dropout"]
        if mechanism == "dot":
            self.attention = DotAttention(d, m["heads"], causal, self.dropout, max_len)
        elif mechanism == "ky":
            self.attention = KyAttention(d, m["heads"], causal, self.dropout,
                                         m["attention_options"].get("ky", {}), ky_impl)
        else:
            raise SystemExit(f"pytorch_models.py: attention {mechanism!r} is not written here")
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, m["mlp_ratio"] * d), nn.Linear(m["mlp_ratio"] * d, d)

    def forward(self, x):
        h = x + F.dropout(self.attention(self.ln1(x)), self.dropout, self.training)
        return h + F.dropout(self.fc2(F.gelu(self.fc1(self.ln2(h)))), self.dropout, self.training)


class Transformer(nn.Module):
    def __init__(self, m, vocab, max_len, patch_dim, ky_impl):
        super().__init__()
        d = m["d_model"]
        self.classifier, self.dropout = m["head"] == "classifier", m["dropout"]
        layers = m["layers"]
        names = m["attention"] if len(m["attention"]) > 1 else m["attention"] * layers
        if patch_dim:
            self.patch = nn.Linear(patch_dim, d)
        else:
            self.token = nn.Embedding(vocab, d)
        self.position = nn.Parameter(torch.randn(max_len + self.classifier, d) * 0.02)
        if self.classifier:
            self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.blocks = nn.ModuleList(Block(m, names[i], not self.classifier,
                                          max_len + self.classifier, ky_impl)
                                    for i in range(layers))
        self.final_ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, (m["classes"] or 10) if self.classifier else vocab)
        # attnlab's GPT-2 style init: N(0, 0.02) matrices, zero biases, residual outputs / sqrt(2L)
        with torch.no_grad():
            if not patch_dim:
                self.token.weight.normal_(0, 0.02)
            for name, p in self.named_parameters():
                if "ln" in name:
                    continue
                if name.endswith("bias"):
                    p.zero_()
                elif p.dim() == 2 and not any(s in name for s in ("position", "token", "patch")):
                    out = "fc2" in name or "attention.out" in name
                    p.normal_(0, 0.02 / math.sqrt(2 * layers) if out else 0.02)
        for b in self.blocks:
            if isinstance(b.attention, KyAttention):
                b.attention.reset_connection()

    def forward(self, inputs):
        x = self.patch(inputs) if hasattr(self, "patch") else self.token(inputs)
        if self.classifier:
            x = torch.cat([self.cls.expand(x.shape[0], 1, x.shape[2]), x], 1)
        x = F.dropout(x + self.position[: x.shape[1]], self.dropout, self.training)
        for b in self.blocks:
            x = b(x)
        x = self.final_ln(x)
        return self.head(x[:, 0]) if self.classifier else self.head(x)


class ConnModel(nn.Module):
    """The Connection Transformer as attnlab computes it (causal: per-prefix slot states)."""

    def __init__(self, m, vocab, max_len, track):
        super().__init__()
        c, d = m["conn"], m["d_model"]
        self.o, self.d, self.track = c, d, track and c["track"]
        self.token = nn.Embedding(vocab, d)
        self.position = nn.Parameter(torch.randn(max_len, d) * 0.02)
        nn.init.normal_(self.token.weight, 0.0, 0.02)
        self.register_buffer("slots", torch.randn(c["slots"], d))  # fixed, never trained
        self.connection = nn.Parameter(
            torch.randn(c["connection_heads"], c["slots"], c["slots"]) * c["init_std"])
        for name in ("wq_in", "wk_slots", "wv_in", "wq_out", "wk_final", "wv_final"):
            lin = nn.Linear(d, d, bias=False)
            nn.init.xavier_uniform_(lin.weight)
            setattr(self, name, lin)
        self.vocab_head = nn.Linear(d, vocab, bias=False)
        nn.init.normal_(self.vocab_head.weight, 0.0, 0.02)
        self.norms = nn.ModuleList(nn.LayerNorm(d) for _ in range(c["steps"]))
        self.rho = self.norm = None

    def forward(self, tokens):
        L = tokens.shape[1]
        x = self.token(tokens) + self.position[:L]
        scale = 1.0 / math.sqrt(self.d)
        a = ((self.wq_in(x) @ self.wk_slots(self.slots).t()) * scale).softmax(-1)  # [B, L, N]
        h = self.slots + torch.cumsum(a.unsqueeze(-1) * self.wv_in(x).unsqueeze(2), 1)
        c = self.connection[0] if self.connection.shape[0] == 1 else self.connection.mean(0)
        for norm in self.norms:
            infl = h @ c if self.o["mixing"] == "literal" else c.t() @ h
            h = norm(h + (F.gelu(infl) if self.o["variant"] == "nonlinear" else infl))
        kf, vf = self.wk_final(h), self.wv_final(h)  # [B, L, N, D]
        att = ((kf @ self.wq_out(x).unsqueeze(-1)).squeeze(-1) * scale).softmax(-1)
        return self.vocab_head((att.unsqueeze(-2) @ vf).squeeze(-2))

    def regularization(self):
        return self.connection.pow(2).sum() * self.o["regularization"]

    @torch.no_grad()
    def after_step(self):
        """The stability control on every head, then (track) rho(I+C) and ||I+C||_2 computed
        exactly, the plain way, as a script that logs them each step would."""
        eye = torch.eye(self.o["slots"], device=self.connection.device)
        for j in range(self.connection.shape[0]):
            m = eye + self.connection[j]
            if self.o["control"] == "norm-bound":
                s = torch.linalg.matrix_norm(m, ord=2)
                if s > self.o["limit"]:
                    self.connection[j].copy_(m * (self.o["limit"] / s) - eye)
            elif self.o["control"] == "spec":
                rho = torch.linalg.eigvals(m).abs().max()
                if rho > self.o["limit"]:
                    self.connection[j].mul_(self.o["limit"] / rho)
        if self.track:
            c = self.connection[0] if self.connection.shape[0] == 1 else self.connection.mean(0)
            m = (eye + c).double().cpu()
            self.rho = torch.linalg.eigvals(m).abs().max().item()
            self.norm = torch.linalg.matrix_norm(m, ord=2).item()


def build(c, data, ky_impl, conn_track):
    m = c["model"]
    if m["architecture"] == "conn":
        return ConnModel(m, data.vocab, data.length, conn_track)
    return Transformer(m, data.vocab, data.length, getattr(data, "patch_dim", 0), ky_impl)


def breakdown(model):
    parts = {}
    for name, p in model.named_parameters():
        key = name.split(".")[0] + ("." + name.split(".")[1] if name.startswith("blocks.") else "")
        parts[key] = parts.get(key, 0) + p.numel()
    return parts


def check_against_run(model, data, c, run_dir, device):
    """Loads attnlab's final weights (RUN_DIR/checkpoint/model.pt, a TorchScript archive) into
    this model and recomputes attnlab's final eval loss on its own eval set: the architectures
    agree when the two losses do. The synthetic eval sets come from StdRng, which follows
    libstdc++ (GCC >= 11): a binary built otherwise draws other examples and fails the check."""
    if not hasattr(data, "eval_set"):
        return None
    with open(os.path.join(run_dir, "summary.json")) as f:
        want = json.load(f)["eval_loss"]
    try:  # LibTorch's torch::save(module) writes a TorchScript archive
        archive = torch.jit.load(os.path.join(run_dir, "checkpoint", "model.pt"),
                                 map_location="cpu")
    except Exception as e:  # noqa: BLE001 (any failure to read it is reported the same way)
        print(f"pytorch_models.py: {c['name']}: cannot read attnlab's weights in {run_dir}: {e}",
              file=sys.stderr)
        sys.exit(1)
    state = {}
    for name, t in list(archive.named_parameters()) + list(archive.named_buffers()):
        # attnlab's names: block0.x -> blocks.0.x (ky's connection.w1 -> w1); conn.norm0.x ->
        # norms.0.x, conn.y -> y
        name = name[len("conn."):] if name.startswith("conn.") else name
        for prefix, ours in (("block", "blocks."), ("norm", "norms.")):
            head, _, rest = name.partition(".")
            if head.startswith(prefix) and head[len(prefix):].isdigit():
                name = ours + head[len(prefix):] + "." + (
                    rest.replace("connection.", "") if prefix == "block" else rest)
        state[name] = t
    model.load_state_dict(state, strict=True)
    model.eval()
    total = count = 0.0
    with torch.no_grad():
        for x, y in data.eval_set(c):
            logits = model(x.to(device))
            y = y.to(device)
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]).double(), y.reshape(-1),
                                     ignore_index=-1, reduction="sum").item()
            count += (y != -1).sum().item()
    model.train()
    got = total / max(1.0, count)
    # Equal models agree to ~1e-7 here (float32 sums in another order); a ky window of 31
    # instead of 32 after 20 steps moves the loss by 5e-5 relative.
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
    model = build(c, data, args.ky_impl, not args.no_conn_track).to(device)
    params = sum(p.numel() for p in model.parameters())
    want, source = expected_params(args)
    if want is not None and want != params:
        print(f"pytorch_models.py: {c['name']}: parameter count differs: attnlab {want} "
              f"(from {source}), PyTorch {params}; PyTorch's by part: {breakdown(model)}",
              file=sys.stderr)
        sys.exit(1)
    checked = check_against_run(model, data, c, args.check_run, device) if args.check_run else None
    if checked is None and args.check_run:
        checked = f"not checked: task {c['task']['name']} has no reproducible eval set here"

    t = dict(c["train"])
    total = args.warmup + args.steps
    decay = [p for p in model.parameters() if p.dim() >= 2]  # as session.cpp: matrices decay
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": t["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=t["lr"], betas=(t["beta1"], t["beta2"]))
    conn = isinstance(model, ConnModel)
    g = torch.Generator().manual_seed(c["seed"])
    B = t["batch_size"]
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)

    def step(i):
        x, y = data.batch(B, g)
        x, y = x.to(device), y.to(device)
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1),
                               ignore_index=-1)
        if conn:
            loss = loss + model.regularization()
        opt.zero_grad()
        loss.backward()
        if t["grad_clip"] > 0:
            nn.utils.clip_grad_norm_(model.parameters(), t["grad_clip"])
        for group in opt.param_groups:
            group["lr"] = lr_at(t, i, total)
        opt.step()
        if conn:
            model.after_step()
        return loss

    model.train()
    for i in range(args.warmup):
        step(i)
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
        out["conn_track"] = model.track
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
    args = ap.parse_args()
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
