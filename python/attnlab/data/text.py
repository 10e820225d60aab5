"""attnlab's character-level text task (core/data/text_corpus.cpp, TextTask in tasks.cpp).

The corpus is a UTF-8 file, or a directory whose regular files (no symlinks, no ``*.dat``) are
read in byte order of their paths and concatenated. Tokens are code points, numbered in sorted
order. With task.split "tail" the last ``eval_fraction`` of the corpus is held out; the eval set
is ``eval_batches * batch_size`` windows of ``context + 1`` tokens evenly spaced over that tail,
and the probe is the tail's first min(context, 48) tokens. With task.split "blocks" a fixed
permutation of the corpus's 4096-character blocks gives eval_fraction of them to eval (and
validation_fraction to validation); the eval set tiles the eval blocks with non-overlapping
windows, batch_size to a batch, and the probe starts at the first eval block.
"""
import math
import os

import numpy as np
import torch

from .. import limits
from ..errors import ConfigError
from .rng import StdRng

BLOCK = 4096             # TextTask::cut_blocks's block
BLOCK_SALT = 0xB10C5EED  # its permutation's seed: the same for every run seed

_CORPORA = {}  # path -> (alphabet, tokens): a process reads a corpus once


def _decode_like_attnlab(data):
    """Code points of bytes exactly as text_corpus.cpp's decoder: a malformed sequence gives one
    U+FFFD and skips one byte; overlong forms and surrogates are not checked (they decode)."""
    out, i, n = [], 0, len(data)
    while i < n:
        c = data[i]
        size = 1 if c < 0x80 else 2 if c >> 5 == 0x6 else 3 if c >> 4 == 0xE else \
            4 if c >> 3 == 0x1E else 0
        cp = c if size == 1 else c & 0x1F if size == 2 else c & 0x0F if size == 3 else c & 0x07
        ok = size > 0 and i + size <= n
        for k in range(1, size if ok else 0):
            ok = data[i + k] >> 6 == 0x2
            if not ok:
                break
            cp = (cp << 6) | (data[i + k] & 0x3F)
        if ok:
            out.append(cp)
            i += size
        else:
            out.append(0xFFFD)
            i += 1
    return out


def _code_points(data):
    try:  # valid UTF-8 (the usual case) decodes the same both ways, and fast
        return np.frombuffer(data.decode("utf-8").encode("utf-32-le"), dtype=np.uint32)
    except UnicodeError:
        return np.array(_decode_like_attnlab(data), dtype=np.uint32)


def corpus_files(path):
    """The files attnlab reads for task.text_path, in its order."""
    if not os.path.isdir(path):
        if not os.path.exists(path):
            raise FileNotFoundError(f"task.text_path: {path} does not exist")
        if not os.path.isfile(path):  # a FIFO would block, /dev/zero never ends
            raise ConfigError(f"task.text_path: {path} is not a regular file or a directory")
        return [path]
    files = []
    for name in os.listdir(path):
        p = os.path.join(path, name)
        # std::filesystem's extension(): ".dat" itself (a dot file) has none
        if os.path.islink(p) or not os.path.isfile(p) or os.path.splitext(name)[1] == ".dat":
            continue
        files.append(p)
    if not files:
        raise FileNotFoundError(f"task.text_path: directory {path} holds no text files")
    return sorted(files, key=os.fsencode)  # std::sort of std::string: byte order


def load_corpus(path):
    """(alphabet [V] uint32 code points, tokens [N] int64) of a corpus; cached per path."""
    if path not in _CORPORA:
        parts, files = [], corpus_files(path)
        size = sum(os.path.getsize(f) for f in files)
        if size > limits.MAX_CORPUS_BYTES:
            raise ConfigError(f"task.text_path: {path} holds {size:,} bytes, more than "
                              f"attnlab.limits.MAX_CORPUS_BYTES ({limits.MAX_CORPUS_BYTES:,})")
        for f in files:
            with open(f, "rb") as fh:
                parts.append(_code_points(fh.read()))
        cps = np.concatenate(parts)
        if cps.size == 0:
            raise ValueError(f"task.text_path: {path} is empty")
        alphabet, tokens = np.unique(cps, return_inverse=True)
        _CORPORA[path] = (alphabet, torch.from_numpy(tokens.astype(np.int64).reshape(-1)))
    return _CORPORA[path]


def llround(x):
    """std::llround of x >= 0: halves away from zero (Python's round() goes to even)."""
    f = math.floor(x)
    return int(f) + (1 if x - f >= 0.5 else 0)


