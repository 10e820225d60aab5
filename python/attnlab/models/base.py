"""What every attention twin shares: its spec, its hook points and the softmax step.

A twin is a plain PyTorch module computing what attnlab's module of the same name computes
(core/attention/<name>/), with attnlab's parameter names, so attnlab's weights load into it by
name. ``forward(x, return_pattern=False)`` maps x [B, L, D] to [B, L, D] (and, when asked, the
attention pattern [B, H, L, L] the model returns as its map).

Hook points (``hooks.HookPoint``), in forward order, for every mechanism:
  hook_q, hook_k, hook_v  [B, H, L, Dh]  per head, before any position rotation (rope) or
                                         down-projection (neural). The kernel family has one
                                         input projection X~ for all three; its hooks see the
                                         same X~ three times (semi-fusion's hook_v: X~ Wv).
  hook_scores             [B, H, L, L]   the logits the softmax takes: scaled, with ALiBi or ky's
                                         slot bias added, -inf where masked.
  hook_pattern            [B, H, L, L]   softmax(scores), before dropout: attnlab's map.
  hook_z                  [B, H, L, Dh]  each head's output, pattern @ values, before the heads
                                         are concatenated and projected by `out`.
"""
import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..hooks import HookPoint
from .position import RelativePosition, causal_mask


@dataclass
class AttentionSpec:
    """core/attention/attention.h's AttentionSpec: what a mechanism is built from."""
    d_model: int
    heads: int
    causal: bool = True
    dropout: float = 0.0
    layer: int = 0
    position: str = "learned"
    rope_base: float = 10000.0
    options: dict = field(default_factory=dict)  # model.attention_options.<name>
    max_len: int = 0  # the longest input the model takes (0: unknown); sizes the causal mask

    @property
    def head_dim(self):
        return self.d_model // self.heads


def fan_in_uniform_(t, fan_in):
    """torch.nn.Linear's default init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), in place."""
    with torch.no_grad():
        bound = 1.0 / math.sqrt(fan_in)
        t.uniform_(-bound, bound)


class AttentionBase(nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.spec = spec
        self.heads, self.head_dim = spec.heads, spec.head_dim
        self.causal, self.dropout = spec.causal, spec.dropout
        self.position = RelativePosition(spec.position, spec.heads, spec.head_dim, spec.causal,
                                         spec.rope_base)
        # Built once (not per forward, which an eager baseline's timing would pay for);
        # non-persistent, so no part of the weights.
        mask = causal_mask(spec.max_len, "cpu") if spec.causal and spec.max_len else None
        self.register_buffer("mask", mask, persistent=False)
        self.hook_q, self.hook_k, self.hook_v = HookPoint(), HookPoint(), HookPoint()
        self.hook_scores, self.hook_pattern, self.hook_z = HookPoint(), HookPoint(), HookPoint()

    def reset_own_parameters(self):
        """Called after the model's GPT-2 init, which overwrites every 2-D weight: a mechanism
        whose tensors need another scheme restores it here (attnlab's reset_own_parameters)."""

    def split_qkv(self, packed):
        """[B, L, 3D] from the fused projection -> hooked q, k, v [B, H, L, Dh]."""
        B, L, _ = packed.shape
        q, k, v = packed.view(B, L, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        return self.hook_q(q), self.hook_k(k), self.hook_v(v)

    def causal_mask(self, L, device):
        """[L, L] bool, True where key j > query i."""
        if self.mask is not None and self.mask.shape[0] >= L:
            return self.mask[:L, :L]
        return causal_mask(L, device)

    def masked(self, scores):
        """Scaled logits [B, H, L, L] + ALiBi's bias, -inf above the diagonal when causal."""
        L = scores.shape[-1]
        bias = self.position.bias(L, scores)
        if bias is not None:
            scores = scores + bias
        if self.causal:
            scores = scores.masked_fill(self.causal_mask(L, scores.device), float("-inf"))
        return scores

    def attend(self, scores, values):
        """softmax, dropout on the weights (training), values: -> (z [B, H, L, Dh], pattern)."""
        pattern = self.hook_pattern(self.hook_scores(scores).softmax(-1))
        weights = F.dropout(pattern, self.dropout, self.training)
        return self.hook_z(weights @ values), pattern

    @staticmethod
    def merge(z):
        """[B, H, L, Dh] -> [B, L, H * Dh]."""
        B, H, L, Dh = z.shape
        return z.transpose(1, 2).reshape(B, L, H * Dh)
