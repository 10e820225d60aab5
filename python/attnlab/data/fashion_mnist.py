"""attnlab's Fashion-MNIST task (core/data/fashion_mnist.cpp): a ViT-style classifier's inputs.

Images come from the gzip IDX files of a directory (Debian's dataset-fashion-mnist by default).
Pixels are normalised in float32 as ``(x / 255 - 0.2860) / 0.3530`` and cut into patches in
row-major order over the patch grid, features dy * p + dx within a patch. The eval set is the
first ``test_examples`` test images (all 10000 when 0) in batches of 500; the probe is test
image 0. Training-time shifts (task.shift) never touch the eval set or the probe.
"""
import gzip
import os

import numpy as np
import torch

MEAN, STD = 0.2860, 0.3530
EVAL_CHUNK = 500
CLASS_NAMES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]
_FILES = {}  # path -> decompressed bytes: a process reads each file once


def _read(path):
    if path not in _FILES:
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path} does not exist (Debian: apt-get install "
                                    "dataset-fashion-mnist)")
        with open(path, "rb") as f:
            data = f.read()
        # zlib's gzread, which attnlab uses, passes a plain (uncompressed) IDX file through
        _FILES[path] = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    return _FILES[path]


def read_images(path):
    """An IDX image file as uint8 [N, 28, 28]."""
    d = _read(path)
    if int.from_bytes(d[0:4], "big") != 0x803:
        raise ValueError(f"{path} is not an IDX image file")
    n, rows, cols = (int.from_bytes(d[k:k + 4], "big") for k in (4, 8, 12))
    if len(d) != 16 + n * rows * cols:
        raise ValueError(f"{path}: {len(d)} bytes, its header declares {n} images")
    return torch.from_numpy(np.frombuffer(d, np.uint8, offset=16).reshape(n, rows, cols).copy())


def read_labels(path):
    """An IDX label file as int64 [N]."""
    d = _read(path)
    if int.from_bytes(d[0:4], "big") != 0x801:
        raise ValueError(f"{path} is not an IDX label file")
    return torch.from_numpy(np.frombuffer(d, np.uint8, offset=8).astype(np.int64))


def normalise(raw):
    return (raw.float() / 255.0 - MEAN) / STD


def patchify(images, patch):
    """images [B, H, W] -> [B, (H/p) * (W/p), p * p]."""
    B, H, W = images.shape
    return images.reshape(B, H // patch, patch, W // patch, patch).permute(0, 1, 3, 2, 4) \
        .reshape(B, (H // patch) * (W // patch), patch * patch)


class FashionMnistTask:
    kind = "patches"

    def __init__(self, task, seed=None, eval_batches=None, batch_size=None):
        self.c, self.patch = task, task["patch"]
        if 28 % self.patch:
            raise ValueError(f"task.patch {self.patch} does not divide 28")
        self.patch_dim, self.length = self.patch ** 2, (28 // self.patch) ** 2
        self.vocab, self.classes = 0, len(CLASS_NAMES)

    def _test(self):
        d = self.c["data_dir"]
        return (read_images(os.path.join(d, "t10k-images-idx3-ubyte.gz")),
                read_labels(os.path.join(d, "t10k-labels-idx1-ubyte.gz")))

    def test_input(self, index):
        """Test image `index` as patches [S, patch_dim] (attnlab's probe for index 0)."""
        images, _ = self._test()
        return patchify(normalise(images[index:index + 1]), self.patch)[0]

    def eval_set(self):
        images, labels = self._test()
        n = self.c["test_examples"]
        n = min(n, len(images)) if n > 0 else len(images)
        return [(patchify(normalise(images[i:min(n, i + EVAL_CHUNK)]), self.patch),
                 labels[i:min(n, i + EVAL_CHUNK)]) for i in range(0, n, EVAL_CHUNK)]

    def probe(self):
        return self.test_input(0)

    def token_label(self, t):  # the probe's rows: CLS, then patch row,column
        g = 28 // self.patch
        return "CLS" if t == 0 else f"{(t - 1) // g},{(t - 1) % g}"
