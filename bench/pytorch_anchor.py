#!/usr/bin/env python3
"""The docs/design/TARGETS.md anchor: a plain PyTorch script, the way the papers write it.

A 2-layer pre-LN causal character LM on Debian's fortunes corpus, dot-product attention,
training step = forward + backward + AdamW. Prints median ms/step after warm-up, so that
bench_trainer's figures can be set against it in the same run on the same machine.
Needs Debian's python3-torch (1.13; not installed by the setup scripts): run it with
/usr/bin/python3 where another python3 comes first in PATH.
usage: pytorch_anchor.py [--quick] [--threads N]
       pytorch_anchor.py --value --config D,SEQ,BATCH --steps N [--threads N]
         (bench_targets' mode: prints only the median ms/step)
"""
import argparse, math, os, statistics, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--quick", action="store_true")
parser.add_argument("--threads", type=int, default=2)
parser.add_argument("--value", action="store_true")
parser.add_argument("--config", default="")
parser.add_argument("--steps", type=int, default=0)
args = parser.parse_args()
torch.set_num_threads(args.threads)
quick = args.quick

def corpus():
    root = "/usr/share/games/fortunes"
    text = ""
    for name in sorted(os.listdir(root)):
        p = os.path.join(root, name)
        if os.path.islink(p) or name.endswith(".dat") or not os.path.isfile(p):
            continue
        text += open(p, encoding="utf-8", errors="replace").read()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    return torch.tensor([index[c] for c in text]), len(chars)

class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        B, L, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, L, 3, self.h, D // self.h).permute(2, 0, 3, 1, 4)
        s = q @ k.transpose(-2, -1) / math.sqrt(D // self.h)
        s = s.masked_fill(torch.ones(L, L, dtype=torch.bool).triu(1), float("-inf"))
        y = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, L, D)
        x = x + self.out(y)
        return x + self.mlp(self.ln2(x))

class LM(nn.Module):
    def __init__(self, vocab, d, h, layers, seq):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Parameter(torch.randn(seq, d) * 0.02)
        self.blocks = nn.ModuleList(Block(d, h) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)

    def forward(self, t):
        x = self.tok(t) + self.pos[: t.shape[1]]
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))

def bench(label, d, seq, batch, warmup, measured):
    data, vocab = corpus()
    model = LM(vocab, d, 4, 2, seq)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    times = []
    for i in range(warmup + measured):
        starts = torch.randint(0, len(data) - seq - 1, (batch,))
        x = torch.stack([data[s : s + seq] for s in starts])
        y = torch.stack([data[s + 1 : s + seq + 1] for s in starts])
        t0 = time.perf_counter()
        loss = F.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1000)
    if args.value:
        print(f"{statistics.median(times):.3f}")
        return
    print(f"pytorch {label:26s} median {statistics.median(times):7.2f} ms/step  (min {min(times):.2f}, "
          f"{measured} steps, {torch.get_num_threads()} threads)")

if args.config:
    d, seq, batch = (int(v) for v in args.config.split(","))
    bench(f"d{d} h4 seq{seq} batch{batch}", d, seq, batch, 5, args.steps or 40)
else:
    bench("d128 h4 seq128 batch16", 128, 128, 16, 5, 10 if quick else 40)
    bench("d64 h4 seq64 batch4", 64, 64, 4, 10, 50 if quick else 200)
