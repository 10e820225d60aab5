"""The field's standard synthetic tasks (core/data/benchmark_tasks.cpp), with their eval sets and
probes rebuilt exactly: mqar (Zoology's multi-query associative recall), selective_copy (MAD),
induction_head (Safari) and the Chomsky-hierarchy length tasks parity, reverse_string and
duplicate_string. docs/guide/benchmarks.md cites each one's reference code.

Unlike attnlab's own tasks, their targets are not the next input: an example is
``Explicit(tokens, targets)``, the model input and each position's target (-1: not scored).
"""
import math

from .rng import M64
from .synthetic import Explicit, SyntheticTask

TWO_64 = float(1 << 64)
BELOW_ONE = 1.0 - 2.0 ** -53  # nextafter(1.0, 0.0)


def canonical(rng):
    """libstdc++'s generate_canonical<double, 53> over mt19937_64: one draw over 2^64, clamped
    below 1 (what uniform_real_distribution<double> scales)."""
    u = float(rng.next() & M64) / TWO_64  # int -> double rounds to nearest, as the C++ cast
    return BELOW_ONE if u >= 1.0 else u


def label_with_specials(t, vocab, second_last, last):
    return second_last if t == vocab - 2 else last if t == vocab - 1 else str(t)


class MqarTask(SyntheticTask):
    """Zoology's MQAR: keys 1..V/2-1 and values V/2..V-1, n distinct of each, the context
    k1 v1 .. kn vn, then n queries at offsets 2*gap after it, gaps drawn without replacement
    with weights a*i^(a-1) (a = 0.01); the target at a query is its value. Filler is 0."""

    POWER_A = 0.01

    def __init__(self, task, seed, eval_batches, batch_size):
        super().__init__(task, seed, eval_batches, batch_size)
        self.vocab, self.length = task["vocab"], task["context"]

    def example(self, rng, eval):
        L, n, V = self.c["context"], self.c["length"], self.c["vocab"]
        half, context = V // 2, 2 * self.c["length"]
        keys, values = rng.distinct(n, half - 1), rng.distinct(n, V - half)
        tokens, targets = [0] * L, [-1] * L
        for i in range(n):
            tokens[2 * i], tokens[2 * i + 1] = keys[i] + 1, values[i] + half
        space = (L - context) // 2
        a = self.POWER_A
        weight = [a * math.pow(i + 1.0, a - 1.0) for i in range(space)]
        for j in range(n):  # np.random.choice(replace=False, p): draw, remove, renormalise
            total = 0.0
            for w in weight:
                total += w
            r = canonical(rng) * total
            gap = space - 1
            for i in range(space):
                if weight[i] <= 0:
                    continue
                if r < weight[i]:
                    gap = i
                    break
                r -= weight[i]
            while weight[gap] <= 0:  # rounding past the end: the last one still open
                gap -= 1
            weight[gap] = 0.0
            tokens[context + 2 * gap] = keys[j] + 1
            targets[context + 2 * gap] = values[j] + half
        return Explicit(tokens, targets)

    def token_label(self, t):
        half = self.c["vocab"] // 2
        return "." if t == 0 else f"k{t}" if t < half else f"v{t - half}"


class SelectiveCopyTask(SyntheticTask):
    """MAD's selective copying: n tokens from 0..V-3 with L-2n-1 blanks (V-2) scattered before
    them, the copy token (V-1), n blanks whose targets are the n tokens in order."""

    def __init__(self, task, seed, eval_batches, batch_size):
        super().__init__(task, seed, eval_batches, batch_size)
        self.vocab, self.length = task["vocab"], task["context"]

    def example(self, rng, eval):
        L, n, V = self.c["context"], self.c["length"], self.c["vocab"]
        data = rng.symbols(n, V - 2)
        blanks_before = [0] * n
        for _ in range(L - 2 * n - 1):
            blanks_before[rng.uniform(0, n - 1)] += 1
        tokens = []
        for i in range(n):
            tokens += [V - 2] * blanks_before[i] + [data[i]]
        tokens.append(V - 1)
        targets = [-1] * len(tokens) + data
        return Explicit(tokens + [V - 2] * n, targets)

    def token_label(self, t):
        return label_with_specials(t, self.c["vocab"], "_", ">")


class InductionHeadTask(SyntheticTask):
    """Safari's induction head: L symbols of 0..V-3, the trigger (V-2) at the end and at a random
    position p in 0..L-3; the answer is the token after p. Training scores every next token,
    the eval set only the answer."""

    def __init__(self, task, seed, eval_batches, batch_size):
        super().__init__(task, seed, eval_batches, batch_size)
        self.vocab, self.length = task["vocab"], task["context"] + 1

    def example(self, rng, eval):
        L, V = self.c["context"], self.c["vocab"]
        seq = rng.symbols(L, V - 2) + [V - 2]
        p = rng.uniform(0, L - 3)
        seq[p] = V - 2
        seq.append(seq[p + 1])
        targets = [-1] * L + [seq[-1]] if eval else seq[1:]
        return Explicit(seq[:-1], targets)

    def token_label(self, t):
        return label_with_specials(t, self.c["vocab"], "=>", ".")


class ChomskyTask(SyntheticTask):
    """parity, reverse_string, duplicate_string: n symbols of 0..V-1 then one placeholder (V) per
    output token, read and scored at the placeholders, padded with placeholders to the longest
    length. Training draws n in 1..N; the eval set is at n = N."""

    def __init__(self, task, seed, eval_batches, batch_size):
        super().__init__(task, seed, eval_batches, batch_size)
        self.vocab = task["vocab"] + 1
        self.length = task["length"] + self.outputs(task["length"])

    def outputs(self, n):
        name = self.c["name"]
        return 1 if name == "parity" else 2 * n if name == "duplicate_string" else n

    def example(self, rng, eval):
        N, V, name = self.c["length"], self.c["vocab"], self.c["name"]
        n = N if eval else rng.uniform(1, N)
        x = rng.symbols(n, V)
        y = [sum(x) % 2] if name == "parity" else x[::-1] if name == "reverse_string" else \
            x + x if name == "duplicate_string" else list(x)
        tokens, targets = x + [V] * len(y), [-1] * n + y
        pad = self.length - len(tokens)
        return Explicit(tokens + [V] * pad, targets + [-1] * pad)

    def token_label(self, t):
        return "_" if t == self.c["vocab"] else str(t)


TASKS = {"mqar": MqarTask, "selective_copy": SelectiveCopyTask,
         "induction_head": InductionHeadTask, "parity": ChomskyTask,
         "reverse_string": ChomskyTask, "duplicate_string": ChomskyTask}
