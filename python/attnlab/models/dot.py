"""Scaled dot-product attention (core/attention/dot/): softmax(Q K^T / sqrt(Dh)) V.

Parameters: qkv (the fused query/key/value projection, [3D, D] and [3D]) and out ([D, D], [D]).
With model.position "rope" q and k are rotated after their hooks; with "alibi" the logits get
-m_h (i - j).
"""
import math

import torch.nn as nn

from .base import AttentionBase


class DotAttention(AttentionBase):
    def __init__(self, spec):
        super().__init__(spec)
        self.qkv = nn.Linear(spec.d_model, 3 * spec.d_model)
        self.out = nn.Linear(spec.d_model, spec.d_model)

    def forward(self, x, return_pattern=False):
        q, k, v = self.split_qkv(self.qkv(x))
        q, k = self.position.rotate(q, k)
        scores = self.masked(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim))
        z, pattern = self.attend(scores, v)
        y = self.out(self.merge(z))
        return (y, pattern) if return_pattern else y