def libstdcxx_shuffle(items, rng):
    """std::shuffle(items, mt19937_64) as libstdc++ (GCC 9 and later) does it: the engine's
    range exceeds the size squared, so it draws the swap positions of two successive elements
    from one uniform_int_distribution(0, (i + 1) (i + 2) - 1) call, after a first {0, 1} swap
    when the size is even. Shuffles in place."""
    n = len(items)
    if n == 0:
        return
    i = 1
    if n % 2 == 0:
        j = rng.uniform(0, 1)
        items[i], items[j] = items[j], items[i]
        i += 1
    while i != n:
        b0 = i + 1
        x = rng.uniform(0, b0 * (b0 + 1) - 1)
        for pos in (x // (b0 + 1), x % (b0 + 1)):
            items[i], items[pos] = items[pos], items[i]
            i += 1


class TextTask:
    kind = "tokens"

    def __init__(self, task, seed, eval_batches, batch_size):
        self.c, self.eval_batches, self.batch_size = task, eval_batches, batch_size
        self.alphabet, self.tokens = load_corpus(task["text_path"])
        self.vocab, self.length = len(self.alphabet), task["context"]
        n = len(self.tokens)
        if task.get("split", "tail") == "blocks":
            self.eval_spans = self.cut_blocks()
            self.split = self.eval_spans[0][0]
            return
        self.eval_spans = None
        self.split = int(n * (1.0 - task["eval_fraction"]))  # static_cast<int64_t>, truncation
        if self.split < self.length + 1 or n - self.split < self.length + 1:
            raise ValueError(f"task.text_path: {task['text_path']} has {n} characters, too few "
                             f"for task.context {self.length}")

    def cut_blocks(self):
        """split "blocks" (TextTask::cut_blocks): the eval spans [(begin, end)], adjacent eval
        blocks merged. Raises ValueError when a share holds no window."""
        n, L = len(self.tokens), self.length
        blocks = (n + BLOCK - 1) // BLOCK
        order = list(range(blocks))
        libstdcxx_shuffle(order, StdRng(BLOCK_SALT))
        n_eval = llround(blocks * self.c["eval_fraction"])
        n_validation = llround(blocks * self.c["validation_fraction"])
        kind = [0] * blocks  # 0 train, 1 eval, 2 validation
        for i, b in enumerate(order):
            kind[b] = 1 if i < n_eval else 2 if i < n_eval + n_validation else 0
        spans = ([], [], [])
        for b in range(blocks):
            begin, end = b * BLOCK, min(n, (b + 1) * BLOCK)
            if spans[kind[b]] and spans[kind[b]][-1][1] == begin:
                spans[kind[b]][-1][1] = end
            else:
                spans[kind[b]].append([begin, end])
        for k, name in enumerate(("training", "eval", "validation")):
            if max((e - b for b, e in spans[k]), default=0) < L + 1:
                raise ValueError(f"task.text_path: {self.c['text_path']} has {n} characters: "
                                 f"task.split \"blocks\" leaves no {name} text of task.context "
                                 f"+ 1 = {L + 1} characters")
        return spans[1]

    def windows(self, starts):
        """(inputs [B, L], targets [B, L]) of the windows starting at these corpus offsets."""
        w = self.tokens[torch.tensor(starts).unsqueeze(1) + torch.arange(self.length + 1)]
        return w[:, :-1], w[:, 1:]

    def eval_set(self):
        B, n, L = self.batch_size, len(self.tokens), self.length
        if self.eval_spans is not None:  # "blocks": tiled, eval_batches does not apply
            starts = [at for b, e in self.eval_spans for at in range(b, e - L, L)]
            return [self.windows(starts[i:i + B]) for i in range(0, len(starts), B)]
        count, span = self.eval_batches * B, n - self.split - (L + 1)
        return [self.windows([self.split + span * (b * B + i) // max(1, count - 1)
                              for i in range(B)]) for b in range(self.eval_batches)]

    def probe(self):
        return self.tokens[self.split:self.split + min(self.length, 48)].clone()

    def token_label(self, t):
        """TextCorpus::label: the character, or an escape for whitespace and controls."""
        cp = int(self.alphabet[t])
        if cp == 0x0A:
            return "\\n"
        if cp == 0x09:
            return "\\t"
        if cp == 0x20:
            return "\u2423"
        if cp < 0x20 or cp == 0x7F:
            return f"\\x{cp:02X}"
        return chr(cp)
