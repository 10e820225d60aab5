"""attnlab's synthetic token tasks (core/data/tasks.cpp): copy, reverse, sort, recall, modadd and
induction, with their eval sets and probes rebuilt exactly.

Every task builds examples as (tokens, scored) pairs the way its C++ twin does, drawing from the
same ``StdRng`` stream in the same order, and turns a list of them into a batch as ``to_batch``
does: inputs are tokens[:-1], the target of position t is tokens[t + 1] where that token is
scored, else -1 (ignored by the loss). The benchmark tasks (benchmark.py) give ``Explicit``
examples instead: the input itself and each position's target.
"""
from collections import namedtuple

import torch

from .rng import StdRng, mix_seed

EVAL_SALT = 0xE7A1    # SyntheticTask::eval_set's stream
PROBE_SALT = 0x9806E  # SyntheticTask::probe's stream
MODADD_SALT = 0x5917  # ModAddTask's split of the p*p pairs


# synthetic_task.h's explicit form: `tokens` is the model input, targets[t] its target (-1: none).
Explicit = namedtuple("Explicit", "tokens targets")


def to_batch(examples):
    """(inputs [B, L], targets [B, L]) of equal-length examples; unscored targets are -1."""
    if isinstance(examples[0], Explicit):
        return (torch.tensor([e.tokens for e in examples], dtype=torch.long),
                torch.tensor([e.targets for e in examples], dtype=torch.long))
    seq = torch.tensor([tokens for tokens, _ in examples], dtype=torch.long)
    scored = torch.tensor([s for _, s in examples], dtype=torch.bool)
    return seq[:, :-1], seq[:, 1:].masked_fill(~scored[:, 1:], -1)


class SyntheticTask:
    """What the synthetic tasks share: a vocabulary, a sequence length, the eval set (one stream
    over every eval batch) and the probe (one eval example without its last token)."""

    kind = "tokens"

    def __init__(self, task, seed, eval_batches, batch_size):
        self.c, self.seed = task, seed
        self.eval_batches, self.batch_size = eval_batches, batch_size

    def example(self, rng, eval):  # -> (tokens, scored) or Explicit(tokens, targets)
        raise NotImplementedError

    def eval_set(self):
        """attnlab's fixed eval batches: a list of (inputs [B, L], targets [B, L])."""
        rng = StdRng(mix_seed(self.seed, EVAL_SALT))
        return [to_batch([self.example(rng, True) for _ in range(self.batch_size)])
                for _ in range(self.eval_batches)]

    def probe(self):
        """The probe attnlab shows attention for: token ids [L] (int64)."""
        e = self.example(StdRng(mix_seed(self.seed, PROBE_SALT)), True)
        tokens = e.tokens if isinstance(e, Explicit) else e[0][:-1]
        return torch.tensor(tokens, dtype=torch.long)

    def token_label(self, t):
        return str(t) if t < self.c["vocab"] else self.special_label(t)

    def special_label(self, t):
        return "#"


class TransformTask(SyntheticTask):
    """copy / reverse / sort: x SEP f(x); the n answer tokens after SEP are scored."""

    def __init__(self, task, seed, eval_batches, batch_size):
        super().__init__(task, seed, eval_batches, batch_size)
        self.vocab, self.length = task["vocab"] + 1, 2 * task["length"]

    def example(self, rng, eval):
        n, v = self.c["length"], self.c["vocab"]
        x = rng.symbols(n, v)
        y = x[::-1] if self.c["name"] == "reverse" else sorted(x) if self.c["name"] == "sort" else x
        return x + [v] + y, [False] * (n + 1) + [True] * n

    def special_label(self, t):
        return "|"


class RecallTask(SyntheticTask):
    """k1 v1 .. kn vn SEP q1 a1 .. qn an: distinct keys, values after them, every answer
    scored."""

    def __init__(self, task, seed, eval_batches, batch_size):
        super().__init__(task, seed, eval_batches, batch_size)
        self.vocab, self.length = 2 * task["vocab"] + 1, 4 * task["length"]

    def example(self, rng, eval):
        n, v = self.c["length"], self.c["vocab"]
        keys, values, order = rng.distinct(n, v), rng.symbols(n, v), rng.distinct(n, n)
        seq = [t for i in range(n) for t in (keys[i], v + values[i])] + [2 * v]
        seq += [t for i in range(n) for t in (keys[order[i]], v + values[order[i]])]
        return seq, [False] * (2 * n + 1) + [False, True] * n

    def special_label(self, t):
        return "?" if t == 2 * self.c["vocab"] else "v" + str(t - self.c["vocab"])


class ModAddTask(SyntheticTask):
    """a b = (a + b) mod p. The p*p pairs are shuffled once by the run seed and split; the eval
    set is every held-out pair once, in batches of batch_size."""

    def __init__(self, task, seed, eval_batches, batch_size):
        super().__init__(task, seed, eval_batches, batch_size)
        p = task["modulus"]
        self.vocab, self.length = p + 1, 3
        pairs = list(range(p * p))
        rng = StdRng(mix_seed(seed, MODADD_SALT))
        for i in range(len(pairs) - 1, 0, -1):
            j = rng.uniform(0, i)
            pairs[i], pairs[j] = pairs[j], pairs[i]
        # static_cast<size_t>(train_fraction * size), clamped to [1, size - 1]
        n_train = min(max(int(task["train_fraction"] * len(pairs)), 1), len(pairs) - 1)
        self.train_pairs, self.heldout = pairs[:n_train], pairs[n_train:]

    def make(self, pair):
        p = self.c["modulus"]
        a, b = divmod(pair, p)
        return [a, b, p, (a + b) % p], [False, False, False, True]

    def example(self, rng, eval):
        pool = self.heldout if eval else self.train_pairs
        return self.make(pool[rng.uniform(0, len(pool) - 1)])

    def eval_set(self):
        h, B = self.heldout, self.batch_size
        return [to_batch([self.make(q) for q in h[i:i + B]]) for i in range(0, len(h), B)]

    def token_label(self, t):
        return "=" if t == self.c["modulus"] else str(t)


class InductionTask(SyntheticTask):
    """n distinct symbols, then the same n again, with n filler tokens (a second alphabet)
    placed randomly before, between and after; the second copy's tokens after its first are
    scored."""

    def __init__(self, task, seed, eval_batches, batch_size):
        super().__init__(task, seed, eval_batches, batch_size)
        self.vocab, self.length = 2 * task["vocab"], 3 * task["length"] - 1

    def example(self, rng, eval):
        n, v = self.c["length"], self.c["vocab"]
        p = rng.distinct(n, v)
        between = rng.uniform(0, n)
        before = rng.uniform(0, n - between)
        after = n - between - before
        tokens = [v + f for f in rng.symbols(before, v)] + p
        tokens += [v + f for f in rng.symbols(between, v)]
        second = len(tokens)
        tokens += p + [v + f for f in rng.symbols(after, v)]
        scored = [second + 1 <= t < second + n for t in range(len(tokens))]
        return tokens, scored

    def special_label(self, t):
        return "." + str(t - self.c["vocab"])
